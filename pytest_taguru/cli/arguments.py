"""What every ``taguru-evaluate`` mode shares: its name in messages, and the two ways a scan ends.

Messages are taguru's texts with this program's name: ``taguru-evaluate: <message>`` where
taguru prints ``taguru: evaluate: <message>``, and argument errors end with
`` — try 'taguru-evaluate --help'`` instead of `` — try 'taguru evaluate --help'``.
"""

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
