"""One attempt of one call: send, follow redirects, read the body, all under one deadline.

Redirects are followed here, by hand, so that the ``Authorization`` header never reaches a
redirect target and a 307/308 answer to a POST fails instead of being re-sent. The whole
attempt, every hop and the body included, runs under one whole-exchange deadline
(``run.deadline``). Failures are :class:`CallFailed` in the message forms of the
specification: ``evaluate-run.md`` §1.5, §3.5; ``server-wire.md`` §1.1.
"""

import functools
from dataclasses import dataclass
from typing import Any

import httpx

from pytest_taguru.core.text import truncate_message
from pytest_taguru.run.deadline import TIMEOUT_TEXT, Exchange, bounded

RESPONSE_CAP_BYTES = 256 * 1024 * 1024
"""A response body past this size is an unreadable response."""

MAX_REDIRECTS = 10
"""Redirect hops followed; one more is a transport failure."""

_REISSUED_AS_GET = frozenset({301, 302, 303})
_KEPT_METHOD = frozenset({307, 308})
_REDIRECTS = _REISSUED_AS_GET | _KEPT_METHOD


class CallFailed(Exception):
    """A failed call: ``message`` is the full §3.5 text (never truncated here).

    ``status`` is the HTTP status when a readable response arrived (``None`` for transport
    failures and unreadable bodies); ``code`` is the error body's string ``code`` and is only
    ever set on a 404. ``transport`` marks a failure of the network itself (refused, reset,
    broken off, the deadline spent): what the dead-server rule counts. ``unanswered`` marks
    an established connection reset or closed before any byte of an answer arrived (a stale
    keep-alive connection, a server restarting its workers), which is safe to send again.
    """

    def __init__(
        self,
        message: str,
        status: int | None = None,
        code: str | None = None,
        *,
        transport: bool = False,
        unanswered: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.transport = transport
        self.unanswered = unanswered

    @property
    def not_found(self) -> bool:
        return self.status == 404

    def truncated(self) -> str:
        """The message as lanes record it: cut to 200 bytes plus ``…`` (§3.5)."""
        return truncate_message(self.message)


@dataclass(frozen=True)
class Answer:
    """A response read whole: status, headers and the body as text."""

    status: int
    headers: httpx.Headers
    text: str


def _transport_text(error: Exception) -> str:
    """An exception's own text, or its class name when it has none; every timeout is the
    spent deadline's (the backend cuts each operation's timeout to the deadline)."""
    if isinstance(error, httpx.TimeoutException):
        return TIMEOUT_TEXT
    return str(error) or type(error).__name__


def _is_header_text(value: str) -> bool:
    """No control character but tab: what an HTTP header value may carry (UTF-8 is sent raw)."""
    return all(ch == "\t" or (ch >= " " and ch != "\x7f") for ch in value)


class _Unreadable(Exception):
    """The body could not be read whole as UTF-8 within the size cap."""

    def __init__(self, text: str, *, transport: bool = False) -> None:
        super().__init__(text)
        self.transport = transport


def exchange(
    http: httpx.Client,
    token: str | None,
    method: str,
    url: str,
    content: bytes | None,
    budget_s: float,
    extensions: dict[str, Any] | None = None,
) -> Answer:
    """Send, follow redirects, read the body, within ``budget_s`` seconds in all.

    ``extensions`` travel with every request to the transport (a replay's tape).

    Transport problems (including a redirect that may not be followed, too many hops and
    the deadline) raise :class:`CallFailed` ``<url>: <text>``; a body over the cap, not UTF-8
    or broken off raises ``<url>: unreadable response: <text>``. ``url`` in messages is
    always the original request URL.
    """
    with bounded(budget_s) as attempt:
        target = url
        authorized = True
        for _ in range(MAX_REDIRECTS + 1):
            response = _send(
                http,
                attempt,
                token if authorized else None,
                method,
                target,
                content,
                extensions,
                url,
            )
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
                text = _read_body(response)
            except _Unreadable as error:
                raise CallFailed(
                    f"{url}: unreadable response: {error}", transport=error.transport
                ) from error
            return Answer(response.status_code, response.headers, text)
        raise CallFailed(f"{url}: too many redirects (more than {MAX_REDIRECTS})")


def _send(
    http: httpx.Client,
    attempt: Exchange,
    token: str | None,
    method: str,
    target: str,
    content: bytes | None,
    extensions: dict[str, Any] | None,
    url: str,
) -> httpx.Response:
    remaining = attempt.time_left()
    if remaining <= 0:
        raise CallFailed(f"{url}: {TIMEOUT_TEXT}", transport=True)
    headers: dict[bytes, bytes] = {}
    if content is not None:
        headers[b"Content-Type"] = b"application/json"
    if token is not None:
        if not _is_header_text(token):
            # Checked here: the HTTP layer would quote the offending value in its error.
            raise CallFailed(f"{url}: the bearer token is not a valid HTTP header value")
        headers[b"Authorization"] = b"Bearer " + token.encode("utf-8")
    try:
        request = http.build_request(
            method,
            _parsed_url(target),
            content=content,
            headers=headers,
            timeout=remaining,
            extensions=extensions,
        )
        return http.send(request, stream=True)
    except httpx.TransportError as error:
        # Cut off: an established connection reset or closed before any byte of an answer.
        # A refused connection (nothing listens) and a spent deadline are not cut off.
        cut_off = not isinstance(error, httpx.TimeoutException | httpx.ConnectError)
        raise CallFailed(
            f"{url}: {_transport_text(error)}",
            transport=True,
            unanswered=cut_off and attempt.received == 0,
        ) from error
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        raise CallFailed(f"{url}: {_transport_text(error)}") from error


@functools.lru_cache(maxsize=1024)
def _parsed_url(url: str) -> httpx.URL:
    """``url`` parsed once (an ``httpx.URL`` is immutable): a run sends most of its calls to a
    few URLs, and parsing one is a good part of building a request."""
    return httpx.URL(url)


def _read_body(response: httpx.Response) -> str:
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > RESPONSE_CAP_BYTES:
                raise _Unreadable(f"body exceeds the {RESPONSE_CAP_BYTES}-byte limit")
            chunks.append(chunk)
    except httpx.HTTPError as error:
        transport = isinstance(error, httpx.TransportError)
        raise _Unreadable(_transport_text(error), transport=transport) from error
    finally:
        response.close()
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Unreadable(f"not valid UTF-8: {error}") from error
