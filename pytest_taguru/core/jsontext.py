"""JSON text exactly as taguru writes it, and Rust's float text.

taguru serializes with serde_json, whose float text differs from Python's ``repr``: positional
notation for doubles with decimal exponent -5..15 (``0.00001``, ``1e+16``, ``1e-6``), and
32-bit floats written as their own shortest decimal (``0.28768212``, not the widened double).
Reading is :mod:`pytest_taguru.core.serde`'s. Specification: ``evaluate-run.md`` §7.1 and
``thresholds-and-compare.md`` Appendix N.
"""

import functools
import math
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from json.encoder import encode_basestring
from typing import Any

import numpy


class Float32(float):
    """A float that holds a 32-bit value and is written as the shortest 32-bit decimal."""

    __slots__ = ()


F32_FIELD = "taguru:f32"
"""Annotation marker: a model field holding a 32-bit float (``Annotated[float, F32_FIELD]``)."""

WRITE_NULL = "taguru:write-null"
"""Annotation marker: an optional model field written as ``null`` rather than left out."""


def to_f32(value: float) -> float:
    """Round to the nearest 32-bit float; beyond the 32-bit range the result is ±infinity."""
    if not math.isfinite(value):
        return value
    try:
        narrowed: float = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return narrowed


def _render(negative: bool, digits: str, exponent: int, low: int, high: int) -> str:
    """Write ``d₁.d₂…dₖ × 10^exponent`` positionally when ``low ≤ exponent ≤ high``."""
    if low <= exponent <= high:
        if exponent >= len(digits) - 1:
            body = digits + "0" * (exponent - len(digits) + 1) + ".0"
        elif exponent >= 0:
            body = digits[: exponent + 1] + "." + digits[exponent + 1 :]
        else:
            body = "0." + "0" * (-exponent - 1) + digits
    else:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        body = f"{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"
    return ("-" if negative else "") + body


def _digits_of(text: str) -> tuple[str, int]:
    """Significant digits and scientific exponent of a positive decimal text as ``repr`` and
    numpy write them (``0.001``, ``123.0``, ``1e-05``, ``2.8768212e-01``)."""
    mantissa, _, exp_text = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    joined = whole + fraction
    digits = joined.lstrip("0")
    exponent = int(exp_text or 0) + len(whole) - 1 - (len(joined) - len(digits))
    return digits.rstrip("0"), exponent


def format_f64(value: float) -> str:
    """serde_json's text for a double: shortest round-trip digits, positional for e in -5..15."""
    if not math.isfinite(value):
        return "null"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, exponent = _digits_of(repr(abs(value)))
    return _render(value < 0, digits, exponent, -5, 15)


def f32_digits(value: float) -> tuple[str, int]:
    """The shortest digits and scientific exponent that read back as the same 32-bit float
    as ``|value|`` (finite, non-zero): among equally short candidates the one closest to the
    exact value, as in Rust's shortest-float formatting.

    numpy's Dragon4 in its ``unique`` mode (Steele & White's free-format algorithm, exact
    big-integer arithmetic) computes exactly that.
    """
    text = numpy.format_float_scientific(numpy.float32(abs(value)), unique=True, trim="-")
    return _digits_of(text)


def format_f32(value: float) -> str:
    """The text of a 32-bit float field (``score``, ``floor``): positional for e in -6..12."""
    value = to_f32(value)
    if not math.isfinite(value):
        return "null"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    return _nonzero_f32_text(value)


@functools.lru_cache(maxsize=4096)
def _nonzero_f32_text(value: float) -> str:
    """Remembered: a hit's score comes again as its lane's score, and common values recur."""
    digits, exponent = f32_digits(value)
    return _render(value < 0, digits, exponent, -6, 12)


def _plain_text(value: float, shortest: Callable[[float], tuple[str, int]]) -> str:
    """Rust's ``{}``: ``shortest`` round-trip digits of ``|value|``, positional, no trailing
    ``.0``; ``NaN``, ``inf``, ``-inf``, ``0`` and ``-0`` spelled out."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    digits, exponent = shortest(abs(value)) if value != 0.0 else ("0", 0)
    text = _render(math.copysign(1.0, value) < 0, digits, exponent, -400, 400)
    return text.removesuffix(".0")


def _f64_digits(value: float) -> tuple[str, int]:
    return _digits_of(repr(value))


def format_plain(value: float) -> str:
    """Rust's ``{}`` for an ``f64``: shortest round-trip, positional, no trailing ``.0``."""
    return _plain_text(value, _f64_digits)


def format_plain_f32(value: float) -> str:
    """Rust's ``{}`` for an ``f32`` (``value`` already a 32-bit float): its shortest
    round-trip digits, positional, no trailing ``.0``: ``2``, ``-0.25``, ``0.0000001``.

    (The artifact's float text is a different rule: ``format_f32``.)
    """
    return _plain_text(value, f32_digits)


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


def _null_text(value: None) -> str:
    return "null"


SCALAR_TEXTS: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,  # json.dumps(value, ensure_ascii=False), without its setup
    int: str,
    float: format_f64,
    bool: _bool_text,
    type(None): _null_text,
    Float32: format_f32,
}
"""The text of each scalar type, by exact type: a quick look-up before ``scalar_text``'s
general tests (which a subclass, such as an ``IntEnum``, goes through)."""


def scalar_text(value: Any) -> str:
    """The JSON text of a value that is neither an object nor an array."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Float32):
        return format_f32(value)
    if isinstance(value, float):
        return format_f64(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return encode_basestring(value)  # json.dumps(value, ensure_ascii=False), without its setup
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


Members = Callable[[Any], "Sequence[tuple[str, Any]] | None"]
"""The key/value pairs of a value written as an object that is not a ``dict`` (a model), or
``None`` when the value is not one."""


def _no_members(value: Any) -> None:
    return None


class Rendered(str):
    """JSON text already written for the place it goes (its indentation), emitted as it is."""

    __slots__ = ()


def write_pretty(
    value: Any, emit: Callable[[str], object], pad: str = "", members: Members = _no_members
) -> None:
    """serde_json's ``to_string_pretty`` of ``value``, handed to ``emit`` piece by piece (a
    caller may write the pieces out as they come): two-space indent, raw UTF-8. An array may
    be any iterator (its items are then read as they are written)."""
    if isinstance(value, Rendered):
        emit(value)
        return
    if value is None or isinstance(value, str | int | float):
        emit(scalar_text(value))
        return
    if isinstance(value, list | tuple):
        _write_array(value, emit, pad, members)
        return
    pairs = value.items() if isinstance(value, dict) else members(value)
    if pairs is None:
        if isinstance(value, Iterator):
            _write_array(value, emit, pad, members)
            return
        raise TypeError(f"cannot write {type(value).__name__} as JSON")
    if not pairs:
        emit("{}")
        return
    inner = pad + "  "
    separator = "{\n"
    for key, item in pairs:
        head = f"{separator}{inner}{encode_basestring(key)}: "
        scalar = SCALAR_TEXTS.get(type(item))
        if scalar is not None:  # one piece: most members are scalars
            emit(head + scalar(item))
        else:
            emit(head)
            write_pretty(item, emit, inner, members)
        separator = ",\n"
    emit("\n" + pad + "}")


def _write_array(
    items: Iterable[Any], emit: Callable[[str], object], pad: str, members: Members
) -> None:
    inner = pad + "  "
    opening = separator = "[\n" + inner
    for item in items:
        scalar = SCALAR_TEXTS.get(type(item))
        if scalar is not None:
            emit(separator + scalar(item))
        else:
            emit(separator)
            write_pretty(item, emit, inner, members)
        separator = ",\n" + inner
    emit("[]" if separator is opening else "\n" + pad + "]")


def dumps_pretty(value: Any) -> str:
    """serde_json's ``to_string_pretty``: two-space indent, raw UTF-8, no trailing newline."""
    out: list[str] = []
    write_pretty(value, out.append)
    return "".join(out)


def dumps_compact(value: Any) -> str:
    """serde_json's ``to_string``: no whitespace at all, raw UTF-8 (one JSONL line)."""
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(f"{encode_basestring(k)}:{dumps_compact(v)}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ",".join(dumps_compact(v) for v in value) + "]"
    return scalar_text(value)
