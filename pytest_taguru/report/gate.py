"""How a gate verdict is shown: terminal lines, GitHub annotations, the Markdown step summary.

Rendering is pure; :func:`publish_github` and :func:`run_gate` (the offline
``taguru-evaluate gate`` subcommand) are the only functions that touch files or streams.
Terminal lines follow ``evaluate-run.md`` §8.2 item 9 and ``thresholds-and-compare.md`` A.7.
"""

import argparse
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TextIO

from pytest_taguru.artifact.evaluation import ArtifactError, Evaluation, parse_evaluation
from pytest_taguru.errors import UsageError
from pytest_taguru.gate.file import ThresholdsFile
from pytest_taguru.gate.thresholds import (
    GateReport,
    Violation,
    evaluate_gate,
    load_thresholds,
    read_input,
)

CASE_LINE_CAP = 10
"""Case-scoped violations printed on the terminal; the rest are counted."""
TOP_FAILING_CASES = 10
"""Failing cases listed in the Markdown step summary."""
DEFAULT_REGRESSION_EXIT_CODE = 3


# --- terminal (A.7) --------------------------------------------------------------------------


def _case_violations(report: GateReport) -> list[Violation]:
    return [item for item in report.violations or [] if item.scope == "case"]


def gate_summary_lines(report: GateReport) -> list[str]:
    """The threshold lines printed after the run summary.

    PASS: one line, nothing else (not even skips). FAIL: the count line, every non-case
    violation (aggregate, then corpus — uncapped), the first ``CASE_LINE_CAP`` case lines,
    ``... and K more`` when there are more, then the skip count when anything was skipped.
    """
    digest = report.sha256[:12]
    if report.passed:
        return [f"  thresholds: PASS (sha256 {digest}…)"]
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
    return lines


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


def _cell(text: str) -> str:
    """Plain text inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(text.splitlines()).replace("|", "\\|")


def _code(text: str) -> str:
    """A code span inside a table cell, fenced by more backticks than the text contains."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{_cell(padded)}{fence}"


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
            observed = "n=0" if value is None else _fixed(value)
            out.append(
                f"| {_code(metric)} | {observed} | {_fixed(bound.min)} | {_fixed(bound.max)} "
                f"| {result} |"
            )
        out.append("")
    others = [v for v in violations if v.scope not in ("aggregate", "case")]
    out += [f"- {_code(v.metric)}: {_cell(v.reason)}" for v in others]
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
            reasons = "<br>".join(f"{_code(v.metric)}: {_cell(v.reason)}" for v in items)
            out.append(f"| {_code(case_id)} | {_code(location)} | {reasons} |")
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


# --- offline re-gating: ``taguru-evaluate gate`` ---------------------------------------------

_PROG = "taguru-evaluate gate"


class _ArgumentError(Exception):
    """A command-line problem; its message names the flag."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, and prints ``--help`` to the given stream."""

    def __init__(self, *, out: TextIO, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.out = out

    def error(self, message: str) -> NoReturn:
        raise _ArgumentError(message)

    def print_help(self, file: Any = None) -> None:
        super().print_help(file if file is not None else self.out)


_NEEDS = {"--thresholds": "a file path", "--regression-exit-code": "an exit status"}
"""What each flag's value is, for ``<flag> needs <what>`` (taguru's wording)."""


def _argument_problem(error: argparse.ArgumentError) -> str:
    """argparse's complaint about one flag, in taguru's words where it has them."""
    name = error.argument_name or ""
    if name in _NEEDS and error.message.startswith("expected one argument"):
        return f"{name} needs {_NEEDS[name]}"
    return str(error)


class _Once(argparse.Action):
    """A flag that may be given once; a repeat is ``<flag> given twice``."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest) is not None:
            raise _ArgumentError(f"{option_string} given twice")
        setattr(namespace, self.dest, values)


def _exit_code(text: str) -> int:
    if re.fullmatch("[0-9]{1,3}", text) is None or int(text) > 255:
        raise argparse.ArgumentTypeError(f"must be an integer 0..=255, got '{text}'")
    return int(text)


def _parser(out: TextIO) -> _Parser:
    parser = _Parser(
        out=out,
        prog=_PROG,
        exit_on_error=False,
        description="Apply a thresholds file to a saved evaluation.json (no server needed). "
        "Exit 0 = passed, 2 = usage or input error, 3 (or --regression-exit-code) = failed.",
    )
    parser.add_argument("evaluation", metavar="EVALUATION.json", help="a saved artifact")
    parser.add_argument(
        "--thresholds",
        metavar="FILE",
        required=True,
        action=_Once,
        help="the thresholds file",
    )
    parser.add_argument(
        "--regression-exit-code",
        metavar="N",
        type=_exit_code,
        action=_Once,
        help=f"exit status when the gate fails (default {DEFAULT_REGRESSION_EXIT_CODE})",
    )
    return parser


def _read_artifact(path: str) -> Evaluation:
    try:
        return parse_evaluation(read_input(path), origin=path)
    except ArtifactError as error:
        raise UsageError(str(error)) from error


def run_gate(
    argv: Sequence[str],
    *,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """``taguru-evaluate gate EVALUATION.json --thresholds FILE [--regression-exit-code N]``.

    The same gate as a live run, over a saved artifact: aggregate names are checked against
    the artifact's ``definitions``, override case_ids against its cases. Prints the threshold
    lines (and, under GitHub Actions, annotations and the step summary); returns 0 when the
    gate passes, the regression exit code (default 3) when it fails, 2 on any usage or input
    error (message on stderr, ``taguru-evaluate: gate: <message>``).
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parser = _parser(out)
    try:
        args = parser.parse_args(list(argv))
    except (_ArgumentError, argparse.ArgumentError) as error:
        problem = (
            _argument_problem(error) if isinstance(error, argparse.ArgumentError) else str(error)
        )
        print(f"taguru-evaluate: gate: {problem} — try '{_PROG} --help'", file=err)
        return UsageError.exit_code
    except SystemExit as done:  # --help
        return done.code if isinstance(done.code, int) else 0
    try:
        evaluation = _read_artifact(args.evaluation)
        thresholds = load_thresholds(
            args.thresholds,
            metric_names=set(evaluation.definitions),
            case_ids={block.case_id for block in evaluation.cases},
        )
    except UsageError as error:
        print(f"taguru-evaluate: gate: {error.message}", file=err)
        return error.exit_code
    report = evaluate_gate(thresholds, evaluation)
    for line in gate_summary_lines(report):
        print(line, file=out)
    publish_github(
        report,
        thresholds.file,
        evaluation,
        eval_path=evaluation.inputs.eval.path,
        case_lines={},
        environ=environ if environ is not None else os.environ,
        out=out,
    )
    if report.passed:
        return 0
    code: int | None = args.regression_exit_code
    return DEFAULT_REGRESSION_EXIT_CODE if code is None else code
