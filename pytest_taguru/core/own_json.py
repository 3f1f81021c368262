"""Reading our own small JSON files (slices, slice thresholds) strictly, each error located.

taguru's formats keep serde's words (``gate.file``); the files that are pytest-taguru's own
say ``<file>:<line>: <field>: <problem>``. The text is read by the one strict reader
(``core.serde``) first, then its fixed-shape objects by :func:`fields`, and a bad value is a
:class:`FieldError` naming where it sits. Positions are found afterwards, only for the message,
by :func:`value_line`: the reader keeps none, and the text is well-formed JSON nested at most
127 deep by then, so a single iterative pass over its tokens suffices.
"""

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_taguru.core.serde import JsonObject, SerdeError, read_json
from pytest_taguru.core.serde_wording import describe

Where = tuple[str | int, ...]
"""Object keys and array indexes from the document's root."""


class FieldError(ValueError):
    """A value the file's format refuses: ``where`` it sits and what is wrong with it;
    ``named``: the problem's words name the field already (a reused reader's message);
    ``occurrence``: which of a repeated key's places is meant (the repeat: 2)."""

    def __init__(
        self, where: Where, problem: str, *, named: bool = False, occurrence: int = 1
    ) -> None:
        super().__init__(problem)
        self.where = where
        self.problem = problem
        self.named = named
        self.occurrence = occurrence


def dotted(where: Where) -> str:
    """``slices.history[1]``; the top level for ``()``."""
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "the top level"


def got(value: Any) -> str:
    """``got string "x"``: the value found, in serde's names."""
    return f"got {describe(value)}"


Reader = Callable[[Any, Where], Any]
"""Reads one field's value found at ``where``."""


def fields(
    value: Any, where: Where, readers: Mapping[str, Reader], *, required: Sequence[str] = (),
    shape: str,
) -> dict[str, Any]:
    """A fixed-shape object: every key known (``readers``), none repeated, the ``required`` ones
    present; each value read as it is met, so the first problem in the document is reported.
    ``shape`` names the object in the message of a value that is no object."""
    if not isinstance(value, JsonObject):
        raise FieldError(where, f"expected {shape}, {got(value)}")
    found: dict[str, Any] = {}
    for key, item in value.pairs:
        if key not in readers:
            known = ", ".join(f"`{name}`" for name in readers)
            raise FieldError((*where, key), f"unknown field, expected one of {known}")
        if key in found:
            raise FieldError((*where, key), f"field `{key}` given twice", occurrence=2)
        found[key] = readers[key](item, (*where, key))
    for name in required:
        if name not in found:
            raise FieldError(where, f"missing field `{name}`")
    return found


def entries(value: Any, where: Where, shape: str) -> list[tuple[str, Any]]:
    """A name-keyed object's entries in document order; a repeated name is refused."""
    if not isinstance(value, JsonObject):
        raise FieldError(where, f"expected {shape}, {got(value)}")
    seen: set[str] = set()
    for key, _ in value.pairs:
        if key in seen:
            raise FieldError((*where, key), f"'{key}' given twice", occurrence=2)
        seen.add(key)
    return list(value.pairs)


def stamp(version: int) -> Reader:
    """The reader of a format's version stamp, which must equal ``version``."""

    def read(value: Any, where: Where) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value != version:
            raise FieldError(where, f"must be {version}, {got(value)}")
        return version

    return read


def parse_own(raw: bytes) -> Any:
    """The document in ``raw`` (UTF-8) by the strict reader; raises ``SerdeError``, whose text
    carries serde's ``at line L column C``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SerdeError(f"invalid UTF-8: {error}") from None
    return read_json(text)


def located(path: str, raw: bytes, error: FieldError) -> str:
    """``<path>:<line>: <field>: <problem>`` (the line of the field, else of the document)."""
    line = value_line(raw.decode("utf-8"), error.where, error.occurrence) or 1
    field = "" if error.named else f"{dotted(error.where)}: "
    return f"{path}:{line}: {field}{error.problem}"


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')
"""A string, a punctuation mark, or a bare literal (number, ``true``, ``false``, ``null``)."""


def value_line(text: str, where: Where, occurrence: int = 1) -> int | None:
    """The 1-based line where the value at ``where`` is named: an object member's key, an array
    item's first character, the document's first token for ``()``; ``None`` when there is no
    such value. A repeated key is found at its ``occurrence``-th place."""
    target = tuple(where)
    labels: list[str | int | None] = []
    """Per open container: an object's current key (None while one is expected), an array's
    current index."""
    objects: list[bool] = []
    line, at = 1, 0
    for token in _TOKEN.finditer(text):
        line += text.count("\n", at, token.start())
        at = token.start()
        mark = token.group()
        if objects and objects[-1] and labels[-1] is None and mark.startswith('"'):
            labels[-1] = json.loads(mark)
            if tuple(labels) == target:
                occurrence -= 1
                if not occurrence:
                    return line
        elif mark == ",":
            label = labels[-1]
            labels[-1] = label + 1 if isinstance(label, int) else None
        elif mark in ("}", "]"):
            labels.pop()
            objects.pop()
        elif mark != ":":
            if (not objects or not objects[-1]) and tuple(labels) == target:
                return line  # a value starts: the root, or an array item
            if mark in ("{", "["):
                objects.append(mark == "{")
                labels.append(None if mark == "{" else 0)
    return None
