"""The shared strict JSON reader (``serde_read``): what serde refuses, and serde's wording."""

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.serde_read import (
    I64_MIN,
    U64_MAX,
    JsonObject,
    SerdeError,
    check_every_string,
    describe,
    fields_from_array,
    invalid_type,
    invalid_value,
    load_json,
    parse_int,
    whole_text,
)


def refusal(text: str) -> str:
    with pytest.raises(SerdeError) as caught:
        load_json(text)
    return str(caught.value)


# --- numbers (N.2) ---------------------------------------------------------------------------


def test_integers_in_i64_or_u64_stay_exact_and_wider_ones_become_floats() -> None:
    assert parse_int(str(U64_MAX)) == U64_MAX
    assert parse_int(str(I64_MIN)) == I64_MIN
    assert parse_int(str(U64_MAX + 1)) == float(2**64)
    assert isinstance(parse_int(str(I64_MIN - 1)), float)


def test_minus_zero_integer_is_negative_zero_float() -> None:
    value = parse_int("-0")
    assert value == 0.0
    assert math.copysign(1.0, value) < 0


def test_numbers_are_read_with_serdes_parser() -> None:
    assert load_json("0.09090909090909091") == 0.09090909090909093  # B-4
    assert refusal("1e400") == "number out of range"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_refused(constant: str) -> None:
    assert refusal(f'{{"a":{constant}}}') == f"expected value ({constant} is not JSON)"


# --- syntax and nesting ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected value at line 1 column 1"),
        ("\ufeff{}", "expected value at line 1 column 1"),
        ('{"a":1} x', "trailing characters at line 1 column 9"),
    ],
)
def test_syntax_errors_use_serdes_words_and_a_position(text: str, message: str) -> None:
    assert refusal(text) == message


def test_nesting_up_to_serdes_limit_is_read_and_one_more_is_refused() -> None:
    assert load_json("[" * 127 + "]" * 127) is not None
    assert refusal("[" * 128 + "]" * 128) == "recursion limit exceeded"
    assert refusal('{"a":' * 128 + "1" + "}" * 128) == "recursion limit exceeded"


def test_nesting_far_past_pythons_own_limit_is_the_same_refusal() -> None:
    assert refusal("[" * 100_000 + "]" * 100_000) == "recursion limit exceeded"


# --- objects, structs, strings ---------------------------------------------------------------


def test_an_object_keeps_the_last_value_and_every_pair() -> None:
    document = load_json('{"a":1,"b":2,"a":3}')
    assert isinstance(document, JsonObject)
    assert document == {"a": 3, "b": 2}
    assert document.pairs == [("a", 1), ("b", 2), ("a", 3)]
    assert document.repeated == frozenset({"a"})
    assert load_json('{"a":1}').repeated == frozenset()


def test_an_array_fills_struct_fields_positionally() -> None:
    assert fields_from_array([1], ["min", "max"]) == {"min": 1}
    assert fields_from_array([1, 2], ["min", "max"]) == {"min": 1, "max": 2}
    with pytest.raises(SerdeError, match=r"^trailing characters$"):
        fields_from_array([1, 2, 3], ["min", "max"])


def test_a_lone_surrogate_is_refused_only_where_a_string_is_read() -> None:
    document = load_json('{"skipped":"\\ud800","\\udc00":1}')  # parsing alone is fine
    with pytest.raises(SerdeError, match=r"^lone leading surrogate in hex escape$"):
        whole_text(document["skipped"])
    with pytest.raises(SerdeError, match=r"^lone leading surrogate in hex escape$"):
        check_every_string(load_json('{"\\udc00":1}'))  # keys are strings too
    assert whole_text("😀") == "😀"
    check_every_string(load_json('{"ok":["😀", {"x":"y"}]}'))


# --- serde's wording -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "null"),
        (True, "boolean `true`"),
        (False, "boolean `false`"),
        (-1, "integer `-1`"),
        (1.0, "floating point `1.0`"),
        (1.5, "floating point `1.5`"),
        (1e-6, "floating point `1e-6`"),
        ("0.5", 'string "0.5"'),
        ('a"b\\c\nd\te\x01\x7f—', 'string "a\\"b\\\\c\\nd\\te\\u{1}\\u{7f}—"'),
        ([], "sequence"),
        ({}, "map"),
    ],
)
def test_describe_names_a_value_as_serde_does(value: Any, shown: str) -> None:
    assert describe(value) == shown


def test_invalid_type_and_value_messages() -> None:
    assert invalid_type("1", "u64") == 'invalid type: string "1", expected u64'
    assert invalid_value(-1, "u64") == "invalid value: integer `-1`, expected u64"


# --- properties ------------------------------------------------------------------------------

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
_SCALARS = st.none() | st.booleans() | st.integers(I64_MIN, U64_MAX) | _TEXT
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=20,
)


@given(_DOCUMENTS)
def test_any_document_without_floats_reads_back_as_written(document: Any) -> None:
    loaded = load_json(json.dumps(document))
    assert loaded == document
    check_every_string(loaded)


@given(st.integers(I64_MIN, U64_MAX))
def test_every_i64_or_u64_integer_is_exact(number: int) -> None:
    assert parse_int(str(number)) == number


@given(st.text())
def test_a_described_string_is_quoted_without_raw_control_characters(text: str) -> None:
    shown = describe(text)
    assert shown.startswith('string "')
    assert shown.endswith('"')
    assert not any(ord(ch) < 0x20 for ch in shown)
