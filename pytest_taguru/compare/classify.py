"""``taguru evaluate compare``: two ``evaluation.json`` runs → what moved between them.

Pure: the caller reads the files (``compare_view.read_run``) and writes the output
(``compare_render``). ``compare`` matches cases by case_id, classifies each on the nine quality
metrics, diffs the run-level metrics and collects the warnings, all in the reference's order.
Specification: ``thresholds-and-compare.md`` Part B.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pytest_taguru.artifact.view import (
    METRIC_SHAPES,
    BudgetLimits,
    CaseView,
    EvaluationView,
    LoadedRun,
    decode_headline,
)
from pytest_taguru.compare.label_gap import LabelGap, excused_aggregates, label_gap
from pytest_taguru.score.registry import COMPARISON_METRICS, METRICS_BY_NAME, case_value

CHANGES_VERSION = 1
"""The ``taguru_evaluation_changes`` stamp of the header line."""

EPSILON = 1e-9
"""A per-case delta must exceed this magnitude, strictly, to count as a move (B.5)."""

# --- classification (B.3–B.6) ------------------------------------------------------------------

Direction = Literal["improved", "regressed", "not_comparable"]
Kind = Literal["improved", "regressed", "added", "removed"]
Trend = Literal["better", "worse", "unchanged"]


@dataclass(frozen=True)
class MetricChange:
    """One metric of one record: both sides, ``head - base``, and which way it went."""

    metric: str
    base: float | None
    head: float | None
    delta: float | None
    direction: Direction


@dataclass(frozen=True)
class CaseChange:
    """One line of ``changes.jsonl`` after the header."""

    kind: Kind
    case_id: str
    metrics: tuple[MetricChange, ...]


@dataclass(frozen=True)
class AggregateDiff:
    """One header ``metrics`` entry: the headline scalar of a run-level metric on each side."""

    metric: str
    statistic: str | None
    base: float | None
    head: float | None
    delta: float | None


@dataclass(frozen=True)
class Counts:
    improved: int
    regressed: int
    added: int
    removed: int
    unchanged: int
    cases_base: int
    cases_head: int


@dataclass(frozen=True)
class ChangeReport:
    base: LoadedRun
    head: LoadedRun
    counts: Counts
    metrics: tuple[AggregateDiff, ...]
    warnings: tuple[str, ...]
    records: tuple[CaseChange, ...]
    label_gaps: Mapping[str, LabelGap] = field(default_factory=dict)
    """pytest-taguru's own: the regressed cases that are label gaps, by case_id."""


def _index(cases: list[CaseView], side: str, warnings: list[str]) -> dict[str, CaseView]:
    """case_id → case, the last occurrence winning; each repeat is warned about (B.3)."""
    index: dict[str, CaseView] = {}
    for case in cases:
        if case.case_id in index:
            warnings.append(
                f"{side}: duplicate case_id '{case.case_id}' — using the last occurrence"
            )
        index[case.case_id] = case
    return index


def classify(
    case_id: str, base: CaseView, head: CaseView, warnings: list[str]
) -> CaseChange | None:
    """A case on both sides: ``None`` when unchanged, else its record (B.5).

    Per metric, with both values present, ``delta = head - base``; ``delta > EPSILON`` moved up
    and ``delta < -EPSILON`` moved down, anything else is unchanged and unlisted. One regressed
    metric makes the case regressed whatever else improved; the record lists every metric that
    moved, either way, in B.4 order. A value on one side only is excluded, with a warning.
    """
    moved: list[MetricChange] = []
    for metric in COMPARISON_METRICS:
        b, h = case_value(base, metric), case_value(head, metric)
        if b is not None and h is not None:
            delta = h - b
            if delta > EPSILON:
                moved.append(MetricChange(metric, b, h, delta, "improved"))
            elif delta < -EPSILON:
                moved.append(MetricChange(metric, b, h, delta, "regressed"))
        elif b is not None or h is not None:
            warnings.append(
                f"case '{case_id}': metric '{metric}' has a value on only one side — "
                "excluded from classification"
            )
    if not moved:
        return None
    regressed = any(change.direction == "regressed" for change in moved)
    return CaseChange("regressed" if regressed else "improved", case_id, tuple(moved))


def one_sided(kind: Literal["added", "removed"], case_id: str, case: CaseView) -> CaseChange:
    """An ``added`` (HEAD only) or ``removed`` (BASE only) record: every metric with a value."""
    changes = []
    for metric in COMPARISON_METRICS:
        value = case_value(case, metric)
        if value is not None:
            base, head = (None, value) if kind == "added" else (value, None)
            changes.append(MetricChange(metric, base, head, None, "not_comparable"))
    return CaseChange(kind, case_id, tuple(changes))


# --- aggregate diffs (B.7) ---------------------------------------------------------------------


def _aggregate_scalar(run: LoadedRun, side: str, name: str, warnings: list[str]) -> float | None:
    """One side's scalar for ``name``, read through ``definitions[name].statistic`` only."""
    view = run.view
    if name not in view.metrics:
        return None
    definition = view.definitions.get(name)
    if definition is None:
        warnings.append(
            f"{side}: metric '{name}' has no definitions entry — skipped from the aggregate diff"
        )
        return None
    shape = METRIC_SHAPES.get(definition.statistic)
    if shape is None:
        unknown = definition.statistic
        warnings.append(f"{side}: metric '{name}': definitions names unknown statistic '{unknown}'")
        return None
    try:
        return decode_headline(shape, view.metrics[name])
    except ValueError as error:
        warnings.append(f"{side}: metric '{name}': {error}")
        return None


def aggregate_diffs(base: LoadedRun, head: LoadedRun, warnings: list[str]) -> list[AggregateDiff]:
    """Every metric name of either side, in byte order, left out when neither has a value.

    ``statistic`` is HEAD's definition when HEAD has one (even ``{}``, statistic ``""``), else
    BASE's, else ``None``; ``delta = head - base`` with no epsilon.
    """
    diffs = []
    for name in sorted(base.view.metrics.keys() | head.view.metrics.keys()):
        b = _aggregate_scalar(base, "BASE", name, warnings)
        h = _aggregate_scalar(head, "HEAD", name, warnings)
        if b is None and h is None:
            continue
        definition = head.view.definitions.get(name)
        if definition is None:
            definition = base.view.definitions.get(name)
        statistic = None if definition is None else definition.statistic
        delta = h - b if b is not None and h is not None else None
        diffs.append(AggregateDiff(name, statistic, b, h, delta))
    return diffs


# --- mismatch warnings (B.8 items 1–7) ---------------------------------------------------------


def _identity_text(sha: str | None) -> str:
    return "none" if sha is None else sha.encode()[:12].decode(errors="ignore")


def _budget_text(budget: BudgetLimits | None) -> str:
    if budget is None:
        return "none (untruncated baseline)"
    items, size, tokens = budget.max_items, budget.max_bytes, budget.max_tokens
    return f"max_items={items} max_bytes={size} max_tokens={tokens}"


def thresholds_identity(view: EvaluationView) -> str | None:
    """``None`` without a thresholds block; ``""`` for a block without ``sha256``."""
    return None if view.thresholds is None else view.thresholds.sha256


def mismatch_warnings(base: LoadedRun, head: LoadedRun) -> list[str]:
    """Context, revision, stability, thresholds identity, stamp and budget, in B.8 order."""
    b, h = base.view, head.view
    warnings = []
    if b.inputs.context != h.inputs.context:
        warnings.append(f"context differs: BASE '{b.inputs.context}' vs HEAD '{h.inputs.context}'")
    if b.corpus.revision_after != h.corpus.revision_after:
        warnings.append("corpus.revision_after differs between BASE and HEAD")
    for run in (base, head):
        if not run.view.corpus.stable:
            warnings.append(f"{run.path}: corpus.stable is false — a write landed mid-run")
    b_sha, h_sha = thresholds_identity(b), thresholds_identity(h)
    if b_sha != h_sha:
        warnings.append(
            f"thresholds file identity differs: BASE {_identity_text(b_sha)} "
            f"vs HEAD {_identity_text(h_sha)}"
        )
    if b.taguru_evaluation != h.taguru_evaluation:
        warnings.append(
            f"taguru_evaluation stamp differs: BASE {b.taguru_evaluation} "
            f"vs HEAD {h.taguru_evaluation}"
        )
    if b.inputs.budget != h.inputs.budget:
        warnings.append(
            f"budget differs: BASE {_budget_text(b.inputs.budget)} vs HEAD "
            f"{_budget_text(h.inputs.budget)} — not an equal-budget comparison"
        )
    return warnings


# --- the whole comparison ----------------------------------------------------------------------


def compare(base: LoadedRun, head: LoadedRun) -> ChangeReport:
    """Classify every case_id of either side, in byte order, and diff the aggregates (Part B).

    Warnings come in B.8 order: mismatches, duplicate case_ids (BASE then HEAD), one-sided
    metrics (by case_id, then metric order), aggregate problems (by name, BASE before HEAD).
    """
    warnings = mismatch_warnings(base, head)
    base_cases = _index(base.view.cases, "BASE", warnings)
    head_cases = _index(head.view.cases, "HEAD", warnings)
    records: list[CaseChange] = []
    unchanged = 0
    for case_id in sorted(base_cases.keys() | head_cases.keys()):
        b, h = base_cases.get(case_id), head_cases.get(case_id)
        if b is None and h is not None:
            records.append(one_sided("added", case_id, h))
        elif h is None and b is not None:
            records.append(one_sided("removed", case_id, b))
        elif b is not None and h is not None:
            record = classify(case_id, b, h, warnings)
            if record is None:
                unchanged += 1
            else:
                records.append(record)
    metrics = aggregate_diffs(base, head, warnings)
    gaps: dict[str, LabelGap] = {}
    for record in records:
        if record.kind == "regressed":
            case_id = record.case_id
            down = [change for change in record.metrics if change.direction == "regressed"]
            gap = label_gap(down, base_cases[case_id], head_cases[case_id], epsilon=EPSILON)
            if gap is not None:
                gaps[case_id] = gap
    kinds = [record.kind for record in records]
    counts = Counts(
        improved=kinds.count("improved"),
        regressed=kinds.count("regressed"),
        added=kinds.count("added"),
        removed=kinds.count("removed"),
        unchanged=unchanged,
        cases_base=len(base_cases),
        cases_head=len(head_cases),
    )
    return ChangeReport(base, head, counts, tuple(metrics), tuple(warnings), tuple(records), gaps)


def _moved_down(record: CaseChange) -> list[str]:
    return [change.metric for change in record.metrics if change.direction == "regressed"]


# --- which way the aggregates went (pytest-taguru's own: the Markdown, --fail-on-regression) ---


def aggregate_trend(diff: AggregateDiff) -> Trend | None:
    """``better``/``worse`` by the registry's direction for the metric (``unchanged`` within
    ``EPSILON``); ``None`` when the metric has no better direction, is not a registry metric,
    or a side has no value."""
    metric = METRICS_BY_NAME.get(diff.metric)
    if metric is None or metric.better is None or diff.delta is None:
        return None
    if abs(diff.delta) <= EPSILON:
        return "unchanged"
    return "better" if (diff.delta > 0) == (metric.better == "higher") else "worse"


@dataclass(frozen=True)
class Regressions:
    """What ``--fail-on-regression`` fails on: regressed cases and worse judged aggregates."""

    cases: tuple[str, ...]
    aggregates: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.cases or self.aggregates)


def regressions(report: ChangeReport) -> Regressions:
    """Regressed cases that are not label gaps, and worse judged aggregates unless every case
    that moved down on the metric is a label gap (``compare.label_gap``)."""
    gaps = report.label_gaps
    regressed = [record for record in report.records if record.kind == "regressed"]
    cases = tuple(record.case_id for record in regressed if record.case_id not in gaps)
    excused = excused_aggregates(gaps, {r.case_id: _moved_down(r) for r in regressed})
    aggregates = tuple(
        diff.metric
        for diff in report.metrics
        if aggregate_trend(diff) == "worse"
        and METRICS_BY_NAME[diff.metric].judged_in_comparisons
        and diff.metric not in excused
    )
    return Regressions(cases, aggregates)
