"""eval.jsonl loading in interpret mode: evaluate-run.md §2, §1.3 step 3, pitfall 19."""

import json
import math
from pathlib import Path

import pytest

from pytest_taguru.core.jsontext import to_f32
from pytest_taguru.core.limits import U64_MAX
from pytest_taguru.core.serde_numbers import int_to_f32
from pytest_taguru.errors import UsageError
from pytest_taguru.run.dataset import check_limits, load_eval_set
from pytest_taguru.run.eval_models import DEFAULT_LIMIT, EvalSet

HEADER = '{"taguru_eval":1,"name":"sake retrieval cases"}'

SPEC_EXAMPLE = (
    HEADER + "\n"
    '{"case_id":"brand-origin-001","query":"青嶺はどこの蔵の酒か","cues":["青嶺"],'
    '"expected_sources":[{"source":"corpus/brewery.md","paragraphs":[0],"relevance":3},'
    '{"source":"corpus/history.md"}],"expected_concepts":["青嶺酒造"],'
    '"expected_citations":[{"source":"corpus/brewery.md","paragraph":0,"section":"沿革",'
    '"quote":"1897年に創業"}],"options":{"limit":3}}\n'
    "\n"
    '{"case_id":"pairing-002","query":"青嶺に合う料理","expected_sources":'
    '[{"source":"corpus/pairing.md","relevance":2},{"source":"corpus/menu.md"}],'
    '"expected_associations":[{"subject":"青嶺","label":"合う","object":"焼き魚"}],'
    '"expected_citations":[{"source":"corpus/pairing.md","paragraph":5,"section":null}]}\n'
)


def write(tmp_path: Path, content: str | bytes) -> str:
    path = tmp_path / "eval.jsonl"
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return str(path)


def load(tmp_path: Path, content: str | bytes) -> EvalSet:
    return load_eval_set(write(tmp_path, content))


def error(tmp_path: Path, content: str | bytes) -> str:
    path = write(tmp_path, content)
    with pytest.raises(UsageError) as raised:
        load_eval_set(path)
    assert raised.value.exit_code == 2
    return raised.value.message


def case_error(tmp_path: Path, *case_lines: str) -> str:
    """The message for a file of HEADER + case_lines, without the ``<path>: line <n>: `` prefix."""
    message = error(tmp_path, "\n".join([HEADER, *case_lines]) + "\n")
    prefix = f"{tmp_path / 'eval.jsonl'}: line {len(case_lines) + 1}: "
    assert message.startswith(prefix), message
    return message[len(prefix) :]


def one_case(tmp_path: Path, case: dict[str, object]) -> str:
    return case_error(tmp_path, json.dumps(case, ensure_ascii=False))


def base(**fields: object) -> dict[str, object]:
    return {"case_id": "c1", "query": "q", **fields}


# ---------------------------------------------------------------- the §2.6 example


def test_spec_example_loads_with_physical_line_numbers(tmp_path: Path) -> None:
    eval_set = load(tmp_path, SPEC_EXAMPLE)
    assert eval_set.path == str(tmp_path / "eval.jsonl")
    assert eval_set.name == "sake retrieval cases"
    first, second = eval_set.cases
    assert (first.case_id, first.line, second.case_id, second.line) == (
        "brand-origin-001",
        2,
        "pairing-002",
        4,
    )
    assert first.cues == ("青嶺",)
    assert [(s.source, s.paragraphs, s.relevance) for s in first.expected_sources] == [
        ("corpus/brewery.md", (0,), 3),
        ("corpus/history.md", (), 1),
    ]
    assert first.expected_concepts == ("青嶺酒造",)
    assert first.options.limit == 3 and first.effective_limit == 3
    assert second.options.limit is None and second.effective_limit == DEFAULT_LIMIT
    assert second.cues == () and second.expected_labels == ()
    (association,) = second.expected_associations
    assert (association.subject, association.label, association.object) == (
        "青嶺",
        "合う",
        "焼き魚",
    )


def test_section_is_three_valued(tmp_path: Path) -> None:
    citations = [
        {"source": "s", "paragraph": 0},
        {"source": "s", "paragraph": 1, "section": None},
        {"source": "s", "paragraph": 2, "section": "沿革"},
    ]
    case = load(tmp_path, HEADER + "\n" + json.dumps(base(expected_citations=citations))).cases[0]
    assert [(c.section, c.section_declared) for c in case.expected_citations] == [
        (None, False),
        (None, True),
        ("沿革", True),
    ]


def test_spec_example_citations(tmp_path: Path) -> None:
    first, second = load(tmp_path, SPEC_EXAMPLE).cases
    (declared,) = first.expected_citations
    assert (declared.section, declared.section_declared, declared.quote) == (
        "沿革",
        True,
        "1897年に創業",
    )
    (null_section,) = second.expected_citations
    assert (null_section.paragraph, null_section.section, null_section.section_declared) == (
        5,
        None,
        True,
    )
    assert null_section.quote is None


# ---------------------------------------------------------------- file and line handling


def test_unreadable_file_messages(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.jsonl")
    with pytest.raises(UsageError, match=r"^cannot read .*nope\.jsonl: No such file or directory"):
        load_eval_set(missing)
    with pytest.raises(UsageError) as raised:
        load_eval_set(str(tmp_path))
    assert raised.value.message == f"cannot read {tmp_path}: Is a directory (os error 21)"
    assert error(tmp_path, b'{"taguru_eval":1}\n\xff\n') == (
        f"cannot read {tmp_path / 'eval.jsonl'}: stream did not contain valid UTF-8"
    )


def test_path_is_reported_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "eval.jsonl").write_text(HEADER + "\n{\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"^\./eval\.jsonl: line 2: not JSON: "):
        load_eval_set("./eval.jsonl")


def test_bom_is_not_stripped(tmp_path: Path) -> None:
    message = error(tmp_path, "\ufeff" + SPEC_EXAMPLE)
    assert message.startswith(f"{tmp_path / 'eval.jsonl'}: line 1: not JSON: ")


def test_empty_and_header_only_files(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    empty = f"{path}: empty file: expected a taguru_eval header line"
    no_cases = f"{path}: no cases: expected at least one case line after the header"
    assert error(tmp_path, "") == empty
    assert error(tmp_path, "\n \t\n\u3000\r\n") == empty
    assert error(tmp_path, HEADER) == no_cases
    assert error(tmp_path, f"\n{HEADER}\n\n  \n") == no_cases


def test_blank_lines_are_skipped_but_counted(tmp_path: Path) -> None:
    text = f"\n  \n{HEADER}\n\t\n" + json.dumps(base()) + "\n\n" + json.dumps(base(case_id="c2"))
    assert [c.line for c in load(tmp_path, text).cases] == [5, 7]


def test_crlf_line_endings(tmp_path: Path) -> None:
    eval_set = load(tmp_path, SPEC_EXAMPLE.replace("\n", "\r\n"))
    assert [c.line for c in eval_set.cases] == [2, 4]


@pytest.mark.parametrize("separator", ["\r", "\u2028", "\x0b", "\x0c", "\x85", "\x1c"])
def test_only_newline_separates_lines(tmp_path: Path, separator: str) -> None:
    message = error(tmp_path, HEADER + separator + json.dumps(base()) + "\n")
    assert message.startswith(f"{tmp_path / 'eval.jsonl'}: line 1: not JSON: ")


def test_lines_are_trimmed_with_unicode_white_space(tmp_path: Path) -> None:
    text = f"\u3000{HEADER}\t\n\u00a0" + json.dumps(base()) + " \u2003\n"
    assert load(tmp_path, text).cases[0].case_id == "c1"


def test_information_separators_are_not_trimmed(tmp_path: Path) -> None:
    # Python's str.strip() would remove U+001F; Rust's trim keeps it.
    assert case_error(tmp_path, json.dumps(base()) + "\x1f").startswith("not JSON: ")


def test_duplicate_keys_last_wins(tmp_path: Path) -> None:
    line = '{"case_id":"first","query":"q","case_id":"second"}'
    assert load(tmp_path, f"{HEADER}\n{line}").cases[0].case_id == "second"


# ---------------------------------------------------------------- header


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('{"taguru_eval":2}', "taguru_eval must be 1, got 2"),
        ('{"taguru_eval":0}', "taguru_eval must be 1, got 0"),
        (
            '{"taguru_eval":1.0}',
            "not a valid eval header: taguru_eval: expected an integer, got 1.0",
        ),
        (
            '{"taguru_eval":"1"}',
            'not a valid eval header: taguru_eval: expected an integer, got "1"',
        ),
        (
            '{"taguru_eval":-1}',
            "not a valid eval header: taguru_eval: expected an unsigned integer, got -1",
        ),
        (
            '{"taguru_eval":null}',
            "not a valid eval header: taguru_eval: expected an integer, got null",
        ),
        ('{"name":"x"}', "not a valid eval header: missing field `taguru_eval`"),
        ("[1]", "not a valid eval header: expected an object, got an array"),
        (
            '{"taguru_eval":1,"extra":true}',
            "not a valid eval header: unknown field `extra`, expected one of "
            "`taguru_eval`, `name`, `default_target`",
        ),
        ('{"taguru_eval":1,"name":5}', "not a valid eval header: name: expected a string, got 5"),
    ],
)
def test_header_errors(tmp_path: Path, header: str, expected: str) -> None:
    message = error(tmp_path, f"\n{header}\n" + json.dumps(base()))
    assert message == f"{tmp_path / 'eval.jsonl'}: line 2: {expected}"


@pytest.mark.parametrize(
    ("header", "name", "default_context"),
    [
        ('{"taguru_eval":1}', None, None),
        ('{"taguru_eval":1,"name":null}', None, None),
        ('{"taguru_eval":1,"name":"n","default_target":[1,{"a":null}]}', "n", None),
        ('{"taguru_eval":1,"default_target":{"context":"sake"}}', None, "sake"),
        ('{"taguru_eval":1,"default_target":{"context":" "}}', None, None),
        ('{"taguru_eval":1,"default_target":{"context":3}}', None, None),
    ],
)
def test_header_name_and_default_target(
    tmp_path: Path, header: str, name: str | None, default_context: str | None
) -> None:
    eval_set = load(tmp_path, header + "\n" + json.dumps(base()))
    assert (eval_set.name, eval_set.default_context) == (name, default_context)


def test_second_header_is_an_unknown_case_field(tmp_path: Path) -> None:
    assert case_error(tmp_path, HEADER).startswith(
        "not a valid eval case: unknown field `taguru_eval`, expected one of `case_id`, `query`"
    )


# ---------------------------------------------------------------- step 1: JSON syntax


@pytest.mark.parametrize(
    "line",
    [
        '{"case_id":',
        '{"case_id":"c1","query":"q"} {}',
        '{"case_id":"c1","query":"q",}',
        '{"case_id":"c1","query":"q","options":{"floor":NaN}}',
        '{"case_id":"c1","query":"q","options":{"floor":Infinity}}',
        '{"case_id":"c1","query":"q","options":{"floor":1e400}}',
        '{"case_id":"c1","query":"q","options":{"floor":-1e400}}',
        '{"case_id":"c1","query":"q","options":{"floor":1' + "0" * 400 + "}}",
        '{"case_id":"\\ud800","query":"q"}',
        "{'case_id':'c1'}",
    ],
)
def test_not_json(tmp_path: Path, line: str) -> None:
    assert case_error(tmp_path, line).startswith("not JSON: ")


def test_not_json_names_the_column(tmp_path: Path) -> None:
    # The one reader's wording is serde's, as taguru's own loader prints it (core/serde).
    assert case_error(tmp_path, '{"case_id" "c1"}') == (
        "not JSON: expected `:` at line 1 column 12"
    )


# ---------------------------------------------------------------- step 2: core shape

CASE_KEYS = (
    "`case_id`, `query`, `cues`, `expected_sources`, `expected_concepts`, `options`, "
    "`expected_labels`, `expected_associations`, `expected_citations`"
)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("x", 'expected an object, got "x"'),
        ([], "expected an object, got an array"),
        ({"query": "q"}, "missing field `case_id`"),
        ({"case_id": "c1"}, "missing field `query`"),
        (base(expcted_sources=[]), f"unknown field `expcted_sources`, expected one of {CASE_KEYS}"),
        (base(line=3), f"unknown field `line`, expected one of {CASE_KEYS}"),
        (base(case_id=None), "case_id: expected a string, got null"),
        (base(case_id=5), "case_id: expected a string, got 5"),
        (base(query=["q"]), "query: expected a string, got an array"),
        (base(cues=None), "cues: expected an array, got null"),
        (base(cues=[1]), "cues[0]: expected a string, got 1"),
        (base(cues="q"), 'cues: expected an array, got "q"'),
        (base(expected_sources=None), "expected_sources: expected an array, got null"),
        (base(expected_concepts=None), "expected_concepts: expected an array, got null"),
        (base(expected_concepts=[None]), "expected_concepts[0]: expected a string, got null"),
        (base(options=None), "options: expected an object, got null"),
        (base(options=[]), "options: expected an object, got an array"),
        (
            base(options={"sources": ["a"]}),
            "options: unknown field `sources`, expected one of "
            "`limit`, `floor`, `tags`, `since`, `until`",
        ),
        (base(options={"limit": "3"}), 'options.limit: expected an integer, got "3"'),
        (base(options={"limit": 3.0}), "options.limit: expected an integer, got 3.0"),
        (base(options={"limit": True}), "options.limit: expected an integer, got true"),
        (base(options={"limit": -1}), "options.limit: expected an unsigned integer, got -1"),
        (
            base(options={"limit": U64_MAX + 1}),
            "options.limit: expected an integer at most 18446744073709551615, "
            "got 18446744073709551616",
        ),
        (base(expected_sources=[{}]), "expected_sources[0]: missing field `source`"),
        (
            base(expected_sources=[{"source": "a", "weight": 1}]),
            "expected_sources[0]: unknown field `weight`, expected one of "
            "`source`, `paragraphs`, `relevance`",
        ),
        (base(expected_sources=[None]), "expected_sources[0]: expected an object, got null"),
        (
            base(expected_sources=[{"source": None}]),
            "expected_sources[0].source: expected a string, got null",
        ),
        (
            base(expected_sources=[{"source": "a", "paragraphs": None}]),
            "expected_sources[0].paragraphs: expected an array, got null",
        ),
        (
            base(expected_sources=[{"source": "a", "paragraphs": [0, 1.0]}]),
            "expected_sources[0].paragraphs[1]: expected an integer, got 1.0",
        ),
        (
            base(expected_sources=[{"source": "a", "paragraphs": [2**32]}]),
            "expected_sources[0].paragraphs[0]: expected an integer at most 4294967295, "
            "got 4294967296",
        ),
        (
            base(expected_sources=[{"source": "a"}, {"source": "b", "relevance": 3.0}]),
            "expected_sources[1].relevance: expected an integer, got 3.0",
        ),
        (
            base(expected_sources=[{"source": "a", "relevance": None}]),
            "expected_sources[0].relevance: expected an integer, got null",
        ),
        (
            base(expected_sources=[{"source": "a", "relevance": 256}]),
            "expected_sources[0].relevance: expected an integer at most 255, got 256",
        ),
        (
            base(expected_sources=[{"source": "a", "relevance": -1}]),
            "expected_sources[0].relevance: expected an unsigned integer, got -1",
        ),
        (
            base(expected_sources=[{"source": "a", "relevance": 2.5}]),
            "expected_sources[0].relevance: expected an integer, got 2.5",
        ),
    ],
)
def test_structural_decode(tmp_path: Path, case: object, expected: str) -> None:
    assert one_case(tmp_path, case) == f"not a valid eval case: {expected}"  # type: ignore[arg-type]


def test_minus_zero_is_a_float_not_an_integer(tmp_path: Path) -> None:
    line = '{"case_id":"c1","query":"q","expected_sources":[{"source":"a","relevance":-0}]}'
    assert case_error(tmp_path, line) == (
        "not a valid eval case: expected_sources[0].relevance: expected an integer, got -0.0"
    )


def test_null_means_absent_where_the_table_says_so(tmp_path: Path) -> None:
    case = base(
        expected_labels=None,
        expected_associations=None,
        expected_citations=None,
        options={"limit": None, "floor": None, "tags": None, "since": None, "until": None},
    )
    loaded = load(tmp_path, HEADER + "\n" + json.dumps(case)).cases[0]
    assert loaded.expected_labels == () and loaded.expected_citations == ()
    assert loaded.expected_associations == ()
    assert loaded.options.model_dump(mode="json") == {
        "limit": None,
        "floor": None,
        "tags": [],
        "since": None,
        "until": None,
    }


def test_integer_bounds_that_load(tmp_path: Path) -> None:
    case = base(
        expected_sources=[{"source": "a", "paragraphs": [0, 2**32 - 1], "relevance": 0}],
        options={"limit": U64_MAX, "since": U64_MAX, "until": 0},
    )
    loaded = load(tmp_path, HEADER + "\n" + json.dumps(case)).cases[0]
    assert loaded.expected_sources[0].paragraphs == (0, 2**32 - 1)
    assert loaded.expected_sources[0].relevance == 0
    assert (loaded.options.limit, loaded.options.since, loaded.options.until) == (
        U64_MAX,
        U64_MAX,
        0,
    )


# ---------------------------------------------------------------- steps 3-6


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (base(case_id=""), "case_id must not be empty"),
        (base(case_id=" \u3000\t"), "case_id must not be empty"),
        (base(case_id=" a", query=" "), "case ' a': query must not be empty"),
        (
            base(expected_sources=[{"source": " "}]),
            "case 'c1': expected_sources: source must not be empty",
        ),
        (
            base(expected_sources=[{"source": "a", "relevance": 4}]),
            "case 'c1': expected_sources relevance must be 0..=3, got 4",
        ),
        (
            base(expected_sources=[{"source": "a", "relevance": 255}]),
            "case 'c1': expected_sources relevance must be 0..=3, got 255",
        ),
    ],
)
def test_case_checks(tmp_path: Path, case: dict[str, object], expected: str) -> None:
    assert one_case(tmp_path, case) == expected


def test_duplicate_case_id_compares_raw_strings(tmp_path: Path) -> None:
    lines = [json.dumps(base(case_id=i)) for i in ("a", " a", "a ")]
    loaded = load(tmp_path, "\n".join([HEADER, *lines]))
    assert [c.case_id for c in loaded.cases] == ["a", " a", "a "]
    assert case_error(tmp_path, *lines, json.dumps(base(case_id=" a"))) == (
        "duplicate case_id ' a'"
    )


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # step 2 beats step 3
        (base(case_id="", extra=1), "not a valid eval case: unknown field `extra`"),
        # step 3 beats step 4
        (base(case_id=" ", query=""), "case_id must not be empty"),
        # step 4 beats step 5 (c0 is already taken)
        (base(case_id="c0", query=""), "case 'c0': query must not be empty"),
        # step 5 beats step 6
        (
            base(case_id="c0", expected_sources=[{"source": ""}]),
            "duplicate case_id 'c0'",
        ),
        # within step 6: entries in order, source before relevance
        (
            base(expected_sources=[{"source": "", "relevance": 9}]),
            "case 'c1': expected_sources: source must not be empty",
        ),
        (
            base(expected_sources=[{"source": "a", "relevance": 9}, {"source": ""}]),
            "case 'c1': expected_sources relevance must be 0..=3, got 9",
        ),
        # step 6 beats step 7
        (
            base(expected_sources=[{"source": "a", "relevance": 4}], expected_labels=[""]),
            "case 'c1': expected_sources relevance must be 0..=3, got 4",
        ),
        # step 7 order: labels, associations, citations, floor, tags, since, until
        (
            base(expected_labels=[""], expected_associations=5),
            "case 'c1': expected_labels: entries must not be empty",
        ),
        (
            base(expected_associations=[{}], expected_citations=5),
            "case 'c1': expected_associations: [0]: missing field `subject`",
        ),
        (
            base(expected_citations=[{"source": "", "paragraph": 0}], options={"floor": 7}),
            "case 'c1': expected_citations: source must not be empty",
        ),
        (
            base(options={"floor": 7, "tags": 1}),
            "case 'c1': options.floor must be 0.0..=1.0, got 7",
        ),
        (
            base(options={"tags": 1, "since": -1}),
            "case 'c1': options.tags: expected an array, got 1",
        ),
        (
            base(options={"since": -1, "until": -1}),
            "case 'c1': options.since: expected an unsigned integer, got -1",
        ),
    ],
)
def test_validation_order(tmp_path: Path, case: dict[str, object], expected: str) -> None:
    message = case_error(tmp_path, json.dumps(base(case_id="c0")), json.dumps(case))
    assert message.startswith(expected), message


# ---------------------------------------------------------------- step 7: extension fields


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (base(expected_labels=["ok", " "]), "expected_labels: entries must not be empty"),
        (base(expected_labels="x"), 'expected_labels: expected an array, got "x"'),
        (base(expected_labels=[1]), "expected_labels: [0]: expected a string, got 1"),
        (base(expected_labels=[None]), "expected_labels: [0]: expected a string, got null"),
        (
            base(expected_associations=[{"subject": "s", "label": "l"}]),
            "expected_associations: [0]: missing field `object`",
        ),
        (
            base(expected_associations=[{"subject": "s", "label": "l", "object": "o", "w": 1}]),
            "expected_associations: [0]: unknown field `w`, expected one of "
            "`subject`, `label`, `object`",
        ),
        (
            base(expected_associations=[{"subject": None, "label": "l", "object": "o"}]),
            "expected_associations: [0].subject: expected a string, got null",
        ),
        (
            base(expected_associations=[{"subject": "s", "label": " ", "object": "o"}]),
            "expected_associations: subject/label/object must not be empty",
        ),
        (base(expected_citations=42), "expected_citations: expected an array, got 42"),
        (
            base(expected_citations=[{"source": "s"}]),
            "expected_citations: [0]: missing field `paragraph`",
        ),
        (
            base(expected_citations=[{"source": "s", "paragraph": None}]),
            "expected_citations: [0].paragraph: expected an integer, got null",
        ),
        (
            base(expected_citations=[{"source": "s", "paragraph": 2**32}]),
            "expected_citations: [0].paragraph: expected an integer at most 4294967295, "
            "got 4294967296",
        ),
        (
            base(expected_citations=[{"source": "s", "paragraph": 0, "section": 5}]),
            "expected_citations: [0].section: expected a string, got 5",
        ),
        (
            base(expected_citations=[{"source": None, "paragraph": 0}]),
            "expected_citations: [0].source: expected a string, got null",
        ),
        (
            base(expected_citations=[{"source": "s", "paragraph": 0, "page": 1}]),
            "expected_citations: [0]: unknown field `page`, expected one of "
            "`source`, `paragraph`, `section`, `quote`",
        ),
        (
            base(expected_citations=[{"source": "s", "paragraph": 0, "quote": " "}]),
            "expected_citations: quote must not be empty",
        ),
        (
            base(
                expected_citations=[
                    {"source": "s", "paragraph": 0, "quote": ""},
                    {"source": "", "paragraph": 0},
                ]
            ),
            "expected_citations: quote must not be empty",
        ),
        (base(options={"floor": "0.5"}), 'options.floor: expected a number, got "0.5"'),
        (base(options={"floor": True}), "options.floor: expected a number, got true"),
        (base(options={"floor": [0.5]}), "options.floor: expected a number, got an array"),
        (base(options={"tags": [1]}), "options.tags: [0]: expected a string, got 1"),
        (base(options={"since": 1.0}), "options.since: expected an integer, got 1.0"),
        (
            base(options={"until": U64_MAX + 1}),
            "options.until: expected an integer at most 18446744073709551615, "
            "got 18446744073709551616",
        ),
    ],
)
def test_extension_field_errors(tmp_path: Path, case: dict[str, object], expected: str) -> None:
    assert one_case(tmp_path, case) == f"case 'c1': {expected}"


@pytest.mark.parametrize(
    ("floor", "printed"),
    [
        ("2", "2"),
        ("1.5", "1.5"),
        ("-0.25", "-0.25"),
        ("1e12", "1000000000000"),
        ("1000000000000", "1000000000000"),
        ("1.0000001", "1.0000001"),
        ("-1e-7", "-0.0000001"),
        ("1e39", "inf"),
        ("-1e39", "-inf"),
        ("16777217", "16777216"),
        ("18446744073709551615", "18446744000000000000"),
        ("1" + "0" * 30, "1000000000000000000000000000000"),
    ],
)
def test_floor_range_prints_the_f32_value(tmp_path: Path, floor: str, printed: str) -> None:
    line = '{"case_id":"c1","query":"q","options":{"floor":' + floor + "}}"
    assert (
        case_error(tmp_path, line) == f"case 'c1': options.floor must be 0.0..=1.0, got {printed}"
    )


@pytest.mark.parametrize(
    ("floor", "stored"),
    [
        ("0", 0.0),
        ("1", 1.0),
        ("0.5", 0.5),
        ("0.1", to_f32(0.1)),
        ("1.00000001", 1.0),  # rounds to 1.0 as a 32-bit float, so it passes
        ("-0.0", -0.0),
        ("-0", -0.0),
        ("1e-50", 0.0),
    ],
)
def test_floor_is_stored_as_f32(tmp_path: Path, floor: str, stored: float) -> None:
    line = '{"case_id":"c1","query":"q","options":{"floor":' + floor + "}}"
    loaded = load(tmp_path, f"{HEADER}\n{line}").cases[0]
    assert loaded.options.floor == stored
    assert loaded.options.floor != 0.1


def test_extension_values_are_typed(tmp_path: Path) -> None:
    case = base(
        expected_labels=["好き"],
        options={"limit": 5, "floor": 0.25, "tags": ["brand", ""], "since": 100, "until": 200},
    )
    loaded = load(tmp_path, HEADER + "\n" + json.dumps(case)).cases[0]
    assert loaded.expected_labels == ("好き",)
    assert loaded.options.model_dump(mode="json") == {
        "limit": 5,
        "floor": 0.25,
        "tags": ["brand", ""],
        "since": 100,
        "until": 200,
    }


def test_empty_strings_are_accepted_in_cues_and_concepts(tmp_path: Path) -> None:
    case = base(cues=["", " "], expected_concepts=[""])
    loaded = load(tmp_path, HEADER + "\n" + json.dumps(case)).cases[0]
    assert (loaded.cues, loaded.expected_concepts) == (("", " "), ("",))


def test_query_is_kept_verbatim(tmp_path: Path) -> None:
    loaded = load(tmp_path, HEADER + "\n" + json.dumps(base(query="  青嶺 \t"))).cases[0]
    assert loaded.query == "  青嶺 \t"


def test_line_is_not_part_of_the_json_shape(tmp_path: Path) -> None:
    loaded = load(tmp_path, HEADER + "\n" + json.dumps(base())).cases[0]
    assert "line" not in loaded.model_dump()


# ---------------------------------------------------------------- options.limit (§1.3 step 3)


def test_limit_zero_passes_the_loader_and_fails_the_limit_check(tmp_path: Path) -> None:
    lines = [json.dumps(base(case_id=f"c{n}", options={"limit": n})) for n in (1, 1000, 0, 1001)]
    eval_set = load(tmp_path, "\n".join([HEADER, *lines]))
    with pytest.raises(UsageError) as raised:
        check_limits(eval_set)
    assert raised.value.message == "case 'c0': options.limit must be 1..=1000, got 0"


@pytest.mark.parametrize("limit", [1001, U64_MAX])
def test_limit_above_range(tmp_path: Path, limit: int) -> None:
    eval_set = load(tmp_path, HEADER + "\n" + json.dumps(base(options={"limit": limit})))
    with pytest.raises(
        UsageError, match=rf"^case 'c1': options.limit must be 1..=1000, got {limit}$"
    ):
        check_limits(eval_set)


def test_limits_in_range_pass(tmp_path: Path) -> None:
    check_limits(load(tmp_path, SPEC_EXAMPLE))


# ---------------------------------------------------------------- 32-bit floats


def test_to_f32_overflows_to_infinity() -> None:
    assert to_f32(1e39) == float("inf") and to_f32(-1e39) == float("-inf")
    threshold = 2.0**128 - 2.0**103  # halfway between the largest f32 and 2**128: rounds up
    assert to_f32(threshold) == float("inf")
    assert to_f32(math.nextafter(threshold, 0.0)) == 3.4028234663852886e38


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (16777217, 16777216.0),
        (16777219, 16777220.0),  # ties to even
        (2**53 + 1, 2.0**53),
        (2**64 - 1, 2.0**64),
        (-(2**63), -(2.0**63)),
        (0, 0.0),
    ],
)
def test_int_to_f32(value: int, expected: float) -> None:
    assert int_to_f32(value) == expected


def test_a_bom_keeps_taguru_refusal_and_adds_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeff" + SPEC_EXAMPLE)
    with pytest.raises(UsageError) as raised:
        load_eval_set(path)
    assert raised.value.message.startswith(f"{path}: line 1: not JSON: ")
    assert raised.value.hints == [
        f"{path} starts with a UTF-8 byte-order mark (BOM), which taguru does not accept: "
        "save it as UTF-8 without a BOM"
    ]
