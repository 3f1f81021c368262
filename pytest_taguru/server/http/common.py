"""What the route handlers share: the request's store and context name, the limit clamp, and
the checks that run before the context lookup (names, time windows, source filters).
"""

from starlette.requests import Request

from pytest_taguru.server.errors import ApiError, check_size, list_over_limit
from pytest_taguru.server.index.search import SourceFilterSpec
from pytest_taguru.server.store import Store

MAX_MATCH_LIMIT = 1000
MAX_LIST_ITEMS = 1000
MAX_TAG_BYTES = 128
MAX_DISTINCT_TAGS = 32


def store_of(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def name_of(request: Request) -> str:
    name: str = request.path_params["name"]
    return name


def clamp_limit(limit: int | None, default: int) -> int:
    """An omitted limit takes the default; nothing exceeds 1000 (never an error)."""
    return default if limit is None else min(limit, MAX_MATCH_LIMIT)


def check_text(what: str, value: str, cap: int) -> None:
    """400 ``invalid_argument`` for an empty or over-cap (bytes) name."""
    if not value:
        raise ApiError("invalid_argument", f"{what} must not be empty; nothing was applied")
    check_size(what, value, cap)


def check_window(since: int | None, until: int | None) -> None:
    if since is not None and until is not None and since >= until:
        raise ApiError(
            "invalid_argument",
            f"since {since} is not before until {until} — the window is half-open "
            "[since, until) and this one selects nothing",
        )


def source_filter(tags: list[str], since: int | None, until: int | None) -> SourceFilterSpec:
    """A search's ``tags``/``since``/``until``, checked in taguru's order (§3.9)."""
    if len(tags) > MAX_LIST_ITEMS:
        raise list_over_limit("tags", len(tags))
    for tag in tags:
        if not tag:
            raise ApiError(
                "invalid_argument", "a filter tag must not be empty; nothing was applied"
            )
        check_text("a filter tag", tag, MAX_TAG_BYTES)
    check_window(since, until)
    distinct = frozenset(tags)
    if len(distinct) > MAX_DISTINCT_TAGS:
        raise ApiError(
            "over_limit",
            f"{len(distinct)} distinct filter tags where at most {MAX_DISTINCT_TAGS} may be named",
        )
    return SourceFilterSpec(tags=distinct, since=since, until=until)
