"""Paragraph splitting (server-wire.md §3.6) and passage terms (§3.8) of the reference server.

Term identity. taguru keeps three disjoint kinds of terms: ASCII *words*, *pairs* of adjacent
non-ASCII run characters and *lone* run characters. Here a term is a plain ``str``, which is
already unambiguous: a word is non-empty ASCII, a pair is two non-ASCII code points and a lone
term is one non-ASCII code point, so no two kinds can ever compare equal. (A plain string hashes
and compares faster than the tagged tuple ``("w", "app")``; :func:`term_kind` recovers the tag.)
"""

import re
import unicodedata
from operator import add
from typing import Literal

from pytest_taguru.core.text import normalize_entry, trim
from pytest_taguru.server.index.unicode_alphabetic import OTHER_ALPHABETIC_RANGES

Term = str
"""One passage term: an ASCII word, a non-ASCII pair (2 code points) or a lone code point."""

TermKind = Literal["word", "pair", "lone"]

_OTHER_ALPHABETIC_CLASS = "".join(
    chr(first) if first == last else f"{chr(first)}-{chr(last)}"
    for first, last in OTHER_ALPHABETIC_RANGES
)
# In a str pattern `\w` is exactly `str.isalnum()` plus `_` (checked over every code point), so
# `[^\W\x00-\x7f]` is "non-ASCII and Alphabetic-or-numeric" except for the Other_Alphabetic marks,
# which the slower pattern adds. Group 1 is an ASCII word, group 2 a non-ASCII run.
_SEGMENTS = re.compile(r"([0-9a-z]+)|([^\W\x00-\x7f]+)")
_SEGMENTS_WITH_MARKS = re.compile(rf"([0-9a-z]+)|((?:[^\W\x00-\x7f]|[{_OTHER_ALPHABETIC_CLASS}])+)")
_HAS_MARK = re.compile(f"[{_OTHER_ALPHABETIC_CLASS}]")

_ASCII_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
# A run has a camelCase boundary iff one of these two-or-three-letter shapes occurs in it.
_HAS_CASE_BOUNDARY = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")
_PIECE_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def split_paragraphs(text: str) -> list[str]:
    """Split ``text`` into paragraphs, each a slice of the original text (§3.6)."""
    return [text[start:end] for start, end in paragraph_spans(text)]


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Where each paragraph of ``text`` lies: ``(start, end)`` offsets, in order (§3.6).

    Lines end at ``\n`` only; a line's content drops its ``\n`` and then one ``\r``. A line is
    blank when its content is empty or only Unicode ``White_Space`` (U+001C–U+001F are not).
    Maximal runs of non-blank lines are paragraphs, from the first character of the first line to
    the end of the last line's content; interior line breaks stay, nothing is trimmed.
    """
    spans: list[tuple[int, int]] = []
    start = -1  # offset where the open paragraph begins, -1 when none is open
    end = 0  # end of the content of the open paragraph's last line
    position = 0
    length = len(text)
    while position <= length:
        newline = text.find("\n", position)
        line_end = length if newline < 0 else newline
        content_end = line_end - 1 if text.endswith("\r", position, line_end) else line_end
        if trim(text[position:content_end]):
            if start < 0:
                start = position
            end = content_end
        elif start >= 0:
            spans.append((start, end))
            start = -1
        if newline < 0:
            break
        position = newline + 1
    if start >= 0:
        spans.append((start, end))
    return spans


def _main_stream(normalized: str, terms: list[Term]) -> None:
    """Append the §3.8 A terms of already-normalized text, in emission order."""
    pattern = _SEGMENTS_WITH_MARKS if _HAS_MARK.search(normalized) else _SEGMENTS
    for word, run in pattern.findall(normalized):
        if word:
            terms.append(word)
        elif len(run) == 1:
            terms.append(run)
        else:
            terms.extend(map(add, run, run[1:]))


def _camel_case_pieces(text: str, terms: list[Term]) -> None:
    """Append the §3.8 B pieces: lowercased camelCase pieces of runs with ≥ 2 pieces.

    A piece starts at an uppercase letter preceded by a lowercase letter or digit, or at an
    uppercase letter preceded by an uppercase one and followed by a lowercase one.
    """
    folded = unicodedata.normalize("NFKC", text)
    if not _HAS_CASE_BOUNDARY.search(folded):
        return
    for run in _ASCII_ALNUM_RUN.findall(folded):
        pieces = _PIECE_START.split(run)
        if len(pieces) >= 2:
            terms.extend(piece.lower() for piece in pieces)


def document_terms(text: str) -> list[Term]:
    """Every term occurrence of ``text``: the main stream, then the camelCase pieces (§3.8)."""
    terms: list[Term] = []
    _main_stream(normalize_entry(text), terms)
    _camel_case_pieces(text, terms)
    return terms


def query_terms(text: str) -> list[Term]:
    """The terms of ``text`` deduplicated, keeping first-occurrence order (§3.8, query side)."""
    return list(dict.fromkeys(document_terms(text)))


def term_kind(term: Term) -> TermKind:
    """The tag taguru would give ``term``: ASCII → word, else 1 code point → lone, 2 → pair."""
    if term.isascii():
        return "word"
    return "lone" if len(term) == 1 else "pair"
