"""Reports for the HTML tests: a synthetic run rendered to a page, and the island read back.

``render_report`` writes ``report.html`` (with its eval set beside it) for the browser tests:
a gated synthetic run compared against a baseline run in which other cases missed (what moved,
and the paired statistics), one case
whose id tries to break out of the page (``HOSTILE_ID``), and one dataset case that did not run.
"""

import base64
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthetic_run import SyntheticRun, synthetic_run

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.artifact.view import LoadedRun, read_run
from pytest_taguru.artifact.writing import render
from pytest_taguru.compare.classify import ChangeReport, compare
from pytest_taguru.compare.verdicts import StatisticsReport, paired_statistics
from pytest_taguru.report.html.island import ReportInputs, build_island
from pytest_taguru.report.html.page import eval_href, render_page
from pytest_taguru.run.eval_models import EvalCase

HOSTILE_ID = '</script><!--<img src="http://127.0.0.1:9/x.png">'
"""A case id that would end the data island, open a comment and load an image if the page
wrote it as HTML anywhere."""
NOT_RUN_ID = "case-not-run"


def loaded(evaluation: Evaluation, path: str) -> LoadedRun:
    """An in-memory artifact as ``compare`` reads it from a file."""
    return read_run(render(evaluation), path)


def island_details(island: dict[str, Any]) -> list[dict[str, Any]]:
    """Every case's detail object, inflated from the island's chunks."""
    return [
        detail
        for chunk in island["cases"]["details"]
        for detail in json.loads(gzip.decompress(base64.b64decode(chunk)))
    ]


def with_hostile_case(run: SyntheticRun, index: int) -> SyntheticRun:
    """``run`` with case ``index`` renamed to ``HOSTILE_ID`` (in its block and eval case)."""
    evaluation, eval_set = run.evaluation, run.eval_set
    blocks = list(evaluation.cases)
    cases = list(eval_set.cases)
    blocks[index] = blocks[index].model_copy(update={"case_id": HOSTILE_ID})
    cases[index] = cases[index].model_copy(update={"case_id": HOSTILE_ID})
    return SyntheticRun(
        evaluation.model_copy(update={"cases": blocks}),
        eval_set.model_copy(update={"cases": cases}),
    )


def with_case_not_run(run: SyntheticRun) -> SyntheticRun:
    """``run`` whose eval set has one more case, which is not in the artifact."""
    extra = EvalCase.model_validate(
        {"case_id": NOT_RUN_ID, "query": "a case that was deselected"}
    ).model_copy(update={"line": len(run.eval_set.cases) + 2})
    eval_set = run.eval_set.model_copy(update={"cases": [*run.eval_set.cases, extra]})
    return SyntheticRun(run.evaluation, eval_set)


@dataclass(frozen=True)
class RenderedReport:
    path: Path
    head: SyntheticRun
    changes: ChangeReport | None
    island: dict[str, Any]
    statistics: StatisticsReport | None = None

    @property
    def url(self) -> str:
        return self.path.as_uri()


def render_report(directory: Path, *, cases: int = 300, baseline: bool = True) -> RenderedReport:
    """Render the synthetic report into ``directory``: ``report.html`` and ``synthetic.jsonl``
    (the eval set's file, which the page links)."""
    head = with_case_not_run(with_hostile_case(synthetic_run(cases), 3))
    changes = statistics = None
    if baseline:
        base = synthetic_run(cases, seed=7, drift=3)
        runs = loaded(base.evaluation, "base.json"), loaded(head.evaluation, "head")
        changes, statistics = compare(*runs), paired_statistics(*runs)
    path = directory / "report.html"
    (directory / "synthetic.jsonl").write_text("{}\n", encoding="utf-8")
    inputs = ReportInputs(
        head.evaluation,
        "evaluation.json",
        head.eval_set,
        changes,
        eval_href(str(directory / "synthetic.jsonl"), str(path)),
        statistics=statistics,
    )
    path.write_text(render_page(inputs), encoding="utf-8")
    return RenderedReport(path, head, changes, build_island(inputs), statistics)
