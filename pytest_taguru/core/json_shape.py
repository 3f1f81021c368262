"""How a JSON text is shaped, found without parsing it: how deep it nests and how many object
members it holds; and how many distinct keys a parsed document holds.

The reader (``core/serde``) uses these to take Python's parser without hooks on a document
that is shallow enough and, where it matters, repeats no key. Both scans are linear, in C
where it counts (bytes operations, numpy), and iterative.
"""

import re
from typing import Any

import numpy

_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}":')))
_STRING = re.compile(rb'"[^"]*"')
_OPENS = numpy.zeros(256, dtype=numpy.int64)
_OPENS[list(b"[{")] = 1
_OPENS[list(b"]}")] = -1


def structure(text: str) -> tuple[int, int]:
    """``(members, depth)``: the ``:`` outside strings (one per object member) and the deepest
    nesting of arrays and objects (a top-level container is depth 1).

    Escaped backslashes, then escaped quotes, are removed first: what is left of a string is
    its two quotes with brackets perhaps between, which go with it. Exact for a text that
    parses; for one that does not, exact up to its first syntax error (a backslash outside a
    string is one), which is as far as a parser reads.
    """
    # One character's search (memchr) is many times faster than a two-character pattern's:
    # most documents hold no backslash at all.
    unescaped = text.replace("\\\\", "").replace('\\"', "") if "\\" in text else text
    structural = unescaped.encode("utf-8", "surrogatepass").translate(None, _NOT_STRUCTURE)
    # Most strings hold nothing structural: their bare quote pairs go in one C pass. A pair
    # may join one string's closing quote to the next one's opening quote, with nothing
    # structural between them: the two strings then read as one, as harmless.
    kept = _STRING.sub(b"", structural.replace(b'""', b""))
    members = kept.count(b":")
    steps = _OPENS[numpy.frombuffer(kept, dtype=numpy.uint8)]
    depth = int(numpy.cumsum(steps).max()) if len(steps) else 0
    return members, depth


_DIGITS_AS_ZERO = bytes(0x30 if byte in b"0123456789" else 0x20 for byte in range(256))


def has_digit_run(text: str, length: int) -> bool:
    """Whether ``text`` holds ``length`` ASCII digits in a row (a regex tries every start
    inside every run of digits; this is one C pass over bytes)."""
    data = text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZERO)
    return data.find(b"0" * length) >= 0


def distinct_keys(document: Any) -> int:
    """The number of keys of every object in a document parsed into plain ``dict`` and
    ``list`` (iterative; exact types compared, the cheapest test per value)."""
    total = 0
    pending = [document]
    pop, append = pending.pop, pending.append
    while pending:
        value = pop()
        kind = type(value)
        if kind is dict:
            total += len(value)
            items = value.values()
        elif kind is list:
            items = value
        else:
            continue
        for item in items:
            if type(item) is dict or type(item) is list:
                append(item)
    return total
