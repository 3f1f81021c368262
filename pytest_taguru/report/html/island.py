"""The data island: everything the page shows, as one compact JSON document.

Pure: built from the artifact's models, the eval set (optional: expectations, eval.jsonl
lines, drill-downs) and a comparison against a baseline run (optional). Its keys::

    version     ISLAND_VERSION
    artifact    the artifact's path, as given
    header      the run, its corpus, the gate verdict, the notices (``header``)
    families    metric cards by family (``cards``)
    histograms  per-case score distributions (``cards``)
    cases       the case table and each case's detail (``cases``, ``detail``)
    sources     source names, referred to by index from ``cases.details``
    plans       distinct search plans, referred to by index
    eval        the eval set: {"path", "href"} (href relative to the page), null without it
    baseline    what moved against the baseline run (``baseline``), or null
    slices      per-slice scorecards and verdicts (``slices``), or null

``island_text`` writes it for a ``<script type="application/json">`` element.
"""

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.compare.classify import ChangeReport
from pytest_taguru.gate.thresholds import Violation
from pytest_taguru.report.html.baseline import baseline_section, moved_kinds
from pytest_taguru.report.html.cards import histograms, metric_cards
from pytest_taguru.report.html.cases import case_table
from pytest_taguru.report.html.compact import StringTable, compact_json
from pytest_taguru.report.html.header import header_section, read_gate
from pytest_taguru.report.html.slices import slice_notices, slices_section
from pytest_taguru.run.eval_models import EvalSet

if TYPE_CHECKING:
    from pytest_taguru.compare.verdicts import StatisticsReport

ISLAND_VERSION = 1


@dataclass(frozen=True)
class ReportInputs:
    """What a report is made of. ``session_notes``: what only a live session knows (see
    ``header``); ``eval_href``: where the page links the eval.jsonl."""

    evaluation: Evaluation
    artifact_path: str
    eval_set: EvalSet | None = None
    baseline: ChangeReport | None = None
    eval_href: str | None = None
    session_notes: tuple[str, ...] = ()
    statistics: "StatisticsReport | None" = None
    """The paired statistics against ``baseline`` (``compare.verdicts``), when computed."""


def _case_violations(violations: Sequence[Violation]) -> dict[str, list[Violation]]:
    by_case: dict[str, list[Violation]] = defaultdict(list)
    for item in violations:
        if item.scope == "case" and item.case_id is not None:
            by_case[item.case_id].append(item)
    return by_case


def build_island(inputs: ReportInputs) -> dict[str, Any]:
    """The island of one report."""
    evaluation = inputs.evaluation
    gate, gate_problem = read_gate(evaluation)
    violations = list(gate.violations or []) if gate is not None else []
    sources, plans = StringTable(), StringTable()
    moved = moved_kinds(inputs.baseline) if inputs.baseline is not None else {}
    cases = case_table(
        evaluation,
        violations=_case_violations(violations),
        eval_set=inputs.eval_set,
        moved=moved,
        sources=sources,
        plans=plans,
    )
    baseline = None
    if inputs.baseline is not None:
        rows = {case_id: row for row, case_id in enumerate(cases["id"])}
        baseline = baseline_section(inputs.baseline, rows, inputs.statistics)
    aggregate = {item.metric for item in violations if item.scope == "aggregate"}
    header = header_section(
        evaluation, gate, gate_problem=gate_problem, session_notes=inputs.session_notes
    )
    header["notices"] += slice_notices(evaluation)
    return {
        "version": ISLAND_VERSION,
        "artifact": inputs.artifact_path,
        "header": header,
        "families": metric_cards(evaluation, aggregate),
        "histograms": histograms(evaluation.cases),
        "cases": cases,
        "sources": sources.strings(),
        "plans": [json.loads(plan) for plan in plans.strings()],
        "eval": None
        if inputs.eval_set is None
        else {"path": inputs.eval_set.path, "href": inputs.eval_href},
        "baseline": baseline,
        "slices": slices_section(evaluation, cases["id"]),
    }


def island_text(island: dict[str, Any]) -> str:
    """Compact JSON that cannot end its ``<script>`` element: every ``<`` (in ``</script>``,
    ``<!--``) is written ``\\u003c``, which is the same JSON string."""
    return compact_json(island).replace("<", "\\u003c")
