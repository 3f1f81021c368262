"""The slice gate: judged slices, small slices reported, partial runs not judged; its result."""

import json
from typing import Any

import pytest
from synthetic_run import synthetic_run

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.gate.results import FinishedRun
from pytest_taguru.gate.slice_file import SliceThresholds, check_slice_thresholds
from pytest_taguru.gate.slices import (
    SliceGateReport,
    SliceNotJudged,
    SlicesGate,
    SliceViolation,
    evaluate_slice_gate,
)
from pytest_taguru.gate.thresholds import NO_SAMPLES_REASON
from pytest_taguru.report.slices import slice_gate_lines
from pytest_taguru.run.partial import RunCoverage
from pytest_taguru.score.slices import slice_cards

GLOBS = {"low": ["*0", "*1", "*2", "*3", "*4"], "high": ["*5", "*6", "*7", "*8", "*9"],
         "one": ["case-000007"], "none": ["nothing"]}  # fmt: skip


@pytest.fixture(scope="module")
def run() -> Evaluation:
    evaluation = synthetic_run(60).evaluation
    return evaluation.model_copy(update={"slices": slice_cards(GLOBS, evaluation.cases)})


def thresholds(slices: dict[str, Any]) -> SliceThresholds:
    raw = json.dumps({"taguru_slice_thresholds": 1, "slices": slices}).encode()
    return check_slice_thresholds(raw, path="st.json", slice_names=list(GLOBS))


def mean(run: Evaluation, name: str, metric: str) -> float:
    assert run.slices is not None
    value = run.slices[name].metrics[metric].mean
    assert value is not None
    return value


def test_a_slice_below_its_bound_is_a_violation(run: Evaluation) -> None:
    low = mean(run, "low", "recall.mrr")
    file = thresholds({
        "low": {"aggregate": {"recall.mrr": {"min": low + 0.01}, "recall.ndcg": {"min": 0}}},
        "high": {"aggregate": {"recall.mrr": {"max": 1}}},
    })  # fmt: skip
    report = evaluate_slice_gate(file, run.slices or {})
    assert not report.passed
    assert report.gated == ["low", "high"]
    assert report.violations == [
        SliceViolation(slice="low", metric="recall.mrr", bound="min", threshold=low + 0.01,
                       actual=low, reason=f"{low:.6f} < min {low + 0.01:.6f}"),
    ]  # fmt: skip
    assert report.not_judged is None and report.aggregate_skipped is None
    assert report.sha256 == file.sha256


def test_equality_passes_and_a_metric_without_samples_fails(run: Evaluation) -> None:
    high = mean(run, "high", "recall.mrr")
    file = thresholds({
        "high": {"aggregate": {"recall.mrr": {"min": high, "max": high}}},
        "one": {"aggregate": {"citations.recall": {"min": 0}}},
    })  # fmt: skip
    assert run.slices is not None and run.slices["one"].metrics["citations.recall"].n == 0
    report = evaluate_slice_gate(file, run.slices)
    assert report.violations == [
        SliceViolation(slice="one", metric="citations.recall", reason=NO_SAMPLES_REASON)
    ]


def test_a_slice_below_min_cases_is_reported_not_judged(run: Evaluation) -> None:
    file = thresholds({
        "one": {"min_cases": 2, "aggregate": {"recall.mrr": {"min": 2}}},
        "none": {"aggregate": {"recall.mrr": {"min": 2}}},
        "low": {"min_cases": 30, "aggregate": {"recall.mrr": {"min": 0}}},
    })  # fmt: skip
    report = evaluate_slice_gate(file, run.slices or {})
    assert report.passed and report.violations is None
    assert report.not_judged == [
        SliceNotJudged(slice="one", n=1, min_cases=2),
        SliceNotJudged(slice="none", n=0, min_cases=1),
    ]
    assert slice_gate_lines(report) == [
        f"  slice thresholds: PASS (sha256 {file.sha256[:12]}…)",
        "  slice 'one': 1 case(s), fewer than its min_cases 2: reported, not judged",
        "  slice 'none': 0 case(s), fewer than its min_cases 1: reported, not judged",
    ]


def test_nothing_is_judged_when_aggregates_are_skipped(run: Evaluation) -> None:
    file = thresholds({"low": {"aggregate": {"recall.mrr": {"min": 2}}}})
    report = evaluate_slice_gate(file, run.slices or {}, aggregate_skipped="partial run (2 of 9)")
    assert report.passed and report.violations is None and report.not_judged is None
    assert report.aggregate_skipped == "partial run (2 of 9)"
    assert slice_gate_lines(report) == [
        "  slice thresholds: not judged: partial run (2 of 9); --taguru-gate-partial judges "
        "them on the subset"
    ]


def test_the_block_round_trips(run: Evaluation) -> None:
    file = thresholds({"low": {"aggregate": {"recall.mrr": {"min": 2}}}, "one": {"min_cases": 5}})
    report = evaluate_slice_gate(file, run.slices or {})
    block = report.to_block()
    assert list(block) == ["sha256", "passed", "gated", "violations", "not_judged"]
    assert block["violations"][0]["actual"] == mean(run, "low", "recall.mrr")
    assert SliceGateReport.model_validate(block) == report


def finished(run: Evaluation, report: SliceGateReport, ran: int = 60) -> FinishedRun:
    judged = run.model_copy(update={"slice_thresholds": report.to_block()})
    return FinishedRun(judged, RunCoverage(60, ran))


def test_the_gate_result_fails_with_the_violations(run: Evaluation) -> None:
    file = thresholds({
        "low": {"aggregate": {"recall.mrr": {"min": 2}, "recall.ndcg": {"max": 5}}},
        "one": {"min_cases": 3},
    })  # fmt: skip
    gate = SlicesGate.of(file)
    assert gate.name == "slices" and gate.slices == ("low", "one")
    result = gate.judge(finished(run, evaluate_slice_gate(file, run.slices or {})))
    low = mean(run, "low", "recall.mrr")
    assert result.status == "failed"
    assert result.headline == f"[low] recall.mrr {low:.6g} < min 2"
    assert result.details == (
        "taguru slice thresholds: 1 violation(s)",
        f"  [low] recall.mrr {low:.6g} < min 2",
        "  slice 'one': 1 case(s), fewer than its min_cases 3: reported, not judged",
    )
    assert result.properties == (
        ("low/recall.mrr", f"{low:.6f}"),
        ("low/recall.ndcg", f"{mean(run, 'low', 'recall.ndcg'):.6f}"),
    )


def test_the_gate_result_passes_or_is_skipped(run: Evaluation) -> None:
    file = thresholds({"low": {"aggregate": {"recall.mrr": {"min": 0}}}, "one": {"min_cases": 3}})
    gate = SlicesGate.of(file)
    passed = gate.judge(finished(run, evaluate_slice_gate(file, run.slices or {})))
    assert (passed.status, passed.headline) == (
        "passed", "slice bounds held (1 slice(s) judged; 1 too small to judge)"
    )
    skipped_report = evaluate_slice_gate(file, run.slices or {}, aggregate_skipped="partial")
    skipped = gate.judge(finished(run, skipped_report, ran=30))
    assert (skipped.status, skipped.headline) == ("skipped", "slice bounds not judged: partial")
