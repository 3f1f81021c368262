"""``taguru-evaluate merge``: the artifacts of a run's shards (``--taguru-shard I/N``) joined
into the artifact of the complete run (``run.merge``), optionally gated by a thresholds file and
a slice thresholds file exactly as a live run is (``gate.thresholds``, ``run.slices``)."""

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.artifact.writing import render
from pytest_taguru.cli.arguments import PREFIX, PROG, ArgumentError, ValueFlag, scan
from pytest_taguru.cli.compare import display_path
from pytest_taguru.cli.gate import read_artifact, show_verdict
from pytest_taguru.core.atomic_file import write_atomic
from pytest_taguru.core.textfile import os_error_text
from pytest_taguru.errors import RunError, UsageError
from pytest_taguru.flags import DEFAULT_REGRESSION_EXIT_CODE, OPTIONS
from pytest_taguru.gate.slice_file import load_slice_thresholds
from pytest_taguru.gate.thresholds import GateReport, Thresholds, evaluate_gate, load_thresholds
from pytest_taguru.report.summary import summary_lines
from pytest_taguru.run.flag_values import flag_value, needs
from pytest_taguru.run.merge import (
    ShardArtifact,
    merge_shards,
    recorded_slices,
    slice_thresholds_identity,
    thresholds_identity,
)
from pytest_taguru.run.slices import SliceDefinitions, Slicing, judge_slices
from pytest_taguru.score.metrics import definitions
from pytest_taguru.score.summary import run_summary

_EXIT_CODE = OPTIONS["regression-exit-code"]

MERGE_SYNOPSIS = f"{PROG} merge SHARD.json... --out FILE [--thresholds FILE]"

MERGE_USAGE = f"""\
usage: {MERGE_SYNOPSIS}
{" " * len(f"usage: {PROG} merge")} [--slice-thresholds FILE] [{_EXIT_CODE.cli_flag} N]

Joins the evaluation.json of every shard of one run (pytest --taguru-shard I/N) into the
evaluation.json of the complete run: the cases in eval.jsonl order, every metric and slice
scorecard computed again from them, the corpus bracketed across the shards. Refuses shards of
different runs (eval set, context, mode, budget, limits, slices, thresholds), a partial shard,
a shard given twice, and a missing shard, naming the file or the cases.

  SHARD.json         a shard's evaluation.json; every shard that holds a case
  --out FILE         where to write the merged evaluation.json
  --thresholds FILE  gate the merged run, as pytest --taguru-thresholds does
  --slice-thresholds FILE
                     gate the merged run's slices, as pytest --taguru-slice-thresholds does
  {_EXIT_CODE.cli_flag} N
                     exit status when a gate fails (default {DEFAULT_REGRESSION_EXIT_CODE})

EXIT CODES: 0 merged (report-only, or every bound held) · 1 the output could not be written ·
2 usage error, an unreadable or refused artifact, a bad thresholds file ·
{DEFAULT_REGRESSION_EXIT_CODE} a bound was broken.
"""


def _exit_status(text: str) -> int:
    """``--regression-exit-code``'s value, by the option table's parser."""
    value = flag_value(_EXIT_CODE, text, _EXIT_CODE.cli_flag)
    assert isinstance(value, int)
    return value


def _exit_status_problem(text: str) -> str | None:
    try:
        _exit_status(text)
    except UsageError as error:
        return error.message
    return None


_FLAGS = (
    ValueFlag("--out", "a file path"),
    ValueFlag("--thresholds", "a file path"),
    ValueFlag("--slice-thresholds", "a file path"),
    ValueFlag(_EXIT_CODE.cli_flag, needs(_EXIT_CODE), _exit_status_problem),
)


@dataclass(frozen=True)
class MergeArgs:
    shards: list[str]
    out: str
    thresholds: str | None = None
    regression_exit_code: int = DEFAULT_REGRESSION_EXIT_CODE
    slice_thresholds: str | None = None


def parse_merge_args(args: list[str]) -> MergeArgs:
    """The scan of ``compare`` (``arguments.scan``): the shard artifacts are the positionals;
    ``--out`` is required."""
    positional, given = scan(args, _FLAGS, usage=MERGE_USAGE, command="evaluate merge")
    if not positional:
        raise ArgumentError("evaluate merge takes one or more shard artifacts (got none)")
    out = given.get("--out")
    if out is None:
        raise ArgumentError("evaluate merge needs --out FILE")
    code = given.get(_EXIT_CODE.cli_flag)
    exit_code = DEFAULT_REGRESSION_EXIT_CODE if code is None else _exit_status(code)
    return MergeArgs(
        positional,
        out,
        given.get("--thresholds"),
        exit_code,
        given.get("--slice-thresholds"),
    )


def _warn(
    flag: str, warnings: tuple[str, ...], ran_with: str | None, given: tuple[str, str] | None,
    err: TextIO,
) -> None:
    """The thresholds file's own warnings, then one when the merged run is not gated by the
    file the shards ran with (``ran_with``, its SHA-256; ``given``: the path and SHA-256 of the
    file given to ``flag``)."""
    what = flag.removeprefix("--").replace("-", " ")
    notices = list(warnings)
    if ran_with is not None and given is None:
        notices.append(
            f"the shards ran with a {what} file (sha256 {ran_with[:12]}…); without {flag} the "
            "merged run is not gated by one"
        )
    elif ran_with is not None and given is not None and given[1] != ran_with:
        notices.append(
            f"the shards ran with another {what} file (sha256 {ran_with[:12]}…); the merged "
            f"run is gated by {given[0]}"
        )
    for notice in notices:
        print(f"{PREFIX}merge: warning: {notice}", file=err)


def _gate(
    args: MergeArgs, merged: Evaluation, ran_with: str | None, err: TextIO
) -> tuple[Evaluation, Thresholds | None, GateReport | None]:
    """The merged run gated by ``--thresholds`` as a live run is (its block written in)."""
    if args.thresholds is None:
        _warn("--thresholds", (), ran_with, None, err)
        return merged, None, None
    thresholds = load_thresholds(
        args.thresholds,
        metric_names=definitions().keys(),
        case_ids=[block.case_id for block in merged.cases],
    )
    given = (args.thresholds, thresholds.sha256)
    _warn("--thresholds", thresholds.warnings, ran_with, given, err)
    report = evaluate_gate(thresholds, merged)
    return merged.model_copy(update={"thresholds": report.to_block()}), thresholds, report


def _slice_gate(
    args: MergeArgs, merged: Evaluation, ran_with: str | None, err: TextIO
) -> tuple[Evaluation, list[str]]:
    """The merged run's slices gated by ``--slice-thresholds`` as a live run's are, and the
    slice gate's lines."""
    if args.slice_thresholds is None:
        _warn("--slice-thresholds", (), ran_with, None, err)
        return merged, []
    globs = recorded_slices(merged)
    if globs is None:
        raise UsageError(
            f"the shards carry no slices to gate (a run given {OPTIONS['slices'].flag} or "
            f"{OPTIONS['slices-file'].flag} records them)"
        )
    thresholds = load_slice_thresholds(args.slice_thresholds, slice_names=list(globs))
    given = (args.slice_thresholds, thresholds.sha256)
    _warn("--slice-thresholds", thresholds.warnings, ran_with, given, err)
    slicing = Slicing(SliceDefinitions(globs, "the shards' slices"), thresholds)
    return judge_slices(slicing, merged, aggregate_skipped=None)


def run_merge(
    args: MergeArgs,
    *,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Read every shard, merge, gate (``--thresholds``, ``--slice-thresholds``), write
    atomically, then print the run summary and the gate lines (and, under GitHub Actions, its
    annotations) as a live run does. Returns 0, or the regression exit code when a gate fails;
    raises ``UsageError`` (exit 2) and ``RunError`` (exit 1, the output not written)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    shards = [
        ShardArtifact(display_path(path), read_artifact(path, float_roundtrip=True))
        for path in args.shards
    ]
    merged = merge_shards(shards, out=args.out)
    first = shards[0].evaluation
    merged, thresholds, report = _gate(args, merged, thresholds_identity(first), err)
    merged, slice_lines = _slice_gate(args, merged, slice_thresholds_identity(first), err)
    try:
        write_atomic(args.out, render(merged))
    except OSError as error:
        raise RunError(f"writing {display_path(args.out)}: {os_error_text(error)}") from None
    print(f"merged {len(shards)} shard artifact(s): {', '.join(s.path for s in shards)}", file=out)
    for line in summary_lines(merged, run_summary(merged.cases)):
        print(line, file=out)
    if report is not None and thresholds is not None:
        show_verdict(report, thresholds, merged, environ=environ, out=out)
    for line in slice_lines:
        print(line, file=out)
    sliced = merged.slice_thresholds
    failed = (report is not None and not report.passed) or (
        sliced is not None and sliced.get("passed") is False
    )
    return args.regression_exit_code if failed else 0
