"""serde_json's words: where and how it reports a document it refuses, and how it names a value.

Python's parser stops at the same character as serde for the syntax errors a hand-edited file
has (a missing or trailing comma or colon, an unquoted key, a truncated file, trailing data);
its messages are mapped here to serde's ``ErrorCode`` texts, placed with serde's
``at line L column C`` (the column counts UTF-8 bytes). The reading rule itself is
:mod:`pytest_taguru.core.serde`.
"""

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from pytest_taguru.core.jsontext import format_f64

_JSON_SPACE = " \t\n\r"
_ONE_CHARACTER_ERRORS = {
    # Python's message → serde_json's ErrorCode text, for an error at one character.
    "Expecting ':' delimiter": "expected `:`",
    "Extra data": "trailing characters",
    "Invalid control character at": (
        "control character (\\u0000-\\u001F) found while parsing a string"
    ),
    "Invalid \\uXXXX escape": "invalid escape",
    "Unexpected UTF-8 BOM (decode using utf-8-sig)": "expected value",
}


def position(text: str, index: int, *, at_end: bool) -> str:
    """serde_json's ``at line L column C``: the column counts UTF-8 bytes; a character's
    column is 1-based, and at the end of the input it is the last line's length."""
    line = text.count("\n", 0, index) + 1
    start = text.rfind("\n", 0, index) + 1
    column = len(text[start:index].encode("utf-8", "surrogatepass")) + (0 if at_end else 1)
    return f"at line {line} column {column}"


def _outside_strings(text: str) -> Iterator[tuple[int, str]]:
    """Every character of ``text`` that is not inside a string literal, with its index."""
    in_string = escaped = False
    for index, ch in enumerate(text):
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        else:
            yield index, ch


def _innermost(text: str, end: int) -> str:
    """The innermost ``[`` or ``{`` still open before ``end`` (``""`` at the top level)."""
    open_brackets: list[str] = []
    for index, ch in _outside_strings(text):
        if index >= end:
            break
        if ch in "[{":
            open_brackets.append(ch)
        elif ch in "]}" and open_brackets:
            open_brackets.pop()
    return open_brackets[-1] if open_brackets else ""


def constant_wording(text: str, name: str) -> str:
    """serde at the first ``name`` token: ``expected value`` at ``NaN``/``Infinity``;
    ``-Infinity`` is a sign without a digit, ``invalid number`` at its ``I``."""
    index = next(i for i, _ in _outside_strings(text) if text.startswith(name, i))
    if name.startswith("-"):
        return f"invalid number {position(text, index + 1, at_end=False)}"
    return f"expected value {position(text, index, at_end=False)}"


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def overflow_wording(text: str, read_number: Callable[[str], object]) -> str:
    """serde's ``number out of range``, placed at the last character of the first number
    token (outside strings) that ``read_number`` refuses: serde reads the whole number first."""
    for index, ch in _outside_strings(text):
        starts = ch in "-0123456789" and text[index - 1 : index] not in tuple("0123456789.eE+-")
        token = _NUMBER.match(text, index) if starts else None
        if token is None:
            continue
        try:
            read_number(token.group())
        except ValueError:
            return f"number out of range {position(text, token.end() - 1, at_end=False)}"
    return "number out of range"


_NUMBER_TAIL = re.compile(r"-?[0-9][0-9.eE+-]*\Z")
_LITERALS = {"t": "true", "f": "false", "n": "null"}


def _scalar_error(text: str, pos: int, message: str) -> str | None:
    """serde's error inside a number or a ``true``/``false``/``null`` that Python's parser
    stopped short of, or ``None``.

    serde keeps reading such a token where Python ends it: ``1.``, ``1e+``, ``01`` are
    ``invalid number``; ``-`` or ``tr`` at the end are ``EOF while parsing a value``;
    ``tx`` is ``expected ident``.
    """
    end = len(text)
    if message == "Expecting value" and text[pos : pos + 1] in _LITERALS:
        word = _LITERALS[text[pos]]
        index = pos + 1
        while index < end and index - pos < len(word) and text[index] == word[index - pos]:
            index += 1
        if index - pos == len(word):
            return None
        if index == end:
            return f"EOF while parsing a value {position(text, end, at_end=True)}"
        return f"expected ident {position(text, index, at_end=False)}"
    if message == "Expecting value" and text[pos : pos + 1] == "-":
        if pos + 1 == end:
            return f"EOF while parsing a value {position(text, end, at_end=True)}"
        return f"invalid number {position(text, pos + 1, at_end=False)}"
    number = _NUMBER_TAIL.search(text, 0, pos)
    if message not in ("Extra data", "Expecting ',' delimiter") or number is None:
        return None
    read, here = number.group(), text[pos : pos + 1]
    if here.isdigit() and read.lstrip("-") == "0":
        return f"invalid number {position(text, pos, at_end=False)}"
    if here == "." and not any(mark in read for mark in ".eE"):
        if pos + 1 == end:
            return f"EOF while parsing a value {position(text, end, at_end=True)}"
        return f"invalid number {position(text, pos + 1, at_end=False)}"
    if here in ("e", "E") and not any(mark in read for mark in "eE"):
        index = pos + 2 if text[pos + 1 : pos + 2] in ("+", "-") else pos + 1
        return f"invalid number {position(text, index, at_end=index == end)}"
    return None


def syntax_wording(error: json.JSONDecodeError) -> str:
    """What serde_json says, and where, for the syntax error Python's parser found."""
    text, pos, message = error.doc, error.pos, error.msg
    before = text[:pos].rstrip(_JSON_SPACE)[-1:]
    container = "a list" if _innermost(text, pos) == "[" else "an object"
    token = _scalar_error(text, pos, message)
    if token is not None:
        return token
    if message.startswith("Unterminated string") or (
        # Python refuses 4 hex digits ending the input; serde reads them, then runs out.
        message == "Invalid \\uXXXX escape" and len(text) - pos <= 5
    ):
        return f"EOF while parsing a string {position(text, len(text), at_end=True)}"
    if not text[pos:].strip(_JSON_SPACE) and message.startswith("Expecting"):
        eof = {
            "Expecting value": "a list" if before == "[" else "a value",
            "Expecting property name enclosed in double quotes": (
                "an object" if before == "{" else "a value"
            ),
            "Expecting ',' delimiter": container,
        }.get(message, "an object")
        return f"EOF while parsing {eof} {position(text, len(text), at_end=True)}"
    here = text[pos : pos + 1]
    if message == "Expecting value":
        wording = "trailing comma" if here == "]" and before == "," else "expected value"
    elif message == "Expecting property name enclosed in double quotes":
        wording = "trailing comma" if here == "}" else "key must be a string"
    elif message == "Expecting ',' delimiter":
        wording = "expected `,` or `]`" if container == "a list" else "expected `,` or `}`"
    elif message == "Invalid \\escape":
        wording, pos = "invalid escape", pos + 1  # serde points at the escaped character
    else:
        wording = _ONE_CHARACTER_ERRORS.get(message, message)
    return f"{wording} {position(text, pos, at_end=False)}"


# --- a value named in a data error --------------------------------------------------------------


def duplicate_field(name: str) -> str:
    return f"duplicate field `{name}`"


def _rust_debug(text: str) -> str:
    """Rust's ``{:?}`` of a string: quoted; quote, backslash and control characters escaped."""
    short = {"\0": "\\0", "\t": "\\t", "\r": "\\r", "\n": "\\n", '"': '\\"', "\\": "\\\\"}
    escaped = (
        short.get(ch) or (f"\\u{{{ord(ch):x}}}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch)
        for ch in text
    )
    return '"' + "".join(escaped) + '"'


def describe(value: Any) -> str:
    """serde_json's name for an unexpected JSON value (``null``, ``integer `1```, …).

    A float is shown in serde_json's own float text (Appendix N.1), a string as Rust's
    ``{:?}`` shows it.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{format_f64(value)}`"
    if isinstance(value, str):
        return f"string {_rust_debug(value)}"
    return "sequence" if isinstance(value, list) else "map"


def invalid_type(value: Any, expected: str) -> str:
    return f"invalid type: {describe(value)}, expected {expected}"


def invalid_value(value: Any, expected: str) -> str:
    return f"invalid value: {describe(value)}, expected {expected}"
