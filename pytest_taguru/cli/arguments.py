"""What every ``taguru-evaluate`` mode shares: its name in messages, and the two ways a scan ends.

Messages are taguru's texts with this program's name: ``taguru-evaluate: <message>`` where
taguru prints ``taguru: evaluate: <message>``, and argument errors end with
`` — try 'taguru-evaluate --help'`` instead of `` — try 'taguru evaluate --help'``.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_taguru.errors import UsageError

PROG = "taguru-evaluate"
PREFIX = f"{PROG}: "
HELP_HINT = f" — try '{PROG} --help'"
HELP_FLAGS = ("--help", "-h")


class ArgumentError(UsageError):
    """A bad command line: printed with the ``--help`` hint, exit 2."""


class HelpRequested(Exception):
    """``--help``/``-h`` reached in the argument scan: print ``text`` and exit 0."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclass(frozen=True)
class ValueFlag:
    """A subcommand flag that takes the next argument, whatever it is."""

    name: str
    needs: str
    """What it takes, for ``<flag> needs <what>`` when no argument follows."""
    problem: Callable[[str], str | None] | None = None
    """What is wrong with a value, checked as the scan meets it (None: nothing)."""


def scan(
    args: Sequence[str],
    flags: Sequence[ValueFlag],
    *,
    usage: str,
    command: str,
    switches: Sequence[str] = (),
) -> tuple[list[str], dict[str, str]]:
    """A subcommand's scan by taguru's compare rules (``thresholds-and-compare.md`` B.1): the
    positionals, and each value flag given (a switch given maps to ``""``).

    A value flag takes the next argument whatever it is, once (``<flag> given twice``); a
    switch takes none, once;
    ``--help``/``-h`` anywhere raises ``HelpRequested(usage)`` unless an earlier error was hit;
    any other ``--`` token is ``unknown flag '<token>' for <command>``; everything else
    (``-x`` and ``-`` included) is positional.
    """
    by_name = {flag.name: flag for flag in flags}
    positional: list[str] = []
    given: dict[str, str] = {}
    rest = iter(args)
    for token in rest:
        if token in HELP_FLAGS:
            raise HelpRequested(usage)
        flag = by_name.get(token)
        if token in switches:
            if token in given:
                raise ArgumentError(f"{token} given twice")
            given[token] = ""
        elif flag is not None:
            value = next(rest, None)
            if value is None:
                raise ArgumentError(f"{token} needs {flag.needs}")
            if token in given:
                raise ArgumentError(f"{token} given twice")
            problem = flag.problem(value) if flag.problem is not None else None
            if problem is not None:
                raise ArgumentError(problem)
            given[token] = value
        elif token.startswith("--"):
            raise ArgumentError(f"unknown flag '{token}' for {command}")
        else:
            positional.append(token)
    return positional, given
