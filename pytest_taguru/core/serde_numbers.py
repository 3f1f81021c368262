"""Numbers as serde_json reads them (``thresholds-and-compare.md`` Appendix N.2): its default
float parser, bit for bit, integers kept exact within i64/u64, and integers read into an f32.
Part of the reading rule of :mod:`pytest_taguru.core.serde`.
"""

import math
import re

from pytest_taguru.core.jsontext import to_f32
from pytest_taguru.core.limits import I64_MIN, U64_MAX

_POW10 = [float(f"1e{k}") for k in range(309)]


_EXACT_SIGNIFICAND_DIGITS = 15
"""Any integer of this many digits is exact as a double (below 2**53)."""
_EXACT_POWER_OF_TEN = 22
"""The largest power of ten that is exact as a double."""
_SHORT_NUMBER = re.compile(r"-?0*([0-9]*)(?:\.([0-9]*))?")


def parse_serde_float(text: str) -> float:
    """serde_json's default (not correctly rounded) float parser, bit for bit; a number past
    the f64 range raises ``ValueError``.

    serde multiplies or divides the exact significand by an exact power of ten: one rounding,
    the correctly rounded value Python's ``float`` gives, whenever the significand has at most
    15 digits and the power is at most 10**22 (a score, a latency). Other numbers take the
    step-by-step path.
    """
    if len(text) <= _EXACT_SIGNIFICAND_DIGITS + 1 and "e" not in text and "E" not in text:
        return float(text)  # a "." among at most 16 characters: at most 15 digits
    short = _SHORT_NUMBER.fullmatch(text)
    if short is not None:
        whole, fraction = short.group(1), short.group(2) or ""
        if len(fraction) <= _EXACT_POWER_OF_TEN and (
            len((whole + fraction).lstrip("0")) <= _EXACT_SIGNIFICAND_DIGITS
        ):
            return float(text)
    return _parse_serde_float_stepwise(text)


_NUMBER = re.compile(r"-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]+))?")
_U64_DIGITS = 19
"""Any integer of this many digits fits u64."""


def _parse_serde_float_stepwise(text: str) -> float:
    number = _NUMBER.fullmatch(text)
    if number is not None:
        whole, fraction, exp_text = number.group(1), number.group(2) or "", number.group(3)
        digits = (whole + fraction).lstrip("0")
        exp = (int(exp_text) if exp_text else 0) - len(fraction)
        if len(digits) <= _U64_DIGITS and abs(exp) <= 308:
            # Every digit fits the u64 significand: one step of the loop below.
            result = _scaled(float(int(digits or "0")), exp)
            return -result if text.startswith("-") else result
    return _parse_serde_float_by_digits(text)


def _scaled(significand: float, exp: int) -> float:
    if exp >= 0:
        result = significand * _POW10[exp]
        if math.isinf(result):
            raise ValueError("number out of range")
        return result
    return significand / _POW10[-exp]


def _parse_serde_float_by_digits(text: str) -> float:
    negative = text.startswith("-")
    body = text[1:] if negative else text
    mantissa, _, exp_text = body.replace("E", "e").partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    significand, exp, overflowed = 0, 0, False
    for ch in int_part:
        if not overflowed and significand * 10 + int(ch) <= U64_MAX:
            significand = significand * 10 + int(ch)
        else:
            overflowed = True
            exp += 1
    for ch in frac_part:
        if significand * 10 + int(ch) > U64_MAX:
            break
        significand = significand * 10 + int(ch)
        exp -= 1
    if exp_text:
        exp += int(exp_text)
    result = float(significand)
    while True:
        if abs(exp) <= 308:
            if exp >= 0:
                result *= _POW10[exp]
                if math.isinf(result):
                    raise ValueError("number out of range")
            else:
                result /= _POW10[-exp]
            break
        if result == 0.0:
            break
        if exp > 0:
            raise ValueError("number out of range")
        result /= 1e308
        exp += 308
    return -result if negative else result


_I64_U64_DIGITS = len(str(I64_MIN))
"""No integer literal longer than this fits ``i64``/``u64`` (and ``int()`` is not asked)."""


def parse_roundtrip_float(text: str) -> float:
    """A float correctly rounded (serde_json's ``float_roundtrip``); past the f64 range
    ``ValueError``, as serde refuses it."""
    value = float(text)
    if math.isinf(value):
        raise ValueError("number out of range")
    return value


def parse_int(text: str) -> int | float:
    """serde keeps an integer that fits i64/u64 exact; ``-0`` and wider ones are f64."""
    if text == "-0":
        return -0.0
    if len(text) <= _I64_U64_DIGITS:
        value = int(text)
        if I64_MIN <= value <= U64_MAX:
            return value
    return parse_serde_float(text)


def exact_integer(text: str) -> int | float:
    """:func:`parse_int`, except that a wider integer within the f64 range stays exact."""
    value = parse_int(text)
    return int(text) if isinstance(value, float) and text != "-0" else value


def int_to_f32(value: int) -> float:
    """serde_json's integer → f32 (a JSON integer read into an ``f32`` field): correctly
    rounded within i64/u64; beyond, serde reads the integer as a double first (Appendix N.2)."""
    if not I64_MIN <= value <= U64_MAX:
        return to_f32(parse_serde_float(str(value)))
    magnitude = abs(value)
    excess = magnitude.bit_length() - 24  # f32 keeps 24 significant bits
    if excess > 0:
        quotient, remainder = divmod(magnitude, 1 << excess)
        half = 1 << (excess - 1)
        if remainder > half or (remainder == half and quotient & 1):
            quotient += 1
        magnitude = quotient << excess
    return math.copysign(float(magnitude), value)


