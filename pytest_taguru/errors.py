"""The errors every layer raises when a run must end, each carrying its process exit status.

The message is what the user reads (without the ``taguru: evaluate: `` prefix the caller
adds, :data:`PREFIX`); it never contains a bearer token or URL userinfo.
"""

from typing import ClassVar

from pytest_taguru.core.textfile import UnreadableFile, read_utf8

PREFIX = "taguru: evaluate: "
"""What begins every line the run prints on stderr, as taguru's ``evaluate`` verb does."""


class TaguruError(Exception):
    """A failure that ends the run; ``exit_code`` is the process exit status it maps to."""

    exit_code: ClassVar[int] = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.preceding: list[str] = []
        """Complete stderr lines due before this error's own line: start-up warnings and
        config-file notes produced before the failing step, so that an error loses nothing."""
        self.hints: list[str] = []
        """Advice printed after this error's own line (``hint: …``): what to do about it, e.g.
        ``did you mean …``. The message itself stays taguru's exact text; these are ours."""


class UsageError(TaguruError):
    """A usage or input error (bad flag, eval.jsonl, thresholds or config file, URL): exit 2."""

    exit_code: ClassVar[int] = 2


class ConfigFileError(UsageError):
    """An unreadable or malformed config file: exit 2.

    taguru prints these with its generic prefix and suffix
    (``taguru: <message> — try 'taguru --help'``) instead of the ``evaluate`` ones.
    """


class RunError(TaguruError):
    """The run could not complete (health, context entry, sources walk, artifact write): exit 1."""

    exit_code: ClassVar[int] = 1


class UnreachableError(RunError):
    """``GET /health`` failed: the server address may be mistyped (see ``hints``)."""


def error_line(error: TaguruError) -> str:
    """The stderr line of an error that ends the run: ``taguru: evaluate: <message>``, or
    taguru's generic ``taguru: <message>`` for a config-file error (evaluate-run.md §1.3)."""
    if isinstance(error, ConfigFileError):
        return f"taguru: {error.message}"
    return f"{PREFIX}{error.message}"


def error_lines(error: TaguruError) -> list[str]:
    """The error's own line, then its hints (``taguru: evaluate: hint: …``)."""
    return [error_line(error), *(f"{PREFIX}hint: {hint}" for hint in error.hints)]


def read_input_text(path: str) -> str:
    """An input file's text (``core.textfile.read_utf8``); one that cannot be read is a
    :class:`UsageError`: ``cannot read <path>: <reason>``."""
    try:
        return read_utf8(path)
    except UnreadableFile as error:
        raise UsageError(f"cannot read {path}: {error.reason}") from None
