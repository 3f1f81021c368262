"""BM25 lexical lane of the reference server (server-wire.md §3.9).

Scoring, in float32 as taguru does (every intermediate rounded to the nearest float32)::

    idf(t)     = ln(((N − df) + 0.5) / (df + 0.5) + 1)
    norm(len)  = k1 × ((1 − b) + (b × len) / avgdl)          k1 = 1.2, b = 0.75
    contrib    = (idf × (tf × (k1 + 1))) / (tf + norm(len))
    score      = Σ contrib over the deduplicated query terms, added in query-term order

with ``N`` the number of slots (paragraphs) of the whole context, ``df`` the number of slots
holding the term and ``avgdl = max(Σ len / N, 1.0)`` computed in 64-bit, then narrowed.

Rounding a 64-bit result of one +, −, × or ÷ of two float32 values to float32 gives exactly the
float32 operation's result (53 ≥ 2 × 24 + 2 bits), so plain Python floats rounded after each
step reproduce the server's digits. Why not a library such as ``bm25s``: it computes in its own
order with numpy (float32 arrays but a different idf variant, term weighting and summation order,
no per-step rounding as above), knows nothing of taguru's tokenizer and its score-then-source-
then-paragraph ranking, and would add numpy to the server extra; reproducing the fixture digits
(``0.28768212``, ``0.86304635``) needs the exact formula above, so the index is written here.

Layout for speed: an inverted index ``term → (slot ids ascending, shapes)`` where a posting's
*shape* packs the slot length and the term frequency — a term's contribution depends on nothing
else — so a search computes one contribution per distinct shape of each query term and costs a
dictionary hit plus one 64-bit addition per posting; each term's sums are rounded to float32
in one ``array("f", ...)`` conversion, and the first term's postings become the score table in
one C-level ``dict(zip(...))``.
Slot ids are handed out increasingly and never reused; a source's slots are contiguous, so
removing a source deletes one slice from each of its terms' postings.
"""

import heapq
import math
import struct
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress

from pytest_taguru.server.text import Term, document_terms, query_terms

_FLOAT32 = struct.Struct("<f")
_pack_f32 = _FLOAT32.pack
_unpack_f32 = _FLOAT32.unpack


def f32(x: float) -> float:
    """Round ``x`` to the nearest float32 (ties to even), returned as a Python float.

    Values beyond the float32 range become ±inf, as a float32 cast would.
    """
    try:
        return float(_unpack_f32(_pack_f32(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


K1 = f32(1.2)
B = 0.75
_K1_PLUS_ONE = f32(K1 + 1.0)  # 2.2 in float32
_ONE_MINUS_B = 0.25  # exact in float32
_FIRST_POOL = 50
_SHAPE_SHIFT = 32  # a posting's shape = len << 32 | tf (tf ≤ len < 2**31)
_TF_MASK = (1 << _SHAPE_SHIFT) - 1


def pool_size(limit: int) -> int:
    """Slots a BM25 lane list keeps: ``max(4 × limit, 50)``."""
    return max(4 * limit, _FIRST_POOL)


def idf(slots: int, df: int) -> float:
    """``ln(((N − df) + 0.5) / (df + 0.5) + 1)`` in float32 steps (N = ``slots``)."""
    ratio = f32(f32(float(slots - df) + 0.5) / f32(df + 0.5))
    return f32(math.log(f32(ratio + 1.0)))


def average_length(total_length: int, slots: int) -> float:
    """``avgdl = max(Σ len ÷ N, 1.0)`` in 64-bit, narrowed to float32 (1.0 when N is 0)."""
    return f32(max(total_length / slots, 1.0)) if slots else 1.0


def length_norm(length: int, avgdl: float) -> float:
    """``k1 × ((1 − b) + (b × len) / avgdl)`` in float32 steps."""
    return f32(K1 * f32(_ONE_MINUS_B + f32(f32(B * length) / avgdl)))


def contribution(term_idf: float, tf: int, norm: float) -> float:
    """``(idf × (tf × (k1 + 1))) / (tf + norm)`` in float32 steps (``norm`` = norm(len))."""
    numerator = f32(term_idf * f32(tf * _K1_PLUS_ONE))
    return f32(numerator / f32(tf + norm))


@dataclass(frozen=True, slots=True)
class LaneHit:
    """One slot of the BM25 lane list."""

    source: str
    paragraph: int
    score: float
    """A float32 value held in a Python float (exactly representable in float32)."""
    rank: int
    """1-based position in the lane list."""


@dataclass(frozen=True, slots=True)
class _SourceSlots:
    first: int
    count: int
    terms: tuple[Term, ...]  # distinct terms over the source's slots, to unlink its postings


class Bm25Index:
    """BM25 over paragraph slots of one context. Not thread-safe: the store guards it with its lock.

    Every paragraph of every source is a slot, even one without terms. A slot's terms are its
    paragraph's document terms plus those of each doc2query question attached to it (§3.8/§3.9).
    """

    def __init__(self) -> None:
        self._postings: dict[Term, tuple[list[int], list[int]]] = {}
        self._shapes: dict[int, int] = {}  # one int object per distinct shape, shared by postings
        self._slot_source: list[str] = []
        self._slot_paragraph: list[int] = []
        self._slot_length: list[int] = []
        self._sources: dict[str, _SourceSlots] = {}
        self._live_slots = 0
        self._total_length = 0

    @property
    def slot_count(self) -> int:
        """Number of slots ``N`` (paragraphs of every stored source)."""
        return self._live_slots

    def set_source(
        self,
        source: str,
        paragraphs: Sequence[str],
        questions: Mapping[int, Sequence[str]] | None = None,
    ) -> None:
        """Add ``source`` or replace its slots with one slot per paragraph, numbered from 0.

        ``questions`` maps a paragraph number to its doc2query questions; their terms count in
        that slot (each question tokenized separately). Numbers past the paragraphs are ignored.
        """
        self.remove_source(source)
        postings = self._postings
        shared_shape = self._shapes.setdefault
        first = len(self._slot_length)
        source_terms: set[Term] = set()
        for paragraph, text in enumerate(paragraphs):
            terms = document_terms(text)
            if questions:
                for question in questions.get(paragraph, ()):
                    terms.extend(document_terms(question))
            slot = first + paragraph
            counts = Counter(terms)
            length_key = len(terms) << _SHAPE_SHIFT
            for term, tf in counts.items():
                shape = shared_shape(length_key | tf, length_key | tf)
                posting = postings.get(term)
                if posting is None:
                    postings[term] = ([slot], [shape])
                else:
                    posting[0].append(slot)
                    posting[1].append(shape)
            source_terms.update(counts)
            self._slot_source.append(source)
            self._slot_paragraph.append(paragraph)
            self._slot_length.append(len(terms))
            self._total_length += len(terms)
        self._live_slots += len(paragraphs)
        self._sources[source] = _SourceSlots(first, len(paragraphs), tuple(source_terms))

    def remove_source(self, source: str) -> None:
        """Drop every slot of ``source`` (no-op for an unknown source)."""
        stored = self._sources.pop(source, None)
        if stored is None:
            return
        end = stored.first + stored.count
        for term in stored.terms:
            slots, shapes = self._postings[term]
            low = bisect_left(slots, stored.first)
            high = bisect_left(slots, end, low)
            if low == 0 and high == len(slots):
                del self._postings[term]
            else:
                del slots[low:high]
                del shapes[low:high]
        self._live_slots -= stored.count
        self._total_length -= sum(self._slot_length[stored.first : end])

    def search(
        self, query: str, limit: int, eligible: Callable[[str], bool] | None = None
    ) -> list[LaneHit]:
        """The BM25 lane list for ``query``: the top ``max(4 × limit, 50)`` slots.

        Order: score descending, then source ascending (code point order, which is UTF-8 byte
        order), then paragraph ascending. Every slot holding at least one query term is a hit.
        Only slots of sources for which ``eligible(source)`` is true are served; ``N``, ``df``
        and ``avgdl`` always cover the whole index. ``[]`` when ``limit`` ≤ 0 or the query
        has no terms.
        """
        if limit <= 0:
            return []
        terms = query_terms(query)
        if not terms or not self._live_slots:
            return []
        scores = self._score(terms)
        if eligible is not None:
            allowed = self._eligible_slots(eligible)
            scores = {
                slot: scores[slot] for slot in compress(scores, map(allowed.__getitem__, scores))
            }
        return self._rank(scores, pool_size(limit))

    def _score(self, terms: list[Term]) -> dict[int, float]:
        """BM25 score of every slot holding at least one of ``terms`` (deduplicated, in order)."""
        slot_count = self._live_slots
        avgdl = average_length(self._total_length, slot_count)
        norms: dict[int, float] = {}
        scores: dict[int, float] = {}
        for term in terms:
            posting = self._postings.get(term)
            if posting is None:
                continue
            slots, shapes = posting
            term_idf = idf(slot_count, len(slots))
            by_shape: dict[int, float] = {}
            if not scores:
                # The first term's contributions are the scores themselves (0 + c = c).
                for shape in set(shapes):
                    by_shape[shape] = _shape_contribution(term_idf, shape, avgdl, norms)
                scores = dict(zip(slots, map(by_shape.__getitem__, shapes), strict=True))
                continue
            cached = by_shape.get
            previous = scores.get
            summed_slots: list[int] = []
            sums: list[float] = []
            for slot, shape in zip(slots, shapes, strict=True):
                value = cached(shape)
                if value is None:
                    value = by_shape[shape] = _shape_contribution(term_idf, shape, avgdl, norms)
                before = previous(slot)
                if before is None:
                    scores[slot] = value
                else:
                    summed_slots.append(slot)
                    sums.append(before + value)
            # float32 addition: the exact 64-bit sum of two float32 values rounded once, all
            # of this term's sums in one array conversion (a slot occurs once per term).
            scores.update(zip(summed_slots, array("f", sums).tolist(), strict=True))
        return scores

    def _eligible_slots(self, eligible: Callable[[str], bool]) -> bytearray:
        """A flag per slot id: 1 when its source is stored and ``eligible``."""
        allowed = bytearray(len(self._slot_length))
        for source, stored in self._sources.items():
            if eligible(source):
                allowed[stored.first : stored.first + stored.count] = b"\x01" * stored.count
        return allowed

    def _rank(self, scores: dict[int, float], pool: int) -> list[LaneHit]:
        """The ``pool`` best slots as lane hits, ranked score desc, source asc, paragraph asc."""
        if len(scores) > pool:
            # Every slot scoring at least the pool-th best score may enter (ties at the edge
            # are settled by source and paragraph below).
            floor = heapq.nlargest(pool, scores.values())[-1]
            chosen = [(slot, score) for slot, score in scores.items() if score >= floor]
        else:
            chosen = list(scores.items())
        source_of, paragraph_of = self._slot_source, self._slot_paragraph
        ranked = sorted(
            ((-score, source_of[slot], paragraph_of[slot]) for slot, score in chosen),
        )[:pool]
        return [
            LaneHit(source=source, paragraph=paragraph, score=-negated, rank=position)
            for position, (negated, source, paragraph) in enumerate(ranked, start=1)
        ]


def _shape_contribution(
    term_idf: float, shape: int, avgdl: float, norms: dict[int, float]
) -> float:
    """:func:`contribution` of a posting shape; ``norms`` caches :func:`length_norm` by length."""
    length, tf = shape >> _SHAPE_SHIFT, shape & _TF_MASK
    norm = norms.get(length)
    if norm is None:
        norm = norms[length] = length_norm(length, avgdl)
    return contribution(term_idf, tf, norm)
