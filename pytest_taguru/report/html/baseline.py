"""The baseline section of the data island: what moved between a baseline run and this one,
as ``compare`` classifies it (``thresholds-and-compare.md`` Part B).

``paired_statistics`` is the one place where the noise-aware gate's paired statistics and
verdicts join the page: its value is the island's ``baseline.paired`` key, and the page
renders that key in its own section (``assets/report.js``, ``renderPaired``).
"""

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from pytest_taguru.compare.classify import ChangeReport, MetricChange
from pytest_taguru.report.html.compact import case_number, figure


def paired_statistics(report: ChangeReport) -> dict[str, Any] | None:
    """The paired statistics and verdicts of the noise-aware gate over ``report``'s two runs.

    That gate has not landed yet; until it does there is nothing to show, and the page leaves
    the section out.
    """
    return None


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


def baseline_section(report: ChangeReport, rows: Mapping[str, int]) -> dict[str, Any]:
    """The ``baseline`` key of the island. ``rows``: case_id → its row in the case table
    (a removed case has none: ``-1``). Aggregate values are at ``compact.FIGURE_DIGITS``,
    per-case ones at the table's decimals."""
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
        "paired": paired_statistics(report),
    }
