"""The thresholds file as taguru's serde reader sees it: the model and the strict parser.

Specification: ``thresholds-and-compare.md`` A.2 (format and JSON strictness) and N.2 (numbers
are read with serde's fast, not correctly rounded, float parser).
"""

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .jsonfmt import format_plain, parse_serde_float

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


class ThresholdsParseError(ValueError):
    """The file is not a well-formed thresholds document (serde's parse-time refusals)."""


class _Object:
    """A JSON object kept as its key/value pairs, so that repeated keys stay visible."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


_U64_MAX = 2**64 - 1
_I64_MIN = -(2**63)


def _parse_int(text: str) -> int | float:
    # serde keeps integers that fit u64 (or i64 when negative); ``-0`` and wider ones are f64.
    if text == "-0":
        return -0.0
    number = int(text)
    if _I64_MIN <= number <= _U64_MAX:
        return number
    return parse_serde_float(text)


def _reject_constant(name: str) -> Any:
    raise ThresholdsParseError(f"{name} is not valid JSON")


def _describe(value: Any) -> str:
    """serde's wording for an unexpected value (``invalid type: <this>, expected …``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        text = format_plain(value)  # serde shows Rust's `{}` with a decimal point kept
        return f"floating point `{text if '.' in text else text + '.0'}`"
    if isinstance(value, str):
        return f"string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, list):
        return "sequence"
    return "map"


def _invalid(value: Any, expected: str, where: str) -> ThresholdsParseError:
    return ThresholdsParseError(f"invalid type: {_describe(value)}, expected {expected} {where}")


def _where(path: str) -> str:
    return f"at {path}" if path else "at the top level"


_NESTING_LIMIT = 127
"""serde_json's recursion limit: the 128th nested array or object is refused."""


def _check_document(document: Any) -> None:
    """What serde refuses and Python's json lets through: lone surrogates in strings
    (``"\\ud800"``) and nesting deeper than ``_NESTING_LIMIT``. Iterative, so that a deep
    document cannot exhaust Python's own recursion limit."""
    pending: list[tuple[Any, int]] = [(document, 0)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            if any("\ud800" <= ch <= "\udfff" for ch in value):
                raise ThresholdsParseError("lone surrogate found in a string escape")
            continue
        if isinstance(value, _Object | list):
            if depth >= _NESTING_LIMIT:
                raise ThresholdsParseError("recursion limit exceeded")
            items = (
                [item for pair in value.pairs for item in pair]
                if isinstance(value, _Object)
                else value
            )
            pending += [(item, depth + 1) for item in items]


def _fields(value: Any, struct: str, names: tuple[str, ...], path: str) -> dict[str, Any]:
    """A fixed-shape object's fields: unknown and repeated keys refused.

    Like serde, a JSON array is also read positionally in field order (A.2, last bullet).
    """
    if isinstance(value, list):
        if len(value) > len(names):
            raise ThresholdsParseError(
                f"invalid length {len(value)}, expected struct {struct} with "
                f"{len(names)} elements {_where(path)}"
            )
        return dict(zip(names, value, strict=False))
    if not isinstance(value, _Object):
        raise _invalid(value, f"struct {struct}", _where(path))
    found: dict[str, Any] = {}
    for key, item in value.pairs:
        if key not in names:
            expected = ", ".join(f"`{name}`" for name in names)
            raise ThresholdsParseError(
                f"unknown field `{key}`, expected one of {expected} {_where(path)}"
            )
        if key in found:
            raise ThresholdsParseError(f"duplicate field `{key}` {_where(path)}")
        found[key] = item
    return found


def _map(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """A name-keyed map's entries; a repeated name is later overwritten (last one wins)."""
    if not isinstance(value, _Object):
        raise _invalid(value, "a map", _where(path))
    return iter(value.pairs)


def _number(value: Any, path: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid(value, "f64", _where(path))
    return float(value)


def _bound(value: Any, path: str) -> Bound:
    fields = _fields(value, "Bound", ("min", "max"), path)
    return Bound(
        min=_number(fields.get("min"), f"{path}.min"),
        max=_number(fields.get("max"), f"{path}.max"),
    )


def _bounds(value: Any, path: str) -> dict[str, Bound]:
    return {name: _bound(item, f"{path}.{name}") for name, item in _map(value, path)}


def _stamp(value: Any) -> int:
    where = _where("taguru_evaluate_thresholds")
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(value, "u64", where)
    if value < 0:
        raise ThresholdsParseError(f"invalid value: integer `{value}`, expected u64 {where}")
    return value


def _flag(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _invalid(value, "a boolean", _where(path))
    return value


def parse_thresholds(raw: bytes) -> ThresholdsFile:
    """Decode the file as taguru's serde reader does; raises :class:`ThresholdsParseError`.

    Refused: invalid UTF-8, a BOM, empty input, trailing data, ``NaN``/``Infinity``, numbers
    overflowing f64, unknown keys at every level, repeated keys in the fixed-shape objects
    (top level, ``cases``, a Bound), ``null`` anywhere but ``min``/``max``, and a stamp that
    is not a non-negative integer. Integer bounds become floats.
    """
    try:
        text = raw.decode("utf-8")
        document = json.loads(
            text,
            object_pairs_hook=_Object,
            parse_float=parse_serde_float,
            parse_int=_parse_int,
            parse_constant=_reject_constant,
        )
    except UnicodeDecodeError as error:
        raise ThresholdsParseError(f"invalid UTF-8: {error}") from error
    except RecursionError as error:
        raise ThresholdsParseError("recursion limit exceeded") from error
    except ValueError as error:
        raise ThresholdsParseError(str(error)) from error
    _check_document(document)
    top = _fields(
        document,
        "Thresholds",
        ("taguru_evaluate_thresholds", "aggregate", "cases", "allow_unstable_corpus"),
        "",
    )
    if "taguru_evaluate_thresholds" not in top:
        raise ThresholdsParseError("missing field `taguru_evaluate_thresholds`")
    cases = CaseBounds()
    if "cases" in top:
        case_fields = _fields(top["cases"], "CaseThresholds", ("default", "overrides"), "cases")
        cases = CaseBounds(
            default=_bounds(case_fields["default"], "cases.default")
            if "default" in case_fields
            else {},
            overrides={
                case_id: _bounds(item, f"cases.overrides.{case_id}")
                for case_id, item in _map(case_fields["overrides"], "cases.overrides")
            }
            if "overrides" in case_fields
            else {},
        )
    return ThresholdsFile(
        taguru_evaluate_thresholds=_stamp(top["taguru_evaluate_thresholds"]),
        aggregate=_bounds(top["aggregate"], "aggregate") if "aggregate" in top else {},
        cases=cases,
        allow_unstable_corpus=_flag(top["allow_unstable_corpus"], "allow_unstable_corpus")
        if "allow_unstable_corpus" in top
        else False,
    )
