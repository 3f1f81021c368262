"""HTTP plumbing shared by every route: the envelope, bodies, query strings, errors.

One place builds the success envelope ``{result, status: "ok", time}`` and one place turns
an :class:`ApiError` (or a framework 404/405) into the error envelope (server-wire §1.3).
Bodies are read up to the byte cap (``TAGURU_MAX_BODY_BYTES``, default 8 MiB → 413).
"""

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from pytest_taguru.server.errors import ApiError
from pytest_taguru.server.requests import (
    MISSING_JSON_CONTENT_TYPE,
    decode_model,
    is_json_content_type,
    parse_json,
)

DEFAULT_BODY_CAP = 8 * 1024 * 1024
BODY_TOO_LARGE = "Failed to buffer the request body: length limit exceeded"

Body = TypeVar("Body", bound=BaseModel)
Handler = Callable[[Request], Awaitable[Any]]


class JsonBody(Response):
    """A JSON response with UTF-8 text kept as is (taguru does not escape non-ASCII)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, allow_nan=False).encode("utf-8")


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


async def json_body(request: Request) -> Any:
    """A JSON body: 415 without a JSON Content-Type, 413 over the cap, 400 when broken."""
    if not is_json_content_type(request.headers.get("content-type")):
        raise ApiError("malformed_request", MISSING_JSON_CONTENT_TYPE, status=415)
    return parse_json(await read_body(request))


async def typed_body(request: Request, model: type[Body]) -> Body:
    """A typed body: :func:`json_body`, then 422 when the shape is wrong."""
    return decode_model(model, await json_body(request))


def query_int(request: Request, key: str) -> int | None:
    """An unsigned integer query parameter; unparsable → 400 ``malformed_request``."""
    raw = request.query_params.get(key)
    if raw is None:
        return None
    if not raw.isascii() or not raw.isdigit():
        raise ApiError(
            "malformed_request",
            f"Failed to deserialize query string: {key}: invalid digit found in string",
        )
    return int(raw)


def query_bool(request: Request, key: str) -> bool | None:
    raw = request.query_params.get(key)
    if raw is None:
        return None
    if raw not in ("true", "false"):
        raise ApiError(
            "malformed_request",
            f"Failed to deserialize query string: {key}: provided string was not `true` or `false`",
        )
    return raw == "true"


def page_limit(request: Request) -> int:
    """Keyset listing limit: default 1000, clamped to ≤ 1000, and 0 becomes 1 (§1.6)."""
    limit = query_int(request, "limit")
    return 1000 if limit is None else max(1, min(limit, 1000))
