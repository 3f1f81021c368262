"""The size target: a 100,000-case run gives a page of at most 25 MB (the benchmark
``benchmarks/bench_html_report.py`` prints the figure and the time)."""

from synthetic_run import synthetic_run

from pytest_taguru.report.html.island import ReportInputs
from pytest_taguru.report.html.page import render_page

SIZE_TARGET = 25_000_000


def test_a_hundred_thousand_cases_fit_in_25_megabytes() -> None:
    run = synthetic_run(100_000)
    # With the eval set, as a live run writes it: expectations, drill-downs and reproduction
    # requests come on top of what the artifact holds.
    page = render_page(ReportInputs(run.evaluation, "evaluation.json", run.eval_set))
    assert len(page.encode("utf-8")) <= SIZE_TARGET
