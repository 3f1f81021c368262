"""The ``taguru-evaluate`` console script: ``taguru evaluate`` as a drop-in, plus ``gate`` and
``report``.

The first argument selects the mode (``evaluate-run.md`` §1.1): ``--help``/``-h`` prints the
usage, ``--version`` the version; any other leading ``--flag`` is the run mode (``cli.run``:
taguru's run flags, pytest with this package's plugin underneath); ``compare`` diffs two
``evaluation.json`` files (``cli.compare``, ``thresholds-and-compare.md`` Part B); ``gate``
re-gates a written artifact (``cli.gate``); ``report`` writes a saved run's HTML report
(``cli.report``); ``merge`` joins the artifacts of a run's shards (``cli.merge``); ``init``,
``import-dir``, ``check`` and ``schema`` help write a suite (``cli.authoring``). Exit codes are
taguru's: 0, 1, 2 and (run, gate, merge, compare --fail-on-regression) 3.
"""

import sys
from collections.abc import Sequence

from pytest_taguru import __version__
from pytest_taguru.cli.arguments import (
    HELP_FLAGS,
    HELP_HINT,
    PREFIX,
    PROG,
    ArgumentError,
    HelpRequested,
)
from pytest_taguru.core.bulk import collector_paused
from pytest_taguru.errors import TaguruError

OFFLINE = frozenset({"compare", "gate", "report", "merge"})
"""The subcommands that read whole artifacts and end: they run with the cycle collector off."""


def _dispatch(args: list[str]) -> int:
    first = args[0] if args else ""
    if first not in OFFLINE:
        return _mode(first, args)
    # A read artifact is millions of long-lived, acyclic objects: every full pass of the
    # collector over them (triggered by whatever the command allocates next) cost seconds,
    # and a command that ends soon has no cycles worth finding.
    with collector_paused():
        return _mode(first, args)


def _mode(first: str, args: list[str]) -> int:
    # Each mode imports only its own module: a subcommand starts without the others'
    # dependencies (``gate`` reads an artifact in a fraction of the package's import time).
    rest = args[1:]
    if first == "--version":
        raise HelpRequested(f"{PROG} (pytest-taguru) {__version__}\n")
    if first == "compare":
        from pytest_taguru.cli import compare

        return compare.run_compare(compare.parse_compare_args(rest))
    if first == "gate":
        from pytest_taguru.cli import gate

        return gate.run_gate(rest)
    if first == "report":
        from pytest_taguru.cli import report

        return report.run_report(report.parse_report_args(rest))
    if first == "merge":
        from pytest_taguru.cli import merge

        return merge.run_merge(merge.parse_merge_args(rest))
    from pytest_taguru.cli import authoring, run

    if not args:
        raise ArgumentError(f"expected {run.REQUIRED_SYNOPSIS}")
    if first in HELP_FLAGS:
        raise HelpRequested(run.USAGE)
    if first.startswith("--"):
        return run.run_evaluate(run.parse_run_args(args))
    if first in authoring.SUBCOMMANDS:
        return authoring.SUBCOMMANDS[first](rest)
    others = ", ".join(
        f"'{name}'" for name in ("compare", "gate", "report", "merge", *authoring.SUBCOMMANDS)
    )
    raise ArgumentError(
        f"unknown subcommand '{first}' — the default mode is selected by a leading flag, "
        f"e.g. '{PROG} {run.REQUIRED_SYNOPSIS}', or use a subcommand: {others}"
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
        for advice in error.hints:
            print(f"{PREFIX}hint: {advice}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
