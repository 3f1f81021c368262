"""The baseline section of the data island: what moved between a baseline run and this one,
as ``compare`` classifies it (``thresholds-and-compare.md`` Part B).

``paired_statistics`` is the one place where the noise-aware gate's paired statistics and
verdicts join the page: its value is the island's ``baseline.paired`` key, and the page
renders that key in its own section (``assets/sections.js``, ``renderPaired``).
"""

from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from pytest_taguru.compare.classify import ChangeReport, MetricChange
from pytest_taguru.report.html.compact import case_number, figure

if TYPE_CHECKING:
    from pytest_taguru.compare.verdicts import StatisticsReport

EXCLUDED_LISTED = 50
"""Excluded case ids named per reason on the page (the count is always whole)."""


def paired_statistics(statistics: "StatisticsReport | None") -> dict[str, Any] | None:
    """The paired statistics and verdicts of the noise-aware gate (``compare.verdicts``), or
    ``None`` when none were computed (the page then leaves the section out).

    ``rows``: ``[metric, slice (null: the whole run), n, mean Δ, interval low, interval high,
    p two-sided, p Holm (null: not in the family), verdict, non-inferior, reason, MDE]`` in the
    metric's own direction; ``excluded``: ``[reason, count, first case ids]``.
    """
    if statistics is None:
        return None
    return {
        "alpha": statistics.alpha,
        "tolerance": statistics.tolerances.describe(),
        "resamples": statistics.resamples,
        "family": statistics.family,
        "paired_cases": statistics.paired_cases,
        "rows": [
            [
                item.metric,
                item.slice,
                item.n,
                figure(item.mean_delta),
                *(figure(end) for end in item.interval),
                figure(item.test.p_two_sided),
                figure(item.p_holm),
                item.verdict,
                item.non_inferior,
                item.reason,
                figure(item.mde),
            ]
            for item in statistics.verdicts
        ],
        "excluded": [
            [reason, len(cases), list(cases[:EXCLUDED_LISTED])]
            for reason, cases in statistics.exclusions.by_reason()
            if cases
        ],
        "notes": list(statistics.notes),
    }


def _change(change: MetricChange) -> list[Any]:
    return [
        change.metric,
        case_number(change.base),
        case_number(change.head),
        case_number(change.delta),
        change.direction,
    ]


def moved_kinds(report: ChangeReport) -> dict[str, str]:
    """case_id → ``improved``, ``regressed``, ``added`` or ``removed`` for every moved case."""
    return {record.case_id: record.kind for record in report.records}


def baseline_section(
    report: ChangeReport, rows: Mapping[str, int], statistics: "StatisticsReport | None" = None
) -> dict[str, Any]:
    """The ``baseline`` key of the island. ``rows``: case_id → its row in the case table
    (a removed case has none: ``-1``). Aggregate values are at ``compact.FIGURE_DIGITS``,
    per-case ones at the table's decimals; ``statistics``: the paired verdicts, if computed."""
    base = report.base.view
    return {
        "path": report.base.path,
        "generated_at": base.generated_at,
        "context": base.inputs.context,
        "counts": asdict(report.counts),
        "aggregates": [
            [diff.metric, diff.statistic, figure(diff.base), figure(diff.head), figure(diff.delta)]
            for diff in report.metrics
        ],
        "warnings": list(report.warnings),
        "moved": [
            [
                record.kind,
                record.case_id,
                rows.get(record.case_id, -1),
                [_change(change) for change in record.metrics],
            ]
            for record in report.records
        ],
        "paired": paired_statistics(statistics),
    }
