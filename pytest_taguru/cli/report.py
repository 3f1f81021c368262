"""``taguru-evaluate report``: the HTML report of a saved ``evaluation.json``, optionally with
its eval set and against a baseline run — the same page ``--taguru-html`` writes at the end of
a live run (``report.html``)."""

import os
import sys
from dataclasses import dataclass

from pytest_taguru.artifact.evaluation import ArtifactError, parse_evaluation
from pytest_taguru.artifact.view import RunReadError, read_run
from pytest_taguru.cli.arguments import PREFIX, PROG, ArgumentError, ValueFlag, scan
from pytest_taguru.cli.compare import (
    STATISTICS_FLAGS,
    display_path,
    load_run,
    statistics_options,
)
from pytest_taguru.compare.classify import compare
from pytest_taguru.compare.significance import DEFAULT_ALPHA, NO_TOLERANCE, Tolerances
from pytest_taguru.compare.verdicts import paired_statistics
from pytest_taguru.core.atomic_file import write_atomic
from pytest_taguru.core.textfile import UnreadableFile, os_error_text, read_utf8
from pytest_taguru.errors import RunError, UsageError
from pytest_taguru.report.html.island import ReportInputs
from pytest_taguru.report.html.page import eval_href, render_page
from pytest_taguru.run.dataset import load_eval_set

DEFAULT_NAME = "report.html"

REPORT_SYNOPSIS = f"{PROG} report ARTIFACT [--baseline BASE.json] [--eval FILE] [--out FILE]"
_STATISTICS = " " * len(f"usage: {PROG} report") + " [--alpha A] [--tolerance SPEC]"

REPORT_USAGE = f"""\
usage: {REPORT_SYNOPSIS}
{_STATISTICS}

Writes one self-contained HTML file showing a saved run: its target, corpus and gate verdict,
the 31 metrics with their definitions and distributions, and every case (sortable,
filterable, each case's hits, structural positions and citation checks on demand). It needs
no network to open, and holds no more than the artifact does.

  ARTIFACT           an evaluation.json, written by pytest-taguru or by taguru
  --baseline FILE    an earlier run's evaluation.json: the page shows what moved since,
                     and the paired statistics and verdicts per metric (as compare --stats)
  --alpha A, --tolerance SPEC
                     the verdicts' significance level and tolerated drop (as compare's)
  --eval FILE        the run's eval.jsonl: adds each case's expectations, its eval.jsonl
                     line, the drill-down of a failing case and the reproduction requests
  --out FILE         where to write (default: {DEFAULT_NAME} beside the artifact)

EXIT CODES: 0 written · 1 the report could not be written · 2 usage error, an unreadable
file, or malformed JSON.
"""

_FLAGS = (
    ValueFlag("--baseline", "a file path"),
    ValueFlag("--eval", "a file path"),
    ValueFlag("--out", "a file path"),
    *STATISTICS_FLAGS,
)


@dataclass(frozen=True)
class ReportArgs:
    artifact: str
    out: str
    baseline: str | None = None
    eval_path: str | None = None
    alpha: float = DEFAULT_ALPHA
    tolerances: Tolerances = NO_TOLERANCE


def parse_report_args(args: list[str]) -> ReportArgs:
    """The scan of ``compare`` (``arguments.scan``) with one positional, the artifact."""
    positional, given = scan(args, _FLAGS, usage=REPORT_USAGE, command="evaluate report")
    if len(positional) != 1:
        raise ArgumentError(
            "evaluate report takes exactly one positional argument, the evaluation.json "
            f"(got {len(positional)})"
        )
    artifact = positional[0]
    out = given.get("--out", os.path.join(os.path.dirname(artifact), DEFAULT_NAME))
    alpha, tolerances = statistics_options(given)
    return ReportArgs(
        artifact, out, given.get("--baseline"), given.get("--eval"), alpha, tolerances
    )


def run_report(args: ReportArgs) -> int:
    """Read the artifact (then the eval set, then the baseline), write the page atomically and
    say where; compare's warnings go to stderr, as ``compare`` prints them."""
    shown = display_path(args.artifact)
    try:
        text = read_utf8(args.artifact)
    except UnreadableFile as error:
        raise UsageError(f"reading {shown}: {error.reason}") from None
    try:
        evaluation = parse_evaluation(text, origin=shown)
    except ArtifactError as error:
        raise UsageError(str(error)) from None
    eval_set = load_eval_set(args.eval_path) if args.eval_path is not None else None
    changes = statistics = None
    if args.baseline is not None:
        base = load_run(args.baseline, "BASE")
        try:
            head = read_run(text, shown)
        except RunReadError as error:
            raise UsageError(f"HEAD {error}") from None
        changes = compare(base, head)
        for warning in changes.warnings:
            print(PREFIX + warning, file=sys.stderr)
        statistics = paired_statistics(
            base, head, alpha=args.alpha, tolerances=args.tolerances
        )
    inputs = ReportInputs(
        evaluation,
        args.artifact,
        eval_set,
        changes,
        eval_href=None if eval_set is None else eval_href(eval_set.path, args.out),
        statistics=statistics,
    )
    try:
        write_atomic(args.out, render_page(inputs))
    except OSError as error:
        raise RunError(f"writing {display_path(args.out)}: {os_error_text(error)}") from None
    print(f"wrote {display_path(args.out)}")
    return 0
