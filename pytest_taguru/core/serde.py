"""Strict JSON reading the way taguru's serde_json reads it, and serde's error wording.

Shared by the two tolerant-or-strict readers of taguru's input files: ``compare_view`` (an
``evaluation.json``, thresholds-and-compare.md B.2) and ``thresholds_file`` (A.2). What Python's
``json`` accepts and serde refuses is refused here: ``NaN``/``Infinity``, numbers overflowing
f64, nesting deeper than serde's recursion limit, lone surrogate escapes in strings that are
read. Numbers are read as serde does (Appendix N.2); an object keeps every key/value pair so
that a fixed-shape reader can refuse a repeated field while a name-keyed map lets the last one
win. Error texts follow serde's wording. Syntax errors and ``NaN``/``Infinity`` tokens also
carry serde's ``at line L column C`` (a byte column); errors met after parsing (a field's type,
a lone surrogate, ``number out of range``) are left without one, Python's parser having kept
no positions.
"""

import json
import re
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from pytest_taguru.core.jsontext import format_f64, parse_serde_float

U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
NESTING_LIMIT = 127
"""serde_json's recursion limit: the 128th nested array or object is refused."""
LONE_SURROGATE = "lone leading surrogate in hex escape"


class SerdeError(ValueError):
    """A document serde would refuse; the text is serde's wording."""


class JsonObject(dict[str, Any]):
    """A parsed JSON object: a ``dict`` where a repeated key keeps its last value, plus
    ``pairs``, every key/value pair in document order, for readers that refuse repeats."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs

    @property
    def repeated(self) -> frozenset[str]:
        """The keys given more than once (serde's ``duplicate field`` in a struct)."""
        if len(self) == len(self.pairs):
            return frozenset()
        return frozenset(key for key, n in Counter(key for key, _ in self.pairs).items() if n > 1)


def parse_int(text: str) -> int | float:
    """serde keeps an integer that fits i64/u64 exact; ``-0`` and longer ones are f64."""
    if text == "-0":
        return -0.0
    value = int(text)
    return value if I64_MIN <= value <= U64_MAX else parse_serde_float(text)


class _Constant(Exception):
    """Python's parser met ``NaN``, ``Infinity`` or ``-Infinity``: not JSON to serde."""


def _reject_constant(name: str) -> Any:
    raise _Constant(name)


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


def _position(text: str, index: int, *, at_end: bool) -> str:
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


def _constant_wording(text: str, name: str) -> str:
    """serde at the first ``name`` token: ``expected value`` at ``NaN``/``Infinity``;
    ``-Infinity`` is a sign without a digit, ``invalid number`` at its ``I``."""
    index = next(i for i, _ in _outside_strings(text) if text.startswith(name, i))
    if name.startswith("-"):
        return f"invalid number {_position(text, index + 1, at_end=False)}"
    return f"expected value {_position(text, index, at_end=False)}"


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _overflow_wording(text: str) -> str:
    """serde's ``number out of range``, placed at the last character of the first number
    token (outside strings) that overflows f64: serde reads the whole number first."""
    for index, ch in _outside_strings(text):
        starts = ch in "-0123456789" and text[index - 1 : index] not in tuple("0123456789.eE+-")
        token = _NUMBER.match(text, index) if starts else None
        if token is None:
            continue
        number = token.group()
        read = parse_int if number.lstrip("-").isdigit() else parse_serde_float
        try:
            read(number)
        except ValueError:
            return f"number out of range {_position(text, token.end() - 1, at_end=False)}"
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
            return f"EOF while parsing a value {_position(text, end, at_end=True)}"
        return f"expected ident {_position(text, index, at_end=False)}"
    if message == "Expecting value" and text[pos : pos + 1] == "-":
        if pos + 1 == end:
            return f"EOF while parsing a value {_position(text, end, at_end=True)}"
        return f"invalid number {_position(text, pos + 1, at_end=False)}"
    number = _NUMBER_TAIL.search(text, 0, pos)
    if message not in ("Extra data", "Expecting ',' delimiter") or number is None:
        return None
    read, here = number.group(), text[pos : pos + 1]
    if here.isdigit() and read.lstrip("-") == "0":
        return f"invalid number {_position(text, pos, at_end=False)}"
    if here == "." and not any(mark in read for mark in ".eE"):
        if pos + 1 == end:
            return f"EOF while parsing a value {_position(text, end, at_end=True)}"
        return f"invalid number {_position(text, pos + 1, at_end=False)}"
    if here in ("e", "E") and not any(mark in read for mark in "eE"):
        index = pos + 2 if text[pos + 1 : pos + 2] in ("+", "-") else pos + 1
        return f"invalid number {_position(text, index, at_end=index == end)}"
    return None


def _syntax_wording(error: json.JSONDecodeError) -> str:
    """What serde_json says, and where, for the syntax error Python's parser found.

    Python stops at the same character as serde for the errors a hand-edited file has
    (a missing or trailing comma or colon, an unquoted key, a truncated file, trailing
    data); its messages are mapped to serde's, with serde's byte column.
    """
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
        return f"EOF while parsing a string {_position(text, len(text), at_end=True)}"
    if not text[pos:].strip(_JSON_SPACE) and message.startswith("Expecting"):
        eof = {
            "Expecting value": "a list" if before == "[" else "a value",
            "Expecting property name enclosed in double quotes": (
                "an object" if before == "{" else "a value"
            ),
            "Expecting ',' delimiter": container,
        }.get(message, "an object")
        return f"EOF while parsing {eof} {_position(text, len(text), at_end=True)}"
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
    return f"{wording} {_position(text, pos, at_end=False)}"


def load_json(text: str) -> Any:
    """Parse ``text`` as serde_json would; objects become :class:`JsonObject`.

    Raises :class:`SerdeError`: a syntax error or a ``NaN``/``Infinity`` token worded and
    placed as serde does (``trailing characters at line 1 column 25``), ``number out of
    range``, or ``recursion limit exceeded``. Strings are not checked here (see
    :func:`whole_text`).
    """
    try:
        document = json.loads(
            text,
            parse_float=parse_serde_float,
            parse_int=parse_int,
            parse_constant=_reject_constant,
            object_pairs_hook=JsonObject,
        )
    except json.JSONDecodeError as error:
        raise SerdeError(_syntax_wording(error)) from None
    except _Constant as constant:
        raise SerdeError(_constant_wording(text, str(constant))) from None
    except RecursionError:
        raise SerdeError("recursion limit exceeded") from None
    except ValueError:  # the number hook's refusal: an overflowing number
        raise SerdeError(_overflow_wording(text)) from None
    _check_nesting(document)
    return document


def _nested(document: Any) -> Iterator[tuple[Any, int]]:
    """Every value of ``document`` with its depth, keys included (iterative, any depth)."""
    pending: list[tuple[Any, int]] = [(document, 0)]
    while pending:
        value, depth = pending.pop()
        yield value, depth
        if isinstance(value, JsonObject):
            pending += [(item, depth + 1) for pair in value.pairs for item in pair]
        elif isinstance(value, list):
            pending += [(item, depth + 1) for item in value]


def _check_nesting(document: Any) -> None:
    for value, depth in _nested(document):
        if isinstance(value, dict | list) and depth >= NESTING_LIMIT:
            raise SerdeError("recursion limit exceeded")


def whole_text(value: str) -> str:
    """``value`` if serde could have read it: a string read into a field must not hold an
    unpaired surrogate escape such as ``\\ud800`` (a skipped, unknown field may)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise SerdeError(LONE_SURROGATE) from None
    return value


def check_every_string(document: Any) -> None:
    """:func:`whole_text` on every string of a document whose every string is read."""
    for value, _ in _nested(document):
        if isinstance(value, str):
            whole_text(value)


def fields_from_array(
    values: list[Any], names: Sequence[str], *, struct: str = "", required: Collection[str] = ()
) -> dict[str, Any]:
    """serde's positional reading of a struct from an array: the items fill the fields in
    declaration order; missing trailing fields stay absent unless one of them is ``required``
    (no serde default: ``invalid length <n>, expected struct <struct> with <N> elements``);
    extra items are refused (the reader's ``trailing characters`` at the array's end)."""
    if len(values) > len(names):
        raise SerdeError("trailing characters")
    if any(name in required for name in names[len(values):]):
        plural = "" if len(names) == 1 else "s"
        raise SerdeError(
            f"invalid length {len(values)}, expected struct {struct} with {len(names)} "
            f"element{plural}"
        )
    return dict(zip(names, values, strict=False))


def as_value(document: Any) -> Any:
    """``document`` as a ``serde_json::Value`` holds it: every object a map ordered by key
    bytes (serde_json's default ``BTreeMap``) with a repeated key's last value. Decoding a
    struct from a Value (``from_value``) therefore meets its fields in key byte order and
    never sees a repeated field."""
    if isinstance(document, dict):
        return {key: as_value(document[key]) for key in sorted(document)}
    if isinstance(document, list):
        return [as_value(item) for item in document]
    return document


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
