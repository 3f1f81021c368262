"""Whole-file UTF-8 reading and line splitting, the way taguru (Rust) does them.

Shared by the eval.jsonl loader, the config-file loader and ``taguru-evaluate compare``, whose
error texts embed the reason a file could not be read (:func:`os_error_text`, also used for
other files' read and write errors) and whose line numbers must match taguru's.
"""

import os


class UnreadableFile(Exception):
    """A file that could not be read as UTF-8; ``reason`` reads like Rust's io::Error text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_utf8(path: str) -> str:
    """The whole file at ``path`` as text; invalid UTF-8 is an error, a BOM is kept.

    Raises UnreadableFile with ``No such file or directory (os error 2)``-style reasons, or
    ``stream did not contain valid UTF-8``.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise UnreadableFile(os_error_text(error)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableFile("stream did not contain valid UTF-8") from None


def read_bounded(path: str, limit: int) -> bytes:
    """The whole file at ``path``, at most ``limit`` bytes: a longer file is refused without
    reading past its first ``limit + 1`` bytes. Raises UnreadableFile."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise UnreadableFile(os_error_text(error)) from None
    if len(data) > limit:
        raise UnreadableFile(f"larger than {limit} bytes, the most this file may hold")
    return data


def os_error_text(error: OSError) -> str:
    """An OS error as Rust's ``io::Error`` displays it: ``<text> (os error <n>)``, e.g.
    ``No such file or directory (os error 2)``; an error without an errno as Python shows it."""
    if error.errno is None:
        return str(error)
    return f"{error.strerror or os.strerror(error.errno)} (os error {error.errno})"


def split_lines(text: str) -> list[str]:
    """Rust ``str::lines``: split on ``\\n`` only, dropping one ``\\r`` right before each ``\\n``.

    A final newline does not create an extra line; no other character (``\\r`` alone,
    ``\\x0b``, U+2028, …) separates lines, unlike Python's ``str.splitlines``.
    """
    lines = text.split("\n")
    last = lines.pop()  # the text after the final "\n" (all of it when there is none)
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if last:
        lines.append(last)
    return lines
