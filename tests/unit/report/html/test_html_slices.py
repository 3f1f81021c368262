"""The slices of the data island: scorecards, verdicts, members, and the notice at the top."""

from typing import Any

import pytest
from html_report import with_case_not_run
from sliced_run import GLOBS, sliced_run
from synthetic_run import SyntheticRun, synthetic_run
from test_html_compact import unpack

from pytest_taguru.report.html.compact import figure
from pytest_taguru.report.html.island import ReportInputs, build_island
from pytest_taguru.score.registry import CASE_SCORES
from pytest_taguru.score.slices import resolve_slices

BOUNDS = {
    "early": {"aggregate": {"recall.mrr": {"min": 2}}},
    "sevens": {"aggregate": {"recall.mrr": {"min": 0}}},
    "small": {"min_cases": 5},
}


@pytest.fixture(scope="module")
def run() -> SyntheticRun:
    return sliced_run(with_case_not_run(synthetic_run(60)), BOUNDS)


def island_of(run: SyntheticRun) -> dict[str, Any]:
    return build_island(ReportInputs(run.evaluation, "evaluation.json", run.eval_set))


def test_no_slices_no_section() -> None:
    assert island_of(synthetic_run(10))["slices"] is None


def test_a_row_per_slice_with_its_per_case_means(run: SyntheticRun) -> None:
    section = island_of(run)["slices"]
    assert section["metrics"] == list(CASE_SCORES)
    assert [row[0] for row in section["rows"]] == list(GLOBS)
    cards = run.evaluation.slices
    assert cards is not None
    for name, globs, n, means, counts, _, _ in section["rows"]:
        card = cards[name]
        assert (globs, n) == (" ".join(card.globs), card.n)
        assert means == [figure(card.metrics[metric].mean) for metric in CASE_SCORES]
        assert counts == [card.metrics[metric].n for metric in CASE_SCORES]


def test_each_slice_has_its_verdict(run: SyntheticRun) -> None:
    rows = {row[0]: row for row in island_of(run)["slices"]["rows"]}
    assert rows["early"][5] == "violated"
    assert rows["early"][6][0].startswith("[early] recall.mrr ")
    assert rows["sevens"][5:] == ["held", []]
    assert rows["small"][5:] == [
        "too small",
        ["slice 'small': 1 case(s), fewer than its min_cases 5: reported, not judged"],
    ]
    assert rows["empty"][5:] == ["", []]


def test_members_are_rows_of_the_case_table(run: SyntheticRun) -> None:
    island = island_of(run)
    ids = island["cases"]["id"]
    expected = resolve_slices(GLOBS, ids)
    for packed, members in zip(island["slices"]["members"], expected.values(), strict=True):
        rows = []
        for gap in unpack(packed):
            rows.append((rows[-1] if rows else 0) + gap)
        assert [ids[row] for row in rows] == list(members)
    assert "case-not-run" not in [member for members in expected.values() for member in members]


def test_the_gate_and_the_notice(run: SyntheticRun) -> None:
    island = island_of(run)
    gate = island["slices"]["gate"]
    assert gate["passed"] is False and gate["skipped"] is None and len(gate["sha256"]) == 64
    assert ["error", "The slice gate failed: 1 violation(s) of the slice thresholds."] in island[
        "header"
    ]["notices"]
    passing = sliced_run(synthetic_run(20), {"sevens": {}})
    assert island_of(passing)["header"]["notices"][-1] == [
        "ok", "The slice gate passed: every judged slice held its bounds."
    ]
    ungated = island_of(sliced_run(synthetic_run(20)))
    assert ungated["slices"]["gate"] is None
    assert not any("slice" in text for _, text in ungated["header"]["notices"])
