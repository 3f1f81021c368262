"""``label-merge`` (``authoring.label_merge``): the queue reader's errors, the in-place edit of
eval.jsonl, and the identity of a merge without labels (hypothesis)."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.artifact.case import HitLocator
from pytest_taguru.authoring.label_merge import (
    Label,
    LabelledQueue,
    append_expected_sources,
    merge_labels,
    read_labelled_queue,
)
from pytest_taguru.authoring.label_queue import QueueHeader
from pytest_taguru.errors import UsageError
from pytest_taguru.run.dataset import parse_eval_set
from pytest_taguru.score.case import judgements

EVAL = (
    '{"taguru_eval":1,"name":"labels"}\n'
    '{"case_id":"a","query":"alpha","expected_sources":[{"source":"s.md","paragraphs":[0]}]}\n'
    "\n"
    '{"case_id": "b", "query": "beta", "expected_concepts": ["x"]}\r\n'
    '{"case_id":"c","query":"gamma","expected_sources":[ ],"options":{"floor":0.30000001}}\n'
)
HEADER = '{"taguru_label_queue":1,"eval":{"path":"eval.jsonl","sha256":"00"},"hits":2}'


def queue_line(
    case_id: str, source: str, paragraph: int, relevance: Any = None, **more: Any
) -> str:
    line = {"case_id": case_id, "source": source, "paragraph": paragraph, **more}
    return json.dumps({**line, "relevance": relevance})


def merged(*lines: str, eval_text: str = EVAL) -> str:
    eval_set = parse_eval_set(eval_text, "eval.jsonl")
    queue = read_labelled_queue("\n".join([HEADER, *lines]) + "\n", "q.jsonl")
    text = merge_labels(eval_text, eval_set, queue, "q.jsonl")
    parse_eval_set(text, "out.jsonl")  # what the command does before writing
    return text


# --- the edit ----------------------------------------------------------------------------------


def test_labels_are_appended_to_their_case_and_nothing_else_changes() -> None:
    text = merged(
        queue_line("a", "s.md", 3, 2),
        queue_line("a", "t.md", 0, None),
        queue_line("b", "u.md", 1, 0),
        queue_line("c", "v.md", 4, 1),
        queue_line("a", "w.md", 0, 3),
    )
    lines = text.split("\n")
    assert lines[1] == (
        '{"case_id":"a","query":"alpha","expected_sources":[{"source":"s.md","paragraphs":[0]},'
        '{"source":"s.md","paragraphs":[3],"relevance":2},'
        '{"source":"w.md","paragraphs":[0],"relevance":3}]}'
    )
    # b had no expected_sources and is written with spaces: the key joins in its style; the
    # CRLF line end stays.
    assert lines[3] == (
        '{"case_id": "b", "query": "beta", "expected_concepts": ["x"], "expected_sources": '
        '[{"source": "u.md", "paragraphs": [1], "relevance": 0}]}\r'
    )
    # An empty array takes the entry without a comma; the number text is kept as written.
    assert lines[4] == (
        '{"case_id":"c","query":"gamma","expected_sources":[ '
        '{"source":"v.md","paragraphs":[4],"relevance":1}],"options":{"floor":0.30000001}}'
    )
    assert [lines[0], lines[2], lines[5]] == [*EVAL.split("\n")[0:3:2], ""]


def test_merged_labels_judge_their_hits() -> None:
    text = merged(queue_line("a", "s.md", 3, 0), queue_line("c", "v.md", 4, 2))
    cases = {case.case_id: case for case in parse_eval_set(text, "out.jsonl").cases}
    hits = [HitLocator(source="s.md", paragraph=3, score=1.0)]
    judged = judgements(hits, cases["a"].expected_sources)
    assert judged is not None and judged.judged_at_k == 1.0
    assert cases["c"].expected_sources[-1].relevance == 2


def test_the_last_of_a_repeated_key_gets_the_entry() -> None:
    line = '{"expected_sources":[{"source":"x"}],"case_id":"a","expected_sources":[]}'
    label = Label(line=2, case_id="a", source="y", paragraph=1, relevance=1)
    assert append_expected_sources(line, [label]) == (
        '{"expected_sources":[{"source":"x"}],"case_id":"a","expected_sources":'
        '[{"source":"y","paragraphs":[1],"relevance":1}]}'
    )


def test_keys_and_brackets_inside_strings_are_not_structure() -> None:
    line = r'{"query":"[\"expected_sources\"]{","case_id":"a","x":{"expected_sources":[1]}}'
    label = Label(line=2, case_id="a", source="s", paragraph=0, relevance=0)
    assert append_expected_sources(line, [label]) == (
        line[:-1] + ',"expected_sources":[{"source":"s","paragraphs":[0],"relevance":0}]}'
    )


def test_an_escaped_key_is_the_key_a_reader_sees() -> None:
    line = '{"case_id":"a","expected\\u005fsources":[]}'
    label = Label(line=2, case_id="a", source="s", paragraph=0, relevance=0)
    assert append_expected_sources(line, [label]).endswith(
        '[{"source":"s","paragraphs":[0],"relevance":0}]}'
    )


# --- identity ----------------------------------------------------------------------------------

sources = st.text(st.characters(codec="utf-8", exclude_characters='"\\\n\r'), min_size=1)


@settings(max_examples=100, deadline=None)
@given(
    ids=st.lists(st.text(alphabet="abcxyz-", min_size=1), min_size=1, max_size=5, unique=True),
    crlf=st.booleans(),
    blank=st.booleans(),
    spaced=st.booleans(),
    unlabelled=st.lists(st.tuples(sources, st.integers(0, 9)), max_size=4),
)
def test_merging_a_queue_without_labels_is_the_identity(
    ids: list[str], crlf: bool, blank: bool, spaced: bool, unlabelled: list[tuple[str, int]]
) -> None:
    end = "\r\n" if crlf else "\n"
    separators = (", ", ": ") if spaced else (",", ":")
    lines = [json.dumps({"taguru_eval": 1}, separators=separators)]
    for case_id in ids:
        lines.append(json.dumps({"case_id": case_id, "query": "q"}, separators=separators))
        if blank:
            lines.append("  ")
    eval_text = end.join(lines) + end
    queue = [queue_line(ids[0], source, paragraph) for source, paragraph in unlabelled]
    assert merged(*queue, eval_text=eval_text).encode() == eval_text.encode()


# --- the queue's errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([queue_line("a", "x.md", 0, 4)], "q.jsonl:2: relevance: must be 0..=3 (or null: not "
         "labelled), got 4"),
        ([queue_line("a", "x.md", 0, "2")], "q.jsonl:2: relevance: expected an integer, got \"2\""),
        ([queue_line("a", "x.md", 0, 1.0)], "q.jsonl:2: relevance: expected an integer, got 1.0"),
        ([queue_line("a", "x.md", 0, 1, relevence=1)],
         "q.jsonl:2: unknown field `relevence`, expected one of `case_id`, `query`, `rank`, "
         "`source`, `paragraph`, `priority`, `artifact`, `text`, `relevance`"),
        (['{"case_id":"a","source":"x.md","paragraph":0}'], "q.jsonl:2: missing field `relevance`"),
        ([queue_line("a", " ", 0, 1)], "q.jsonl:2: source: must not be empty"),
        (["[1]"], "q.jsonl:2: expected a queue line (an object)"),
        (["{"], "q.jsonl:2: not JSON: EOF while parsing an object at line 1 column 1"),
        ([queue_line("zz", "x.md", 0, 1)], "q.jsonl:2: case_id: no case 'zz' in eval.jsonl"),
        ([queue_line("a", "s.md", 0, 1)],
         "q.jsonl:2: case 'a': s.md#0 is already labelled by eval.jsonl:2: expected_sources[0]"),
        ([queue_line("a", "x.md", 0, 1), "", queue_line("a", "x.md", 0, 0)],
         "q.jsonl:4: case 'a': x.md#0 is labelled twice (also line 2)"),
    ],
)  # fmt: skip
def test_a_bad_queue_line_names_file_line_and_field(lines: list[str], message: str) -> None:
    with pytest.raises(UsageError) as raised:
        merged(*lines)
    assert raised.value.message == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "q.jsonl: empty file: expected a taguru_label_queue header line"),
        ('{"taguru_eval":1}\n', "q.jsonl:1: not a label queue: expected a taguru_label_queue "
         "header line"),
        ('\n{"taguru_label_queue":2}\n', "q.jsonl:2: taguru_label_queue: 2 is outside the "
         "readable range 1..=1"),
        ('{"taguru_label_queue":1,"x":0}\n', "q.jsonl:1: unknown field `x`, expected one of "
         "`taguru_label_queue`, `eval`, `artifacts`, `hits`"),
        ("[" * 200 + "\n", "q.jsonl:1: not JSON: recursion limit exceeded at line 1 column 128"),
    ],
)  # fmt: skip
def test_a_bad_queue_header_is_refused(text: str, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        read_labelled_queue(text, "q.jsonl")
    assert raised.value.message == message


def test_the_reader_keeps_labelled_lines_and_counts_the_rest() -> None:
    text = "\n".join([HEADER, queue_line("a", "x", 1, 0), queue_line("a", "y", 2), ""])
    queue = read_labelled_queue(text, "q.jsonl")
    assert queue == LabelledQueue(
        header=QueueHeader.model_validate(json.loads(HEADER)),
        labels=(Label(line=2, case_id="a", source="x", paragraph=1, relevance=0),),
        unlabelled=1,
    )
