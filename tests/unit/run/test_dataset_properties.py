"""Property tests for the eval.jsonl loader, the line splitter, f32 text and flag integers."""

import json
import math
import re
import struct
import tempfile
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.core.jsontext import format_plain_f32, to_f32
from pytest_taguru.core.limits import U32_MAX, U64_MAX
from pytest_taguru.core.serde_numbers import int_to_f32
from pytest_taguru.core.text import trim
from pytest_taguru.core.textfile import split_lines
from pytest_taguru.errors import UsageError
from pytest_taguru.run.dataset import load_eval_set
from pytest_taguru.run.flag_values import parse_positive_int

# ---------------------------------------------------------------- line splitting

line_text = st.text(st.characters(blacklist_characters="\n")).filter(lambda s: not s.endswith("\r"))


@given(
    lines=st.lists(line_text, min_size=1),
    crlf=st.lists(st.booleans(), min_size=1),
    final_newline=st.booleans(),
)
def test_split_lines_inverts_joining(
    lines: list[str], crlf: list[bool], final_newline: bool
) -> None:
    if not final_newline and lines[-1] == "":
        lines = [*lines[:-1], "x"]  # an empty last line is only visible through its newline
    ends = ["\r\n" if crlf[i % len(crlf)] else "\n" for i in range(len(lines))]
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    if not final_newline:
        text = text.removesuffix(ends[-1])
    assert split_lines(text) == lines


@given(st.text(st.characters(blacklist_characters="\n")))
def test_split_lines_only_splits_on_newline(text: str) -> None:
    assert split_lines(text) == ([text] if text else [])


# ---------------------------------------------------------------- round trip of valid cases

word = st.text(min_size=1, max_size=12).filter(lambda s: trim(s) != "")
any_text = st.text(max_size=12)
u64 = st.integers(0, U64_MAX)
blank_line = st.text(st.sampled_from(" \t\u3000\u00a0\r"), max_size=3)


@st.composite
def source_entries(draw: st.DrawFn) -> dict[str, Any]:
    entry: dict[str, Any] = {"source": draw(word)}
    if draw(st.booleans()):
        entry["paragraphs"] = draw(st.lists(st.integers(0, U32_MAX), max_size=3))
    if draw(st.booleans()):
        entry["relevance"] = draw(st.integers(0, 3))
    return entry


@st.composite
def citation_entries(draw: st.DrawFn) -> dict[str, Any]:
    entry: dict[str, Any] = {"source": draw(word), "paragraph": draw(st.integers(0, U32_MAX))}
    section = draw(st.sampled_from(["absent", "null", "label"]))
    if section != "absent":
        entry["section"] = None if section == "null" else draw(any_text)
    quote = draw(st.sampled_from(["absent", "null", "text"]))
    if quote != "absent":
        entry["quote"] = None if quote == "null" else draw(word)
    return entry


@st.composite
def case_dicts(draw: st.DrawFn, case_id: str) -> dict[str, Any]:
    case: dict[str, Any] = {"case_id": case_id, "query": draw(word)}
    optional: dict[str, st.SearchStrategy[Any]] = {
        "cues": st.lists(any_text, max_size=3),
        "expected_sources": st.lists(source_entries(), max_size=3),
        "expected_concepts": st.lists(any_text, max_size=3),
        "expected_labels": st.one_of(st.none(), st.lists(word, max_size=3)),
        "expected_associations": st.one_of(
            st.none(),
            st.lists(
                st.fixed_dictionaries({"subject": word, "label": word, "object": word}),
                max_size=2,
            ),
        ),
        "expected_citations": st.one_of(st.none(), st.lists(citation_entries(), max_size=3)),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            case[key] = draw(strategy)
    options: dict[str, st.SearchStrategy[Any]] = {
        "limit": st.one_of(st.none(), st.integers(1, 1000)),
        "floor": st.one_of(st.none(), st.floats(0.0, 1.0), st.sampled_from([0, 1])),
        "tags": st.one_of(st.none(), st.lists(any_text, max_size=2)),
        "since": st.one_of(st.none(), u64),
        "until": st.one_of(st.none(), u64),
    }
    if draw(st.booleans()):
        case["options"] = {k: draw(s) for k, s in options.items() if draw(st.booleans())}
    return case


@st.composite
def eval_files(draw: st.DrawFn) -> tuple[str, list[tuple[int, dict[str, Any]]]]:
    """File text and the (physical line, case dict) pairs it holds."""
    ids = draw(st.lists(word, min_size=1, max_size=4, unique=True))
    records: list[str | dict[str, Any]] = [{"taguru_eval": 1, "name": draw(st.none() | any_text)}]
    records += [draw(case_dicts(case_id)) for case_id in ids]
    lines: list[str] = []
    placed: list[tuple[int, dict[str, Any]]] = []
    for index, record in enumerate(records):
        lines += draw(st.lists(blank_line, max_size=2))
        lines.append(json.dumps(record, ensure_ascii=draw(st.booleans())))
        if index > 0:
            assert isinstance(record, dict)
            placed.append((len(lines), record))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + draw(st.sampled_from(["", newline])), placed


@settings(max_examples=150, deadline=None)
@given(eval_files())
def test_valid_cases_round_trip(file: tuple[str, list[tuple[int, dict[str, Any]]]]) -> None:
    text, placed = file
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "eval.jsonl"
        path.write_text(text, encoding="utf-8", newline="")
        eval_set = load_eval_set(str(path))
    assert len(eval_set.cases) == len(placed)
    for case, (line, expected) in zip(eval_set.cases, placed, strict=True):
        assert case.line == line
        assert case.case_id == expected["case_id"] and case.query == expected["query"]
        assert list(case.cues) == expected.get("cues", [])
        assert list(case.expected_concepts) == expected.get("expected_concepts", [])
        assert list(case.expected_labels) == (expected.get("expected_labels") or [])
        assert [s.model_dump(mode="json") for s in case.expected_sources] == [
            {"paragraphs": [], "relevance": 1, **s} for s in expected.get("expected_sources", [])
        ]
        assert [a.model_dump() for a in case.expected_associations] == (
            expected.get("expected_associations") or []
        )
        citations = expected.get("expected_citations") or []
        assert [c.model_dump() for c in case.expected_citations] == [
            {"section": None, "quote": None, **c} for c in citations
        ]
        assert [c.section_declared for c in case.expected_citations] == [
            "section" in c for c in citations
        ]
        options = expected.get("options", {})
        floor = options.get("floor")
        assert case.options.model_dump(mode="json") == {
            "limit": options.get("limit"),
            "floor": None if floor is None else to_f32(float(floor)),
            "tags": options.get("tags") or [],
            "since": options.get("since"),
            "until": options.get("until"),
        }


@settings(max_examples=100, deadline=None)
@given(case_dicts("c1"), st.sampled_from([3.0, -1, "3", None, True, U64_MAX + 1]))
def test_a_bad_relevance_is_never_accepted(case: dict[str, Any], relevance: Any) -> None:
    case["expected_sources"] = [{"source": "s", "relevance": relevance}]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "eval.jsonl"
        path.write_text('{"taguru_eval":1}\n' + json.dumps(case), encoding="utf-8")
        with pytest.raises(UsageError, match=r": line 2: not a valid eval case: expected_sources"):
            load_eval_set(str(path))


# ---------------------------------------------------------------- 32-bit floats

f32_values = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(f32_values)
def test_format_plain_f32_round_trips_without_exponent(value: float) -> None:
    text = format_plain_f32(value)
    assert "e" not in text and not text.endswith(".0")
    assert to_f32(float(text)) == value


@given(
    st.integers(1, 999_999),
    st.integers(-6, 6),
    st.booleans(),
)
def test_format_plain_f32_gives_back_short_decimals(
    digits: int, exponent: int, negative: bool
) -> None:
    decimal = Decimal(digits).scaleb(exponent) * (-1 if negative else 1)
    expected = format(decimal.normalize(), "f")
    if "." in expected:
        expected = expected.rstrip("0").rstrip(".")
    assert format_plain_f32(to_f32(float(decimal))) == expected


def f32_neighbours(magnitude: float) -> list[float]:
    bits = struct.unpack("<I", struct.pack("<f", magnitude))[0]
    return [struct.unpack("<f", struct.pack("<I", b))[0] for b in (bits - 1, bits + 1) if b >= 0]


@given(st.integers(-(2**63), U64_MAX))
def test_int_to_f32_is_the_nearest_f32(value: int) -> None:
    result = int_to_f32(value)
    assert to_f32(result) == result and math.copysign(1, result) == math.copysign(1, value)
    error = abs(Fraction(abs(result)) - abs(value))
    for neighbour in f32_neighbours(abs(result)):
        assert error <= abs(Fraction(neighbour) - abs(value))


# ---------------------------------------------------------------- positive-integer flag values

_RUST_USIZE = re.compile(r"\+?[0-9]+")


@given(st.integers(1, U64_MAX), st.booleans(), st.integers(0, 3))
def test_positive_integers_parse(value: int, plus: bool, zeros: int) -> None:
    text = ("+" if plus else "") + "0" * zeros + str(value)
    assert parse_positive_int(text, "--taguru-max-items") == value


@given(st.text(st.sampled_from("+-0123456789 _e\u0663x"), max_size=22))
def test_positive_integer_parser_agrees_with_rust_rules(text: str) -> None:
    valid = _RUST_USIZE.fullmatch(text) is not None and 1 <= int(text) <= U64_MAX
    if valid:
        assert parse_positive_int(text, "--max-items") == int(text)
    else:
        with pytest.raises(UsageError, match=r"^--max-items needs a positive integer$"):
            parse_positive_int(text, "--max-items")
