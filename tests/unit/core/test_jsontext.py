"""The float text serde_json writes (evaluate-run §7.1, thresholds-and-compare App. N)."""

import json
import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.jsontext import (
    Float32,
    dumps_compact,
    dumps_pretty,
    format_f32,
    format_f64,
    format_plain,
    format_plain_f32,
    to_f32,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (250.0, "250.0"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (1.5e16, "1.5e+16"),
        (0.5, "0.5"),
        (12.5, "12.5"),
        (0.00001, "0.00001"),
        (0.000020000000000020002, "0.000020000000000020002"),
        (1e-6, "1e-6"),
        (2.5e-6, "2.5e-6"),
        (1.5e-10, "1.5e-10"),
        (9.99999999995449e-6, "9.99999999995449e-6"),
        (0.7967075809905066, "0.7967075809905066"),
        (9.0, "9.0"),
        (math.inf, "null"),
        (math.nan, "null"),
    ],
)
def test_f64_text_matches_serde(value: float, text: str) -> None:
    assert format_f64(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.28768212, "0.28768212"),
        (0.86304635, "0.86304635"),
        (0.032786883, "0.032786883"),
        (6.84, "6.84"),
        (1.0, "1.0"),
        (0.4000000059604645, "0.4"),
        (1e-7, "1e-7"),
        (1.5e13, "1.5e+13"),
        (1e-6, "0.000001"),
        (1e12, "1000000000000.0"),
        (1e39, "null"),
    ],
)
def test_f32_text_is_shortest_f32(value: float, text: str) -> None:
    assert format_f32(value) == text


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_f32_text_round_trips_as_f32(value: float) -> None:
    text = format_f32(value)
    assert to_f32(float(text)) == value
    # No shorter digit string exists that reads back as the same f32.
    digits = text.lstrip("-").split("e")[0].replace(".", "").strip("0")
    assert len(digits) <= 9


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_f64_text_round_trips(value: float) -> None:
    assert float(format_f64(value)) == value


@pytest.mark.parametrize(
    ("value", "text"),
    [(2.0, "2"), (1.5, "1.5"), (-0.25, "-0.25"), (1e12, "1000000000000"), (math.inf, "inf")],
)
def test_plain_text_is_rust_display(value: float, text: str) -> None:
    assert format_plain(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.0, "2"),
        (1.5, "1.5"),
        (-0.25, "-0.25"),
        (1e12, "1000000000000"),
        (0.1, "0.1"),
        (1e-7, "0.0000001"),
        (3.4028234663852886e38, "340282350000000000000000000000000000000"),
        (1e-45, "0.000000000000000000000000000000000000000000001"),
        (16777216.0, "16777216"),
        (123456.789, "123456.79"),
        (0.0, "0"),
        (-0.0, "-0"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
    ],
)
def test_f32_plain_text_is_rust_display(value: float, text: str) -> None:
    assert format_plain_f32(to_f32(value)) == text


def test_pretty_matches_python_layout_and_f32_text() -> None:
    data = {"a": [1, Float32(to_f32(0.1)), {}], "b": {"c": "青\n\x01"}, "d": [], "e": None}
    text = dumps_pretty(data)
    assert text == (
        '{\n  "a": [\n    1,\n    0.1,\n    {}\n  ],\n  "b": {\n    "c": "青\\n\\u0001"\n  },'
        '\n  "d": [],\n  "e": null\n}'
    )
    assert json.loads(text)["b"]["c"] == "青\n\x01"


def test_compact_has_no_whitespace() -> None:
    assert (
        dumps_compact({"a": [1, 2.0], "b": None, "c": "x y"}) == '{"a":[1,2.0],"b":null,"c":"x y"}'
    )


def test_to_f32_overflows_to_infinity() -> None:
    assert to_f32(1e39) == math.inf
    assert to_f32(0.1) == struct.unpack("<f", struct.pack("<f", 0.1))[0]
