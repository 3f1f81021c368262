"""``taguru-evaluate gate``: the threshold gate of a live run, over a saved ``evaluation.json``.

Its flags are the option table's ``--thresholds``, ``--slice-thresholds`` and
``--regression-exit-code`` (spelling, metavar, help, parser and missing-value message); the
verdict is shown as a live run shows it (``report.gate``, ``report.slices``). The slice gate
needs an artifact that carries slices: their scorecards are computed again from its case blocks
and the globs it recorded, by the live run's code.
"""

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TextIO

from pytest_taguru.artifact.evaluation import ArtifactError, Evaluation, parse_evaluation
from pytest_taguru.cli.arguments import PREFIX, PROG
from pytest_taguru.errors import UsageError
from pytest_taguru.flags import CLI_FLAG_PREFIX, DEFAULT_REGRESSION_EXIT_CODE, OPTIONS, OptionSpec
from pytest_taguru.gate.slice_file import load_slice_thresholds
from pytest_taguru.gate.slices import SliceGateReport, evaluate_slice_gate
from pytest_taguru.gate.thresholds import (
    GateReport,
    Thresholds,
    evaluate_gate,
    load_thresholds,
    read_input,
)
from pytest_taguru.report.gate import gate_summary_lines, publish_github
from pytest_taguru.report.slices import slice_gate_lines
from pytest_taguru.run.flag_values import flag_value, needs
from pytest_taguru.score.slices import slice_cards

_PROG = f"{PROG} gate"
_THRESHOLDS = OPTIONS["thresholds"]
_SLICE_THRESHOLDS = OPTIONS["slice-thresholds"]
_EXIT_CODE = OPTIONS["regression-exit-code"]
_FLAGS = {spec.cli_flag: spec for spec in (_THRESHOLDS, _SLICE_THRESHOLDS, _EXIT_CODE)}


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


def _argument_problem(error: argparse.ArgumentError) -> str:
    """argparse's complaint about one flag, in taguru's words where it has them."""
    name = error.argument_name or ""
    if name in _FLAGS and error.message.startswith("expected one argument"):
        return f"{name} needs {needs(_FLAGS[name])}"
    return str(error)


class _Once(argparse.Action):
    """A table flag that may be given once (a repeat is ``<flag> given twice``), its value
    parsed by the table's parser as it is met."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest) is not None:
            raise _ArgumentError(f"{option_string} given twice")
        spec = _FLAGS[str(option_string)]
        try:
            setattr(namespace, self.dest, flag_value(spec, str(values), spec.cli_flag))
        except UsageError as error:
            raise _ArgumentError(error.message) from None


def _add(parser: argparse.ArgumentParser, spec: OptionSpec, **kwargs: Any) -> None:
    parser.add_argument(
        spec.cli_flag,
        metavar=spec.metavar,
        action=_Once,
        help=spec.help_text(CLI_FLAG_PREFIX),
        **kwargs,
    )


def _parser(out: TextIO) -> _Parser:
    parser = _Parser(
        out=out,
        prog=_PROG,
        exit_on_error=False,
        description="Apply a thresholds file, a slice thresholds file or both to a saved "
        "evaluation.json (no server needed). "
        f"Exit 0 = passed, 2 = usage or input error, {DEFAULT_REGRESSION_EXIT_CODE} "
        f"(or {_EXIT_CODE.cli_flag}) = failed.",
    )
    parser.add_argument("evaluation", metavar="EVALUATION.json", help="a saved artifact")
    _add(parser, _THRESHOLDS)
    _add(parser, _SLICE_THRESHOLDS)
    _add(parser, _EXIT_CODE)
    return parser


def read_artifact(
    path: str, *, float_roundtrip: bool = False, summaries: bool = False
) -> Evaluation:
    """The artifact at ``path`` (``parse_evaluation``); any failure is a ``UsageError``."""
    try:
        text = read_input(path)
        return parse_evaluation(
            text, origin=path, float_roundtrip=float_roundtrip, summaries=summaries
        )
    except ArtifactError as error:
        raise UsageError(str(error)) from error


def _warn(warnings: Sequence[str], err: TextIO) -> None:
    for warning in warnings:
        print(f"{PREFIX}gate: warning: {warning}", file=err)


def _thresholds(evaluation: Evaluation, path: str, err: TextIO) -> Thresholds:
    """The thresholds file at ``path``, checked against the artifact."""
    thresholds = load_thresholds(
        path,
        metric_names=set(evaluation.definitions),
        case_ids={block.case_id for block in evaluation.cases},
    )
    _warn(thresholds.warnings, err)
    return thresholds


def _slice_gate(evaluation: Evaluation, artifact: str, path: str, err: TextIO) -> SliceGateReport:
    """The slice thresholds file at ``path`` against the slices the artifact recorded."""
    if evaluation.slices is None:
        raise UsageError(
            f"{artifact} carries no slices to gate (a run given {OPTIONS['slices'].flag} or "
            f"{OPTIONS['slices-file'].flag} records them)"
        )
    globs = {name: card.globs for name, card in evaluation.slices.items()}
    cards = slice_cards(globs, evaluation.cases)
    thresholds = load_slice_thresholds(path, slice_names=list(cards))
    _warn(thresholds.warnings, err)
    return evaluate_slice_gate(thresholds, cards)


def show_verdict(
    report: GateReport,
    thresholds: Thresholds,
    evaluation: Evaluation,
    *,
    environ: Mapping[str, str] | None,
    out: TextIO,
) -> None:
    """An offline verdict shown as a live run shows it: the threshold lines, and under GitHub
    Actions its annotations and step summary (no eval.jsonl lines at hand)."""
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


def run_gate(
    argv: Sequence[str],
    *,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """``taguru-evaluate gate EVALUATION.json [--thresholds FILE] [--slice-thresholds FILE]
    [--regression-exit-code N]`` (at least one of the two files).

    The same gates as a live run, over a saved artifact: aggregate names are checked against
    the artifact's ``definitions``, override case_ids against its cases, slice names against
    its slices. Prints the threshold lines (and, under GitHub Actions, annotations and the step
    summary), then the slice gate's; returns 0 when every gate passes, the regression exit code
    (default 3) when one fails, 2 on any usage or input error (message on stderr,
    ``taguru-evaluate: gate: <message>``).
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parser = _parser(out)
    try:
        args = parser.parse_args(list(argv))
        if args.thresholds is None and args.slice_thresholds is None:
            raise _ArgumentError(
                f"one of {_THRESHOLDS.cli_flag} or {_SLICE_THRESHOLDS.cli_flag} is required"
            )
    except (_ArgumentError, argparse.ArgumentError) as error:
        problem = (
            _argument_problem(error) if isinstance(error, argparse.ArgumentError) else str(error)
        )
        print(f"{PREFIX}gate: {problem} — try '{_PROG} --help'", file=err)
        return UsageError.exit_code
    except SystemExit as done:  # --help
        return done.code if isinstance(done.code, int) else 0
    thresholds: Thresholds | None = None
    sliced: SliceGateReport | None = None
    try:
        evaluation = read_artifact(args.evaluation, summaries=True)  # a gate reads no hit
        if args.thresholds is not None:
            thresholds = _thresholds(evaluation, args.thresholds, err)
        if args.slice_thresholds is not None:
            sliced = _slice_gate(evaluation, args.evaluation, args.slice_thresholds, err)
    except UsageError as error:
        for line in [error.message, *(f"hint: {hint}" for hint in error.hints)]:
            print(f"{PREFIX}gate: {line}", file=err)
        return error.exit_code
    report = None if thresholds is None else evaluate_gate(thresholds, evaluation)
    if report is not None and thresholds is not None:
        show_verdict(report, thresholds, evaluation, environ=environ, out=out)
    if sliced is not None:
        for line in slice_gate_lines(sliced):
            print(line, file=out)
    if all(gate is None or gate.passed for gate in (report, sliced)):
        return 0
    code: int | None = args.regression_exit_code
    return DEFAULT_REGRESSION_EXIT_CODE if code is None else code
