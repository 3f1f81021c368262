"""The thresholds file as taguru's serde reader sees it: the model and the strict parser.

Specification: ``thresholds-and-compare.md`` A.2 (format and JSON strictness) and N.2 (numbers
are read with serde's fast, not correctly rounded, float parser).
"""

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .serde_read import (
    JsonObject,
    SerdeError,
    check_every_string,
    duplicate_field,
    fields_from_array,
    invalid_type,
    invalid_value,
    load_json,
)

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


def _invalid(value: Any, expected: str, where: str) -> ThresholdsParseError:
    return ThresholdsParseError(f"{invalid_type(value, expected)} {where}")


def _where(path: str) -> str:
    return f"at {path}" if path else "at the top level"


def _fields(value: Any, struct: str, names: tuple[str, ...], path: str) -> dict[str, Any]:
    """A fixed-shape object's fields: unknown and repeated keys refused.

    Like serde, a JSON array is also read positionally in field order (A.2, last bullet).
    """
    if isinstance(value, list):
        try:
            return fields_from_array(value, names)
        except SerdeError as error:
            raise ThresholdsParseError(f"{error} {_where(path)}") from None
    if not isinstance(value, JsonObject):
        raise _invalid(value, f"struct {struct}", _where(path))
    found: dict[str, Any] = {}
    for key, item in value.pairs:
        if key not in names:
            expected = ", ".join(f"`{name}`" for name in names)
            raise ThresholdsParseError(
                f"unknown field `{key}`, expected one of {expected} {_where(path)}"
            )
        if key in found:
            raise ThresholdsParseError(f"{duplicate_field(key)} {_where(path)}")
        found[key] = item
    return found


def _map(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """A name-keyed map's entries; a repeated name is later overwritten (last one wins)."""
    if not isinstance(value, JsonObject):
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
        raise ThresholdsParseError(f"{invalid_value(value, 'u64')} {where}")
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
        document = load_json(raw.decode("utf-8"))
        check_every_string(document)  # every string of the file is read: names and keys
    except UnicodeDecodeError as error:
        raise ThresholdsParseError(f"invalid UTF-8: {error}") from error
    except SerdeError as error:
        raise ThresholdsParseError(str(error)) from error
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
