"""Our own JSON files' reading rules: strict fixed shapes, and every error at its line."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.core.own_json import (
    FieldError,
    Where,
    dotted,
    entries,
    fields,
    located,
    parse_own,
    stamp,
    value_line,
)
from pytest_taguru.core.serde import SerdeError, read_json


def _expected_lines(value: Any, line: int, where: Where, out: dict[Where, int]) -> int:
    """Where ``json.dumps(..., indent=1)`` puts each member and item; returns the value's last
    line."""
    if not isinstance(value, dict | list) or not value:
        return line
    members = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    for key, item in members:
        line += 1
        out[(*where, key)] = line
        line = _expected_lines(item, line, (*where, key), out)
    return line + 1


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(alphabet='ab:"\\{}[], \n\u3042', max_size=4), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(document=JSON)
def test_every_value_is_found_on_its_line(document: Any) -> None:
    text = json.dumps(document, indent=1, ensure_ascii=False)
    expected: dict[Where, int] = {(): 1}
    _expected_lines(document, 1, (), expected)
    for where, line in expected.items():
        assert value_line(text, where) == line, where


def test_a_missing_path_and_a_repeated_key() -> None:
    text = '{"a": 1,\n "a": 2,\n "b": [1,\n  2]}'
    assert value_line(text, ("a",)) == 1
    assert value_line(text, ("a",), occurrence=2) == 2
    assert value_line(text, ("b", 1)) == 4
    assert value_line(text, ("c",)) is None
    assert value_line(text, ("b", 2)) is None


def test_strings_holding_json_punctuation_do_not_confuse_the_scan() -> None:
    text = '{"k\\"}": "{[,:\\n]",\n "next": {"x": ["]", "}"],\n  "y": 1}}'
    assert value_line(text, ("next", "y")) == 3
    assert value_line(text, ('k"}',)) == 1


def test_dotted_paths() -> None:
    assert dotted(()) == "the top level"
    assert dotted(("slices", "history", 2)) == "slices.history[2]"


def read(text: str) -> Any:
    return read_json(text)


def test_fields_refuses_unknown_repeated_and_missing_keys() -> None:
    readers = {"a": lambda value, where: value, "b": lambda value, where: value}
    assert fields(read('{"b": 2}'), (), readers, shape="x") == {"b": 2}
    with pytest.raises(FieldError) as unknown:
        fields(read('{"a": 1, "c": 3}'), ("top",), readers, shape="x")
    assert (unknown.value.where, unknown.value.problem) == (
        ("top", "c"),
        "unknown field, expected one of `a`, `b`",
    )
    with pytest.raises(FieldError, match="field `a` given twice"):
        fields(read('{"a": 1, "a": 1}'), (), readers, shape="x")
    with pytest.raises(FieldError, match="missing field `a`"):
        fields(read('{"b": 1}'), (), readers, required=("a",), shape="x")
    with pytest.raises(FieldError, match=r"expected x, got sequence"):
        fields(read("[1]"), (), readers, shape="x")


def test_entries_refuse_a_repeated_name() -> None:
    assert entries(read('{"x": 1, "y": 2}'), (), "m") == [("x", 1), ("y", 2)]
    with pytest.raises(FieldError) as repeated:
        entries(read('{"x": 1, "x": 2}'), ("s",), "m")
    assert repeated.value.where == ("s", "x")


@pytest.mark.parametrize("value", [2, 1.0, True, "1", None])
def test_a_stamp_is_exactly_its_version(value: Any) -> None:
    with pytest.raises(FieldError, match="must be 1"):
        stamp(1)(value, ("v",))
    assert stamp(1)(1, ("v",)) == 1


def test_located_names_file_line_and_field() -> None:
    raw = b'{\n  "a": {\n    "b": 1\n  }\n}'
    assert located("f.json", raw, FieldError(("a", "b"), "bad")) == "f.json:3: a.b: bad"
    named = FieldError(("a",), "bad at a", named=True)
    assert located("f.json", raw, named) == "f.json:2: bad at a"


def test_parse_own_uses_the_strict_reader() -> None:
    with pytest.raises(SerdeError, match="trailing comma at line 1 column 9"):
        parse_own(b'{"a": 1,}')
    with pytest.raises(SerdeError, match="invalid UTF-8"):
        parse_own(b'{"a": "\xff"}')
    with pytest.raises(SerdeError, match="recursion limit exceeded"):
        parse_own(b"[" * 200 + b"]" * 200)
