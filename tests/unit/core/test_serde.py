"""The one JSON reader (``core/serde``): what serde refuses, and serde's wording."""

import json
import math
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.limits import I64_MIN, U64_MAX
from pytest_taguru.core.serde import (
    JsonObject,
    SerdeError,
    check_every_string,
    fields_from_array,
    parse_int,
    parse_serde_float,
    read_json,
    whole_text,
)
from pytest_taguru.core.serde_wording import describe, invalid_type, invalid_value


def refusal(text: str) -> str:
    with pytest.raises(SerdeError) as caught:
        read_json(text)
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
    assert read_json("0.09090909090909091") == 0.09090909090909093  # B-4
    assert refusal("1e400") == "number out of range at line 1 column 5"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # serde reports an overflow after reading the whole number: at its last character.
        ('{"a":[1, 2e400]}', "number out of range at line 1 column 14"),
        ('{"1e999":"2e999",\n"b":-' + "9" * 400 + "}", "number out of range at line 2 column 405"),
        ("[1.5e308, 1e309]", "number out of range at line 1 column 15"),
    ],
)
def test_an_overflowing_number_is_placed_as_serde_places_it(text: str, message: str) -> None:
    assert refusal(text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a":NaN}', "expected value at line 1 column 6"),
        ('{"a":Infinity}', "expected value at line 1 column 6"),
        # serde reads `-` as a number's sign, and `I` is not a digit.
        ('{"a":-Infinity}', "invalid number at line 1 column 7"),
        ('{"NaN":"-Infinity",\n "b": [1, NaN]}', "expected value at line 2 column 11"),
    ],
)
def test_non_json_constants_are_refused_where_they_stand(text: str, message: str) -> None:
    assert refusal(text) == message


# --- syntax and nesting ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # serde_json's ErrorCode wording; the column counts bytes, and at the end of the
        # input it is the length of the last line.
        ("", "EOF while parsing a value at line 1 column 0"),
        ("   ", "EOF while parsing a value at line 1 column 3"),
        ("\ufeff{}", "expected value at line 1 column 1"),
        ('{"a":1} x', "trailing characters at line 1 column 9"),
        ('{"a":1}\n\n  x', "trailing characters at line 3 column 3"),
        ('{"é":1} x', "trailing characters at line 1 column 10"),
        ('{"a":1,}', "trailing comma at line 1 column 8"),
        ("[1,]", "trailing comma at line 1 column 4"),
        ("[1,\n]", "trailing comma at line 2 column 1"),
        ('{"a":1', "EOF while parsing an object at line 1 column 6"),
        ("{", "EOF while parsing an object at line 1 column 1"),
        ('{"a"', "EOF while parsing an object at line 1 column 4"),
        ("[1", "EOF while parsing a list at line 1 column 2"),
        ("[", "EOF while parsing a list at line 1 column 1"),
        ('{"a":', "EOF while parsing a value at line 1 column 5"),
        ("[1,", "EOF while parsing a value at line 1 column 3"),
        ('{"a":1,', "EOF while parsing a value at line 1 column 7"),
        ('"abc', "EOF while parsing a string at line 1 column 4"),
        ('{"a" 1}', "expected `:` at line 1 column 6"),
        ('{"a":1 "b":2}', "expected `,` or `}` at line 1 column 8"),
        ('{"a":[1 2]}', "expected `,` or `]` at line 1 column 9"),
        ('[{"a":1} 2]', "expected `,` or `]` at line 1 column 10"),
        ('{"]":1 2}', "expected `,` or `}` at line 1 column 8"),
        ("{1:2}", "key must be a string at line 1 column 2"),
        ('{"a":}', "expected value at line 1 column 6"),
        (
            '"a\x01"',
            "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 3",
        ),
        ('"\\x"', "invalid escape at line 1 column 3"),
    ],
)
def test_syntax_errors_use_serdes_words_and_a_position(text: str, message: str) -> None:
    assert refusal(text) == message


def test_nesting_up_to_serdes_limit_is_read_and_one_more_is_refused() -> None:
    # serde_json 1.0.150 de.rs check_recursion!: remaining_depth starts at 128 and the error
    # is raised at peek_position, before the bracket is eaten: the bracket's own column.
    assert read_json("[" * 127 + "]" * 127) is not None
    assert refusal("[" * 128 + "]" * 128) == "recursion limit exceeded at line 1 column 128"
    assert refusal('{"a":' * 128 + "1" + "}" * 128) == (
        "recursion limit exceeded at line 1 column 636"
    )
    assert refusal("\n [" * 130) == "recursion limit exceeded at line 129 column 2"


def test_nesting_far_past_pythons_own_limit_is_the_same_refusal() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert refusal(deep) == "recursion limit exceeded at line 1 column 128"
    assert refusal('{"a":' + deep + "}") == "recursion limit exceeded at line 1 column 132"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # serde reads the document in order: what comes before the 128th level decides.
        ("[1 " + "[" * 200, "expected `,` or `]` at line 1 column 4"),
        ("{" + "[" * 200, "key must be a string at line 1 column 2"),
        ('{"a" ' + "[" * 200, "expected `:` at line 1 column 6"),
        ("[]" + "[" * 200, "trailing characters at line 1 column 3"),
        ("[" * 100 + "NaN," + "[" * 100, "expected value at line 1 column 101"),
        ("[1e999," + "[" * 200, "number out of range at line 1 column 6"),
        ('["abc' + "[" * 200, "EOF while parsing a string at line 1 column 205"),
        ('["\\ud800",' + "[" * 200, "lone leading surrogate in hex escape"),
        # Brackets inside strings are not structure.
        ('["' + "[" * 500 + '"]', None),
        ('["\\"' + "[" * 500 + '"]', None),
    ],
)
def test_what_precedes_the_too_deep_bracket_is_reported_first(
    text: str, message: str | None
) -> None:
    if message is None:
        assert read_json(text) is not None
    else:
        assert refusal(text) == message


def test_a_skipped_lone_surrogate_before_the_too_deep_bracket_is_not_the_refusal() -> None:
    text = '["\\ud800",' + "[" * 200
    with pytest.raises(SerdeError, match=r"^recursion limit exceeded at line 1 column 137$"):
        read_json(text, check_strings=False)


# --- objects, structs, strings ---------------------------------------------------------------


def test_an_object_keeps_the_last_value_and_every_pair() -> None:
    document = read_json('{"a":1,"b":2,"a":3}')
    assert isinstance(document, JsonObject)
    assert document == {"a": 3, "b": 2}
    assert document.pairs == [("a", 1), ("b", 2), ("a", 3)]
    assert document.repeated == frozenset({"a"})
    assert read_json('{"a":1}').repeated == frozenset()


def test_an_array_fills_struct_fields_positionally() -> None:
    assert fields_from_array([1], ["min", "max"]) == {"min": 1}
    assert fields_from_array([1, 2], ["min", "max"]) == {"min": 1, "max": 2}
    with pytest.raises(SerdeError, match=r"^trailing characters$"):
        fields_from_array([1, 2, 3], ["min", "max"])


def test_a_lone_surrogate_is_refused_only_where_a_string_is_read() -> None:
    # parsing alone is fine, for a reader that checks each string it reads
    document = read_json('{"skipped":"\\ud800","\\udc00":1}', check_strings=False)
    with pytest.raises(SerdeError, match=r"^lone leading surrogate in hex escape$"):
        whole_text(document["skipped"])
    with pytest.raises(SerdeError, match=r"^lone leading surrogate in hex escape$"):
        check_every_string(read_json('{"\\udc00":1}', check_strings=False))  # keys too
    assert whole_text("😀") == "😀"
    check_every_string(read_json('{"ok":["😀", {"x":"y"}]}'))


def test_float_roundtrip_reads_every_float_exactly_as_written() -> None:
    """serde_json's ``float_roundtrip``: this tool's own artifacts read back bit for bit."""
    document = read_json('[0.09090909090909091, 0.9385574520455129, 1e-400, -0.0, 7]',
                         float_roundtrip=True)  # fmt: skip
    assert document == [0.09090909090909091, 0.9385574520455129, 0.0, -0.0, 7]
    assert math.copysign(1.0, document[3]) < 0
    with pytest.raises(SerdeError, match="number out of range at line 1 column 6"):
        read_json("[1e400]", float_roundtrip=True)


def test_serde_parser_is_one_ulp_off_where_serde_is() -> None:
    assert parse_serde_float("0.09090909090909091") != 0.09090909090909091
    assert parse_serde_float("0.5") == 0.5
    with pytest.raises(ValueError):
        parse_serde_float("1e400")
    assert parse_serde_float("1e-400") == 0.0


def test_the_reader_refuses_nan() -> None:
    with pytest.raises(ValueError):
        read_json('{"a": NaN}')


@pytest.mark.parametrize(
    "text", ['"\\ud800"', '{"a": "x\\udfff"}', '{"\\udc00": 1}', '["\\ude00\\ud83d"]']
)
def test_the_reader_refuses_a_lone_surrogate_escape(text: str) -> None:
    # serde_json refuses an unpaired \uD800-\uDFFF escape; Python's json would yield a str
    # that can never be written as UTF-8 (the artifact write would crash).
    with pytest.raises(ValueError, match="surrogate"):
        read_json(text)


def test_the_reader_joins_a_surrogate_pair() -> None:
    assert read_json('["\\ud83d\\ude00", "\\u00e9"]') == ["\U0001f600", "é"]



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
    loaded = read_json(json.dumps(document))
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


_FLOATS = st.floats(allow_nan=False, allow_infinity=False)


_FLOAT_DOCUMENTS = st.recursive(
    _SCALARS | _FLOATS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(_FLOAT_DOCUMENTS, st.data())
def test_a_truncated_document_is_an_end_of_input_error_at_the_end(document: Any, data: Any) -> None:
    # serde reads a truncated document up to its last byte: the error is always about the
    # end of the input (an exponent with no digit is `invalid number`), at the last column.
    text = json.dumps(document, ensure_ascii=False, indent=data.draw(st.sampled_from([None, 1])))
    cut = data.draw(st.integers(0, len(text) - 1))
    prefix = text[:cut]
    try:
        read_json(prefix)
    except SerdeError as error:
        last_line = prefix[prefix.rfind("\n") + 1 :]
        where = f"at line {prefix.count(chr(10)) + 1} column {len(last_line.encode())}"
        assert re.fullmatch(
            r"(EOF while parsing (a value|a list|an object|a string)|invalid number) " + where,
            str(error),
        ), (prefix, str(error))
