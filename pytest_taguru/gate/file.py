"""The thresholds file as taguru's serde reader sees it: the model and the strict parser.

Specification: ``thresholds-and-compare.md`` A.2 (format and JSON strictness) and N.2 (numbers
are read with serde's fast, not correctly rounded, float parser).
"""

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_taguru.core.serde import JsonObject, SerdeError, fields_from_array, read_json
from pytest_taguru.core.serde_wording import duplicate_field, invalid_type, invalid_value

# --- the file model (A.2) --------------------------------------------------------------------


class ThresholdsModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Bound(ThresholdsModel):
    """``{"min"?, "max"?}``; ``None`` means absent (JSON ``null`` reads the same)."""

    min: float | None = None
    max: float | None = None


class CaseBounds(ThresholdsModel):
    default: dict[str, Bound] = Field(default_factory=dict)
    overrides: dict[str, dict[str, Bound]] = Field(default_factory=dict)


class ThresholdsFile(ThresholdsModel):
    taguru_evaluate_thresholds: int
    aggregate: dict[str, Bound] = Field(default_factory=dict)
    cases: CaseBounds = Field(default_factory=CaseBounds)
    allow_unstable_corpus: bool = False


# --- strict parsing (A.2) --------------------------------------------------------------------


class ThresholdsParseError(SerdeError):
    """The file is not a well-formed thresholds document (serde's parse-time refusals)."""


_SHAPES = {
    "ThresholdsFile": 'a thresholds object ({"taguru_evaluate_thresholds": 1, …})',
    "CasesThresholds": 'a cases object ({"default": {…}, "overrides": {…}}, both optional)',
    "Bound": 'a bound ({"min": …, "max": …}, either or both, e.g. {"min": 0.8})',
}
"""The file's own words for its three fixed shapes, where serde names its Rust structs
(``expected struct Bound``): the parse message is ours to word (A.3 step 2)."""
_BOUND_MAP = "an object of metric name → bound"
_OVERRIDE_MAP = "an object of case_id → (metric name → bound)"


def _invalid(value: Any, expected: str, where: str) -> ThresholdsParseError:
    return ThresholdsParseError(f"{invalid_type(value, expected)} {where}")


def _where(path: str) -> str:
    return f"at {path}" if path else "at the top level"


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


Reader = Callable[[Any, str], Any]
"""Reads one field's JSON value found at a path (the path names it in messages)."""


def _expected(names: Sequence[str]) -> str:
    """serde's list of a struct's fields: ```a```, ```a` or `b```, ``one of `a`, `b`, `c```."""
    quoted = [f"`{name}`" for name in names]
    if len(quoted) <= 2:
        return " or ".join(quoted)
    return "one of " + ", ".join(quoted)


def _struct(
    value: Any, struct: str, readers: dict[str, Reader], path: str, required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A fixed-shape object read as serde's derived struct reads it.

    Keys are taken in document order and each value is read as it is met, so the first
    problem in the document is the one reported: an unknown key, a repeated key, a bad value.
    Like serde, a JSON array is also read positionally in field order (A.2, last bullet).
    """
    if isinstance(value, list):
        try:
            items = fields_from_array(value, list(readers), struct=struct, required=required)
        except SerdeError as error:
            worded = str(error).replace(f"struct {struct}", _SHAPES[struct])
            raise ThresholdsParseError(f"{worded} {_where(path)}") from None
        pairs = list(items.items())
    elif isinstance(value, JsonObject):
        pairs = value.pairs
    else:
        raise _invalid(value, _SHAPES[struct], _where(path))
    found: dict[str, Any] = {}
    for key, item in pairs:
        if key not in readers:
            raise ThresholdsParseError(
                f"unknown field `{key}`, expected {_expected(list(readers))} {_where(path)}"
            )
        if key in found:
            raise ThresholdsParseError(f"{duplicate_field(key)} {_where(path)}")
        found[key] = readers[key](item, _child(path, key))
    for name in required:
        if name not in found:
            raise ThresholdsParseError(f"missing field `{name}`")
    return found


def read_map(value: Any, path: str, what: str = _BOUND_MAP) -> Iterator[tuple[str, Any]]:
    """A name-keyed map's entries in document order; a repeated name is later overwritten
    (last one wins), though every value is still read."""
    if not isinstance(value, JsonObject):
        raise _invalid(value, what, _where(path))
    return iter(value.pairs)


def _number(value: Any, path: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid(value, "f64", _where(path))
    return float(value)


def read_bound(value: Any, path: str) -> Bound:
    return Bound(**_struct(value, "Bound", {"min": _number, "max": _number}, path))


def _bounds(value: Any, path: str) -> dict[str, Bound]:
    return {name: read_bound(item, _child(path, name)) for name, item in read_map(value, path)}


def _overrides(value: Any, path: str) -> dict[str, dict[str, Bound]]:
    entries = read_map(value, path, _OVERRIDE_MAP)
    return {case_id: _bounds(item, _child(path, case_id)) for case_id, item in entries}


def _cases(value: Any, path: str) -> CaseBounds:
    readers: dict[str, Reader] = {"default": _bounds, "overrides": _overrides}
    return CaseBounds(**_struct(value, "CasesThresholds", readers, path))


def _stamp(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(value, "u64", _where(path))
    if value < 0:
        raise ThresholdsParseError(f"{invalid_value(value, 'u64')} {_where(path)}")
    return value


def _flag(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _invalid(value, "a boolean", _where(path))
    return value


_FILE_READERS: dict[str, Reader] = {
    "taguru_evaluate_thresholds": _stamp,
    "aggregate": _bounds,
    "cases": _cases,
    "allow_unstable_corpus": _flag,
}
"""The top-level fields in the reference's declaration order (the positional order)."""


def parse_thresholds(raw: bytes) -> ThresholdsFile:
    """Decode the file as taguru's serde reader does; raises :class:`ThresholdsParseError`.

    Refused: invalid UTF-8, a BOM, empty input, trailing data, ``NaN``/``Infinity``, numbers
    overflowing f64, unknown keys at every level, repeated keys in the fixed-shape objects
    (top level, ``cases``, a Bound), ``null`` anywhere but ``min``/``max``, and a stamp that
    is not a non-negative integer. Integer bounds become floats. Of several problems, the
    first met in document order is reported, as serde does.
    """
    try:
        document = read_json(raw.decode("utf-8"))  # every string is read: names and keys
    except UnicodeDecodeError as error:
        raise ThresholdsParseError(f"invalid UTF-8: {error}") from error
    except SerdeError as error:
        raise ThresholdsParseError(str(error)) from error
    fields = _struct(
        document, "ThresholdsFile", _FILE_READERS, "", required=("taguru_evaluate_thresholds",)
    )
    return ThresholdsFile(**fields)
