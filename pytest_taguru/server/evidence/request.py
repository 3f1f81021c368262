"""Decoding of the ``POST /contexts/{name}/evidence`` body (assembly.md §2.2, §2.3).

The body has already been read by the one JSON reader (``core/serde``: a syntax error, a
number past the f64 range or nesting past 127 levels is 400 before this module runs). Here the
shape is checked the way taguru's serde decoder does, member by member in document order, so
the first problem met decides the 422 and its message::

    Failed to deserialize the JSON body into the target type: <path>: <detail> at line L column C

``<path>: `` is left out for a top-level problem (``missing field `origins```). The position is
serde's: the line and the byte column just after the offending value (for a missing field,
after the closing ``}``). Unknown members are ignored at every level; ``null`` equals absent for
every optional field except ``include_communities`` (a plain boolean). After the shape, the
list caps answer 400 ``over_limit``: ``origins`` first, then ``labels``.

Deviation, documented: the whole body is parsed before the shape is checked, so a syntax error
that comes after a shape error answers 400 where taguru's streaming parser would answer 422.
"""

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_taguru.core.budget import Limits
from pytest_taguru.core.jsontext import format_plain
from pytest_taguru.core.limits import U64_MAX
from pytest_taguru.core.serde_numbers import parse_int, parse_serde_float
from pytest_taguru.server.errors import ApiError, list_over_limit
from pytest_taguru.server.http.bodies import JSON_DATA_PREFIX

MAX_CUES = 1000
_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder(parse_float=parse_serde_float, parse_int=parse_int)
"""Members re-read with positions, numbers as the one reader reads them (``core/serde``)."""

REQUEST_STRUCT = "struct AssembleEvidenceRequest"
BUDGET_STRUCT = "struct BudgetRequest"
RERANK_STRUCT = "struct RerankRequest"
CUE_LIST_MISMATCH = "data did not match any variant of untagged enum OneOrMany"
DEFAULT_LIMITS = Limits.resolve()


@dataclass(frozen=True)
class RerankRequest:
    """``rerank``: ``{}`` asks for the server's reranker, ``model`` also pins its model."""

    model: str | None = None


@dataclass(frozen=True)
class EvidenceRequest:
    """A decoded evidence request; ``None`` means absent (or ``null``)."""

    origins: tuple[str, ...]
    labels: tuple[str, ...] = ()
    dice_floor: float | None = None
    semantic_floor: float | None = None
    resolve_limit: int | None = None
    activate_decay: float | None = None
    activate_limit: int | None = None
    text_fallback_query: str | None = None
    search_limit: int | None = None
    include_communities: bool = False
    budget: Limits = DEFAULT_LIMITS
    rerank: RerankRequest | None = None

    @property
    def canonical_query(self) -> str:
        """``text_fallback_query`` verbatim, else ``origins`` joined with ``"; "`` (§3.1)."""
        if self.text_fallback_query is not None:
            return self.text_fallback_query
        return "; ".join(self.origins)


@dataclass(frozen=True)
class _Member:
    key: str
    value: Any
    key_end: int
    value_end: int
    value_start: int


class _ShapeError(Exception):
    """A serde-style shape problem (422): ``detail`` at text offset ``end``."""

    def __init__(self, path: str, detail: str, end: int) -> None:
        super().__init__(detail)
        self.path = path
        self.detail = detail
        self.end = end


def unexpected(value: Any) -> str:
    """serde's ``Unexpected`` text for a decoded JSON value (``string "x"``, ``integer `5```)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):  # within i64/u64: the reader reads a wider literal as a float
        return f"integer `{value}`"
    if isinstance(value, float):
        text = format_plain(value)
        whole = math.isfinite(value) and "." not in text and "e" not in text
        return f"floating point `{text + '.0' if whole else text}`"
    if isinstance(value, str):
        return "string " + json.dumps(value, ensure_ascii=False)
    return "sequence" if isinstance(value, list) else "map"


def _skip_ws(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def _members(text: str, start: int) -> tuple[list[_Member], int]:
    """The members of the object whose ``{`` is at ``start`` (valid JSON), and its end."""
    members: list[_Member] = []
    index = _skip_ws(text, start + 1)
    if text[index] == "}":
        return members, index + 1
    while True:
        key, key_end = _DECODER.raw_decode(text, index)
        value_start = _skip_ws(text, _skip_ws(text, key_end) + 1)
        value, value_end = _DECODER.raw_decode(text, value_start)
        members.append(_Member(key, value, key_end, value_end, value_start))
        index = _skip_ws(text, value_end)
        if text[index] == "}":
            return members, index + 1
        index = _skip_ws(text, index + 1)


def _usize(path: str, member: _Member) -> int | None:
    value = member.value
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= U64_MAX:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and -U64_MAX <= value < 0:
        detail = f"invalid value: {unexpected(value)}, expected usize"
    else:
        detail = f"invalid type: {unexpected(value)}, expected usize"
    raise _ShapeError(path, detail, member.value_end)


def _number(expected: str) -> Callable[[str, _Member], float | None]:
    def decode(path: str, member: _Member) -> float | None:
        value = member.value
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise _ShapeError(
            path, f"invalid type: {unexpected(value)}, expected {expected}", member.value_end
        )

    return decode


def _text(path: str, member: _Member) -> str | None:
    if member.value is None or isinstance(member.value, str):
        return member.value
    raise _ShapeError(
        path, f"invalid type: {unexpected(member.value)}, expected a string", member.value_end
    )


def _flag(path: str, member: _Member) -> bool:
    if isinstance(member.value, bool):
        return member.value
    raise _ShapeError(
        path, f"invalid type: {unexpected(member.value)}, expected a boolean", member.value_end
    )


def _cues(path: str, member: _Member) -> tuple[str, ...] | None:
    value = member.value
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(cue, str) for cue in value):
        return tuple(value)
    if value is None and path == "labels":
        return None
    raise _ShapeError(path, CUE_LIST_MISMATCH, member.value_end)


def _struct(text: str, path: str, member: _Member, expected: str) -> list[_Member] | None:
    """A nested object's members in document order (``None`` for ``null``)."""
    if member.value is None:
        return None
    if not isinstance(member.value, dict):
        raise _ShapeError(
            path, f"invalid type: {unexpected(member.value)}, expected {expected}", member.value_end
        )
    return _members(text, member.value_start)[0]


def _walk(
    prefix: str, members: list[_Member], fields: Mapping[str, Callable[[str, _Member], Any]]
) -> dict[str, Any]:
    """Decode the known members in document order; a repeated known key is refused."""
    found: dict[str, Any] = {}
    for member in members:
        decode = fields.get(member.key)
        if decode is None:
            continue
        if member.key in found:
            raise _ShapeError(prefix, f"duplicate field `{member.key}`", member.key_end)
        found[member.key] = decode(f"{prefix}.{member.key}" if prefix else member.key, member)
    return found


_FIELDS: dict[str, Callable[[str, _Member], Any]] = {
    "origins": _cues,
    "labels": _cues,
    "dice_floor": _number("f64"),
    "semantic_floor": _number("f32"),
    "resolve_limit": _usize,
    "activate_decay": _number("f64"),
    "activate_limit": _usize,
    "text_fallback_query": _text,
    "search_limit": _usize,
    "include_communities": _flag,
}


def _decode(text: str) -> EvidenceRequest:
    start = _skip_ws(text, 0)
    top, end = _DECODER.raw_decode(text, start)
    if not isinstance(top, dict):
        raise _ShapeError("", f"invalid type: {unexpected(top)}, expected {REQUEST_STRUCT}", end)
    members, end = _members(text, start)

    def budget(path: str, member: _Member) -> Limits:
        fields = dict.fromkeys(("max_items", "max_bytes", "max_tokens"), _usize)
        return Limits.resolve(
            **_walk(path, _struct(text, path, member, BUDGET_STRUCT) or [], fields)
        )

    def rerank(path: str, member: _Member) -> RerankRequest | None:
        nested = _struct(text, path, member, RERANK_STRUCT)
        if nested is None:
            return None
        return RerankRequest(**_walk(path, nested, {"model": _text}))

    found = _walk("", members, {**_FIELDS, "budget": budget, "rerank": rerank})
    if found.get("origins") is None:
        raise _ShapeError("", "missing field `origins`", end)
    found["labels"] = found.get("labels") or ()
    return EvidenceRequest(**found)


def _position(text: str, end: int) -> tuple[int, int]:
    """serde's ``(line, column)`` after ``end`` characters: column counts UTF-8 bytes."""
    line_start = text.rfind("\n", 0, end) + 1
    return text.count("\n", 0, end) + 1, len(text[line_start:end].encode("utf-8"))


def decode_evidence_request(text: str) -> EvidenceRequest:
    """The request from a body that parsed as JSON: 422 for a shape problem, then 400
    ``over_limit`` for more than 1000 ``origins`` (then ``labels``)."""
    try:
        request = _decode(text)
    except _ShapeError as problem:
        line, column = _position(text, problem.end)
        prefix = f"{problem.path}: " if problem.path else ""
        raise ApiError(
            "malformed_request",
            f"{JSON_DATA_PREFIX}{prefix}{problem.detail} at line {line} column {column}",
            status=422,
        ) from problem
    for name, cues in (("origins", request.origins), ("labels", request.labels)):
        if len(cues) > MAX_CUES:
            raise list_over_limit(name, len(cues))
    return request
