"""The report in a real browser: loaded from file://, it draws its sections, filters and sorts
its case table, opens a case, shows the baseline, and never touches the network."""

from pathlib import Path
from typing import Any

import pytest
from html_report import HOSTILE_ID, NOT_RUN_ID, RenderedReport, render_report

from conftest import Browsed
from pytest_taguru.gate.thresholds import GateReport
from pytest_taguru.score.registry import case_value

ROWS = "#case-viewport .row:not([hidden])"
CELL = "[role=cell] >> nth="
"""A row's cells: outcome, case, query, line, then the metric columns."""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> RenderedReport:
    return render_report(tmp_path_factory.mktemp("report"))


def visible_ids(page: Any) -> list[str]:
    rows = page.query_selector_all(ROWS)
    ordered = sorted(rows, key=lambda row: int(row.get_attribute("data-position")))
    return [row.get_attribute("data-case-id") for row in ordered]


def shown_count(page: Any) -> int:
    text = page.inner_text("#case-count")  # "Showing 37 of 301 cases."
    return int(text.split()[1].replace(",", ""))


def failing_ids(report: RenderedReport) -> set[str]:
    thresholds = report.head.evaluation.thresholds
    assert thresholds is not None
    gate = GateReport.model_validate(thresholds)
    return {v.case_id for v in gate.violations or [] if v.scope == "case" and v.case_id}


def test_the_page_loads_from_a_file_and_requests_nothing(
    browsed: Browsed, report: RenderedReport
) -> None:
    page = browsed.open(report.url)
    assert browsed.errors == []
    assert browsed.requests == [report.url]
    assert browsed.blocked == []
    assert page.inner_text(".notices").startswith("The gate failed:")
    assert len(page.query_selector_all("#cards .card")) == 31
    assert len(page.query_selector_all("#histograms svg rect")) == 5 * 10
    assert page.query_selector("#latency svg") is not None
    browsed.screenshot("report-overview.png", full_page=True)


def test_rows_are_rendered_lazily_failing_first(browsed: Browsed, report: RenderedReport) -> None:
    page = browsed.open(report.url)
    total = len(report.island["cases"]["id"])
    assert page.inner_text("#case-count") == f"Showing {total} of {total} cases."
    rendered = page.query_selector_all("#case-viewport .row")
    assert 10 < len(rendered) < 80 < total
    ids = visible_ids(page)
    failing = failing_ids(report)
    assert set(ids[: len(failing)]) <= failing or set(ids) <= failing
    assert page.inner_text(f"{ROWS} >> nth=0").startswith("broke bound")
    page.eval_on_selector("#case-viewport", "node => node.scrollTop = node.scrollHeight")
    page.wait_for_function(
        "last => [...document.querySelectorAll('#case-viewport .row:not([hidden])')]"
        ".some(row => row.dataset.position === String(last))",
        arg=total - 1,
    )
    assert len(page.query_selector_all("#case-viewport .row")) == len(rendered)


def test_columns_sort_both_ways(browsed: Browsed, report: RenderedReport) -> None:
    page = browsed.open(report.url)
    page.click("#case-head [data-key=id]")
    ids = visible_ids(page)
    assert ids == sorted(report.island["cases"]["id"])[: len(ids)]
    page.click("#case-head [data-key=id]")
    assert visible_ids(page) == sorted(report.island["cases"]["id"], reverse=True)[: len(ids)]
    assert page.get_attribute("#case-head [data-key=id]", "aria-sort") == "descending"
    mrr = report.island["cases"]["columns"].index("recall.mrr")
    page.click(f"#case-head [data-key=c{mrr}]")  # numbers sort highest first
    values = [page.inner_text(f"{ROWS} >> nth={k} >> {CELL}{4 + mrr}") for k in range(5)]
    assert values == ["1.000"] * 5
    page.click(f"#case-head [data-key=c{mrr}]")
    lowest = page.inner_text(f"{ROWS} >> nth=0 >> {CELL}{4 + mrr}")
    assert lowest == "0.000"
    page.focus("#case-head [data-key=id]")  # headings sort from the keyboard too
    page.keyboard.press("Enter")
    assert visible_ids(page) == sorted(report.island["cases"]["id"])[: len(ids)]


def test_filters_by_outcome_metric_range_and_text(
    browsed: Browsed, report: RenderedReport
) -> None:
    page = browsed.open(report.url)
    total = shown_count(page)
    page.select_option("#f-outcome", "broke_bound")
    assert shown_count(page) == len(failing_ids(report))
    rows = page.query_selector_all(ROWS)
    assert rows and all(row.inner_text().startswith("broke bound") for row in rows)
    page.select_option("#f-outcome", "all")
    page.select_option("#f-metric", label="MRR")
    page.fill("#f-min", "0.3")
    page.fill("#f-max", "0.5")
    mrr = [case_value(block, "recall.mrr") for block in report.head.evaluation.cases]
    assert shown_count(page) == sum(1 for v in mrr if v is not None and 0.3 <= round(v, 4) <= 0.5)
    page.click("#f-reset")
    page.wait_for_function(
        "total => document.querySelector('#case-count').textContent.includes(total + ' of')",
        arg=total,
    )
    page.fill("#f-text", "CASE-00001")
    ids = report.island["cases"]["id"]
    assert shown_count(page) == sum(1 for case_id in ids if "case-00001" in case_id) > 0
    page.click("#f-reset")
    page.wait_for_function(
        "total => document.querySelector('#case-count').textContent.includes(total + ' of')",
        arg=total,
    )
    assert shown_count(page) == total


def test_a_case_opens_with_its_hits_and_drill_down(
    browsed: Browsed, report: RenderedReport
) -> None:
    page = browsed.open(report.url)
    page.select_option("#f-outcome", "broke_bound")
    first = visible_ids(page)[0]
    page.click(f"{ROWS} >> nth=0")
    page.wait_for_selector("#detail[open] .detail")
    detail = page.inner_text("#detail .detail")
    assert detail.startswith(first)
    assert "synthetic.jsonl:" in detail
    drill_down = page.inner_text("#detail pre.text")
    assert drill_down.startswith(f"taguru case '{first}' broke 1 case-scoped threshold(s)")
    assert "reproduce:" in drill_down
    hits = page.query_selector_all("#detail h3:text('Passage lane') ~ table tbody tr")
    assert len(hits) == 11  # ten hits and the missed expectation
    assert page.inner_text("#detail .mark-missed >> nth=-1").startswith("missed · relevance 2")
    assert page.evaluate("location.hash") == f"#case={first}"
    browsed.screenshot("report-case.png")
    page.keyboard.press("Escape")
    page.wait_for_selector("#detail:not([open])", state="attached")
    assert page.evaluate("location.hash") == ""


def test_a_case_opens_from_the_address(browsed: Browsed, report: RenderedReport) -> None:
    page = browsed.open(report.url + "#case=case-000005")
    page.wait_for_selector("#detail[open] .detail[data-case=case-000005]")


def test_a_case_that_did_not_run_says_so(browsed: Browsed, report: RenderedReport) -> None:
    page = browsed.open(report.url)
    page.select_option("#f-outcome", "not_run")
    assert visible_ids(page) == [NOT_RUN_ID]
    page.click(f"{ROWS} >> nth=0")
    page.wait_for_selector("#detail[open] .detail")
    assert "did not run" in page.inner_text("#detail .detail")


def test_a_hostile_case_id_is_only_text(browsed: Browsed, report: RenderedReport) -> None:
    page = browsed.open(report.url)
    page.fill("#f-text", "</script>")
    assert visible_ids(page) == [HOSTILE_ID]
    assert page.inner_text(f"{ROWS} >> nth=0 >> {CELL}1") == HOSTILE_ID
    assert page.query_selector_all("img") == []
    assert browsed.blocked == [] and browsed.errors == []


def test_the_baseline_section_shows_what_moved(browsed: Browsed, report: RenderedReport) -> None:
    assert report.changes is not None
    counts = report.changes.counts
    page = browsed.open(report.url)
    assert page.is_visible("#baseline")
    summary = page.inner_text("#baseline-body p >> nth=0")
    assert f"{counts.regressed} regressed" in summary and f"{counts.improved} improved" in summary
    moved = page.query_selector_all("#moved tbody tr")
    assert len(moved) == counts.regressed + counts.improved + counts.added + counts.removed
    assert counts.added == counts.removed == 1  # the renamed hostile case
    assert page.inner_text("#moved tbody tr >> nth=0").startswith("regressed")
    assert not page.is_visible("#slices")
    page.select_option("#f-outcome", "regressed")
    assert shown_count(page) == counts.regressed
    page.click("#moved tbody tr >> nth=0 >> a")
    page.wait_for_selector("#detail[open] .detail")
    assert "Against the baseline: regressed" in page.inner_text("#detail .detail")


def test_the_paired_statistics_section_shows_each_verdict(
    browsed: Browsed, report: RenderedReport
) -> None:
    statistics = report.statistics
    assert statistics is not None
    page = browsed.open(report.url)
    assert page.is_visible("#paired")
    summary = page.inner_text("#paired-body p >> nth=0")
    assert summary.startswith(f"{statistics.paired_cases} paired case(s), 10,000 resamples, α 0.05")
    rows = page.query_selector_all("#paired-body table tbody tr")
    assert len(rows) == len(statistics.verdicts)
    for row, item in zip(rows, statistics.verdicts, strict=True):
        cells = [cell.inner_text() for cell in row.query_selector_all("td")]
        low, high = item.interval
        assert cells[0] == item.metric and cells[1] == "all" and cells[2] == str(item.n)
        assert cells[4] == f"[{_signed(low)}, {_signed(high)}]"
        assert cells[7].startswith("unchanged" if item.verdict == "unchanged" else item.verdict)
    mrr = next(item for item in statistics.verdicts if item.metric == "recall.mrr")
    badge = page.inner_text("#paired-body tbody tr >> nth=1 >> .badge")
    assert badge == mrr.verdict
    excluded = page.inner_text("#paired-body ul >> nth=0")
    assert "1 missing in BASE: " + HOSTILE_ID in excluded  # the renamed case, as text
    assert page.query_selector_all("img") == []
    assert browsed.errors == [] and browsed.blocked == []
    box = page.query_selector("#paired").bounding_box()
    browsed.screenshot("report-paired.png", full_page=True, clip=box)


def _signed(value: float) -> str:
    """The page's signed number: ``+``/``−``/``±`` and four decimals."""
    text = f"{abs(value):.4f}"
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def test_screenshot_is_kept_for_ci(browsed: Browsed, report: RenderedReport) -> None:
    browsed.open(report.url)
    path: Path = browsed.screenshot("report-first-screen.png")
    assert path.stat().st_size > 10_000
