"""Slice definitions: the ``taguru_slices`` line syntax, the slices file, start-up warnings."""

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.core.limits import MAX_SLICE_FILE_BYTES, MAX_SLICES
from pytest_taguru.errors import UsageError
from pytest_taguru.run.slices import (
    SliceLinesParser,
    empty_slice_warnings,
    load_slices_file,
    name_problem,
    parse_slice_lines,
    read_slices_file,
)

ORIGIN = "--taguru-slices"


# --- the line syntax ---------------------------------------------------------------------------


def test_lines_define_slices_in_order() -> None:
    text = "history: history-*\n\n  # products and pairings\n drinks :products-*  pairing-* \n"
    definitions = parse_slice_lines(text, ORIGIN)
    assert definitions.globs == {
        "history": ("history-*",),
        "drinks": ("products-*", "pairing-*"),
    }
    assert list(definitions.globs) == ["history", "drinks"]
    assert definitions.origin == ORIGIN


def test_a_glob_may_hold_a_colon() -> None:
    assert parse_slice_lines("odd: a:b* [!x]*", ORIGIN).globs == {"odd": ("a:b*", "[!x]*")}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("history history-*", 'line 1: expected "name: glob [glob…]", got "history history-*"'),
        ("a: x\nb:", "line 2: slice 'b' needs at least one glob"),
        (": x", "line 1: a slice name must not be empty"),
        ("his tory: x", "line 1: a slice name holds no white space and no ':', got 'his tory'"),
        ("a\u3000b: x", "line 1: a slice name holds no white space"),
        ("a: x\n\nb: y\na: z", "line 4: slice 'a' is already defined on line 1"),
        (f"{'n' * 65}: x", "line 1: a slice name has at most 64 characters"),
        ("\n# only a comment\n", 'no slice defined (expected "name: glob [glob…]" lines)'),
    ],
)
def test_a_bad_line_names_its_line(text: str, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_slice_lines(text, ORIGIN)
    assert refused.value.message.startswith(f"{ORIGIN}: {message}")


def test_at_most_max_slices() -> None:
    lines = [f"s{index}: c-{index}" for index in range(MAX_SLICES + 1)]
    assert len(parse_slice_lines("\n".join(lines[:-1]), ORIGIN).globs) == MAX_SLICES
    with pytest.raises(UsageError, match=f"line {MAX_SLICES + 1}: more than {MAX_SLICES} slices"):
        parse_slice_lines("\n".join(lines), ORIGIN)


def test_the_option_parser_needs_a_value() -> None:
    parser = SliceLinesParser()
    assert parser("a: x", "--taguru-slices").globs == {"a": ("x",)}
    with pytest.raises(UsageError, match="--taguru-slices needs slice definitions"):
        parser(None, "--taguru-slices")


NAMES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
                           blacklist_characters=":#\x85"),
    min_size=1,
    max_size=12,
)  # fmt: skip
GLOBS = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")),
            min_size=1, max_size=8),
    min_size=1,
    max_size=4,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(slices=st.dictionaries(NAMES, GLOBS, min_size=1, max_size=6))
def test_lines_written_from_definitions_read_back_as_them(slices: dict[str, list[str]]) -> None:
    text = "\n".join(f"{name}: {' '.join(globs)}" for name, globs in slices.items())
    parsed = parse_slice_lines(text, ORIGIN)
    assert parsed.globs == {name: tuple(globs) for name, globs in slices.items()}


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_any_text_is_read_or_refused_with_a_located_message(text: str) -> None:
    try:
        parsed = parse_slice_lines(text, ORIGIN)
    except UsageError as refused:
        assert refused.message.startswith(f"{ORIGIN}: ")
        return
    for name, globs in parsed.globs.items():
        assert name_problem(name) is None and globs and all(globs)


# --- the slices file ---------------------------------------------------------------------------


def read(document: Any, path: str = "slices.json") -> Any:
    raw = document if isinstance(document, bytes) else json.dumps(document, indent=2).encode()
    return read_slices_file(raw, path)


def test_a_slices_file() -> None:
    definitions = read({"taguru_slices": 1, "slices": {"b": ["x*"], "a": ["y", "z?"]}})
    assert definitions.globs == {"b": ("x*",), "a": ("y", "z?")}
    assert definitions.origin == "slices.json"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"slices": {"a": ["x"]}}, "slices.json:1: the top level: missing field `taguru_slices`"),
        ({"taguru_slices": 2, "slices": {}}, "slices.json:2: taguru_slices: must be 1, got "
                                              "integer `2`"),
        ({"taguru_slices": 1}, "slices.json:1: the top level: missing field `slices`"),
        ({"taguru_slices": 1, "slices": {}}, "slices.json: no slice defined (slices is empty)"),
        ({"taguru_slices": 1, "slices": [], "x": 1}, "slices.json:3: slices: expected an object "
                                                     "of slice name → globs, got sequence"),
        ({"taguru_slices": 1, "slice": {}}, "slices.json:3: slice: unknown field, expected one "
                                            "of `taguru_slices`, `slices`"),
        ({"taguru_slices": 1, "slices": {"a": "x*"}}, "slices.json:4: slices.a: expected an "
                                                      "array of globs over case ids, got string "
                                                      '"x*"'),
        ({"taguru_slices": 1, "slices": {"a": []}}, "slices.json:4: slices.a: needs at least one "
                                                    "glob"),
        ({"taguru_slices": 1, "slices": {"a": ["x", ""]}}, "slices.json:6: slices.a[1]: expected "
                                                           'a glob (a non-empty string), got '
                                                           'string ""'),
        ({"taguru_slices": 1, "slices": {"a b": ["x"]}}, "slices.json:4: slices.a b: a slice name "
                                                         "holds no white space and no ':'"),
        ([1], "slices.json:1: the top level: expected a slices object"),
    ],
)  # fmt: skip
def test_a_bad_slices_file_names_file_line_and_field(document: Any, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        read(document)
    assert refused.value.message.startswith(message)


def test_a_repeated_slice_and_bad_json_in_a_slices_file() -> None:
    with pytest.raises(UsageError, match=r"^s.json:3: slices.a: 'a' given twice$"):
        read(b'{"taguru_slices": 1,\n "slices": {"a": ["x"],\n  "a": ["y"]}}', "s.json")
    with pytest.raises(UsageError, match=r"^s.json: trailing comma at line 2 column 22$"):
        read(b'{"taguru_slices": 1,\n "slices": {"a": [1],}}', "s.json")


def test_a_slices_file_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "slices.json"
    path.write_text('{"taguru_slices": 1, "slices": {"a": ["x"]}}', encoding="utf-8")
    assert load_slices_file(str(path)).globs == {"a": ("x",)}
    with pytest.raises(UsageError, match=r"cannot read .*missing.json: No such file"):
        load_slices_file(str(tmp_path / "missing.json"))
    path.write_bytes(b" " * (MAX_SLICE_FILE_BYTES + 1))
    with pytest.raises(UsageError, match=f"larger than {MAX_SLICE_FILE_BYTES} bytes"):
        load_slices_file(str(path))


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=60) | st.text(max_size=60).map(str.encode))
def test_any_bytes_are_read_or_refused_naming_the_file(raw: bytes) -> None:
    try:
        read_slices_file(raw, "s.json")
    except UsageError as refused:
        assert refused.message.startswith("s.json")


# --- warnings ----------------------------------------------------------------------------------


def test_a_slice_matching_no_case_is_a_warning() -> None:
    definitions = parse_slice_lines("a: c-*\nb: nothing-* none", ORIGIN)
    assert empty_slice_warnings(definitions, ["c-1", "c-2"]) == [
        "--taguru-slices: slice 'b' (nothing-* none) matches no case id of the eval set"
    ]
