"""The ``taguru-evaluate`` console script: ``taguru evaluate`` as a drop-in, plus ``gate``.

The first argument selects the mode (``evaluate-run.md`` §1.1): ``--help``/``-h`` prints the
usage; any other leading ``--flag`` is the run mode, which parses taguru's run flags (§1.2) and
runs pytest with this package's plugin underneath, so a run has one implementation; ``compare``
diffs two ``evaluation.json`` files (``thresholds-and-compare.md`` Part B); ``gate`` re-gates a
written artifact (``gate_report.run_gate``). Exit codes are taguru's: 0, 1, 2 and (run, gate) 3.

Messages are taguru's texts with this program's name: ``taguru-evaluate: <message>`` where
taguru prints ``taguru: evaluate: <message>``, and argument errors end with
`` — try 'taguru-evaluate --help'`` instead of `` — try 'taguru evaluate --help'``. Messages
printed by the plugin during a run keep taguru's own prefix. Files and stdout summaries are
unchanged.
"""

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pytest_taguru.artifact.evaluation import write_atomic
from pytest_taguru.artifact.view import LoadedRun, RunReadError, read_run
from pytest_taguru.compare.classify import compare
from pytest_taguru.compare.render import render_jsonl, render_markdown, render_summary
from pytest_taguru.core.textfile import UnreadableFile, os_error_text, read_utf8
from pytest_taguru.errors import RunError, TaguruError, UsageError

PREFIX = "taguru-evaluate: "
HELP_HINT = " — try 'taguru-evaluate --help'"

USAGE = """\
usage: taguru-evaluate --eval FILE --context NAME [--url URL] [--config FILE] [--out FILE]
                       [--thresholds FILE] [--assembly] [--max-items N] [--max-bytes N]
                       [--max-tokens N] [--rerank MODEL]
       taguru-evaluate compare BASE.json HEAD.json [--out FILE] [--format jsonl|markdown]
       taguru-evaluate gate ...            (see 'taguru-evaluate gate --help')

Run mode evaluates every case of an eval.jsonl against a taguru server and writes
evaluation.json, exactly as 'taguru evaluate' does; it runs pytest with the taguru plugin
(the same as 'pytest --taguru-eval FILE --taguru-context NAME ...').

  --eval FILE          the eval set (required)
  --context NAME       the context to evaluate (required)
  --url URL            the server (default: TAGURU_ADDR, else 127.0.0.1:8248)
  --config FILE        an env file read before the URL is resolved (default: TAGURU_CONFIG)
  --out FILE           where to write the artifact (default: evaluation.json)
  --thresholds FILE    gate the run; a violation exits 3
  --assembly           evaluate the assembled evidence package instead of the baseline
  --max-items N, --max-bytes N, --max-tokens N
                       budget ceilings (integers >= 1)
  --rerank MODEL       rerank model (requires --assembly)

EXIT CODES: 0 passed or report-only · 1 the run could not complete or a file could not be
written · 2 usage or input error · 3 a threshold was violated.
"""

COMPARE_USAGE = """\
usage: taguru-evaluate compare BASE.json HEAD.json [--out FILE] [--format jsonl|markdown]

Reads two evaluation.json runs and writes what moved between them: one record per case
whose outcome changed (improved, regressed, added, removed), classified on recall@k, MRR,
nDCG, concept/label/association coverage, citation recall, locator validity and source
diversity (latency is left out: too noisy to drive a verdict). A case with any regressed
metric is regressed. A mismatched context, corpus revision, thresholds identity or budget
is a warning, never a refusal.

  BASE.json          an evaluation.json from an earlier run
  HEAD.json          an evaluation.json from a later run
  --out FILE         where to write (default: changes.jsonl, or changes.md for markdown)
  --format FORMAT    jsonl (default): taguru's changes.jsonl, byte for byte;
                     markdown: a table to paste into a pull-request comment

EXIT CODES: 0 the comparison completed, whatever it found (the pass/fail gate is
--thresholds) · 1 the output could not be written · 2 usage error, an unreadable file, or
malformed or out-of-range JSON.
"""


class ArgumentError(UsageError):
    """A bad command line: printed with the ``--help`` hint, exit 2."""


class HelpRequested(Exception):
    """``--help``/``-h`` reached in the argument scan: print ``text`` and exit 0."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


# --- run mode (evaluate-run.md §1.2, assembly.md §1.1) -----------------------------------------

_VALUE_FLAGS = {
    "--eval": "needs a file path",
    "--context": "needs a name",
    "--url": "needs a value",
    "--config": "needs a file path",
    "--out": "needs a file path",
    "--thresholds": "needs a file path",
    "--rerank": "needs a model name",
}
_COUNT_FLAGS = ("--max-items", "--max-bytes", "--max-tokens")
_RUST_UNSIGNED = re.compile(r"\+?[0-9]+")
_U64_MAX = 2**64 - 1


@dataclass(frozen=True)
class RunArgs:
    """The run-mode flags as given; the plugin resolves defaults, env and config."""

    eval: str
    context: str
    url: str | None = None
    config: str | None = None
    out: str | None = None
    thresholds: str | None = None
    assembly: bool = False
    max_items: int | None = None
    max_bytes: int | None = None
    max_tokens: int | None = None
    rerank: str | None = None


def _positive(flag: str, value: str | None) -> int:
    """Rust's ``u64`` parse (ASCII digits, optional ``+``, ≤ 2⁶⁴−1), then ≥ 1."""
    number = int(value) if value is not None and _RUST_UNSIGNED.fullmatch(value) else 0
    if not 1 <= number <= _U64_MAX:
        raise ArgumentError(f"{flag} needs a positive integer")
    return number


def parse_run_args(args: list[str]) -> RunArgs:
    """taguru's run-mode scan: left to right, the first problem wins (§1.2).

    A value flag takes the next argument verbatim (even ``--x``); its missing value is
    reported before a repeat, while a ``--max-*`` repeat is reported before its value is
    looked at. ``--help``/``-h`` raises ``HelpRequested``. After the scan: ``--eval``, then
    ``--context``, then ``--rerank`` without ``--assembly``.
    """
    values: dict[str, str] = {}
    counts: dict[str, int] = {}
    assembly = False
    rest = iter(args)
    for token in rest:
        if token in ("--help", "-h"):
            raise HelpRequested(USAGE)
        if token in _VALUE_FLAGS:
            value = next(rest, None)
            if value is None:
                raise ArgumentError(f"{token} {_VALUE_FLAGS[token]}")
            if token in values:
                raise ArgumentError(f"{token} given twice")
            values[token] = value
        elif token in _COUNT_FLAGS:
            if token in counts:
                raise ArgumentError(f"{token} given twice")
            counts[token] = _positive(token, next(rest, None))
        elif token == "--assembly":
            if assembly:
                raise ArgumentError("--assembly given twice")
            assembly = True
        elif token.startswith("--"):
            raise ArgumentError(f"unknown flag '{token}' for evaluate")
        else:
            raise ArgumentError("evaluate takes no positional arguments")
    if "--eval" not in values:
        raise ArgumentError("--eval FILE is required")
    if "--context" not in values:
        raise ArgumentError("--context NAME is required")
    if "--rerank" in values and not assembly:
        raise ArgumentError("--rerank requires --assembly")
    return RunArgs(
        eval=values["--eval"],
        context=values["--context"],
        url=values.get("--url"),
        config=values.get("--config"),
        out=values.get("--out"),
        thresholds=values.get("--thresholds"),
        assembly=assembly,
        max_items=counts.get("--max-items"),
        max_bytes=counts.get("--max-bytes"),
        max_tokens=counts.get("--max-tokens"),
        rerank=values.get("--rerank"),
    )


def pytest_args(run: RunArgs, rootdir: str) -> list[str]:
    """The pytest command line for a run: the plugin only, no cache, no conftest, no ini.

    The eval file is the only collection argument, so no test module next to it is run;
    ``-c os.devnull`` and ``--rootdir`` keep a surrounding project's ini from applying.
    """
    args = ["-p", "taguru", "-p", "no:cacheprovider", "--noconftest"]
    args += ["-c", os.devnull, "--rootdir", rootdir]
    given = {
        "--taguru-eval": run.eval,
        "--taguru-context": run.context,
        "--taguru-url": run.url,
        "--taguru-config": run.config,
        "--taguru-out": run.out,
        "--taguru-thresholds": run.thresholds,
        "--taguru-max-items": run.max_items,
        "--taguru-max-bytes": run.max_bytes,
        "--taguru-max-tokens": run.max_tokens,
        "--taguru-rerank": run.rerank,
    }
    # FLAG=VALUE keeps a value that starts with "--" a value, as taguru's scan does.
    args += [f"{flag}={value}" for flag, value in given.items() if value is not None]
    if run.assembly:
        args.append("--taguru-assembly")
    return [*args, "--", run.eval]


IN_PROCESS_ARGS = ["-W", "ignore::pytest.PytestAssertRewriteWarning", "-p", "no:terminal"]
"""This process imported the plugin's package before pytest starts, so pytest would warn on
every run that it cannot rewrite the plugin's asserts (it has none worth rewriting). Without
pytest's terminal reporter the drop-in prints what ``taguru evaluate`` prints: the summary."""


def run_evaluate(run: RunArgs) -> int:
    """Run the evaluation through pytest; its exit status is already taguru's 0/1/2/3."""
    import pytest

    return int(pytest.main([*IN_PROCESS_ARGS, *pytest_args(run, os.getcwd())]))


# --- compare (thresholds-and-compare.md B.1) ---------------------------------------------------

Format = Literal["jsonl", "markdown"]
_DEFAULT_OUT: dict[Format, str] = {"jsonl": "changes.jsonl", "markdown": "changes.md"}


@dataclass(frozen=True)
class CompareArgs:
    base: str
    head: str
    out: str
    format: Format = "jsonl"


def parse_compare_args(args: list[str]) -> CompareArgs:
    """taguru's compare scan (B.1), plus ``--format`` scanned by the same rules as ``--out``.

    ``--out``/``--format`` take the next argument whatever it is; ``--help``/``-h`` anywhere
    in the scan raises ``HelpRequested`` unless an earlier error was hit; any other ``--``
    token is unknown; everything else (``-x`` and ``-`` included) is positional, and exactly
    two positionals are required after the scan.
    """
    positional: list[str] = []
    given: dict[str, str] = {}
    rest = iter(args)
    for token in rest:
        if token in ("--help", "-h"):
            raise HelpRequested(COMPARE_USAGE)
        if token in ("--out", "--format"):
            value = next(rest, None)
            if value is None:
                wanted = "a file path" if token == "--out" else "jsonl or markdown"
                raise ArgumentError(f"{token} needs {wanted}")
            if token in given:
                raise ArgumentError(f"{token} given twice")
            if token == "--format" and value not in _DEFAULT_OUT:
                raise ArgumentError(f"--format must be jsonl or markdown, got '{value}'")
            given[token] = value
        elif token.startswith("--"):
            raise ArgumentError(f"unknown flag '{token}' for evaluate compare")
        else:
            positional.append(token)
    if len(positional) != 2:
        raise ArgumentError(
            "evaluate compare takes exactly two positional arguments, BASE.json and HEAD.json "
            f"(got {len(positional)})"
        )
    fmt: Format = "markdown" if given.get("--format") == "markdown" else "jsonl"
    out = given.get("--out", _DEFAULT_OUT[fmt])
    return CompareArgs(positional[0], positional[1], out, fmt)


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
    """BASE, then HEAD, then the warnings, the atomic write, and the summary (B.1, B.10)."""
    base = load_run(args.base, "BASE")
    head = load_run(args.head, "HEAD")
    report = compare(base, head)
    for warning in report.warnings:
        print(PREFIX + warning, file=sys.stderr)
    if args.format == "markdown":
        text = render_markdown(report)
    else:
        text = render_jsonl(report, generated_at_now())
    try:
        write_atomic(args.out, text)
    except OSError as error:
        raise RunError(f"writing {display_path(args.out)}: {os_error_text(error)}") from None
    sys.stdout.write(render_summary(report, display_path(args.out)))
    return 0


# --- mode selection (evaluate-run.md §1.1) -----------------------------------------------------


def run_gate(args: list[str]) -> int:
    from pytest_taguru.report.gate import run_gate as gate

    return gate(args)


def _dispatch(args: list[str]) -> int:
    if not args:
        raise ArgumentError("expected --eval FILE --context NAME")
    first, rest = args[0], args[1:]
    if first in ("--help", "-h"):
        raise HelpRequested(USAGE)
    if first.startswith("--"):
        return run_evaluate(parse_run_args(args))
    if first == "compare":
        return run_compare(parse_compare_args(rest))
    if first == "gate":
        return run_gate(rest)
    raise ArgumentError(
        f"unknown subcommand '{first}' — the default mode is selected by a leading flag, "
        "e.g. 'taguru-evaluate --eval FILE --context NAME', or use the 'compare' or 'gate' "
        "subcommand"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: returns the process exit status."""
    try:
        return _dispatch(sys.argv[1:] if argv is None else list(argv))
    except HelpRequested as request:
        sys.stdout.write(request.text)
        return 0
    except TaguruError as error:
        hint = HELP_HINT if isinstance(error, ArgumentError) else ""
        print(f"{PREFIX}{error.message}{hint}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
