"""The report's slices in a real browser: the section with each slice's scores and verdict, the
case table's slice filter, and nothing of either for a run without slices."""

from pathlib import Path
from typing import Any

import pytest
from html_report import with_case_not_run
from sliced_run import GLOBS, sliced_run
from synthetic_run import SyntheticRun, synthetic_run

from conftest import ARTIFACTS, Browsed
from pytest_taguru.report.html.island import ReportInputs
from pytest_taguru.report.html.page import render_page
from pytest_taguru.score.slices import resolve_slices

BOUNDS = {
    "early": {"aggregate": {"recall.mrr": {"min": 0.99}}},
    "sevens": {"aggregate": {"recall.mrr": {"min": 0}}},
    "small": {"min_cases": 5},
}


def write(run: SyntheticRun, path: Path) -> str:
    inputs = ReportInputs(run.evaluation, "evaluation.json", run.eval_set)
    path.write_text(render_page(inputs), encoding="utf-8")
    return path.as_uri()


@pytest.fixture(scope="module")
def sliced(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, SyntheticRun]:
    run = sliced_run(with_case_not_run(synthetic_run(120)), BOUNDS)
    return write(run, tmp_path_factory.mktemp("slices") / "report.html"), run


def shown(page: Any) -> int:
    return int(page.inner_text("#case-count").split()[1].replace(",", ""))


def test_the_section_shows_each_slice_and_its_verdict(
    browsed: Browsed, sliced: tuple[str, SyntheticRun]
) -> None:
    url, run = sliced
    page = browsed.open(url)
    assert browsed.errors == [] and browsed.blocked == []
    assert page.is_visible("#slices") and page.is_visible("#jump-slices")
    assert "The slice gate failed: 1 violation(s)" in page.inner_text(".notices")
    assert page.inner_text("#slices-body p >> nth=0").startswith("FAIL")
    rows = page.query_selector_all("#slices-body tbody tr")
    assert [row.query_selector("td").inner_text() for row in rows] == list(GLOBS)
    cards = run.evaluation.slices
    assert cards is not None
    early = rows[0].inner_text()
    assert f"\t{cards['early'].n}\t" in early
    assert f"{cards['early'].metrics['recall.mrr'].mean:.3f}" in early
    assert "violated" in early and "[early] recall.mrr" in early
    assert "held" in rows[1].inner_text()
    assert "too small" in rows[2].inner_text() and "reported, not judged" in rows[2].inner_text()
    assert "—" in rows[3].inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#slices").screenshot(path=str(ARTIFACTS / "report-slices.png"))


def test_the_slice_filter_shows_a_slices_cases(
    browsed: Browsed, sliced: tuple[str, SyntheticRun]
) -> None:
    url, run = sliced
    page = browsed.open(url)
    total = shown(page)
    assert page.is_visible("#f-slice")
    ids = [case.case_id for case in run.eval_set.cases]
    members = resolve_slices(GLOBS, ids)
    page.select_option("#f-slice", label="sevens")
    assert shown(page) == len(members["sevens"]) > 0
    visible = page.query_selector_all("#case-viewport .row:not([hidden])")
    assert {row.get_attribute("data-case-id") for row in visible} <= set(members["sevens"])
    page.select_option("#f-slice", label="empty")
    assert shown(page) == 0
    page.select_option("#f-slice", label="any")
    assert shown(page) == total
    page.click("#slices-body tbody tr >> nth=0 >> button")
    assert page.input_value("#f-slice") == "0"
    assert shown(page) == len(members["early"])
    page.click("#f-reset")
    page.wait_for_function(
        "total => document.querySelector('#case-count').textContent.includes(total + ' of')",
        arg=total,
    )


def test_a_run_without_slices_shows_neither_section_nor_filter(
    browsed: Browsed, tmp_path: Path
) -> None:
    page = browsed.open(write(synthetic_run(20), tmp_path / "plain.html"))
    assert browsed.errors == []
    assert not page.is_visible("#slices") and not page.is_visible("#jump-slices")
    assert not page.is_visible("#f-slice")
    assert shown(page) == 20
