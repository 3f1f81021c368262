"""The slices in the run summary and in a compare's Markdown."""

import json
from typing import Any

from synthetic_run import synthetic_run

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.artifact.view import read_run
from pytest_taguru.artifact.writing import render
from pytest_taguru.compare.classify import compare
from pytest_taguru.compare.render import MARKDOWN_SLICE_CAP, render_jsonl, render_markdown
from pytest_taguru.compare.slices import read_cards, slice_diffs
from pytest_taguru.report.summary import summary_lines
from pytest_taguru.score.registry import CASE_SCORES, COMPARISON_METRICS
from pytest_taguru.score.slices import slice_cards
from pytest_taguru.score.summary import run_summary

GLOBS = {"even": ["*[02468]"], "odd": ["*[13579]"], "empty": ["nothing"]}


def sliced(evaluation: Evaluation, globs: dict[str, list[str]] = GLOBS) -> Evaluation:
    return evaluation.model_copy(update={"slices": slice_cards(globs, evaluation.cases)})


def test_the_summary_shows_each_slice_before_the_wrote_line() -> None:
    run = sliced(synthetic_run(40).evaluation)
    lines = summary_lines(run, run_summary(run.cases))
    at = lines.index("  slices (mean per case):")
    assert run.slices is not None
    even = run.slices["even"]
    scores = [
        f"{metric} {even.metrics[metric].mean:.3f}"
        for metric in CASE_SCORES
        if even.metrics[metric].n
    ]
    assert lines[at + 1] == f"    even — 20 case(s): {', '.join(scores)}"
    assert lines[at + 2].startswith("    odd — 20 case(s): recall.recall_at_k ")
    assert lines[at + 3] == "    empty — 0 case(s)"
    assert lines[-1] == "  wrote evaluation.json"


def test_a_run_without_slices_has_no_slice_lines() -> None:
    run = synthetic_run(10).evaluation
    assert not any("slices" in line for line in summary_lines(run, run_summary(run.cases)))


def loaded(evaluation: Evaluation, path: str) -> Any:
    return read_run(render(evaluation), path)


def test_markdown_shows_every_slice_both_runs_carry() -> None:
    base = sliced(synthetic_run(40).evaluation)
    head_globs = {"odd": ["*[13579]"], "even": ["*[02468]", "x"], "new": ["*"]}
    head = sliced(synthetic_run(40, drift=3).evaluation, head_globs)
    report = compare(loaded(base, "base.json"), loaded(head, "head.json"))
    diffs = slice_diffs(report)
    assert [(d.name, d.cases_base, d.cases_head, d.same_globs) for d in diffs] == [
        ("odd", 20, 20, True),
        ("even", 20, 20, False),
    ]
    odd = diffs[0]
    assert [d.metric for d in odd.metrics] == [
        metric for metric in COMPARISON_METRICS
        if base.slices and base.slices["odd"].metrics[metric].n
    ]  # fmt: skip
    first = odd.metrics[0]
    assert head.slices is not None and base.slices is not None
    assert first.head == head.slices["odd"].metrics[first.metric].mean
    assert first.delta == first.head - base.slices["odd"].metrics[first.metric].mean  # type: ignore[operator]
    text = render_markdown(report)
    section = text[text.index("#### Slices") :].split("\n\n")[1].splitlines()
    assert section[:2] == [
        "| slice | cases | metric | base | head | Δ | change |",
        "|---|---:|---|---:|---:|---:|---|",
    ]
    assert section[2].startswith("| odd | 20 → 20 | recall.recall_at_k | ")
    assert section[3].startswith("| | | recall.mrr | ")
    assert any(row.startswith("| even (globs differ) | 20 → 20 | ") for row in section)
    assert text.index("#### Aggregate metrics") < text.index("#### Slices")
    assert text.index("#### Slices") < text.index("#### Changed cases")


def test_no_slice_section_unless_both_runs_carry_slices_and_jsonl_never_changes() -> None:
    plain, with_slices = synthetic_run(20).evaluation, sliced(synthetic_run(20).evaluation)
    for base, head in ((plain, with_slices), (with_slices, plain)):
        report = compare(loaded(base, "b.json"), loaded(head, "h.json"))
        assert slice_diffs(report) == ()
        assert "#### Slices" not in render_markdown(report)
    both = compare(loaded(with_slices, "b.json"), loaded(with_slices, "h.json"))
    neither = compare(loaded(plain, "b.json"), loaded(plain, "h.json"))
    assert render_jsonl(both, "t") == render_jsonl(neither, "t")


def test_an_unreadable_slices_block_is_no_slices() -> None:
    text = render(sliced(synthetic_run(5).evaluation))
    assert read_cards(read_run(text, "x.json")) is not None
    document = json.loads(text)
    document["slices"]["even"]["n"] = "three"
    assert read_cards(read_run(json.dumps(document), "x.json")) is None
    document["slices"] = {"\ud800": document["slices"]["odd"]}
    assert read_cards(read_run(json.dumps(document), "x.json")) is None
    document["slices"] = []
    assert read_cards(read_run(json.dumps(document), "x.json")) is None


def test_the_markdown_lists_at_most_the_cap_of_slices() -> None:
    globs = {f"s{index}": [f"*{index % 10}"] for index in range(MARKDOWN_SLICE_CAP + 3)}
    run = sliced(synthetic_run(20).evaluation, globs)
    text = render_markdown(compare(loaded(run, "b.json"), loaded(run, "h.json")))
    assert f"| s{MARKDOWN_SLICE_CAP - 1} | " in text and f"| s{MARKDOWN_SLICE_CAP} | " not in text
    assert "… and 3 more slice(s)." in text
