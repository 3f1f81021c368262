"""``taguru-evaluate compare``: what moved between two ``evaluation.json`` runs
(``thresholds-and-compare.md`` Part B), as taguru's ``changes.jsonl`` or a Markdown table.

Beyond taguru's scan: ``--format markdown``, ``--out -`` (the document on stdout, the summary
on stderr; Markdown goes to stdout unless ``--out`` names a file) and ``--fail-on-regression``
(exit 3 when a case regressed or a judged aggregate got worse; taguru's compare always exits 0).
``--stats`` (or ``--alpha``/``--tolerance``) adds the paired statistics (``compare.verdicts``):
a table after the summary, Markdown columns, a ``kind: "statistics"`` line at the end of
``changes.jsonl``; ``--fail-on-regression`` then fails on a regressed verdict instead, and
refuses (exit 2) runs that cannot be gated against each other (``compare.comparability``).
Without them every output is taguru's, byte for byte.
"""

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pytest_taguru.artifact.view import LoadedRun, RunReadError, read_run
from pytest_taguru.cli.arguments import PREFIX, PROG, ArgumentError, ValueFlag, scan
from pytest_taguru.compare.classify import compare, regressions
from pytest_taguru.compare.comparability import comparability_problems, question_of
from pytest_taguru.compare.render import render_jsonl, render_markdown, render_summary
from pytest_taguru.compare.significance import (
    DEFAULT_ALPHA,
    NO_TOLERANCE,
    SpecError,
    Tolerances,
    parse_alpha,
    parse_tolerances,
)
from pytest_taguru.compare.stats_render import statistics_record, terminal_lines, verdict_line
from pytest_taguru.compare.verdicts import paired_statistics
from pytest_taguru.core.atomic_file import write_atomic
from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.core.textfile import UnreadableFile, os_error_text, read_utf8
from pytest_taguru.errors import RunError, UsageError
from pytest_taguru.flags import DEFAULT_REGRESSION_EXIT_CODE

Format = Literal["jsonl", "markdown"]
STDOUT = "-"
"""``--out -``: the document goes to stdout (and the summary to stderr)."""
_DEFAULT_OUT: dict[Format, str] = {"jsonl": "changes.jsonl", "markdown": STDOUT}
_DEFAULTS = f"default: {_DEFAULT_OUT['jsonl']}; stdout for markdown; - is stdout"

_FAIL = DEFAULT_REGRESSION_EXIT_CODE
COMPARE_SYNOPSIS = f"{PROG} compare BASE.json HEAD.json [--out FILE] [--format jsonl|markdown]"
_SWITCHES = (
    " " * len(f"usage: {PROG} compare")
    + " [--fail-on-regression] [--stats] [--alpha A] [--tolerance SPEC]"
)

COMPARE_USAGE = f"""\
usage: {COMPARE_SYNOPSIS}
{_SWITCHES}

Reads two evaluation.json runs and writes what moved between them: one record per case
whose outcome changed (improved, regressed, added, removed), classified on recall@k, MRR,
nDCG, concept/label/association coverage, citation recall, locator validity and source
diversity (latency is left out: too noisy to drive a verdict). A case with any regressed
metric is regressed. A mismatched context, corpus revision, thresholds identity or budget
is a warning, never a refusal. A regressed case whose recall@k/MRR/nDCG drop coincides
with new unjudged hits that labelling could undo (pytest-taguru's label_coverage) is also
marked a label gap.

  BASE.json          an evaluation.json from an earlier run
  HEAD.json          an evaluation.json from a later run
  --out FILE         where to write ({_DEFAULTS})
  --format FORMAT    jsonl (default): taguru's changes.jsonl, byte for byte;
                     markdown: a table for a pull-request comment, aggregates marked
                     ↑ better / ↓ worse
  --fail-on-regression
                     exit {_FAIL} when a case regressed or an aggregate got worse
                     (latency excepted: too noisy; label gaps excepted: label first);
                     with --stats, when a paired verdict is regressed
  --stats            paired statistics per metric over the cases both runs scored
                     alike: mean delta, bootstrap 95% interval, sign-flip p (Holm-
                     corrected across metrics), verdict regressed / inconclusive /
                     unchanged / improved; adds a "statistics" line to changes.jsonl
  --alpha A          significance level of the verdicts (default {DEFAULT_ALPHA:g}; implies --stats)
  --tolerance SPEC   tolerated drop: 0.01, or per metric recall.mrr=0.02, or both,
                     comma-separated (default 0; implies --stats)

EXIT CODES: 0 the comparison completed, whatever it found (the pass/fail gate is
--thresholds), unless --fail-on-regression · 1 the output could not be written · 2 usage
error, an unreadable file, or malformed or out-of-range JSON; with --stats and
--fail-on-regression, runs that cannot be gated against each other · {_FAIL} a regression with
--fail-on-regression.
"""


# --- the scan (B.1) ----------------------------------------------------------------------------

FAIL_ON_REGRESSION = "--fail-on-regression"
STATS = "--stats"


def _spec_problem(flag: str, parse: Callable[[str], object]) -> Callable[[str], str | None]:
    def problem(value: str) -> str | None:
        try:
            parse(value)
        except SpecError as error:
            return f"{flag}: {error}"
        return None

    return problem


STATISTICS_FLAGS = (
    ValueFlag("--alpha", "a number between 0 and 1", _spec_problem("--alpha", parse_alpha)),
    ValueFlag(
        "--tolerance",
        "a tolerance (0.01, recall.mrr=0.02)",
        _spec_problem("--tolerance", parse_tolerances),
    ),
)
"""``--alpha`` and ``--tolerance``: the paired statistics' knobs (``compare``, ``report``)."""


def statistics_options(given: dict[str, str]) -> tuple[float, Tolerances]:
    """α and the tolerances from a scan's ``--alpha``/``--tolerance`` (defaults when absent)."""
    alpha, tolerance = given.get("--alpha"), given.get("--tolerance")
    return (
        DEFAULT_ALPHA if alpha is None else parse_alpha(alpha),
        NO_TOLERANCE if tolerance is None else parse_tolerances(tolerance),
    )


_FLAGS = (
    ValueFlag("--out", "a file path"),
    ValueFlag(
        "--format",
        "jsonl or markdown",
        lambda value: (
            None if value in _DEFAULT_OUT else f"--format must be jsonl or markdown, got '{value}'"
        ),
    ),
    *STATISTICS_FLAGS,
)


@dataclass(frozen=True)
class CompareArgs:
    base: str
    head: str
    out: str
    format: Format = "jsonl"
    fail_on_regression: bool = False
    stats: bool = False
    alpha: float = DEFAULT_ALPHA
    tolerances: Tolerances = NO_TOLERANCE


def parse_compare_args(args: list[str]) -> CompareArgs:
    """taguru's compare scan (B.1), plus ``--format`` scanned by the same rules as ``--out`` and
    the switch ``--fail-on-regression``.

    ``--out``/``--format`` take the next argument whatever it is; ``--help``/``-h`` anywhere
    in the scan raises ``HelpRequested`` unless an earlier error was hit; any other ``--``
    token is unknown; everything else (``-x`` and ``-`` included) is positional, and exactly
    two positionals are required after the scan.
    """
    positional, given = scan(
        args,
        _FLAGS,
        usage=COMPARE_USAGE,
        command="evaluate compare",
        switches=(FAIL_ON_REGRESSION, STATS),
    )
    if len(positional) != 2:
        raise ArgumentError(
            "evaluate compare takes exactly two positional arguments, BASE.json and HEAD.json "
            f"(got {len(positional)})"
        )
    fmt: Format = "markdown" if given.get("--format") == "markdown" else "jsonl"
    out = given.get("--out", _DEFAULT_OUT[fmt])
    alpha, tolerances = statistics_options(given)
    return CompareArgs(
        positional[0],
        positional[1],
        out,
        fmt,
        FAIL_ON_REGRESSION in given,
        stats=STATS in given or any(flag.name in given for flag in STATISTICS_FLAGS),
        alpha=alpha,
        tolerances=tolerances,
    )


def display_path(path: str) -> str:
    """A path as typed, made printable: undecodable bytes become U+FFFD, as Rust displays it."""
    return os.fsencode(path).decode("utf-8", errors="replace")


def load_run(path: str, side: str) -> LoadedRun:
    """Read one input completely (B.2); any failure is a ``UsageError`` prefixed ``side``."""
    shown = display_path(path)
    try:
        text = read_utf8(path)
    except UnreadableFile as error:
        raise UsageError(f"{side} reading {shown}: {error.reason}") from None
    try:
        return read_run(text, shown)
    except RunReadError as error:
        raise UsageError(f"{side} {error}") from None


def generated_at_now() -> str:
    """The comparison's own time: UTC, whole seconds, ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_compare(args: CompareArgs) -> int:
    """BASE, then HEAD, then the warnings, the atomic write (or stdout), and the summary
    (B.1, B.10), the statistics table with ``--stats``; then, with ``--fail-on-regression``,
    the regression verdict."""
    base = load_run(args.base, "BASE")
    head = load_run(args.head, "HEAD")
    report = compare(base, head)
    for warning in report.warnings:
        print(PREFIX + warning, file=sys.stderr)
    statistics = None
    if args.stats:
        if args.fail_on_regression:
            problems = comparability_problems(question_of(base), question_of(head))
            if problems:
                raise UsageError(
                    "BASE and HEAD cannot be gated against each other: " + "; ".join(problems)
                )
        statistics = paired_statistics(base, head, alpha=args.alpha, tolerances=args.tolerances)
    if args.format == "markdown":
        text = render_markdown(report, statistics)
    else:
        text = render_jsonl(report, generated_at_now())
        if statistics is not None:
            text += dumps_compact(statistics_record(statistics)) + "\n"
    summary = render_summary(report, "stdout" if args.out == STDOUT else display_path(args.out))
    if statistics is not None:
        summary += "".join(line + "\n" for line in terminal_lines(statistics))
    if args.out == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        sys.stderr.write(summary)
    else:
        try:
            write_atomic(args.out, text)
        except OSError as error:
            raise RunError(f"writing {display_path(args.out)}: {os_error_text(error)}") from None
        sys.stdout.write(summary)
    if not args.fail_on_regression:
        return 0
    if statistics is not None:
        what = [verdict_line(item) for item in statistics.with_verdict("regressed")]
    else:
        found = regressions(report)
        what = [f"{len(found.cases)} regressed case(s)"] if found else []
        if found.aggregates:
            what.append(f"worse aggregate(s): {', '.join(found.aggregates)}")
    if not what:
        return 0
    print(
        f"{PREFIX}compare: {'; '.join(what)} — exit {DEFAULT_REGRESSION_EXIT_CODE} "
        "(--fail-on-regression)",
        file=sys.stderr,
    )
    return DEFAULT_REGRESSION_EXIT_CODE
