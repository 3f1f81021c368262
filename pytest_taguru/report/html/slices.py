"""The slices of the data island: each slice's scorecard and verdict, and its rows in the table.

Read from the artifact's ``slices`` and ``slice_thresholds`` blocks (pytest-taguru's own keys);
``None`` for a run without slices, and the page then leaves the section and the slice filter
out. Its keys::

    metrics   the per-case scores shown, in the registry's record order
    rows      per slice: [name, globs, n, means, ns, verdict, violation lines]
    members   per slice: its rows of the case table, packed as gaps (``pack_integers``)
    gate      {"passed", "sha256", "skipped"} of the slice gate, or null without one

A slice's members are its globs resolved against the table's case ids (the cases that did not
run included), by the code that built its scorecard.
"""

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.gate.slices import SliceGateReport, not_judged_line, slice_violation_line
from pytest_taguru.report.html.compact import figure, pack_integers
from pytest_taguru.report.html.header import Notice
from pytest_taguru.score.registry import CASE_SCORES
from pytest_taguru.score.slices import resolve_slices

Verdict = str
"""``violated``, ``held``, ``too small`` (below ``min_cases``), ``not judged`` (a partial run),
or ``""`` (the slice has no bound)."""


def read_slice_gate(evaluation: Evaluation) -> SliceGateReport | None:
    """The artifact's ``slice_thresholds`` block, or ``None`` (absent or unreadable)."""
    if evaluation.slice_thresholds is None:
        return None
    try:
        return SliceGateReport.model_validate(evaluation.slice_thresholds)
    except ValidationError:
        return None


def _gaps(rows: Sequence[int]) -> str:
    return pack_integers(row - previous for previous, row in zip([0, *rows], rows, strict=False))


def _verdicts(gate: SliceGateReport | None) -> tuple[dict[str, Verdict], dict[str, list[str]]]:
    """Each gated slice's verdict and its lines (violations, or why it was not judged)."""
    verdicts: dict[str, Verdict] = {}
    lines: dict[str, list[str]] = {}
    if gate is None:
        return verdicts, lines
    for violation in gate.violations or []:
        verdicts[violation.slice] = "violated"
        lines.setdefault(violation.slice, []).append(slice_violation_line(violation))
    for item in gate.not_judged or []:
        verdicts[item.slice] = "too small"
        lines[item.slice] = [not_judged_line(item)]
    return verdicts, lines


def slices_section(evaluation: Evaluation, row_ids: Sequence[str]) -> dict[str, Any] | None:
    """The ``slices`` key of the island (``row_ids``: the case table's ids, in row order)."""
    cards = evaluation.slices
    if cards is None:
        return None
    gate = read_slice_gate(evaluation)
    verdicts, lines = _verdicts(gate)
    gated = set() if gate is None else set(gate.gated)
    rows_of = {case_id: row for row, case_id in enumerate(row_ids)}
    membership = resolve_slices({name: card.globs for name, card in cards.items()}, rows_of)
    rows = []
    for name, card in cards.items():
        verdict = verdicts.get(name, "")
        if not verdict and name in gated:
            verdict = "not judged" if gate is not None and gate.aggregate_skipped else "held"
        metrics = [card.metrics.get(metric) for metric in CASE_SCORES]
        rows.append([
            name,
            " ".join(card.globs),
            card.n,
            [None if value is None else figure(value.mean) for value in metrics],
            [0 if value is None else value.n for value in metrics],
            verdict,
            lines.get(name, []),
        ])  # fmt: skip
    return {
        "metrics": list(CASE_SCORES),
        "rows": rows,
        "members": [_gaps([rows_of[case_id] for case_id in ids]) for ids in membership.values()],
        "gate": None
        if gate is None
        else {"passed": gate.passed, "sha256": gate.sha256, "skipped": gate.aggregate_skipped},
    }


def slice_notices(evaluation: Evaluation) -> list[Notice]:
    """The top of the page's line about the slice gate (none without one)."""
    gate = read_slice_gate(evaluation)
    if gate is None:
        return []
    if gate.aggregate_skipped is not None:
        return [["warning", f"Slice bounds were not judged: {gate.aggregate_skipped}."]]
    if gate.passed:
        return [["ok", "The slice gate passed: every judged slice held its bounds."]]
    count = len(gate.violations or [])
    return [["error", f"The slice gate failed: {count} violation(s) of the slice thresholds."]]
