"""Text renderings of a ``ChangeReport``: ``changes.jsonl``, the terminal summary, Markdown.

The JSONL and the summary are taguru's, byte for byte (B.9, B.10): keys in the reference's
order, floats in serde text (Appendix N.1). The Markdown is this tool's own, a pull-request
comment: verdict counts, the aggregates base → head, then the changed cases, regressed first.
Label gaps (``compare.label_gap``, ours) add to all three only when there are some: a
``label_gap`` key on their records and a ``label_gaps`` count in the header, a mark on their
summary lines, a verdict of their own in the Markdown.
"""

from typing import Any

from pytest_taguru.artifact.view import LoadedRun
from pytest_taguru.compare.classify import (
    CHANGES_VERSION,
    EPSILON,
    AggregateDiff,
    CaseChange,
    ChangeReport,
    MetricChange,
    aggregate_trend,
    thresholds_identity,
)
from pytest_taguru.compare.label_gap import LabelGap
from pytest_taguru.compare.slices import SliceDiff, slice_diffs
from pytest_taguru.compare.stats_render import MARKDOWN_COLUMNS, markdown_cells, markdown_section
from pytest_taguru.compare.verdicts import StatisticsReport
from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.report.markdown import cell

SUMMARY_CASE_CAP = 10
"""Regressed cases named in the terminal summary before ``... and K more`` (B.10)."""

MARKDOWN_CASE_CAP = 50
"""Changed cases listed in the Markdown table; a pull-request comment has a size limit."""
MARKDOWN_SLICE_CAP = 20
"""Slices listed in the Markdown table, for the same reason."""


# --- changes.jsonl (B.9) -----------------------------------------------------------------------


def _identity(run: LoadedRun) -> dict[str, Any]:
    view = run.view
    revision = view.corpus.revision_after
    return {
        "path": run.path,
        "context": view.inputs.context,
        "taguru_evaluation": view.taguru_evaluation,
        "generated_at": view.generated_at,
        "corpus_revision_after": {
            "graph": revision.graph,
            "passages": revision.passages,
            "config": revision.config,
        },
        "corpus_stable": view.corpus.stable,
        "thresholds_sha256": thresholds_identity(view),
    }


def _aggregate_entry(diff: AggregateDiff) -> dict[str, Any]:
    return {
        "metric": diff.metric,
        "statistic": diff.statistic,
        "sides": {"base": diff.base, "head": diff.head},
        "delta": diff.delta,
    }


def _metric_entry(change: MetricChange) -> dict[str, Any]:
    return {
        "metric": change.metric,
        "sides": {"base": change.base, "head": change.head},
        "delta": change.delta,
        "direction": change.direction,
    }


def header_line(report: ChangeReport, generated_at: str) -> dict[str, Any]:
    """The header object; ``warnings`` is left out when there are none, ``metrics`` never."""
    counts = report.counts
    header: dict[str, Any] = {
        "kind": "header",
        "taguru_evaluation_changes": CHANGES_VERSION,
        "generated_at": generated_at,
        "base": _identity(report.base),
        "head": _identity(report.head),
        "counts": {
            "improved": counts.improved,
            "regressed": counts.regressed,
            "added": counts.added,
            "removed": counts.removed,
            "unchanged": counts.unchanged,
            "cases_base": counts.cases_base,
            "cases_head": counts.cases_head,
        },
        "metrics": [_aggregate_entry(diff) for diff in report.metrics],
    }
    if report.warnings:
        header["warnings"] = list(report.warnings)
    if report.label_gaps:
        header["label_gaps"] = len(report.label_gaps)
    return header


def record_line(record: CaseChange, gap: LabelGap | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "kind": record.kind,
        "case_id": record.case_id,
        "metrics": [_metric_entry(change) for change in record.metrics],
    }
    if gap is not None:
        line["label_gap"] = {
            "new_unjudged": gap.new_unjudged,
            "judged_at_k": {"base": gap.judged_at_k_base, "head": gap.judged_at_k_head},
        }
    return line


def render_jsonl(report: ChangeReport, generated_at: str) -> str:
    """The whole ``changes.jsonl``: the header, then one line per record, each ending ``\\n``.

    ``generated_at`` is the comparison's own time, ``YYYY-MM-DDTHH:MM:SSZ`` in UTC.
    """
    records = [record_line(r, report.label_gaps.get(r.case_id)) for r in report.records]
    lines = [header_line(report, generated_at), *records]
    return "".join(dumps_compact(line) + "\n" for line in lines)


# --- terminal summary (B.10) -------------------------------------------------------------------


def _aggregate_summary(diff: AggregateDiff) -> str:
    base = "n/a" if diff.base is None else f"{diff.base:.3f}"
    head = "n/a" if diff.head is None else f"{diff.head:.3f}"
    tail = "" if diff.delta is None else f" (Δ {diff.delta:+.3f})"
    return f"    {diff.metric}: {base} -> {head}{tail}"


def _moved_down(record: CaseChange) -> list[MetricChange]:
    return [change for change in record.metrics if change.direction == "regressed"]


def render_summary(report: ChangeReport, out: str) -> str:
    """The stdout text printed after a successful write, ending with ``  wrote <out>``."""
    c = report.counts
    lines = [
        f"evaluate compare: {c.cases_base} case(s) in BASE, {c.cases_head} in HEAD — "
        f"{c.improved} improved, {c.regressed} regressed, {c.added} added, "
        f"{c.removed} removed, {c.unchanged} unchanged"
    ]
    if report.metrics:
        lines.append("  aggregate:")
        lines.extend(_aggregate_summary(diff) for diff in report.metrics)
    regressed = [record for record in report.records if record.kind == "regressed"]
    for record in regressed[:SUMMARY_CASE_CAP]:
        moved = ", ".join(
            f"{change.metric} {change.delta:+.3f}"
            for change in _moved_down(record)
            if change.delta is not None
        )
        gap = report.label_gaps.get(record.case_id)
        mark = "" if gap is None else f" — label gap: {_new_unjudged(gap)}"
        lines.append(f"    regressed: {record.case_id} ({moved}){mark}")
    if len(regressed) > SUMMARY_CASE_CAP:
        lines.append(f"    ... and {len(regressed) - SUMMARY_CASE_CAP} more regressed case(s)")
    if report.label_gaps:
        lines.append(f"  label gaps: {_label_gap_note(report)}")
    lines.append(f"  wrote {out}")
    return "\n".join(lines) + "\n"


def _new_unjudged(gap: LabelGap) -> str:
    return f"{gap.new_unjudged} new unjudged hit(s) in HEAD's top k"


def _label_gap_note(report: ChangeReport) -> str:
    return (
        f"{len(report.label_gaps)} of the regressed case(s) coincide with new "
        "unjudged hits — label them ('taguru-evaluate unjudged HEAD.json --eval eval.jsonl') "
        "before judging; --fail-on-regression does not count them"
    )


# --- Markdown (a pull-request comment) ---------------------------------------------------------

_AGGREGATE_COLUMNS = ("metric", "statistic", "base", "head", "Δ", "change")
_KIND_ORDER = {"regressed": 0, "improved": 1, "added": 2, "removed": 3}


def _number(value: float | None) -> str:
    """Three decimals; a value that rounds to zero is ``0.000``, never ``-0.000``."""
    if value is None:
        return "n/a"
    text = f"{value:.3f}"
    return "0.000" if text == "-0.000" else text


def _delta(value: float | None) -> str:
    """A signed delta; one too small for three decimals keeps its sign in exponent form."""
    if value is None:
        return "n/a"
    text = f"{value:+.3f}"
    if text in ("+0.000", "-0.000"):
        return "+0.000" if abs(value) <= EPSILON else f"{value:+.1e}"
    return text


_TREND = {"better": "better", "worse": "worse", "unchanged": "="}


def _change(diff: AggregateDiff) -> str:
    """``↑ better``, ``↓ worse`` (the registry's direction), a bare arrow for a metric without
    one, ``=`` within the epsilon, nothing when a side has no value."""
    if diff.delta is None:
        return ""
    trend = aggregate_trend(diff)
    if trend == "unchanged" or (trend is None and abs(diff.delta) <= EPSILON):
        return "="
    arrow = "↑" if diff.delta > 0 else "↓"
    return arrow if trend is None else f"{arrow} {_TREND[trend]}"


def _moved_text(change: MetricChange) -> str:
    text = f"{cell(change.metric)} {_number(change.base)} → {_number(change.head)}"
    if change.delta is not None:
        text += f" ({_delta(change.delta)})"
    return f"**{text}**" if change.direction == "regressed" else text


def _slice_rows(diff: SliceDiff) -> list[str]:
    """One row per metric, the slice named on the first (its globs marked when they differ)."""
    name = cell(diff.name) + ("" if diff.same_globs else " (globs differ)")
    first = f"| {name} | {diff.cases_base} → {diff.cases_head} "
    return [
        f"{first if at == 0 else '| | '}| {cell(d.metric)} | {_number(d.base)} "
        f"| {_number(d.head)} | {_delta(d.delta)} | {_change(d)} |"
        for at, d in enumerate(diff.metrics)
    ] or [f"{first}| | | | | |"]


def _slice_lines(diffs: tuple[SliceDiff, ...]) -> list[str]:
    """The slices both runs carry, each metric's mean base → head (none: no section)."""
    if not diffs:
        return []
    lines = ["", "#### Slices", ""]
    lines += ["| slice | cases | metric | base | head | Δ | change |"]
    lines += ["|---|---:|---|---:|---:|---:|---|"]
    for diff in diffs[:MARKDOWN_SLICE_CAP]:
        lines += _slice_rows(diff)
    if len(diffs) > MARKDOWN_SLICE_CAP:
        lines += ["", f"… and {len(diffs) - MARKDOWN_SLICE_CAP} more slice(s)."]
    return lines


def _verdict(record: CaseChange, gap: LabelGap | None) -> str:
    if gap is None:
        return record.kind
    return f"regressed — label gap ({cell(_new_unjudged(gap))})"


def render_markdown(report: ChangeReport, statistics: StatisticsReport | None = None) -> str:
    """A Markdown summary ready to paste into a pull-request comment.

    Sections: the two runs and the verdict counts; the aggregate metrics base → head with their
    deltas and which way they went (↑ better / ↓ worse, by the registry); when both runs carry
    slices, each slice's per-case metrics the same way (``compare.slices``); the changed cases,
    regressed first (then improved, added, removed, each in case_id order) with the metrics
    that moved, regressed metrics in bold; the warnings. With ``statistics`` the aggregate
    table gains the paired interval, p and verdict of each paired metric, and a section of
    paired statistics follows it (``stats_render``). Numbers use the terminal summary's
    three decimals, never ``-0.000``.
    """
    c = report.counts
    lines = [
        "### taguru evaluate compare",
        "",
        f"BASE {cell(report.base.path)} ({c.cases_base} case(s)) → "
        f"HEAD {cell(report.head.path)} ({c.cases_head} case(s))",
        "",
        "| regressed | improved | added | removed | unchanged |",
        "|---:|---:|---:|---:|---:|",
        f"| {c.regressed} | {c.improved} | {c.added} | {c.removed} | {c.unchanged} |",
    ]
    if report.label_gaps:
        lines += ["", f"**Label gaps**: {cell(_label_gap_note(report))}"]
    if report.metrics:
        extra = () if statistics is None else MARKDOWN_COLUMNS
        lines += ["", "#### Aggregate metrics", ""]
        lines += [
            "| " + " | ".join((*_AGGREGATE_COLUMNS, *extra)) + " |",
            "|---|---|---:|---:|---:|---|" + "---|" * len(extra),
        ]
        lines += [
            f"| {cell(d.metric)} | {cell(d.statistic or '')} | {_number(d.base)} "
            f"| {_number(d.head)} | {_delta(d.delta)} | {_change(d)} |"
            + "".join(f" {text} |" for text in markdown_cells(statistics, d.metric)[: len(extra)])
            for d in report.metrics
        ]
    lines += _slice_lines(slice_diffs(report))
    if statistics is not None:
        lines += markdown_section(statistics)
    changed = sorted(report.records, key=lambda record: _KIND_ORDER[record.kind])
    if changed:
        lines += ["", "#### Changed cases", ""]
        lines += ["| case | verdict | metrics that moved |", "|---|---|---|"]
        lines += [
            f"| {cell(record.case_id)} | {_verdict(record, report.label_gaps.get(record.case_id))} "
            f"| {'<br>'.join(map(_moved_text, record.metrics))} |"
            for record in changed[:MARKDOWN_CASE_CAP]
        ]
        if len(changed) > MARKDOWN_CASE_CAP:
            lines += ["", f"… and {len(changed) - MARKDOWN_CASE_CAP} more changed case(s)."]
    if report.warnings:
        lines += ["", "#### Warnings", ""]
        lines += [f"- {cell(warning)}" for warning in report.warnings]
    return "\n".join(lines) + "\n"
