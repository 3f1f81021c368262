"""What a recorded answer is filed under: the request's method, target and canonical body.

Two requests that mean the same must meet the same recording, whatever the order of their
body's keys or its white space; two that differ in anything the server reads must not. The
target is the request URL's path and query as sent (percent-encoded, the base URL's own path
included); the body is its JSON value in canonical text: keys sorted, no white space, strings
raw UTF-8, numbers as the one JSON reader (``core/serde``) reads them.
"""

import json
from dataclasses import dataclass

import httpx

from pytest_taguru.core.serde import SerdeError, read_json

SHOWN_BODY_CHARS = 300
"""How much of a body a message about a request shows."""


def canonical_body(content: bytes | None) -> str | None:
    """The canonical text of a request body: None for no (or an empty) body; a body that is
    not JSON (the client never sends one) is keyed by its text as sent."""
    if not content:
        return None
    text = content.decode("utf-8", errors="replace")
    try:
        value = read_json(text, exact_wide_integers=True)
    except SerdeError:
        return text
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def request_target(url: str | httpx.URL) -> str:
    """The path and query of ``url`` as sent on the request line."""
    return httpx.URL(url).raw_path.decode("ascii")


@dataclass(frozen=True)
class RequestKey:
    """One request as a recording files it."""

    method: str
    target: str
    body: str | None
    """The canonical body text (:func:`canonical_body`); None for a request without one."""

    @classmethod
    def of(cls, method: str, url: str | httpx.URL, content: bytes | None) -> "RequestKey":
        return cls(method.upper(), request_target(url), canonical_body(content))

    def describe(self) -> str:
        """``POST /contexts/sake/sources/search {"limit":10,…}``, the body cut short."""
        if self.body is None:
            return f"{self.method} {self.target}"
        body = self.body
        if len(body) > SHOWN_BODY_CHARS:
            body = body[:SHOWN_BODY_CHARS] + "…"
        return f"{self.method} {self.target} {body}"
