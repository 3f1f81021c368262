"""Label gaps in ``compare`` (``compare.label_gap``): the classification, its renderings, and
``--fail-on-regression``. Without ``label_coverage`` (taguru's artifacts) nothing changes."""

import json
from typing import Any

from pytest_taguru.artifact.view import read_run
from pytest_taguru.compare.classify import ChangeReport, compare, regressions
from pytest_taguru.compare.render import render_jsonl, render_markdown, render_summary

NOW = "2026-07-29T12:00:00Z"


def coverage(judged_at_k: float, *unjudged: tuple[str, int], high: float = 1.0) -> dict[str, Any]:
    hits = [{"rank": n, "source": s, "paragraph": p} for n, (s, p) in enumerate(unjudged, 1)]
    bounds = {"low": 0.0, "high": high}
    return {
        "hits": 4,
        "judged": 2,
        "judged_at_k": judged_at_k,
        "unjudged": hits,
        **{metric: bounds for metric in ("recall_at_k", "mrr", "ndcg")},
    }


def case(
    case_id: str, mrr: float, label_coverage: Any = None, concepts: float | None = None
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "case_id": case_id,
        "recall": {"recall_at_k": 1.0, "mrr": mrr, "ndcg": mrr},
    }
    if concepts is not None:
        block["coverage"] = {"concepts": {"value": concepts}}
    if label_coverage is not None:
        block["label_coverage"] = label_coverage
    return block


def doc(*cases: dict[str, Any], mrr: float = 1.0) -> dict[str, Any]:
    return {
        "taguru_evaluation": 1,
        "corpus": {"stable": True},
        "definitions": {"recall.mrr": {"statistic": "distribution"}},
        "metrics": {"recall.mrr": {"n": 1, "mean": mrr}},
        "cases": list(cases),
    }


def pair(base: dict[str, Any], head: dict[str, Any]) -> ChangeReport:
    return compare(read_run(json.dumps(base), "base.json"), read_run(json.dumps(head), "head.json"))


BASE = doc(
    case("gap", 1.0, coverage(1.0)),
    case("real", 1.0, coverage(0.5, ("x", 1))),
    case("cannot-undo", 1.0, coverage(1.0)),
    case("other-metric", 1.0, coverage(1.0), concepts=1.0),
    case("taguru", 1.0),
)
HEAD = doc(
    # a new unjudged hit above the labelled one: a label gap
    case("gap", 0.5, coverage(0.75, ("new", 0))),
    # dropped, but its only unjudged hit was already there (and unjudged) in BASE: a regression
    case("real", 0.5, coverage(0.5, ("x", 1))),
    # new unjudged hits, but labelling them cannot bring MRR back to 1
    case("cannot-undo", 0.5, coverage(0.75, ("new", 0), high=0.8)),
    # coverage fell too: labels cannot explain it
    case("other-metric", 0.5, coverage(0.75, ("new", 0)), concepts=0.0),
    # no label_coverage on a side (a taguru artifact): never a label gap
    case("taguru", 0.5, coverage(0.5, ("new", 0))),
    mrr=0.5,
)


def test_only_a_drop_of_ranking_metrics_with_new_unjudged_hits_is_a_label_gap() -> None:
    report = pair(BASE, HEAD)
    assert report.counts.regressed == 5  # taguru's verdicts are unchanged
    assert list(report.label_gaps) == ["gap"]
    gap = report.label_gaps["gap"]
    assert (gap.new_unjudged, gap.judged_at_k_base, gap.judged_at_k_head) == (1, 1.0, 0.75)


def test_changes_jsonl_marks_the_record_and_counts_in_the_header() -> None:
    lines = [json.loads(line) for line in render_jsonl(pair(BASE, HEAD), NOW).splitlines()]
    header, records = lines[0], {line["case_id"]: line for line in lines[1:]}
    assert list(header)[-1] == "label_gaps" and header["label_gaps"] == 1
    assert list(records["gap"]) == ["kind", "case_id", "metrics", "label_gap"]
    assert records["gap"]["kind"] == "regressed"
    assert records["gap"]["label_gap"] == {
        "new_unjudged": 1,
        "judged_at_k": {"base": 1.0, "head": 0.75},
    }
    assert all("label_gap" not in records[c] for c in ("real", "cannot-undo", "taguru"))


def test_without_label_gaps_the_output_is_taguru_s() -> None:
    plain = {**BASE, "cases": [case("c", 1.0)]}
    dropped = {**HEAD, "cases": [case("c", 0.5)]}
    text = render_jsonl(pair(plain, dropped), NOW)
    assert "label_gap" not in text
    assert "label gap" not in render_summary(pair(plain, dropped), "out")
    assert "abel gap" not in render_markdown(pair(plain, dropped))


def test_the_summary_and_markdown_say_which_regressions_are_label_gaps() -> None:
    report = pair(BASE, HEAD)
    summary = render_summary(report, "changes.jsonl").splitlines()
    assert (
        "    regressed: gap (recall.mrr -0.500, recall.ndcg -0.500) — label gap: 1 new "
        "unjudged hit(s) in HEAD's top k" in summary
    )
    assert "    regressed: real (recall.mrr -0.500, recall.ndcg -0.500)" in summary
    assert summary[-2].startswith("  label gaps: 1 of the regressed case(s) coincide with new ")
    markdown = render_markdown(report)
    assert "| gap | regressed — label gap (1 new unjudged hit(s) in HEAD's top k) |" in markdown
    assert "| real | regressed |" in markdown
    assert "**Label gaps**: 1 of the regressed case(s)" in markdown


def test_fail_on_regression_does_not_count_a_label_gap() -> None:
    found = regressions(pair(BASE, HEAD))
    assert found.cases == ("cannot-undo", "other-metric", "real", "taguru")
    assert found.aggregates == ("recall.mrr",)  # other cases moved it down too
    only_gap = pair(doc(BASE["cases"][0]), doc(HEAD["cases"][0], mrr=0.5))
    assert list(only_gap.label_gaps) == ["gap"]
    assert not regressions(only_gap)  # the worse MRR aggregate is the label gap's doing


def test_a_malformed_label_coverage_reads_as_absent() -> None:
    head = doc(case("gap", 0.5, {"judged_at_k": "high", "unjudged": 3}), mrr=0.5)
    report = pair(doc(BASE["cases"][0]), head)
    assert report.counts.regressed == 1 and not report.label_gaps
    assert report.warnings == ()
