"""HTTP plumbing shared by every route: the envelope, bodies, query strings, errors.

One place builds the success envelope ``{result, status: "ok", time}`` and one place turns
an :class:`ApiError` (or a framework 404/405) into the error envelope (server-wire §1.3);
every body is written as serde's compact JSON (:func:`render_json`). Routing is on the raw
path and ``{name}`` is percent-decoded afterwards (:class:`RawPathRouting`). Bodies are read
up to the byte cap (``TAGURU_MAX_BODY_BYTES``, default 8 MiB → 413).
"""

import json
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from pytest_taguru.core.jsontext import Float32, format_f32, format_f64
from pytest_taguru.core.limits import U64_MAX
from pytest_taguru.server.errors import ApiError
from pytest_taguru.server.http.bodies import (
    MISSING_JSON_CONTENT_TYPE,
    decode_model,
    is_json_content_type,
    parse_json,
)

DEFAULT_BODY_CAP = 8 * 1024 * 1024
BODY_TOO_LARGE = "Failed to buffer the request body: length limit exceeded"

Body = TypeVar("Body", bound=BaseModel)
Handler = Callable[[Request], Awaitable[Any]]
_AS_IS = frozenset({str, int, bool, type(None)})  # what json.dumps writes as serde does


class JsonText(str):
    """A value already written as serde's compact JSON: :func:`render_json` splices it in."""

    __slots__ = ()


def render_json(value: Any) -> str:
    """Compact JSON as serde_json writes it (server-wire §1.3, assembly §1.7).

    No whitespace, non-ASCII kept raw; a :class:`Float32` prints as the shortest decimal that
    reads back as the same 32-bit float, any other float as the shortest 64-bit round trip in
    serde's layout (``0.00001``, ``1e-7``, ``1e+16``). Floats are swapped for unique string
    markers, the rest is encoded by :func:`json.dumps` (C speed), then the markers are
    replaced by the float texts. Each distinct value is formatted once (a search hit's score
    and its lane score are one value; a deep list repeats many). A :class:`JsonText` is
    spliced in as written.
    """
    texts: list[str] = []
    marker = f"\ue000{secrets.token_hex(8)}:"
    # Keyed by kind and value; zeros stay out (0.0 == -0.0, and their texts differ).
    markers: dict[tuple[bool, float], str] = {}

    def swap(item: Any) -> Any:
        if isinstance(item, float):
            key = (isinstance(item, Float32), item)
            found = markers.get(key) if item else None
            if found is None:
                texts.append(format_f32(item) if key[0] else format_f64(item))
                found = markers[key] = f"{marker}{len(texts) - 1}"
            return found
        if isinstance(item, JsonText):
            texts.append(item)
            return f"{marker}{len(texts) - 1}"
        # Strings, ints, booleans and None are kept without a call: a deep search answer
        # holds thousands of them.
        if isinstance(item, dict):
            return {k: v if type(v) in _AS_IS else swap(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [v if type(v) in _AS_IS else swap(v) for v in item]
        return item

    text = json.dumps(swap(value), ensure_ascii=False, separators=(",", ":"))
    if not texts:
        return text
    quoted = re.compile('"' + re.escape(marker) + '([0-9]+)"')
    return quoted.sub(lambda found: texts[int(found[1])], text)


class JsonBody(Response):
    """A JSON response written by :func:`render_json`."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return render_json(content).encode("utf-8")


class RawPathRouting:
    """Route on the raw, still percent-encoded path, as axum does (server-wire §1.1).

    The server decodes the path before routing, so ``/contexts/a%2Fb`` would become three
    segments and ``/contexts/x%2Fsources`` the listing of ``x``. Here the routing path is the
    raw one; :func:`decoded_name` percent-decodes the ``{name}`` parameter afterwards.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw is not None:
            scope = {**scope, "path": raw.decode("latin-1")}
        await self.app(scope, receive, send)


def decoded_name(request: Request) -> None:
    """Percent-decode the route's ``{name}`` in place; not UTF-8 → 400 ``malformed_request``."""
    raw = request.path_params.get("name")
    if raw is None:
        return
    try:
        # The routing path is the raw bytes read as latin-1: back to those bytes, then decode.
        request.path_params["name"] = unquote_to_bytes(raw.encode("latin-1")).decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(
            "malformed_request", f"Invalid URL: Cannot parse `{raw}` to a `utf-8` string"
        ) from None


def error_response(error: ApiError, started: float) -> Response:
    return JsonBody(
        error.body(time.perf_counter() - started),
        status_code=error.http_status,
        headers=error.headers or None,
    )


def enveloped(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a handler returning a ``result`` value into the envelope; map ApiError."""

    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        try:
            decoded_name(request)
            result = await handler(request)
        except ApiError as error:
            return error_response(error, started)
        return JsonBody({"result": result, "status": "ok", "time": time.perf_counter() - started})

    return endpoint


async def framework_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 in taguru's words (``unknown_path``, ``method_not_allowed``)."""
    started = time.perf_counter()
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    uri = request.scope.get("raw_path", request.url.path.encode()).decode("latin-1")
    if request.url.query:
        uri += "?" + request.url.query
    method = request.method
    if status == 405:
        error = ApiError(
            "method_not_allowed", f"{method} is not supported on {uri}; GET /protocol lists the API"
        )
    elif status == 404:
        error = ApiError(
            "unknown_path", f"no route for {method} {uri}; GET /protocol lists the API"
        )
    else:
        error = ApiError("internal", "internal server error")
    return error_response(error, started)


async def read_body(request: Request) -> bytes:
    """The raw body, refused with 413 ``payload_too_large`` past the cap."""
    cap: int = request.app.state.body_cap
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise ApiError("payload_too_large", BODY_TOO_LARGE)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise ApiError("payload_too_large", BODY_TOO_LARGE)
        chunks.append(chunk)
    return b"".join(chunks)


async def json_body(request: Request, *, check_strings: bool = True) -> Any:
    """A JSON body: 415 without a JSON Content-Type, 413 over the cap, 400 when broken."""
    if not is_json_content_type(request.headers.get("content-type")):
        raise ApiError("malformed_request", MISSING_JSON_CONTENT_TYPE, status=415)
    return parse_json(await read_body(request), check_strings=check_strings)


async def typed_body(request: Request, model: type[Body]) -> Body:
    """A typed body: :func:`json_body`, then 422 when the shape is wrong."""
    return decode_model(model, await json_body(request, check_strings=False))


def _query_refusal(detail: str) -> ApiError:
    return ApiError("malformed_request", f"Failed to deserialize query string: {detail}")


def query_text(request: Request, key: str) -> str | None:
    """A query parameter's decoded value; given twice → 400 (serde's duplicate field)."""
    values = request.query_params.getlist(key)
    if len(values) > 1:
        raise _query_refusal(f"duplicate field `{key}`")
    return values[0] if values else None


def query_int(request: Request, key: str) -> int | None:
    """A ``usize`` query parameter as Rust parses it: optional ``+``, ASCII digits, ≤ 2⁶⁴−1.

    Anything else → 400 ``malformed_request``.
    """
    raw = query_text(request, key)
    if raw is None:
        return None
    digits = raw.removeprefix("+")
    if not digits.isascii() or not digits.isdigit():
        raise _query_refusal(f"{key}: invalid digit found in string")
    if int(digits) > U64_MAX:
        raise _query_refusal(f"{key}: number too large to fit in target type")
    return int(digits)


def query_bool(request: Request, key: str) -> bool | None:
    raw = query_text(request, key)
    if raw is None:
        return None
    if raw not in ("true", "false"):
        raise _query_refusal(f"{key}: provided string was not `true` or `false`")
    return raw == "true"


def page_limit(request: Request) -> int:
    """Keyset listing limit: default 1000, clamped to ≤ 1000, and 0 becomes 1 (§1.6)."""
    limit = query_int(request, "limit")
    return 1000 if limit is None else max(1, min(limit, 1000))
