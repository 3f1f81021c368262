"""Strict JSON reading the way taguru's serde_json reads it, and serde's error wording.

Shared by the two tolerant-or-strict readers of taguru's input files: ``compare_view`` (an
``evaluation.json``, thresholds-and-compare.md B.2) and ``thresholds_file`` (A.2). What Python's
``json`` accepts and serde refuses is refused here: ``NaN``/``Infinity``, numbers overflowing
f64, nesting deeper than serde's recursion limit, lone surrogate escapes in strings that are
read. Numbers are read as serde does (Appendix N.2); an object keeps every key/value pair so
that a fixed-shape reader can refuse a repeated field while a name-keyed map lets the last one
win. Error texts follow serde's wording without its ``at line L column C`` position, except
syntax errors, which carry Python's position.
"""

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from .jsonfmt import format_f64, parse_serde_float

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


def _reject_constant(name: str) -> Any:
    raise SerdeError(f"expected value ({name} is not JSON)")


# serde's wording for the commonest syntax errors; the rest keep Python's text.
_SYNTAX_WORDING = {
    "Extra data": "trailing characters",
    "Expecting value": "expected value",
    "Unexpected UTF-8 BOM (decode using utf-8-sig)": "expected value",
}


def load_json(text: str) -> Any:
    """Parse ``text`` as serde_json would; objects become :class:`JsonObject`.

    Raises :class:`SerdeError`: a syntax error (``trailing characters at line 1 column 25``),
    a constant (``expected value (NaN is not JSON)``), ``number out of range``, or
    ``recursion limit exceeded``. Strings are not checked here (see :func:`whole_text`).
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
        wording = _SYNTAX_WORDING.get(error.msg, error.msg)
        raise SerdeError(f"{wording} at line {error.lineno} column {error.colno}") from None
    except RecursionError:
        raise SerdeError("recursion limit exceeded") from None
    except ValueError as error:  # a number hook's refusal
        raise SerdeError(str(error)) from None
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


def fields_from_array(values: list[Any], names: Sequence[str]) -> dict[str, Any]:
    """serde's positional reading of a struct from an array: the items fill the fields in
    declaration order; missing trailing fields stay absent, extra items are refused."""
    if len(values) > len(names):
        raise SerdeError("trailing characters")
    return dict(zip(names, values, strict=False))


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
