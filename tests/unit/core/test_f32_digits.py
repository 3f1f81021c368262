"""The shortest 32-bit float digits (numpy's Dragon4) against the old digit search, over every
class of 32-bit float: normal, subnormal, the binade boundaries where the interval below is
half the one above, the extremes, and the spec's worked numbers."""

import struct
from decimal import Decimal

import pytest
from f32_oracle import oracle_f32_digits
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_taguru.core.jsontext import _digits_of, f32_digits, to_f32

F32_MAX_BITS = 0x7F7FFFFF
"""The largest finite 32-bit float's bit pattern (positive values are 1..=this)."""


def from_bits(bits: int) -> float:
    value: float = struct.unpack("<f", struct.pack("<I", bits))[0]
    return value


def test_the_oracle_agrees_with_the_specs_worked_numbers() -> None:
    for value, digits in [(0.28768212, ("28768212", -1)), (0.4000000059604645, ("4", -1))]:
        assert oracle_f32_digits(to_f32(value)) == digits == f32_digits(to_f32(value))


@pytest.mark.parametrize(
    ("value", "digits"),
    [
        (0.28768212, ("28768212", -1)),
        (0.86304635, ("86304635", -1)),
        (0.032786883, ("32786883", -2)),
        (6.84, ("684", 0)),
        (1.0, ("1", 0)),
        (0.1, ("1", -1)),
        (16777216.0, ("16777216", 7)),
        (123456.789, ("12345679", 5)),
        (3.4028234663852886e38, ("34028235", 38)),
        (1.401298464324817e-45, ("1", -45)),  # the smallest subnormal
        (1.1754942106924411e-38, ("11754942", -38)),  # the largest subnormal
        (1.1754943508222875e-38, ("11754944", -38)),  # the smallest normal
    ],
)
def test_worked_numbers(value: float, digits: tuple[str, int]) -> None:
    assert f32_digits(to_f32(value)) == digits
    assert f32_digits(-to_f32(value)) == digits


@settings(max_examples=1500, deadline=None)
@given(st.integers(1, F32_MAX_BITS))
@example(1)
@example(0x007FFFFF)
@example(0x00800000)
@example(F32_MAX_BITS)
def test_every_bit_pattern_agrees_with_the_oracle(bits: int) -> None:
    value = from_bits(bits)
    assert f32_digits(value) == oracle_f32_digits(value)


@settings(max_examples=1000, deadline=None)
@given(st.integers(0, 254), st.sampled_from([0, 1, 2, 0x7FFFFE, 0x7FFFFF, 0x400000]))
def test_binade_edges_agree_with_the_oracle(exponent: int, mantissa: int) -> None:
    bits = exponent << 23 | mantissa
    if bits == 0:
        return
    value = from_bits(bits)
    assert f32_digits(value) == oracle_f32_digits(value)


@settings(max_examples=1000, deadline=None)
@given(st.integers(1, 0x007FFFFF))
def test_subnormals_agree_with_the_oracle(bits: int) -> None:
    value = from_bits(bits)
    assert f32_digits(value) == oracle_f32_digits(value)


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 99_999_999), st.integers(-45, 38))
def test_short_decimals_come_back_as_written(digits: int, exponent: int) -> None:
    """A decimal of at most 8 digits that is a 32-bit float's shortest text reads back as it."""
    value = to_f32(float(f"{digits}e{exponent}"))
    if value == 0.0 or value == float("inf"):
        return
    assert f32_digits(value) == oracle_f32_digits(value)


@given(st.floats(min_value=5e-324, allow_nan=False, allow_infinity=False))
def test_decimal_text_digits_match_decimal(value: float) -> None:
    """``repr``'s text read into digits and exponent exactly as ``Decimal`` normalizes it."""
    _, digit_tuple, exp = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple))
    assert _digits_of(repr(value)) == (digits, len(digits) - 1 + exp)
