"""Benchmark the HTML report at 100,000 cases (prints figures; no assertions).

Builds the synthetic run of the tests (``tests/support/synthetic_run.py``: ten hybrid hits a
case, a tenth with structural expectations, an eighth with a citation, an eighth failing),
renders its report with and without the eval set, and prints each page's size against the
25 MB target and the time to build it beside a floor: dumping the same case blocks to JSON with
the standard library. Then, when Debian's chromium is there, it opens the page from file://
and times loading (floor: a page of the same bytes whose script only parses the island), a
filter, a sort and opening a case (floor for the first two: one pass over the rows). Usage:

    .venv/bin/python benchmarks/bench_html_report.py [--cases 100000]
"""

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from synthetic_run import synthetic_run

from pytest_taguru.report.html.island import ReportInputs, build_island, island_text
from pytest_taguru.report.html.page import render_page

Result = TypeVar("Result")

TARGET_BYTES = 25_000_000
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
TIMINGS = """() => {
    const time = (act) => { const t = performance.now(); act(); return performance.now() - t; };
    const choose = (id, value, kind) => {
        const input = document.getElementById(id);
        input.value = value;
        input.dispatchEvent(new Event(kind));
    };
    const filter = time(() => choose("f-outcome", "broke_bound", "change"));
    const all = time(() => choose("f-outcome", "all", "change"));
    const sort = time(() => document.querySelector("#case-head [data-key=c1]").click());
    const typed = time(() => choose("f-text", "case-0999", "input"));
    const data = JSON.parse(document.getElementById("taguru-data").textContent);
    const flags = data.cases.flags;
    let n = 0;
    const pass = time(() => { for (let i = 0; i < flags.length; i++) n += flags[i] & 1; });
    return {filter, all, sort, typed, pass};
}"""
FLOOR_PAGE = """<!DOCTYPE html><meta charset="utf-8"><script type="application/json" id="d">{data}
</script><script>JSON.parse(document.getElementById("d").textContent);
document.documentElement.dataset.ready = "true";</script>"""


def timed(action: Callable[[], Result]) -> tuple[float, Result]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def browser_figures(page_path: Path, floor_path: Path, cases: int) -> None:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        print("browser: chromium not found, skipped")
        return
    with sync_playwright() as driver, tempfile.TemporaryDirectory() as profile:
        context = driver.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True, args=FLAGS,
            viewport={"width": 1400, "height": 1000},
        )  # fmt: skip
        page = context.new_page()

        def load(path: Path) -> float:
            started = time.perf_counter()
            page.goto(path.as_uri())
            page.wait_for_selector("html[data-ready=true]", timeout=120_000)
            return time.perf_counter() - started

        floor_load = load(floor_path)
        report_load = load(page_path)
        ms = page.evaluate(TIMINGS)
        page.click("#case-viewport .row >> nth=0")
        opened, _ = timed(lambda: page.wait_for_selector("#detail[open] .detail"))
        rows = page.eval_on_selector_all("#case-viewport .row", "rows => rows.length")
        context.close()
    print(f"browser load: {report_load:.2f} s  (floor, parse the island only: {floor_load:.2f} s, "
          f"ratio {report_load / floor_load:.1f})")  # fmt: skip
    print(f"  filter by outcome: {ms['filter']:.0f} ms, back to all: {ms['all']:.0f} ms, "
          f"sort by a column: {ms['sort']:.0f} ms, text filter: {ms['typed']:.0f} ms "
          f"(floor, one pass over {cases} rows: {ms['pass']:.1f} ms)")  # fmt: skip
    print(f"  open a case: {opened * 1000:.0f} ms; rows in the DOM: {rows} of {cases}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=100_000)
    args = parser.parse_args()
    seconds, run = timed(lambda: synthetic_run(args.cases))
    print(f"synthetic run of {args.cases} cases built in {seconds:.1f} s")
    floor, _ = timed(
        lambda: json.dumps([block.model_dump(exclude_none=True) for block in run.evaluation.cases])
    )
    page = ""
    for label, eval_set in (("artifact only", None), ("with the eval set", run.eval_set)):
        inputs = ReportInputs(run.evaluation, "evaluation.json", eval_set)
        build, page = timed(lambda: render_page(inputs))  # noqa: B023 - called at once
        size = len(page.encode("utf-8"))
        print(f"{label}: {size / 1e6:.1f} MB (target {TARGET_BYTES / 1e6:.0f} MB, "
              f"{size / TARGET_BYTES:.0%} of it), {size / args.cases:.0f} bytes a case; built "
              f"in {build:.1f} s (floor, the case blocks dumped by json: {floor:.1f} s; "
              f"ratio {build / floor:.1f})")  # fmt: skip
    with tempfile.TemporaryDirectory() as directory:
        page_path = Path(directory) / "report.html"
        page_path.write_text(page, encoding="utf-8")
        island = island_text(build_island(ReportInputs(run.evaluation, "e", run.eval_set)))
        floor_path = Path(directory) / "floor.html"
        floor_path.write_text(FLOOR_PAGE.format(data=island), encoding="utf-8")
        browser_figures(page_path, floor_path, args.cases)


if __name__ == "__main__":
    main()
