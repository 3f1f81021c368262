"""The one JSON reader: taguru's inputs and answers read the way its serde_json reads them.

Every JSON document the plugin reads goes through :func:`read_json`: an ``eval.jsonl`` line
(``run/dataset``), the thresholds file (``gate/file``), an ``evaluation.json`` (the lenient
``artifact/evaluation`` and compare's tolerant ``artifact/view``) and the server's answers
(``run/client``, ``run/preflight``). The reading rule, once:

* **Text.** One JSON value in a ``str`` (the caller decodes bytes as UTF-8), white space
  around it; anything after it is ``trailing characters``. A byte-order mark is not white
  space: ``expected value at line 1 column 1``.
* **Integers.** A literal without fraction or exponent that fits ``i64`` or ``u64``
  (``I64_MIN..=U64_MAX``) is an exact ``int``; ``-0`` is the float ``-0.0``, as serde reads
  it. serde reads a wider literal as an f64, through its float parser; so does this reader,
  unless ``exact_wide_integers``: then the literal stays the exact ``int`` (past the f64 range
  it is still refused), so that a typed field can name it in its own range error
  (``expected an integer at most 18446744073709551615, got 18446744073709551616``).
* **Floats.** serde_json's default parser (``core/serde_numbers``), without ``float_roundtrip``
  (``thresholds-and-compare.md`` Appendix N.2), bit for bit: not correctly rounded
  (``0.09090909090909091`` reads as ``0.09090909090909093``); below the f64 range a number is
  ``0.0``, past it ``number out of range``, placed at the number's last character. With
  ``float_roundtrip`` (serde_json's feature of that name) a float is read correctly rounded
  instead: the reading of this tool's own artifacts that must come back bit for bit
  (``taguru-evaluate merge`` recomputing a run from its shards).
* **NaN, Infinity, -Infinity** are not JSON: ``expected value`` at ``NaN``/``Infinity``,
  ``invalid number`` at the ``I`` of ``-Infinity`` (serde reads the ``-`` as a sign).
* **Nesting.** Arrays and objects nest 127 deep; the bracket that opens the 128th level is
  ``recursion limit exceeded at line L column C`` (serde_json's ``remaining_depth`` of 128,
  checked before the bracket is consumed, so C is the bracket's own column), unless a
  syntax error comes first in the document. The depth is found by an iterative scan before
  Python's parser runs, so a document nested 100,000 deep never reaches any recursion.
* **Strings.** A ``\\uD800``–``\\uDFFF`` escape that is not half of a pair is
  ``lone leading surrogate in hex escape``. serde refuses it in every string it reads, keys
  included: with ``check_strings`` (the default) that is every string of the document; a
  reader that skips unknown fields (compare's view) passes ``check_strings=False`` and checks
  each string it reads with :func:`whole_text`.
* **Repeated keys.** An object is a :class:`JsonObject`: a ``dict`` in which the last value
  wins (serde's maps and ``serde_json::Value``), plus ``pairs``, every pair in document order,
  so that a fixed-shape reader can refuse a repeated field (serde's ``duplicate field``).
* **Plain objects.** A reader that never asks which keys an object repeated (``objects``
  ``last_wins``), or asks only in a document that repeats one (``pairs_if_repeated``), may get
  plain ``dict``s: such a document is read by Python's parser without an object hook, after a
  linear scan of its shape (``core/json_shape``); anything off there, and the full reading
  above says what, in the same words.
* **Errors** are :class:`SerdeError` (a ``ValueError``) worded as serde words them
  (:mod:`pytest_taguru.core.serde_wording`). Syntax errors, ``NaN``/``Infinity``, an
  overflowing number and the nesting limit carry serde's ``at line L column C`` (a byte
  column); the surrogate refusal carries none, Python's parser having kept no positions.
  Callers print
  the text after their own prefix (``<path>: line <n>: not JSON: …``,
  ``<path>: malformed evaluation.json: …``); the client turns any refusal into "not a
  taguru response".

Outside the rule, on purpose: the case block's trip from a pytest-xdist worker to the
controller (``artifact/case``) is Python-to-Python transport, written losslessly with
``Infinity`` and read back by Python's ``json``. The reference server reads its request
bodies by this rule too (``server/http/bodies``).

Where taguru's typed readers differ (documented, not reproduced): serde skips an unknown
member with an iterative ``ignore_value`` that has no depth limit, so a typed taguru reader
accepts a deep unknown member that this reader refuses; and a deep value in a typed field
usually meets a type error at a shallower level there.
"""

import json
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, Literal

from pytest_taguru.core.json_shape import distinct_keys, has_digit_run, structure
from pytest_taguru.core.serde_numbers import (
    exact_integer,
    parse_int,
    parse_roundtrip_float,
    parse_serde_float,
)
from pytest_taguru.core.serde_wording import (
    constant_wording,
    overflow_wording,
    position,
    syntax_wording,
)

NESTING_LIMIT = 127
"""serde_json's recursion limit (``remaining_depth`` 128): the 128th nested level is refused."""
RECURSION_LIMIT = "recursion limit exceeded"
LONE_SURROGATE = "lone leading surrogate in hex escape"


class SerdeError(ValueError):
    """A document serde would refuse; the text is serde's wording."""


class JsonObject(dict[str, Any]):
    """A parsed JSON object: a ``dict`` where a repeated key keeps its last value, plus
    ``pairs``, every key/value pair in document order, for readers that refuse repeats."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs

    @property
    def repeated(self) -> frozenset[str]:
        """The keys given more than once (serde's ``duplicate field`` in a struct)."""
        if len(self) == len(self.pairs):
            return frozenset()
        return frozenset(key for key, n in Counter(key for key, _ in self.pairs).items() if n > 1)


def _number(token: str) -> int | float:
    """A number token as the reader reads it (only its refusal matters: the error's place)."""
    return parse_int(token) if token.lstrip("-").isdigit() else parse_serde_float(token)


class _Constant(Exception):
    """Python's parser met ``NaN``, ``Infinity`` or ``-Infinity``: not JSON to serde."""


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


# --- the reader ---------------------------------------------------------------------------------

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
"""A string literal: the lexical rule Python's parser and serde share (ends at the first
unescaped quote); its content is never structure."""
_BRACKET = re.compile(r"[\[\]{}]")
_STRING_OR_BRACKET = re.compile(f"{_STRING.pattern}|{_BRACKET.pattern}", re.DOTALL)
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _may_hold_surrogate(text: str) -> bool:
    """Whether a lone surrogate can be in the document: only from a ``\\uD800``-``\\uDFFF``
    escape, or from a Python ``str`` that holds one already (text decoded from UTF-8 cannot)."""
    if "\\" in text and "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None:
        return True
    if text.isascii():  # a flag of the string: no character to look at
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def too_deep_at(text: str) -> int | None:
    """The index of the bracket that opens the 128th level, outside strings, or ``None``.

    Iterative and linear: a count first (fewer brackets cannot nest that deep), then the depth
    profile of the brackets left once string literals are removed, and only for a document
    that does nest too deep, the bracket's place. Exact for every document up to its first
    syntax error, which is all that matters: a parser stops there.
    """
    if text.count("[") + text.count("{") <= NESTING_LIMIT:
        return None
    steps = map(_DEPTH_STEP.__getitem__, _BRACKET.findall(_STRING.sub("", text)))
    if max(accumulate(steps), default=0) <= NESTING_LIMIT:
        return None
    depth = 0
    for token in _STRING_OR_BRACKET.finditer(text):
        depth += _DEPTH_STEP.get(token.group(), 0)
        if depth > NESTING_LIMIT:
            return token.start()
    return None


def _nesting_probe(text: str, at: int) -> str:
    """``text`` up to the too-deep bracket, then ``[]`` and the closers of every level still
    open there: a document that is valid exactly when ``text`` has no syntax error before
    ``at`` and a value may start there (``[`` merges with no token before it)."""
    closers: list[str] = []
    for token in _STRING_OR_BRACKET.finditer(text, 0, at):
        bracket = token.group()
        if bracket in "[{":
            closers.append("]" if bracket == "[" else "}")
        elif bracket in "]}" and closers:
            closers.pop()
    return text[:at] + "[]" + "".join(reversed(closers))


def _float_hook(float_roundtrip: bool) -> Callable[[str], float]:
    return parse_roundtrip_float if float_roundtrip else parse_serde_float


_DECODERS = {
    (exact, roundtrip): json.JSONDecoder(
        parse_float=_float_hook(roundtrip),
        parse_int=exact_integer if exact else parse_int,
        parse_constant=_refuse_constant,
        object_pairs_hook=JsonObject,
    )
    for exact in (False, True)
    for roundtrip in (False, True)
}
"""Python's parser with the rule's number hooks, made once (``json.loads`` makes one a call)."""
_PLAIN_DECODERS = {
    (exact, roundtrip): json.JSONDecoder(
        parse_float=_float_hook(roundtrip),
        parse_int=exact_integer if exact else parse_int,
        parse_constant=_refuse_constant,
    )
    for exact in (False, True)
    for roundtrip in (False, True)
}


def _parse(text: str, *, exact_wide_integers: bool, float_roundtrip: bool = False) -> Any:
    """Python's parser with the rule's number hooks; refusals as :class:`SerdeError`."""
    try:
        if text.startswith("\ufeff"):  # json.loads' own refusal of a byte-order mark
            return json.loads(text)
        return _DECODERS[exact_wide_integers, float_roundtrip].decode(text)
    except json.JSONDecodeError as error:
        raise SerdeError(syntax_wording(error)) from None
    except _Constant as constant:
        raise SerdeError(constant_wording(text, str(constant))) from None
    except ValueError:  # the number hooks' refusal: an overflowing number
        raise SerdeError(overflow_wording(text, _number)) from None


Objects = Literal["pairs", "last_wins", "pairs_if_repeated"]
"""How a reader takes objects: ``pairs``, every object a :class:`JsonObject`; ``last_wins``,
the reader never asks which keys were repeated (a ``dict`` may come back); ``pairs_if_repeated``,
:class:`JsonObject` only in a document where some object repeats a key."""


def read_json(
    text: str,
    *,
    exact_wide_integers: bool = False,
    check_strings: bool = True,
    objects: Objects = "pairs",
    float_roundtrip: bool = False,
) -> Any:
    """Parse ``text`` by the reading rule above; objects become :class:`JsonObject` (but see
    ``objects``).

    Raises :class:`SerdeError` with serde's wording (``trailing characters at line 1 column
    25``, ``number out of range at line 2 column 405``, ``recursion limit exceeded at line 1
    column 128``, …).
    """
    if objects != "pairs" and not (check_strings and _may_hold_surrogate(text)):
        document = _read_plainly(text, exact_wide_integers, objects, float_roundtrip)
        if document is not _UNREAD:
            return document
    deep_at = too_deep_at(text)
    if deep_at is not None:
        # Only the part before the too-deep bracket is parsed (at most 127 levels): serde
        # reports whatever it meets there first, else the recursion limit at the bracket.
        probe = _nesting_probe(text, deep_at)
        try:
            document = _parse(
                probe, exact_wide_integers=exact_wide_integers, float_roundtrip=float_roundtrip
            )
        except SerdeError as error:
            if str(error).startswith("EOF while parsing a string"):  # it runs to the real end
                raise SerdeError(
                    f"EOF while parsing a string {position(text, len(text), at_end=True)}"
                ) from None
            raise
        if check_strings and _may_hold_surrogate(probe):
            check_every_string(document)
        raise SerdeError(f"{RECURSION_LIMIT} {position(text, deep_at, at_end=False)}")
    document = _parse(
        text, exact_wide_integers=exact_wide_integers, float_roundtrip=float_roundtrip
    )
    if check_strings and _may_hold_surrogate(text):
        check_every_string(document)
    return document


_UNREAD = object()
_NEGATIVE_ZERO = re.compile(r"-0(?![0-9.eE])")


def _integer_hook_needed(text: str) -> bool:
    """A ``-0``, or a literal that may not fit i64/u64 (19 digits in a row; strings searched
    too: only ever a detour); without either, Python reads every integer as serde does."""
    return ("-0" in text and _NEGATIVE_ZERO.search(text) is not None) or has_digit_run(text, 19)


_NATIVE_INTEGERS = {
    roundtrip: json.JSONDecoder(parse_float=_float_hook(roundtrip), parse_constant=_refuse_constant)
    for roundtrip in (False, True)
}


def _read_plainly(
    text: str, exact_wide_integers: bool, objects: Objects, float_roundtrip: bool
) -> Any:
    """The document read by Python's parser with only the number hooks (objects are plain
    ``dict``s), or ``_UNREAD`` when anything is off: too deep, a refusal, a repeated key that
    ``objects`` must see. The full reading then says what is wrong, in serde's words; a
    document that reads here reads there to the same values."""
    # Too few brackets cannot nest too deep (a short line): no scan, unless members count.
    members = None
    if objects == "pairs_if_repeated" or text.count("[") + text.count("{") > NESTING_LIMIT:
        members, depth = structure(text)
        if depth > NESTING_LIMIT:
            return _UNREAD
    decoder = (
        _PLAIN_DECODERS[exact_wide_integers, float_roundtrip]
        if _integer_hook_needed(text)
        else _NATIVE_INTEGERS[float_roundtrip]
    )
    try:
        document = decoder.decode(text)
    except (ValueError, _Constant):  # a syntax error, an overflowing number
        return _UNREAD
    if objects != "last_wins" and members is not None and distinct_keys(document) != members:
        return _UNREAD
    return document


def _values(container: dict[str, Any] | list[Any]) -> Iterable[Any]:
    """The values directly inside an array or object, a repeated key's earlier ones too."""
    if isinstance(container, JsonObject) and len(container) != len(container.pairs):
        return [value for _, value in container.pairs]
    return container.values() if isinstance(container, dict) else container


def whole_text(value: str) -> str:
    """``value`` if serde could have read it: a string read into a field must not hold an
    unpaired surrogate escape such as ``\\ud800`` (a skipped, unknown field may)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise SerdeError(LONE_SURROGATE) from None
    return value


def _nested(document: Any) -> Iterator[Any]:
    """Every value of ``document``, keys included (iterative, any depth)."""
    pending: list[Any] = [document]
    while pending:
        value = pending.pop()
        yield value
        if isinstance(value, dict):
            pending += [*value, *_values(value)]
        elif isinstance(value, list):
            pending += value


def check_every_string(document: Any) -> None:
    """:func:`whole_text` on every string of a document whose every string is read."""
    for value in _nested(document):
        if isinstance(value, str):
            whole_text(value)


# --- structs ------------------------------------------------------------------------------------


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
