"""The reader's shortcuts read exactly what its step-by-step rules read: a short float through
Python's ``float``, and the parser made once rather than per document."""

import json
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.core import serde, serde_numbers
from pytest_taguru.core.serde import JsonObject, SerdeError, read_json
from pytest_taguru.core.serde_numbers import parse_serde_float

digits = st.text(st.sampled_from("0123456789"), min_size=1, max_size=30)


@st.composite
def number_texts(draw: st.DrawFn) -> str:
    """JSON number tokens of every shape: sign, leading zeros, long fractions, exponents."""
    whole = draw(st.sampled_from(["0", draw(digits).lstrip("0") or "0"]))
    text = ("-" if draw(st.booleans()) else "") + whole
    if draw(st.booleans()):
        text += "." + draw(digits)
    if draw(st.integers(0, 3)) == 0:
        text += draw(st.sampled_from(["e", "E", "e+", "e-"])) + str(draw(st.integers(0, 330)))
    return text


def same_double(one: float, other: float) -> bool:
    return struct.pack("<d", one) == struct.pack("<d", other)


def stepwise(text: str) -> float | str:
    try:
        return serde_numbers._parse_serde_float_by_digits(text)
    except ValueError as error:
        return str(error)


def shortcut(text: str) -> float | str:
    try:
        return parse_serde_float(text)
    except ValueError as error:
        return str(error)


@settings(max_examples=2000)
@given(number_texts())
def test_short_floats_read_as_serde_reads_them(text: str) -> None:
    fast, slow = shortcut(text), stepwise(text)
    if isinstance(fast, str) or isinstance(slow, str):
        assert fast == slow
    else:
        assert same_double(fast, slow)


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_scores_as_servers_write_them(value: float) -> None:
    for text in (repr(value), f"{value:.8g}", f"{value:.9g}"):
        if "e" not in text and "inf" not in text:
            assert same_double(
                parse_serde_float(text), serde_numbers._parse_serde_float_by_digits(text)
            )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)


def per_call_reader(text: str, exact: bool) -> Any:
    """The reader as it was: a parser made for each document by ``json.loads``."""
    return json.loads(
        text,
        parse_float=parse_serde_float,
        parse_int=serde_numbers.exact_integer if exact else serde_numbers.parse_int,
        parse_constant=serde._refuse_constant,
        object_pairs_hook=JsonObject,
    )


def outcome(read: Any, text: str, exact: bool) -> Any:
    try:
        return ("value", read(text, exact))
    except (SerdeError, json.JSONDecodeError, ValueError, serde._Constant) as error:
        return ("refused", type(error).__name__)


@settings(max_examples=500)
@given(json_values, st.booleans(), st.sampled_from(["", " ", "x", "]", "\ufeff"]))
def test_the_shared_parser_reads_what_a_fresh_one_reads(value: Any, exact: bool, junk: str) -> None:
    text = json.dumps(value, allow_nan=True)
    for document in (text, junk + text, text + junk):
        fresh = outcome(per_call_reader, document, exact)
        shared = outcome(lambda t, e: serde._parse(t, exact_wide_integers=e), document, exact)
        if fresh[0] == "value" and shared[0] == "value":
            assert repr(fresh[1]) == repr(shared[1])
        else:
            assert fresh[0] == shared[0] == "refused"


def test_a_byte_order_mark_keeps_its_words() -> None:
    try:
        read_json("\ufeff{}")
    except SerdeError as error:
        assert str(error) == "expected value at line 1 column 1"
    else:
        raise AssertionError("a byte-order mark was read")


# --- plain objects: read as the full rule reads, refused as it refuses -------------------------

keys = st.sampled_from(["a", "b", "c", '\\"q', "[", "{", "x\\\\"])
leaves = st.one_of(
    st.sampled_from(
        [
            "null",
            "true",
            "-0",
            "0",
            "1.5",
            "0.09090909090909091",
            "1e400",
            "NaN",
            "18446744073709551616",
            '"[{"',
            '"\\\\"',
            '"\\ud800"',
            '"\\""',
            "-Infinity",
        ]
    ),
    st.integers(-(2**65), 2**65).map(str),
)


@st.composite
def json_texts(draw: st.DrawFn, depth: int = 0) -> str:
    """Texts near JSON: nested arrays and objects (repeated keys, deep nesting), odd leaves,
    and now and then a syntax error."""
    kind = draw(st.integers(0, 3 if depth < 200 else 0))
    if kind == 0:
        return draw(leaves)
    if kind == 1:  # a chain, now and then around the nesting limit
        levels = draw(st.sampled_from([1, 1, 1, 1, 60, 126, 127, 128]))
        inner = draw(json_texts(depth + levels)) if draw(st.integers(0, 5)) else ""
        if draw(st.booleans()):
            return "[" * levels + inner + "]" * levels
        return '{"k":' * levels + (inner or "0") + "}" * levels
    if kind == 2:
        items = draw(st.lists(json_texts(depth + 5), max_size=3))
        return "[" + ",".join(items) + "]"
    members = draw(st.lists(st.tuples(keys, json_texts(depth + 5)), max_size=3))
    return "{" + ",".join(f'"{k}":{v}' for k, v in members) + "}"


def read(text: str, **options: Any) -> tuple[str, Any]:
    try:
        return ("value", read_json(text, **options))
    except SerdeError as error:
        return ("refused", str(error))


def plain(value: Any) -> Any:
    """A document as data: objects as lists of their (last) items, floats by their bits."""
    if isinstance(value, dict):
        return [(key, plain(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    return value


@settings(max_examples=500, deadline=None)
@given(
    json_texts(),
    st.sampled_from(["", " ", ",", "]", "}", "x", "\ufeff"]),
    st.booleans(),
    st.booleans(),
)
def test_plain_objects_read_and_refuse_as_the_full_rule(
    text: str, junk: str, exact: bool, check_strings: bool
) -> None:
    for document in (text, text + junk, junk + text):
        full = read(document, exact_wide_integers=exact, check_strings=check_strings)
        for objects in ("last_wins", "pairs_if_repeated"):
            quick = read(
                document, exact_wide_integers=exact, check_strings=check_strings, objects=objects
            )
            assert quick[0] == full[0]
            if full[0] == "refused":
                assert quick == full
            else:
                assert plain(quick[1]) == plain(full[1])


def test_a_repeated_key_keeps_its_pairs_where_asked() -> None:
    document = read_json('{"a":1,"a":2}', objects="pairs_if_repeated")
    assert isinstance(document, JsonObject) and document.repeated == {"a"}
    assert read_json('{"a":1,"a":2}', objects="last_wins") == {"a": 2}


def test_a_deep_document_is_refused_with_its_place() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(SerdeError, match="recursion limit exceeded at line 1 column 128"):
        read_json(text, objects="last_wins")


@given(st.text(alphabet="0123456789-. a\u00e9\"", max_size=60), st.integers(1, 25))
def test_a_digit_run_is_found_as_a_regex_finds_it(text: str, length: int) -> None:
    import re

    from pytest_taguru.core.json_shape import has_digit_run

    assert has_digit_run(text, length) == (re.search(f"[0-9]{{{length}}}", text) is not None)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[18446744073709551616]", [18446744073709551616.0]),
        ("[-0]", [-0.0]),
        ('{"a": -0, "b": 1}', {"a": -0.0, "b": 1}),
        ("[9223372036854775807, -9223372036854775808]", [2**63 - 1, -(2**63)]),
        ("[-0.5, -0e1, 12]", [-0.5, -0.0, 12]),
    ],
)
def test_integers_past_i64_and_negative_zero_still_take_the_hook(text: str, value: Any) -> None:
    read = read_json(text, objects="last_wins")
    assert read == value
    assert json.dumps(read) == json.dumps(value)  # -0.0 stays a float, wide ints floats


structural_text = st.text(alphabet='[]{}":,\\ab', max_size=6)
structured_values = st.recursive(
    st.none() | st.integers() | structural_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(structural_text, inner, max_size=4),
    max_leaves=30,
)


def walked_shape(value: Any) -> tuple[int, int]:
    """(members, depth) by walking the parsed value (the scan's reference)."""
    if isinstance(value, dict):
        inner = [walked_shape(item) for item in value.values()]
        return len(value) + sum(m for m, _ in inner), 1 + max((d for _, d in inner), default=0)
    if isinstance(value, list):
        inner = [walked_shape(item) for item in value]
        return sum(m for m, _ in inner), 1 + max((d for _, d in inner), default=0)
    return 0, 0


@settings(max_examples=500)
@given(structured_values, st.booleans())
def test_the_shape_scan_counts_what_a_walk_counts(value: Any, compact: bool) -> None:
    from pytest_taguru.core.json_shape import structure

    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps(value, separators=separators, ensure_ascii=False)
    assert structure(text) == walked_shape(value)
