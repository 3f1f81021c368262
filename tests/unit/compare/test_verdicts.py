"""``compare.verdicts``: every verdict reachable, Holm across (metric, slice), the MDE, slices."""

import dataclasses
import math
from statistics import NormalDist

import numpy as np
import pytest

from pytest_taguru.compare.pairing import Exclusions, PairedCases
from pytest_taguru.compare.significance import Tolerances
from pytest_taguru.compare.verdicts import MetricVerdict, StatisticsReport, judge
from pytest_taguru.score.registry import METRICS_BY_NAME, PAIRED_METRICS

NOTHING_EXCLUDED = Exclusions()


def paired(
    columns: dict[str, list[float]], exclusions: Exclusions = NOTHING_EXCLUDED
) -> PairedCases:
    size = len(next(iter(columns.values())))
    deltas = np.full((size, len(PAIRED_METRICS)), np.nan)
    for name, values in columns.items():
        deltas[:, PAIRED_METRICS.index(name)] = values
    return PairedCases(tuple(f"c{i:04d}" for i in range(size)), deltas, exclusions)


def only(report: StatisticsReport, metric: str = "recall.mrr") -> MetricVerdict:
    (found,) = [item for item in report.verdicts if item.metric == metric and item.slice is None]
    return found


DROP_30_PERCENT = [-0.5] * 60 + [0.0] * 140


def test_a_drop_on_30_percent_of_200_cases_is_regressed() -> None:
    report = judge(paired({"recall.mrr": DROP_30_PERCENT}))
    item = only(report)
    assert item.verdict == "regressed"
    assert item.mean_delta == pytest.approx(-0.15)
    assert item.p_holm is not None and item.p_holm < 0.001
    assert report.family == 1 and report.paired_cases == 200


def test_fewer_than_10_pairs_are_inconclusive_whatever_the_drop() -> None:
    item = only(judge(paired({"recall.mrr": [-1.0] * 9})))
    assert item.verdict == "inconclusive"
    assert item.reason == "fewer than 10 pairs"
    assert item.p_holm is None  # not in the family: it cannot fail the gate


def test_a_small_drop_over_36_cases_is_inconclusive_with_its_mde() -> None:
    values = [-0.5] * 3 + [0.0] * 33
    item = only(judge(paired({"recall.mrr": values})))
    assert item.verdict == "inconclusive"
    assert item.reason == "the interval contains 0"
    z = NormalDist().inv_cdf(0.95) + NormalDist().inv_cdf(0.8)  # family of one: α/1
    assert item.mde == pytest.approx(z * np.std(values, ddof=1) / math.sqrt(36))


def test_a_drop_the_holm_correction_does_not_confirm_is_inconclusive() -> None:
    # Each alone: exact p = 1/32 < 0.05 and an interval below zero; Holm over two: 0.0625.
    drop = [-0.2] * 5 + [0.0] * 35
    report = judge(paired({"recall.mrr": drop, "recall.ndcg": drop}))
    for metric in ("recall.mrr", "recall.ndcg"):
        item = only(report, metric)
        assert item.interval[1] < 0
        assert item.p_holm == pytest.approx(2 / 32)
        assert (item.verdict, item.reason) == (
            "inconclusive",
            "the drop is not confirmed after the Holm correction",
        )
    alone = only(judge(paired({"recall.mrr": drop})))
    assert alone.verdict == "regressed"


def test_identical_runs_are_unchanged() -> None:
    item = only(judge(paired({"recall.mrr": [0.0] * 50})))
    assert (item.verdict, item.non_inferior) == ("unchanged", False)


def test_a_tolerance_makes_a_noisy_unchanged_run_non_inferior() -> None:
    noise = [0.01, -0.01] * 100
    assert only(judge(paired({"recall.mrr": noise}))).verdict == "inconclusive"
    item = only(judge(paired({"recall.mrr": noise}), tolerances=Tolerances(0.05)))
    assert (item.verdict, item.non_inferior) == ("unchanged", True)
    assert item.tolerance == 0.05


def test_a_significant_drop_inside_the_tolerance_is_not_regressed() -> None:
    small = [-0.01] * 100 + [0.0] * 100
    strict = only(judge(paired({"recall.mrr": small})))
    assert strict.verdict == "regressed"
    tolerated = only(judge(paired({"recall.mrr": small}), tolerances=Tolerances(0.02)))
    assert (tolerated.verdict, tolerated.non_inferior) == ("unchanged", True)
    per_metric = Tolerances(0.0, {"recall.mrr": 0.02})
    assert only(judge(paired({"recall.mrr": small}), tolerances=per_metric)).verdict == "unchanged"


def test_a_gain_is_improved() -> None:
    item = only(judge(paired({"recall.mrr": [0.5] * 40 + [0.0] * 60})))
    assert item.verdict == "improved"


def test_a_case_errored_in_head_keeps_the_run_from_passing() -> None:
    exclusions = Exclusions(errored_in_head=("c-broken",))
    item = only(judge(paired({"recall.mrr": [0.5] * 40 + [0.0] * 60}, exclusions)))
    assert (item.verdict, item.reason) == ("inconclusive", "1 case(s) errored in HEAD")
    for old in (Exclusions(errored_in_base=("c-x",)), Exclusions(errored_in_both=("c-x",))):
        assert only(judge(paired({"recall.mrr": [0.0] * 40}, old))).verdict == "unchanged"


def test_a_metric_no_pair_has_is_not_tested() -> None:
    report = judge(paired({"recall.mrr": [0.0] * 20}))
    assert [item.metric for item in report.verdicts] == ["recall.mrr"]


def test_a_lower_is_better_metric_is_judged_the_other_way(monkeypatch: pytest.MonkeyPatch) -> None:
    mrr = METRICS_BY_NAME["recall.mrr"]
    monkeypatch.setitem(METRICS_BY_NAME, "recall.mrr", dataclasses.replace(mrr, better="lower"))
    item = only(judge(paired({"recall.mrr": DROP_30_PERCENT})))
    assert item.orientation == -1.0
    assert item.verdict == "improved"  # the value went down, which is better here
    assert item.mean_delta == pytest.approx(-0.15)  # shown as head - base all the same
    assert item.interval[0] < item.mean_delta < item.interval[1] < 0
    rising = only(judge(paired({"recall.mrr": [0.5] * 60 + [0.0] * 140})))
    assert rising.verdict == "regressed"


def test_holm_runs_across_every_metric_and_slice_that_can_fail() -> None:
    slices = {"first": [f"c{i:04d}" for i in range(100)], "tiny": ["c0000", "c0001"]}
    columns = {"recall.mrr": DROP_30_PERCENT, "recall.ndcg": [0.0] * 200}
    report = judge(paired(columns), slices=slices)
    names = [(item.slice, item.metric) for item in report.verdicts]
    assert names == [
        (None, "recall.mrr"),
        (None, "recall.ndcg"),
        ("first", "recall.mrr"),
        ("first", "recall.ndcg"),
        ("tiny", "recall.mrr"),
        ("tiny", "recall.ndcg"),
    ]
    assert report.family == 4  # the tiny slice's tests have 2 pairs: they cannot fail
    first = [item for item in report.verdicts if item.slice == "first"]
    assert first[0].n == 100 and first[0].verdict == "regressed"
    assert [item.verdict for item in report.verdicts if item.slice == "tiny"] == [
        "inconclusive",
        "inconclusive",
    ]
    assert first[0].slice_name == "first" and report.verdicts[0].slice_name == "all"


def test_counts_text_names_each_verdict() -> None:
    report = judge(paired({"recall.mrr": DROP_30_PERCENT, "recall.ndcg": [0.0] * 200}))
    assert report.counts_text() == "1 regressed, 1 unchanged"
    assert judge(paired({"recall.mrr": [math.nan] * 3})).counts_text() == "nothing to test"


def test_the_slices_head_carries_are_judged_by_default() -> None:
    from html_report import loaded
    from synthetic_run import synthetic_run

    from pytest_taguru.artifact.evaluation import SliceCard
    from pytest_taguru.compare.verdicts import paired_statistics

    base = loaded(synthetic_run(120).evaluation, "base.json")
    head_run = synthetic_run(120, drift=3).evaluation
    cards = {"early": SliceCard(globs=["case-00000*"], n=10)}
    head = loaded(head_run.model_copy(update={"slices": cards}), "head.json")
    report = paired_statistics(base, head)
    early = [item for item in report.verdicts if item.slice == "early"]
    assert early and all(item.n <= 10 for item in early)
    assert {item.slice for item in report.verdicts} == {None, "early"}
    unsliced = paired_statistics(base, head, slices={})
    assert {item.slice for item in unsliced.verdicts} == {None}
