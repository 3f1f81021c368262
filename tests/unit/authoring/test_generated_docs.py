"""The generated reference files match their single declarations; the docs link up."""

import re
import subprocess
import sys

import pytest
from paths import REPO

from pytest_taguru.authoring.generated import generated_files, metric_catalog, options_table
from pytest_taguru.flags import OPTION_SPECS
from pytest_taguru.score.registry import CASE_SCOPED_METRICS, EXTRA_METRICS, METRICS


@pytest.mark.parametrize("relative", sorted(generated_files()))
def test_the_committed_file_is_current(relative: str) -> None:
    committed = (REPO / relative).read_text(encoding="utf-8")
    assert committed == generated_files()[relative], (
        f"{relative} is stale: run python docs/generate.py"
    )


def test_the_catalog_lists_every_metric_once_with_its_scopes() -> None:
    taguru_s, own = metric_catalog().split("## pytest-taguru's own metrics")
    rows = [line for line in taguru_s.splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert names == [metric.name for metric in METRICS]
    for row, name in zip(rows, names, strict=True):
        assert ("aggregate, cases" in row) == (name in CASE_SCOPED_METRICS)
    extra = [line.split("`")[1] for line in own.splitlines() if line.startswith("| `")]
    assert extra == [metric.name for metric in EXTRA_METRICS]


def test_the_options_table_lists_every_flag() -> None:
    table = options_table()
    for spec in OPTION_SPECS:
        assert f"`{spec.ini}`" in table and spec.flag in table


def test_generate_check_is_clean() -> None:
    script = REPO / "docs" / "generate.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout) == (0, "")


def test_every_relative_link_in_the_docs_resolves() -> None:
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text("utf-8")):
            assert (page.parent / target).exists(), f"{page.name}: broken link {target}"
