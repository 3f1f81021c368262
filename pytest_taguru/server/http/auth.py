"""Bearer-token authentication as an ASGI wrapper (server-wire §1.2).

Auth is on when ``TAGURU_API_TOKEN`` or ``TAGURU_API_TOKENS`` (``name:token,…``) yields a
token. Then every path but ``/health``, ``/live``, ``/metrics`` and ``/version`` needs
``Authorization: Bearer <token>`` — scheme word case-insensitive, one or more spaces, token
compared byte-for-byte in constant time; two ``Authorization`` headers count as none.
Failure: 401 ``unauthorized`` with ``WWW-Authenticate: Bearer``. Keys are not scoped here
(every key is admin) and failed attempts are not rate-limited.
"""

import hmac
import os
import re
import time
from collections.abc import Iterable, Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from pytest_taguru.core.text import trim
from pytest_taguru.server.errors import ApiError
from pytest_taguru.server.http.transport import error_response

EXEMPT_PATHS = frozenset({"/health", "/live", "/metrics", "/version"})
UNAUTHORIZED_MESSAGE = "missing or invalid bearer token (send Authorization: Bearer <token>)"
_BEARER = re.compile(rb"(?i)bearer +")


def configured_tokens(environ: Mapping[str, str]) -> list[bytes]:
    """Tokens from ``TAGURU_API_TOKEN`` (trimmed) and every ``name:token`` of the list."""
    tokens: list[bytes] = []
    single = trim(environ.get("TAGURU_API_TOKEN", ""))
    if single:
        tokens.append(single.encode())
    for entry in environ.get("TAGURU_API_TOKENS", "").split(","):
        _, separator, token = entry.partition(":")
        if separator and trim(token):
            tokens.append(trim(token).encode())
    return tokens


def presented_token(headers: Iterable[tuple[bytes, bytes]]) -> bytes | None:
    """The bearer token of the single ``Authorization`` header, else None."""
    values = [value for key, value in headers if key.lower() == b"authorization"]
    if len(values) != 1:
        return None
    match = _BEARER.match(values[0])
    return values[0][match.end() :] if match else None


class BearerAuth:
    """Wraps an ASGI app; a request without a valid token gets the 401 envelope."""

    def __init__(self, app: ASGIApp, tokens: list[bytes]) -> None:
        self.app = app
        self.tokens = tokens

    def accepts(self, token: bytes | None) -> bool:
        # Compare against every key so the time taken does not reveal which one matched.
        matched = False
        for expected in self.tokens:
            matched |= token is not None and hmac.compare_digest(token, expected)
        return matched

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        if (
            scope["type"] != "http"
            or not self.tokens
            or scope["path"] in EXEMPT_PATHS
            or self.accepts(presented_token(scope["headers"]))
        ):
            await self.app(scope, receive, send)
            return
        refusal = ApiError(
            "unauthorized", UNAUTHORIZED_MESSAGE, headers={"www-authenticate": "Bearer"}
        )
        await error_response(refusal, started)(scope, receive, send)


def tokens_from_environment() -> list[bytes]:
    return configured_tokens(os.environ)
