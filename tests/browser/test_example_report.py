"""The example suite's own report in the browser: what the README shows."""

import subprocess
import sys
from pathlib import Path

from paths import EXAMPLE_SUITE

from conftest import Browsed


def test_the_example_suite_report_opens_offline(browsed: Browsed, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_SUITE),
         "--taguru-out", "evaluation.json", "--taguru-html", "report.html"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    url = (tmp_path / "report.html").as_uri()
    page = browsed.open(url)
    assert browsed.errors == [] and browsed.blocked == [] and browsed.requests == [url]
    assert page.inner_text("#case-count") == "Showing 36 of 36 cases."
    passed = "The gate passed: every bound of the thresholds file held."
    assert page.inner_text(".notices") == passed
    browsed.screenshot("example-report.png")
    page.fill("#f-text", "miss-")
    assert page.inner_text("#case-count") == "Showing 5 of 36 cases."
    page.click("#case-viewport .row:not([hidden]) >> nth=0")
    page.wait_for_selector("#detail[open] .detail")
    assert "Reproduce" in page.inner_text("#detail .detail")
    browsed.screenshot("example-report-case.png")
