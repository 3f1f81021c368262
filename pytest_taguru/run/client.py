"""The taguru HTTP client: URL building, bearer auth, redirects, the envelope and its failures.

Every call except the two ``/health`` reads goes through the envelope rule: status exactly 200
and a JSON object with a ``result`` key, whose value is returned. Anything else raises
:class:`CallFailed` carrying the exact message form of the specification, the status when one
was received and, for a 404, the body's ``code``. Redirects are followed here, by hand, so that
the ``Authorization`` header never reaches a redirect target and a 307/308 answer to a POST
fails instead of being re-sent. Specification: ``evaluate-run.md`` §1.5, §3.5;
``server-wire.md`` §1.1, §1.3.
"""

import time
from collections.abc import Sequence
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import TracebackType
from typing import Any, Self

import ada_url
import httpx
from pydantic import ValidationError

from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.text import trim, truncate_message

REQUEST_TIMEOUT_S = 35.0
"""Whole-exchange budget of one call, above the server's own 30 s request budget."""

SKEW_PROBE_TIMEOUT_S = 4.0
"""Budget of the best-effort version-skew ``GET /health``."""

RESPONSE_CAP_BYTES = 256 * 1024 * 1024
"""A response body past this size is an unreadable response."""

MAX_REDIRECTS = 10
"""Redirect hops followed; one more is a transport failure."""

_REISSUED_AS_GET = frozenset({301, 302, 303})
_KEPT_METHOD = frozenset({307, 308})
_REDIRECTS = _REISSUED_AS_GET | _KEPT_METHOD

# WHATWG percent-encode sets as the Rust ``url`` crate (2.5.8) applies them to a path segment:
# C0 controls, DEL and all non-ASCII, plus these ASCII characters.
_SEGMENT_ESCAPED = frozenset(b' "<>`#?{}/%')
_SPECIAL_SEGMENT_ESCAPED = _SEGMENT_ESCAPED | {ord("\\")}
_SPECIAL_SCHEMES = frozenset({"http:", "https:", "ws:", "wss:", "ftp:", "file:"})
_REMOVED_FROM_SEGMENTS = str.maketrans("", "", "\t\r\n")
_FORM_UNRESERVED = frozenset(b"*-._0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


class CallFailed(Exception):
    """A failed call: ``message`` is the full §3.5 text (never truncated here).

    ``status`` is the HTTP status when a readable response arrived (``None`` for transport
    failures and unreadable bodies); ``code`` is the error body's string ``code`` and is only
    ever set on a 404.
    """

    def __init__(self, message: str, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code

    @property
    def not_found(self) -> bool:
        return self.status == 404

    def truncated(self) -> str:
        """The message as lanes record it: cut to 200 bytes plus ``…`` (§3.5)."""
        return truncate_message(self.message)


class UrlError(ValueError):
    """A base URL no request URL can be built from; the message is the complete text."""


def _percent_encode(text: str, escaped: frozenset[int]) -> str:
    out: list[str] = []
    for byte in text.encode("utf-8"):
        if byte < 0x20 or byte >= 0x7F or byte in escaped:
            out.append(f"%{byte:02X}")
        else:
            out.append(chr(byte))
    return "".join(out)


def form_urlencode(pairs: Sequence[tuple[str, str]]) -> str:
    """``application/x-www-form-urlencoded``: space as ``+``, all but ``A-Za-z0-9*-._`` escaped."""

    def encode(text: str) -> str:
        return "".join(
            chr(byte) if byte in _FORM_UNRESERVED else "+" if byte == 0x20 else f"%{byte:02X}"
            for byte in text.encode("utf-8")
        )

    return "&".join(f"{encode(name)}={encode(value)}" for name, value in pairs)


def _append_segment(path: str, segment: str, special: bool) -> str:
    """Append one segment to a URL path exactly as the Rust ``url`` crate's setter does.

    A segment that is exactly ``.`` or ``..`` is skipped. Otherwise a ``/`` separator is added
    unless the path is exactly ``/`` (so a base path ending in ``/`` gains a doubled slash),
    tab/CR/LF are dropped, and the rest is percent-encoded as one segment. A segment that only
    becomes ``.``/``..`` once tab/CR/LF are dropped is still treated as a dot segment.
    """
    if segment in (".", ".."):
        return path
    if path != "/":
        path += "/"
    start = len(path)
    encoded = _percent_encode(
        segment.translate(_REMOVED_FROM_SEGMENTS),
        _SPECIAL_SEGMENT_ESCAPED if special else _SEGMENT_ESCAPED,
    )
    if encoded == "..":
        path = path[:start]
        if path.endswith("/") and path[:-1].rfind("/") >= 0:
            path = path[:-1]
        return path[: path.rfind("/") + 1] if path else path
    if encoded == ".":
        path = path[:start]
        return path if path.endswith("/") else path + "/"
    return path + encoded


def _split_href(href: str, protocol: str) -> tuple[str, str, str, str] | None:
    """``href`` as (scheme+authority, path, ``?query`` or "", ``#fragment`` or "").

    ``None`` when the URL has an opaque path (nothing after ``scheme:`` starts with ``/``).
    A bare ``?`` or ``#`` is kept, as the serialized URL keeps it.
    """
    rest_at = len(protocol)
    if not href.startswith("/", rest_at):
        return None
    path_at = rest_at
    if href.startswith("//", rest_at):
        path_at = next((i for i in range(rest_at + 2, len(href)) if href[i] in "/?#"), len(href))
    fragment_at = href.find("#", path_at)
    fragment_at = len(href) if fragment_at < 0 else fragment_at
    query_at = href.find("?", path_at, fragment_at)
    query_at = fragment_at if query_at < 0 else query_at
    return href[:path_at], href[path_at:query_at], href[query_at:fragment_at], href[fragment_at:]


def join_segments(
    base: str, segments: Sequence[str], query: Sequence[tuple[str, str]] | None = None
) -> str:
    """The request URL: ``base`` plus encoded path ``segments`` plus form-encoded ``query``.

    The base is parsed by WHATWG rules; its path is kept and the segments appended to it (see
    :func:`_append_segment`); its own query and fragment stay on the URL, the ``query`` pairs
    being appended after the base's own query (joined by ``&`` when that query is non-empty).
    Raises :class:`UrlError` for a base that does not parse or that cannot carry a path (an
    opaque path such as ``localhost:8248``).
    """
    try:
        parsed = ada_url.URL(base)
    except ValueError as error:
        raise UrlError(f"'{base}' is not a usable base URL: {error}") from error
    protocol: str = parsed.protocol
    parts = _split_href(parsed.href, protocol)
    if parts is None:
        raise UrlError(f"'{base}' cannot carry a path")
    prefix, path, query_text, fragment = parts
    special = protocol in _SPECIAL_SCHEMES
    for segment in segments:
        path = _append_segment(path, segment, special)
    if query:
        pairs = form_urlencode(query)
        separator = "?" if not query_text else "" if query_text == "?" else "&"
        query_text += separator + pairs
    return prefix + path + query_text + fragment


def _transport_text(error: Exception) -> str:
    """An exception's own text, or its class name when it has none (e.g. a bare timeout)."""
    return str(error) or type(error).__name__


def decode_error_text(error: ValidationError) -> str:
    """One line naming the first problem, as serde reports only its first error.

    Form: ``<dotted location>: <message>`` (location omitted at the top level).
    """
    first = error.errors(include_url=False)[0]
    location = ".".join(
        f"[{part}]" if isinstance(part, int) else str(part) for part in first["loc"]
    ).replace(".[", "[")
    return f"{location}: {first['msg']}" if location else str(first["msg"])


class _Unreadable(Exception):
    """The body could not be read whole as UTF-8 within the size cap."""


class TaguruClient:
    """Synchronous taguru client over one base URL (unmasked) and an optional bearer token.

    ``transport`` replaces the network (``httpx.MockTransport`` in tests). Strictly one request
    at a time; safe to create one per worker process.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.base_url = base_url
        self._token = token or None
        self._timeout_s = timeout_s
        # No cookie is ever stored or replayed (taguru's client keeps none); an injected
        # transport must not be bypassed by proxy settings from the environment.
        self._http = httpx.Client(
            transport=transport,
            follow_redirects=False,
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            trust_env=transport is None,
        )

    def __repr__(self) -> str:
        # Never the token, never userinfo: only whether a token is set.
        return f"TaguruClient(bearer={'set' if self._token else 'none'})"

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- public calls ---------------------------------------------------------------------

    def url_for(
        self, segments: Sequence[str], query: Sequence[tuple[str, str]] | None = None
    ) -> str:
        """The full request URL, as it appears in failure messages."""
        return join_segments(self.base_url, segments, query)

    def health(self) -> str:
        """``GET /health`` body text (reachability): any status-200 body passes.

        Raises :class:`CallFailed` on a transport failure, an unreadable body or another status.
        """
        url = self._url_or_fail(["health"], None)
        status, headers, text = self._exchange("GET", url, None, self._timeout_s)
        if status != 200:
            raise _status_failure(url, status, headers, text)
        return text

    def skew_probe(self) -> str | None:
        """The version-skew ``GET /health`` (4 s budget): the body on status 200, else ``None``.

        Never raises for anything the server or the network does.
        """
        try:
            url = self.url_for(["health"])
            status, _, text = self._exchange("GET", url, None, SKEW_PROBE_TIMEOUT_S)
        except (UrlError, CallFailed):
            return None
        return text if status == 200 else None

    def get_json(
        self, segments: Sequence[str], query: Sequence[tuple[str, str]] | None = None
    ) -> Any:
        """``GET`` through the envelope rule; returns ``result`` or raises :class:`CallFailed`."""
        url = self._url_or_fail(segments, query)
        return _unwrap(url, *self._exchange("GET", url, None, self._timeout_s))

    def post_json(self, segments: Sequence[str], body: Any) -> Any:
        """JSON ``POST`` through the envelope rule; returns ``result`` or raises."""
        url = self._url_or_fail(segments, None)
        content = dumps_compact(body).encode("utf-8")
        return _unwrap(url, *self._exchange("POST", url, content, self._timeout_s))

    # --- one exchange, redirects included ---------------------------------------------------

    def _url_or_fail(self, segments: Sequence[str], query: Sequence[tuple[str, str]] | None) -> str:
        try:
            return self.url_for(segments, query)
        except UrlError as error:
            raise CallFailed(str(error)) from error

    def _exchange(
        self, method: str, url: str, content: bytes | None, budget_s: float
    ) -> tuple[int, httpx.Headers, str]:
        """Send, follow redirects, read the body: (status, headers, text).

        Transport problems (including a redirect that may not be followed, too many hops and
        the whole-exchange budget) raise :class:`CallFailed` ``<url>: <text>``; a body over the
        cap or not UTF-8 raises ``<url>: unreadable response: <text>``. ``url`` in messages is
        always the original request URL.
        """
        deadline = time.monotonic() + budget_s
        target = url
        authorized = True
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send(method, target, content, authorized, deadline, url)
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location is not None:
                response.close()
                if response.status_code in _KEPT_METHOD and method == "POST":
                    raise CallFailed(
                        f"{url}: redirect {response.status_code} in answer to a POST is not "
                        "followed"
                    )
                if response.status_code in _REISSUED_AS_GET:
                    method, content = "GET", None
                try:
                    target = str(response.request.url.join(location))
                except httpx.InvalidURL as error:
                    raise CallFailed(f"{url}: {_transport_text(error)}") from error
                authorized = False
                continue
            try:
                text = _read_body(response, deadline)
            except _Unreadable as error:
                raise CallFailed(f"{url}: unreadable response: {error}") from error
            return response.status_code, response.headers, text
        raise CallFailed(f"{url}: too many redirects (more than {MAX_REDIRECTS})")

    def _send(
        self,
        method: str,
        target: str,
        content: bytes | None,
        authorized: bool,
        deadline: float,
        url: str,
    ) -> httpx.Response:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CallFailed(f"{url}: timed out")
        headers: dict[bytes, bytes] = {}
        if content is not None:
            headers[b"Content-Type"] = b"application/json"
        if authorized and self._token is not None:
            if not _is_header_text(self._token):
                # Checked here: the HTTP layer would quote the offending value in its error.
                raise CallFailed(f"{url}: the bearer token is not a valid HTTP header value")
            headers[b"Authorization"] = b"Bearer " + self._token.encode("utf-8")
        try:
            request = self._http.build_request(
                method, target, content=content, headers=headers, timeout=remaining
            )
            return self._http.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            raise CallFailed(f"{url}: {_transport_text(error)}") from error


def _is_header_text(value: str) -> bool:
    """No control character but tab: what an HTTP header value may carry (UTF-8 is sent raw)."""
    return all(ch == "\t" or (ch >= " " and ch != "\x7f") for ch in value)


def _read_body(response: httpx.Response, deadline: float) -> str:
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > RESPONSE_CAP_BYTES:
                raise _Unreadable(f"body exceeds the {RESPONSE_CAP_BYTES}-byte limit")
            if time.monotonic() > deadline:
                raise _Unreadable("timed out")
            chunks.append(chunk)
    except httpx.HTTPError as error:
        raise _Unreadable(_transport_text(error)) from error
    finally:
        response.close()
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Unreadable(f"not valid UTF-8: {error}") from error


def _parse_body(text: str) -> Any:
    """The answer's JSON, ``None`` when it is not JSON to taguru's reader."""
    try:
        return read_json(text, exact_wide_integers=True)
    except SerdeError:
        return None


def _status_failure(url: str, status: int, headers: httpx.Headers, text: str) -> CallFailed:
    """``<url> answered <status>: <detail>`` plus `` (Retry-After: <value>)`` when sent."""
    parsed = _parse_body(text)
    error = parsed.get("error") if isinstance(parsed, dict) else None
    detail = error if isinstance(error, str) else trim(text)
    message = f"{url} answered {status}: {detail}"
    retry_after = _visible_header(headers, "retry-after")
    if retry_after is not None:
        message += f" (Retry-After: {retry_after})"
    code = parsed.get("code") if isinstance(parsed, dict) and status == 404 else None
    return CallFailed(message, status, code if isinstance(code, str) else None)


def _visible_header(headers: httpx.Headers, name: str) -> str | None:
    """A header's first raw value, or ``None`` when absent or not visible ASCII (``to_str``)."""
    wanted = name.encode("ascii")
    for key, value in headers.raw:
        if key.lower() == wanted:
            if all(byte == 0x09 or 0x20 <= byte < 0x7F for byte in value):
                return value.decode("ascii")
            return None
    return None


def _unwrap(url: str, status: int, headers: httpx.Headers, text: str) -> Any:
    """The envelope rule: status 200 and a JSON object with ``result``, else :class:`CallFailed`."""
    if status != 200:
        raise _status_failure(url, status, headers, text)
    parsed = _parse_body(text)
    if not isinstance(parsed, dict) or "result" not in parsed:
        raise CallFailed(f"{url}: not a taguru response: {trim(text)}", status)
    return parsed["result"]
