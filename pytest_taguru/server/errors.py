"""The error vocabulary of the reference server: one exception, one status table.

server-wire §1.4: the HTTP status is derived from the code, except for body-decoding
rejections, which keep the status the framework chose (415/400/422 under
``malformed_request``, §1.5). §1.3 lists the optional members of the error envelope.
"""

from dataclasses import dataclass, field
from typing import Any

STATUS_OF_CODE: dict[str, int] = {
    "malformed_request": 400,
    "invalid_argument": 400,
    "over_limit": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "read_only_replica": 403,
    "no_context": 404,
    "no_source": 404,
    "no_paragraph": 404,
    "no_group": 404,
    "no_schema": 404,
    "unknown_path": 404,
    "method_not_allowed": 405,
    "timeout": 408,
    "already_exists": 409,
    "conflict": 409,
    "stale_cursor": 410,
    "payload_too_large": 413,
    "rate_limited": 429,
    "internal": 500,
    "embeddings_unconfigured": 501,
    "embeddings_failed": 502,
    "shard_unreachable": 502,
    "overloaded": 503,
    "unhealthy": 503,
    "maintenance": 503,
    "storage_full": 507,
}

MAX_LISTED_ISSUES = 20
"""An error envelope lists at most this many issues; ``issues_total`` carries the count."""


@dataclass(frozen=True)
class Issue:
    """One path-addressed validation failure (server-wire §1.5 family 2)."""

    path: str
    kind: str
    expected: str
    actual: str

    def as_json(self) -> dict[str, str]:
        return {
            "path": self.path,
            "kind": self.kind,
            "expected": self.expected,
            "actual": self.actual,
        }


@dataclass
class ApiError(Exception):
    """A refusal that becomes the error envelope.

    ``status`` defaults to the code's status; ``extras`` carries the optional envelope
    members (``integrity``, ``durable_batches``, ``retryable_after_correction``, …).
    """

    code: str
    message: str
    status: int | None = None
    issues: list[Issue] = field(default_factory=list)
    issues_total: int = 0
    extras: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    @property
    def http_status(self) -> int:
        return self.status if self.status is not None else STATUS_OF_CODE[self.code]

    def body(self, elapsed: float) -> dict[str, Any]:
        """The envelope: ``{status, code, error, time}`` plus the applicable extras."""
        body: dict[str, Any] = {
            "status": "error",
            "code": self.code,
            "error": self.message,
            "time": elapsed,
        }
        if self.issues:
            body["issues"] = [issue.as_json() for issue in self.issues[:MAX_LISTED_ISSUES]]
        if self.issues_total:
            body["issues_total"] = self.issues_total
        body.update(self.extras)
        return body


def no_context(name: str) -> ApiError:
    """404 ``no_context`` with taguru's message."""
    return ApiError("no_context", f"context '{name}' not found")


def check_size(what: str, value: str, cap: int) -> None:
    """400 ``invalid_argument`` when ``value`` is over ``cap`` UTF-8 bytes."""
    size = len(value.encode())
    if size > cap:
        raise ApiError(
            "invalid_argument",
            f"{what} is {size} bytes, over the {cap}-byte cap; nothing was applied",
        )


def list_over_limit(field_name: str, count: int) -> ApiError:
    """400 ``over_limit`` for a list-shaped input past the 1000-item cap (§1.6)."""
    return ApiError(
        "over_limit",
        f"{field_name} carries {count} items, past the per-request limit of 1000; "
        "split the request",
    )


def collected_refusal(what: str, issues: list[Issue]) -> ApiError:
    """400 ``invalid_argument`` for a hand-validated body (§1.5 family 2).

    Message: ``<what> refused <N> issue(s):`` then ``\\n- <path>: expected <X>, got <Y>``
    per listed issue (at most 20), ``\\n… and <k> more issue(s)`` past that, then
    ``; nothing was applied``.
    """
    total = len(issues)
    listed = issues[:MAX_LISTED_ISSUES]
    lines = [f"{what} refused {total} issue(s):"]
    lines += [f"\n- {i.path}: expected {i.expected}, got {i.actual}" for i in listed]
    if total > len(listed):
        lines.append(f"\n… and {total - len(listed)} more issue(s)")
    lines.append("; nothing was applied")
    return ApiError(
        "invalid_argument",
        "".join(lines),
        issues=listed,
        issues_total=total,
        extras={"integrity": "nothing_written", "retryable_after_correction": True},
    )
