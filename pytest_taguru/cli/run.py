"""``taguru-evaluate`` run mode: ``taguru evaluate`` as a drop-in, running pytest underneath.

The scan follows taguru's rules (``evaluate-run.md`` §1.2, ``assembly.md`` §1.1) over the flags
the option table marks ``drop_in``, spelled as taguru spells them (``--eval``, ``--max-items``
…); they become the plugin's ``--taguru-*`` flags and pytest runs the evaluation, so a run has
one implementation. The usage text is derived from the same table. Messages printed by the
plugin during a run keep taguru's own prefix; files and stdout summaries are taguru's.
"""

import os
import textwrap
from typing import Any

from pytest_taguru.cli.arguments import HELP_FLAGS, PROG, ArgumentError, HelpRequested
from pytest_taguru.cli.authoring import AUTHORING_SYNOPSES
from pytest_taguru.cli.compare import COMPARE_SYNOPSIS
from pytest_taguru.cli.merge import MERGE_SYNOPSIS
from pytest_taguru.cli.report import REPORT_SYNOPSIS
from pytest_taguru.errors import UsageError
from pytest_taguru.flags import CLI_FLAG_PREFIX, OPTION_SPECS, PLUGIN_FLAG_PREFIX
from pytest_taguru.run.flag_values import RawOptions, check_flags, flag_value

DROP_IN_FLAGS = {spec.cli_flag: spec for spec in OPTION_SPECS if spec.drop_in}
"""taguru's run-mode flags, by their spelling."""

# --- usage (derived from the option table) -----------------------------------------------------

_WIDTH = 92
_HELP_COLUMN = 23
_USAGE_HEAD = f"usage: {PROG}"


def _synopsis(prefix: str, *, required_only: bool = False) -> list[str]:
    """The drop-in's flags spelled with ``prefix``: required ones bare, the others bracketed."""
    return [
        spec.synopsis(prefix) if spec.required else f"[{spec.synopsis(prefix)}]"
        for spec in DROP_IN_FLAGS.values()
        if spec.required or not required_only
    ]


REQUIRED_SYNOPSIS = " ".join(_synopsis(CLI_FLAG_PREFIX, required_only=True))
"""``--eval FILE --context NAME``: the least a run needs."""


def _run_synopsis() -> str:
    """``usage: taguru-evaluate`` and every flag, wrapped without splitting a flag."""
    lines = [_USAGE_HEAD]
    for item in _synopsis(CLI_FLAG_PREFIX):
        if len(lines[-1]) + 1 + len(item) > _WIDTH:
            lines.append(" " * len(_USAGE_HEAD))
        lines[-1] += " " + item
    return "\n".join(lines)


def _flag_lines() -> str:
    """One entry per flag: its synopsis, then its help from column ``_HELP_COLUMN``."""
    entries = []
    indent = " " * _HELP_COLUMN
    for spec in DROP_IN_FLAGS.values():
        label = f"  {spec.synopsis(CLI_FLAG_PREFIX)}"
        own_line = len(label) > _HELP_COLUMN - 2
        first = indent if own_line else label.ljust(_HELP_COLUMN)
        help_text = spec.help_text(CLI_FLAG_PREFIX)
        wrapped = textwrap.fill(help_text, _WIDTH, initial_indent=first, subsequent_indent=indent)
        entries.append(f"{label}\n{wrapped}" if own_line else wrapped)
    return "\n".join(entries)


_OTHER_MODES = " " * len("usage:")
_AUTHORING_MODES = "\n".join(f"{_OTHER_MODES} {synopsis}" for synopsis in AUTHORING_SYNOPSES)
USAGE = f"""\
{_run_synopsis()}
{_OTHER_MODES} {COMPARE_SYNOPSIS}
{_OTHER_MODES} {PROG} gate ...            (see '{PROG} gate --help')
{_OTHER_MODES} {REPORT_SYNOPSIS}
{_OTHER_MODES} {MERGE_SYNOPSIS}
{_AUTHORING_MODES}
{_OTHER_MODES} {PROG} --version

Run mode evaluates every case of an eval.jsonl against a taguru server and writes
evaluation.json, exactly as 'taguru evaluate' does; it runs pytest with the taguru plugin
(the same as 'pytest {" ".join(_synopsis(PLUGIN_FLAG_PREFIX, required_only=True))} ...').

{_flag_lines()}

EXIT CODES: 0 passed or report-only · 1 the run could not complete or a file could not be
written · 2 usage or input error · 3 a threshold was violated.
"""

# --- the scan (evaluate-run.md §1.2, assembly.md §1.1) -----------------------------------------


def parse_run_args(args: list[str]) -> RawOptions:
    """taguru's run-mode scan: left to right, the first problem wins (§1.2).

    A value flag takes the next argument verbatim (even ``--x``); a parsed value's repeat
    (``--max-*``) is reported before its value is looked at, any other value's absence before
    its repeat. ``--help``/``-h`` raises ``HelpRequested``. After the scan, ``check_flags``:
    ``--eval``, then ``--context``, then ``--rerank`` without ``--assembly``. The values are
    kept as typed, with the drop-in's flag spelling for messages.
    """
    try:
        given: dict[str, Any] = {}
        rest = iter(args)
        for token in rest:
            if token in HELP_FLAGS:
                raise HelpRequested(USAGE)
            spec = DROP_IN_FLAGS.get(token)
            if spec is None:
                if token.startswith("--"):
                    raise UsageError(f"unknown flag '{token}' for evaluate")
                raise UsageError("evaluate takes no positional arguments")
            value: str | bool | None = True
            if spec.metavar is not None and spec.parse is None:
                value = next(rest, None)
                flag_value(spec, value, token)
            if spec.attribute in given:
                raise UsageError(f"{token} given twice")
            if spec.parse is not None:
                value = next(rest, None)
                flag_value(spec, value, token)
            given[spec.attribute] = value
        raw = RawOptions(flag_prefix=CLI_FLAG_PREFIX, **given)
        check_flags(raw)
    except UsageError as error:
        # The table's parsers and checks raise UsageError; on this command line they are
        # argument errors, printed with the --help hint.
        raise ArgumentError(error.message) from None
    return raw


def pytest_args(raw: RawOptions, rootdir: str) -> list[str]:
    """The pytest command line for a run: the plugin only, no cache, no conftest, no ini.

    The eval file is the only collection argument, so no test module next to it is run;
    ``-c os.devnull`` and ``--rootdir`` keep a surrounding project's ini from applying.
    """
    assert raw.eval_path is not None  # parse_run_args guarantees it
    args = ["-p", "taguru", "-p", "no:cacheprovider", "--noconftest"]
    args += ["-c", os.devnull, "--rootdir", rootdir]
    values = [(spec, raw.value(spec)) for spec in OPTION_SPECS]
    # FLAG=VALUE keeps a value that starts with "--" a value, as taguru's scan does.
    args += [f"{spec.flag}={value}" for spec, value in values if isinstance(value, str)]
    args += [spec.flag for spec, value in values if value is True]
    # taguru sends each request once and never gives up early: so does the drop-in.
    args += [f"{spec.flag}={spec.drop_in_value}" for spec in OPTION_SPECS if spec.drop_in_value]
    return [*args, "--", raw.eval_path]


IN_PROCESS_ARGS = ["-W", "ignore::pytest.PytestAssertRewriteWarning", "-p", "no:terminal"]
"""This process imported the plugin's package before pytest starts, so pytest would warn on
every run that it cannot rewrite the plugin's asserts (it has none worth rewriting). Without
pytest's terminal reporter the drop-in prints what ``taguru evaluate`` prints: the summary."""


def run_evaluate(raw: RawOptions) -> int:
    """Run the evaluation through pytest; its exit status is already taguru's 0/1/2/3."""
    import pytest

    return int(pytest.main([*IN_PROCESS_ARGS, *pytest_args(raw, os.getcwd())]))
