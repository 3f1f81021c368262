"""The case table of the data island: one row per case, its flags, its columns and its detail.

Rows are the artifact's cases in run order, then the eval set's cases that did not run (a
partial run), so the page can show what is missing. The table is columnar (one list per
field), the cheapest shape to parse and to filter at 100,000 rows. Its columns are the
case-scoped metrics of the registry, in its order.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_taguru.artifact.assembly import EvidenceFailed
from pytest_taguru.artifact.case import CaseBlock, PassageFailed
from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.gate.thresholds import CaseViolation, Violation
from pytest_taguru.report.drilldown import render_drilldown
from pytest_taguru.report.html.compact import (
    DETAIL_CHUNK,
    StringTable,
    pack_integers,
    packed_details,
    scaled_value,
    value_scale,
)
from pytest_taguru.report.html.detail import declared_detail, recorded_detail
from pytest_taguru.report.reproduce import reproduction_requests
from pytest_taguru.run.eval_models import EvalCase, EvalSet
from pytest_taguru.score.metric_kind import read_path
from pytest_taguru.score.registry import (
    CASE_SCOPED_METRICS,
    CASE_SCORES,
    EXTRA_METRICS,
    METRICS,
    case_value,
)

BROKE_BOUND = 1
"""Flag: the case broke a case-scoped bound of the gate."""
LANE_FAILED = 2
"""Flag: its passage (or evidence) call failed."""
MISSED = 4
"""Flag: the artifact lists something it missed (``missed[]``)."""
NOT_RUN = 8
"""Flag: a case of the eval set that is not in the artifact (deselected, not reached …)."""
REGRESSED = 16
IMPROVED = 32
ADDED = 64
"""Flags against a baseline: compare's verdict for the case (``added``: not in the baseline)."""
BASELINE_FLAGS = {"regressed": REGRESSED, "improved": IMPROVED, "added": ADDED}
FLAG_BITS = {
    "broke_bound": BROKE_BOUND,
    "lane_failed": LANE_FAILED,
    "missed": MISSED,
    "not_run": NOT_RUN,
    **BASELINE_FLAGS,
}
"""The flags by name, written into the island for the page."""

COLUMN_LABELS = {
    "recall.recall_at_k": "recall@k",
    "recall.mrr": "MRR",
    "recall.ndcg": "nDCG",
    "coverage.concepts": "concepts",
    "coverage.labels": "labels",
    "coverage.associations": "assoc.",
    "citations.recall": "cit. recall",
    "citations.locator_validity": "validity",
    "latency.passage_ms": "passage ms",
    "diversity.sources": "sources",
    "label_coverage.judged_at_k": "judged@k",
}
"""Column headings; a case-scoped metric without one is headed by its name."""
EXTRA_COLUMNS = {
    metric.name: metric.case_path
    for metric in EXTRA_METRICS
    if metric.name == "label_coverage.judged_at_k" and metric.case_path is not None
}
"""pytest-taguru's own per-case values shown after the case-scoped metrics: judged@k."""
COLUMNS = (*CASE_SCOPED_METRICS, *EXTRA_COLUMNS)
UNITS = {metric.name: metric.unit for metric in (*METRICS, *EXTRA_METRICS)}
SCALES = [value_scale(UNITS[name]) for name in COLUMNS]
"""Per column: what its packed integers are divided by."""


def column_value(block: CaseBlock, name: str) -> float | None:
    path = EXTRA_COLUMNS.get(name)
    return case_value(block, name) if path is None else read_path(block, path)


@dataclass
class _Columns:
    """The table being built, one list per field."""

    ids: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    lines: list[int | None] = field(default_factory=list)
    flags: list[int] = field(default_factory=list)
    violated: list[int] = field(default_factory=list)
    values: list[list[int]] = field(default_factory=lambda: [[] for _ in COLUMNS])
    details: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self,
        case_id: str,
        query: str,
        line: int | None,
        flags: int,
        violated: int,
        values: Sequence[int],
        detail: dict[str, Any],
    ) -> None:
        self.ids.append(case_id)
        self.queries.append(query)
        self.lines.append(line)
        self.flags.append(flags)
        self.violated.append(violated)
        for column, value in zip(self.values, values, strict=True):
            column.append(value)
        self.details.append(detail)


def _flags(block: CaseBlock, violations: Sequence[Violation], moved: str | None) -> int:
    flags = BROKE_BOUND if violations else 0
    if isinstance(block.passage, PassageFailed) or isinstance(block.evidence, EvidenceFailed):
        flags |= LANE_FAILED
    if block.missed:
        flags |= MISSED
    return flags | BASELINE_FLAGS.get(moved or "", 0)


def _violated_mask(violations: Sequence[Violation]) -> int:
    """Bit ``i`` set when column ``i``'s metric broke a bound."""
    names = {item.metric for item in violations}
    return sum(1 << index for index, name in enumerate(CASE_SCOPED_METRICS) if name in names)


def _explained(
    case: EvalCase, block: CaseBlock, violations: Sequence[Violation], context: str, path: str
) -> dict[str, Any]:
    """The drill-down of a case that broke a bound; else, for a case that missed something or
    whose passage call failed, the requests that reproduce what it fell short on."""
    if violations:
        text = render_drilldown(
            case=case,
            block=block,
            violations=[CaseViolation(violation=item, origin=None) for item in violations],
            context=context,
            eval_path=path,
        )
        return {"dd": text}
    if not block.missed and not isinstance(block.passage, PassageFailed):
        return {}
    short = {
        name for name in CASE_SCORES if (value := case_value(block, name)) is not None and value < 1
    }
    if isinstance(block.passage, PassageFailed):
        short.add("recall.recall_at_k")
    requests = reproduction_requests(case, block, short, context)
    return {"rp": requests} if requests else {}


def case_table(
    evaluation: Evaluation,
    *,
    violations: Mapping[str, Sequence[Violation]],
    eval_set: EvalSet | None,
    moved: Mapping[str, str],
    sources: StringTable,
    plans: StringTable,
) -> dict[str, Any]:
    """The ``cases`` key of the island: ``flag_bits``, ``columns`` (metric names), ``labels``,
    and per row
    ``id``, ``query``, ``line`` (its eval.jsonl line, null without the eval set), ``flags``,
    ``violated`` (bit mask over the columns), ``values`` (per column, the rows' values packed
    as integers: value × ``scales[column]``, rounded; -1 when not applicable) and
    ``details`` (the ``detail`` module's objects, ``detail_chunk`` rows a compressed chunk)."""
    declared = {case.case_id: case for case in eval_set.cases} if eval_set is not None else {}
    context = evaluation.inputs.context
    path = eval_set.path if eval_set is not None else evaluation.inputs.eval.path
    table = _Columns()
    ran = set()
    for block in evaluation.cases:
        ran.add(block.case_id)
        own = violations.get(block.case_id, ())
        detail = recorded_detail(
            block,
            default_limit=evaluation.inputs.default_limit,
            strings=sources,
            plans=plans,
            violations=own,
        )
        case = declared.get(block.case_id)
        if case is not None:
            detail.update(declared_detail(case, block, sources))
            detail.update(_explained(case, block, own, context, path))
        table.add(
            block.case_id,
            block.query,
            None if case is None else case.line,
            _flags(block, own, moved.get(block.case_id)),
            _violated_mask(own),
            [
                scaled_value(column_value(block, name), scale)
                for name, scale in zip(COLUMNS, SCALES, strict=True)
            ],
            detail,
        )
    for case in declared.values():
        if case.case_id not in ran:
            table.add(
                case.case_id,
                case.query,
                case.line,
                NOT_RUN,
                0,
                [scaled_value(None, 1)] * len(COLUMNS),
                {},
            )
    return {
        "flag_bits": FLAG_BITS,
        "columns": list(COLUMNS),
        "labels": [COLUMN_LABELS.get(name, name) for name in COLUMNS],
        "id": table.ids,
        "query": table.queries,
        "line": table.lines if eval_set is not None else None,
        "flags": table.flags,
        "violated": table.violated,
        "scales": SCALES,
        "values": [pack_integers(column) for column in table.values],
        "detail_chunk": DETAIL_CHUNK,
        "details": packed_details(table.details),
    }
