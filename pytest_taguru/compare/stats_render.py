"""Text renderings of a ``StatisticsReport``: the terminal table (``compare --stats`` and the
pytest summary), the Markdown columns and section, the ``kind: "statistics"`` JSONL record, and
one line per verdict for a gate result.

Numbers: deltas and intervals to four decimals with a sign, p-values to four decimals
(``<0.0001`` below), α and tolerances as typed (``:g``). The record keeps every float exact
(serde text, as the rest of ``changes.jsonl``).
"""

from typing import Any

from pytest_taguru.compare.pairing import Exclusions
from pytest_taguru.compare.statistics import CONFIDENCE, EXACT_NONZERO, SEED
from pytest_taguru.compare.verdicts import MetricVerdict, StatisticsReport
from pytest_taguru.report.markdown import cell

LISTED_CASES = 10
"""Excluded case ids named per reason in the terminal and Markdown (the record lists all)."""


def p_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _signed(value: float) -> str:
    text = f"{value:+.4f}"
    return "+0.0000" if text == "-0.0000" else text


def interval_text(item: MetricVerdict) -> str:
    low, high = item.interval
    return f"[{_signed(low)}, {_signed(high)}]"


def verdict_text(item: MetricVerdict) -> str:
    """``regressed``, ``improved``, ``unchanged`` (``, non-inferior``) or ``inconclusive: why;
    MDE 0.0421 at n=36``."""
    if item.verdict == "unchanged" and item.non_inferior:
        return "unchanged, non-inferior"
    if item.verdict != "inconclusive":
        return item.verdict
    mde = "n/a" if item.mde is None else f"{item.mde:.4f}"
    return f"inconclusive: {item.reason}; MDE {mde} at n={item.n}"


def verdict_summary(item: MetricVerdict) -> str:
    """``Δ -0.1515 [-0.1843, -0.1212], p (Holm) 0.0003 — regressed``."""
    return (
        f"Δ {_signed(item.mean_delta)} {interval_text(item)}, p (Holm) {p_text(item.p_holm)} "
        f"— {verdict_text(item)}"
    )


def verdict_line(item: MetricVerdict) -> str:
    """One line for a gate result: ``recall.mrr [all]: Δ -0.1515 …, p (Holm) 0.0003 —
    regressed``."""
    return f"{item.metric} [{item.slice_name}]: {verdict_summary(item)}"


def _listed(cases: tuple[str, ...]) -> str:
    shown = ", ".join(cases[:LISTED_CASES])
    more = f", … and {len(cases) - LISTED_CASES} more" if len(cases) > LISTED_CASES else ""
    return f"{shown}{more}"


def exclusion_text(exclusions: Exclusions) -> str:
    """``excluded: 1 relabelled (c005); 2 errored in HEAD (c006, c010)`` or ``excluded: none``."""
    parts = [
        f"{len(cases)} {reason} ({_listed(cases)})"
        for reason, cases in exclusions.by_reason()
        if cases
    ]
    return "excluded: " + ("; ".join(parts) if parts else "none")


def parameters_text(report: StatisticsReport) -> str:
    return (
        f"{report.paired_cases} paired case(s), {report.resamples:,} resamples, "
        f"α {report.alpha:g} (Holm over {report.family} test(s)), "
        f"tolerance {report.tolerances.describe()}"
    )


def _sliced(report: StatisticsReport) -> bool:
    return any(item.slice is not None for item in report.verdicts)


def terminal_lines(report: StatisticsReport) -> list[str]:
    """The table printed after compare's summary (and in the pytest summary)."""
    lines = [f"  paired statistics: {parameters_text(report)}"]
    sliced = _sliced(report)
    head = f"    {'metric':<27}" + (f" {'slice':<12}" if sliced else "")
    lines.append(
        head + f" {'n':>7} {'Δ mean':>8}  {'95% interval':<20} {'p':>7} {'p Holm':>7}  verdict"
    )
    for item in report.verdicts:
        row = f"    {item.metric:<27}" + (f" {item.slice_name:<12}" if sliced else "")
        lines.append(
            row + f" {item.n:>7} {_signed(item.mean_delta):>8}  {interval_text(item):<20} "
            f"{p_text(item.test.p_two_sided):>7} {p_text(item.p_holm):>7}  {verdict_text(item)}"
        )
    lines.append(f"  {exclusion_text(report.exclusions)}")
    lines += [f"  note: {note}" for note in report.notes]
    return lines


MARKDOWN_COLUMNS = ("95 % interval", "p", "verdict")
"""What the aggregate table gains with statistics (whole-run paired verdicts)."""


def markdown_cells(report: StatisticsReport | None, metric: str) -> list[str]:
    """The extra cells of one aggregate-table row: empty for a metric without a verdict."""
    found = None if report is None else whole_run(report).get(metric)
    if found is None:
        return ["", "", ""]
    return [interval_text(found), p_text(found.test.p_two_sided), cell(verdict_text(found))]


def whole_run(report: StatisticsReport) -> dict[str, MetricVerdict]:
    return {item.metric: item for item in report.verdicts if item.slice is None}


def markdown_section(report: StatisticsReport) -> list[str]:
    """``#### Paired statistics``: the parameters, one row per (metric, slice), exclusions."""
    lines = ["", "#### Paired statistics", "", cell(parameters_text(report)) + ".", ""]
    lines += [
        "| metric | slice | n | Δ mean | 95 % interval | p | p (Holm, one-sided) | verdict |",
        "|---|---|---:|---:|---|---:|---:|---|",
    ]
    lines += [
        f"| {cell(item.metric)} | {cell(item.slice_name)} | {item.n} | "
        f"{_signed(item.mean_delta)} | {interval_text(item)} | {p_text(item.test.p_two_sided)} | "
        f"{p_text(item.p_holm)} | {cell(verdict_text(item))} |"
        for item in report.verdicts
    ]
    lines += ["", cell(exclusion_text(report.exclusions)) + "."]
    lines += [f"- {cell(note)}" for note in report.notes]
    return lines


def _verdict_entry(item: MetricVerdict) -> dict[str, Any]:
    low, high = item.interval
    return {
        "metric": item.metric,
        "slice": item.slice,
        "n": item.n,
        "mean_delta": item.mean_delta,
        "interval": [low, high],
        "p_one_sided": item.test.p_worse,
        "p_holm": item.p_holm,
        "p_two_sided": item.test.p_two_sided,
        "exact": item.test.exact,
        "tolerance": item.tolerance,
        "verdict": item.verdict,
        "non_inferior": item.non_inferior,
        "reason": item.reason,
        "mde": item.mde,
    }


def statistics_record(report: StatisticsReport) -> dict[str, Any]:
    """The ``kind: "statistics"`` line ``compare --stats`` appends to ``changes.jsonl``."""
    excluded = report.exclusions
    return {
        "kind": "statistics",
        "alpha": report.alpha,
        "confidence": CONFIDENCE,
        "resamples": report.resamples,
        "exact_up_to": EXACT_NONZERO,
        "seed": SEED,
        "family": report.family,
        "paired_cases": report.paired_cases,
        "tolerance": {
            "default": report.tolerances.default,
            "metrics": dict(sorted(report.tolerances.per_metric.items())),
        },
        "excluded": {
            "missing_in_head": list(excluded.missing_in_head),
            "missing_in_base": list(excluded.missing_in_base),
            "relabelled": list(excluded.relabelled),
            "errored_in_head": list(excluded.errored_in_head),
            "errored_in_base": list(excluded.errored_in_base),
            "errored_in_both": list(excluded.errored_in_both),
        },
        "notes": list(report.notes),
        "metrics": [_verdict_entry(item) for item in report.verdicts],
    }
