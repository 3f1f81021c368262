"""How a gate verdict is shown: terminal lines, GitHub annotations, the Markdown step summary.

Rendering is pure; :func:`publish_github` is the only function that touches files or streams.
A live run (``run.controller``) and the offline ``taguru-evaluate gate`` (``cli.gate``) both
show their verdict with these. Terminal lines follow ``evaluate-run.md`` §8.2 item 9 and
``thresholds-and-compare.md`` A.7.
"""

import sys
from collections.abc import Mapping
from typing import TextIO

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.gate.file import ThresholdsFile
from pytest_taguru.gate.thresholds import GateReport, Violation
from pytest_taguru.report.markdown import cell, code

CASE_LINE_CAP = 10
"""Case-scoped violations printed on the terminal; the rest are counted."""
TOP_FAILING_CASES = 10
"""Failing cases listed in the Markdown step summary."""


# --- terminal (A.7) --------------------------------------------------------------------------


def _case_violations(report: GateReport) -> list[Violation]:
    return [item for item in report.violations or [] if item.scope == "case"]


def gate_summary_lines(report: GateReport) -> list[str]:
    """The threshold lines printed after the run summary.

    PASS: one line, nothing else (not even skips). FAIL: the count line, every non-case
    violation (aggregate, then corpus — uncapped), the first ``CASE_LINE_CAP`` case lines,
    ``... and K more`` when there are more, then the skip count when anything was skipped.
    Either way a partial run whose aggregate bounds were not judged ends with a line saying so.
    """
    digest = report.sha256[:12]
    not_judged = []
    if report.aggregate_skipped is not None:
        # pytest-taguru's own line (a partial run): which bounds the verdict did not cover.
        not_judged.append(
            f"  thresholds: aggregate bounds not judged: {report.aggregate_skipped}; "
            "--taguru-gate-partial judges them on the subset"
        )
    if report.passed:
        return [f"  thresholds: PASS (sha256 {digest}…)", *not_judged]
    violations = report.violations or []
    lines = [f"  thresholds: FAIL — {len(violations)} violation(s) (sha256 {digest}…)"]
    lines += [f"    [{v.scope}] {v.metric}: {v.reason}" for v in violations if v.scope != "case"]
    cases = _case_violations(report)
    lines += [f"    [case {v.case_id}] {v.metric}: {v.reason}" for v in cases[:CASE_LINE_CAP]]
    if len(cases) > CASE_LINE_CAP:
        lines.append(f"    ... and {len(cases) - CASE_LINE_CAP} more case-scoped violation(s)")
    if report.skipped:
        lines.append(
            f"  {len(report.skipped)} case-scoped threshold(s) skipped as not applicable"
        )
    return [*lines, *not_judged]


# --- GitHub Actions --------------------------------------------------------------------------


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF percent-encoded (``%`` first)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command property value: as :func:`escape_data`, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def error_annotation(
    message: str, *, title: str, file: str | None = None, line: int | None = None
) -> str:
    """``::error file=…,line=…,title=…::message`` with GitHub's escaping rules."""
    properties = []
    if file is not None:
        properties.append(f"file={escape_property(file)}")
    if line is not None:
        properties.append(f"line={line}")
    properties.append(f"title={escape_property(title)}")
    return f"::error {','.join(properties)}::{escape_data(message)}"


def _failing_cases(report: GateReport) -> dict[str, list[Violation]]:
    """Case violations grouped by case_id, cases in run order."""
    grouped: dict[str, list[Violation]] = {}
    for item in _case_violations(report):
        grouped.setdefault(item.case_id or "", []).append(item)
    return grouped


def github_annotations(
    report: GateReport, *, eval_path: str, case_lines: Mapping[str, int]
) -> list[str]:
    """One ``::error`` per non-case violation, then one per failing case at its eval line.

    ``case_lines`` maps case_id to its 1-based line in ``eval_path``; a case without one
    (the offline gate has no eval file) is annotated on the file alone.
    """
    annotations = [
        error_annotation(f"{v.metric}: {v.reason}", title=f"taguru thresholds [{v.scope}]")
        for v in report.violations or []
        if v.scope != "case"
    ]
    for case_id, violations in _failing_cases(report).items():
        annotations.append(
            error_annotation(
                "; ".join(f"{v.metric}: {v.reason}" for v in violations),
                title=f"taguru case {case_id}",
                file=eval_path,
                line=case_lines.get(case_id),
            )
        )
    return annotations


def _fixed(value: float | None) -> str:
    return "—" if value is None else f"{value:.6f}"


def step_summary_markdown(
    report: GateReport,
    file: ThresholdsFile,
    evaluation: Evaluation,
    *,
    eval_path: str,
    case_lines: Mapping[str, int],
) -> str:
    """The Markdown appended to ``$GITHUB_STEP_SUMMARY`` (ends with a newline).

    Verdict heading; counts and the thresholds' sha256 prefix; a table of every aggregate
    bound (observed headline, min, max, verdict; ``n=0`` for no samples); non-case
    violations; and the ``TOP_FAILING_CASES`` cases with the most violations (ties in run
    order) with their ``eval_path:line`` locations.
    """
    violations = report.violations or []
    verdict = "PASS" if report.passed else "FAIL"
    out = [f"### taguru thresholds: {verdict}", ""]
    facts = [f"{len(violations)} violation(s)", f"sha256 `{report.sha256[:12]}…`"]
    if report.aggregate_skipped is not None:
        facts.append(f"aggregate bounds not judged: {cell(report.aggregate_skipped)}")
    if report.skipped:
        facts.append(f"{len(report.skipped)} case-scoped threshold(s) skipped as not applicable")
    out += [" · ".join(facts), ""]
    failed_aggregates = {v.metric for v in violations if v.scope == "aggregate"}
    if file.aggregate:
        out += ["| metric | observed | min | max | result |", "|---|---:|---:|---:|---|"]
        for metric in sorted(file.aggregate):
            bound = file.aggregate[metric]
            value = evaluation.headline(metric)
            result = "❌ fail" if metric in failed_aggregates else "✅ pass"
            if report.aggregate_skipped is not None:
                result = "⏭ not judged"
            observed = "n=0" if value is None else _fixed(value)
            out.append(
                f"| {code(metric)} | {observed} | {_fixed(bound.min)} | {_fixed(bound.max)} "
                f"| {result} |"
            )
        out.append("")
    others = [v for v in violations if v.scope not in ("aggregate", "case")]
    out += [f"- {code(v.metric)}: {cell(v.reason)}" for v in others]
    if others:
        out.append("")
    failing = _failing_cases(report)
    if failing:
        ranked = sorted(failing.items(), key=lambda entry: -len(entry[1]))
        out += [
            f"#### Failing cases ({len(failing)})",
            "",
            "| case | location | violations |",
            "|---|---|---|",
        ]
        for case_id, items in ranked[:TOP_FAILING_CASES]:
            line = case_lines.get(case_id)
            location = eval_path if line is None else f"{eval_path}:{line}"
            reasons = "<br>".join(f"{code(v.metric)}: {cell(v.reason)}" for v in items)
            out.append(f"| {code(case_id)} | {code(location)} | {reasons} |")
        if len(ranked) > TOP_FAILING_CASES:
            out += ["", f"… and {len(ranked) - TOP_FAILING_CASES} more failing case(s)"]
    return "\n".join(out).rstrip("\n") + "\n"


def publish_github(
    report: GateReport,
    file: ThresholdsFile,
    evaluation: Evaluation,
    *,
    eval_path: str,
    case_lines: Mapping[str, int],
    environ: Mapping[str, str],
    out: TextIO,
) -> None:
    """Under GitHub Actions (``GITHUB_ACTIONS=true``): annotations to ``out`` and the
    step summary appended to ``$GITHUB_STEP_SUMMARY`` (when set). Elsewhere: nothing."""
    if environ.get("GITHUB_ACTIONS") != "true":
        return
    for annotation in github_annotations(report, eval_path=eval_path, case_lines=case_lines):
        print(annotation, file=out)
    summary_path = environ.get("GITHUB_STEP_SUMMARY")
    if not summary_path:
        return
    markdown = step_summary_markdown(
        report, file, evaluation, eval_path=eval_path, case_lines=case_lines
    )
    try:
        with open(summary_path, "a", encoding="utf-8") as handle:
            handle.write(markdown)
    except OSError as error:
        print(f"taguru: cannot append to GITHUB_STEP_SUMMARY: {error}", file=sys.stderr)
