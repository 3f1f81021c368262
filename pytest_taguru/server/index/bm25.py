"""BM25 lexical lane of the reference server (server-wire.md §3.9).

Scoring is taguru's float32 formula, step by step (:mod:`.bm25_score`).

Layout for speed: an inverted index ``term → (slot ids ascending, shapes)`` where a posting's
*shape* packs the slot length and the term frequency — a term's contribution depends on nothing
else, so it is computed once per distinct shape of a query term. Only the top ``pool`` slots
are served, so a search prunes with MaxScore (see ``Bm25Index._pool_scores``): common terms,
whose postings are long but whose contributions are small, are only looked up for slots that
rarer terms already made candidates, and only the final candidates get their exact score.
Slot ids are handed out increasingly and never reused; a source's slots are contiguous, so
removing a source deletes one slice from each of its terms' postings.
"""

import heapq
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress

from pytest_taguru.server.index.bm25_score import (
    F32_STRUCT,
    average_length,
    contribution,
    idf,
    length_norm,
    pool_size,
)
from pytest_taguru.server.index.text import Term, document_terms, query_terms

_pack_f32 = F32_STRUCT.pack
_unpack_f32 = F32_STRUCT.unpack
_SHAPE_SHIFT = 32  # a posting's shape = len << 32 | tf (tf ≤ len < 2**31)
_TF_MASK = (1 << _SHAPE_SHIFT) - 1
# Relative margin on every pruning comparison: a float32 sum of n contributions is within
# n × 2**-24 of their exact sum, far inside this.
_MARGIN = 1e-4
_MARGIN_PER_TERM = 1e-6
_WALK_OVER_BISECT = 10


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
class TermEvidence:
    """One query term against one paragraph (float32 values held in Python floats)."""

    term: Term
    tf: int
    df: int
    idf: float
    contribution: float


class _Postings:
    """One term's postings: slot ids ascending and their shapes."""

    __slots__ = ("shapes", "slots", "term")

    def __init__(self, term: Term) -> None:
        self.term = term
        self.slots: list[int] = []
        self.shapes: list[int] = []


@dataclass(frozen=True, slots=True)
class _SourceSlots:
    first: int
    count: int
    postings: tuple[_Postings, ...]  # of the terms of its slots, to unlink them on removal


class _QueryTerm:
    """A query term with postings, scored against one index state."""

    __slots__ = ("avgdl", "bound", "by_shape", "idf", "norms", "postings")

    def __init__(
        self,
        postings: _Postings,
        slot_count: int,
        avgdl: float,
        norms: dict[int, float],
        tf_and_length_bounds: tuple[int, int],
    ) -> None:
        self.postings = postings
        self.idf = idf(slot_count, len(postings.slots))
        self.avgdl = avgdl
        self.norms = norms
        self.by_shape: dict[int, float] = {}
        # No posting contributes more than a posting with the greatest tf and the least length
        # of the index: a contribution grows with tf and shrinks with len.
        max_tf, min_length = tf_and_length_bounds
        self.bound = contribution(self.idf, max_tf, length_norm(min_length, avgdl))

    def value(self, shape: int) -> float:
        """The contribution of a posting of this shape (memoized)."""
        found = self.by_shape.get(shape)
        if found is None:
            length, tf = shape >> _SHAPE_SHIFT, shape & _TF_MASK
            norm = self.norms.get(length)
            if norm is None:
                norm = self.norms[length] = length_norm(length, self.avgdl)
            found = self.by_shape[shape] = contribution(self.idf, tf, norm)
        return found

    def value_at(self, slot: int) -> float | None:
        """The contribution to ``slot``, or ``None`` when the slot lacks the term."""
        slots = self.postings.slots
        position = bisect_left(slots, slot)
        if position < len(slots) and slots[position] == slot:
            return self.value(self.postings.shapes[position])
        return None


class Bm25Index:
    """BM25 over paragraph slots of one context. Not thread-safe: the store guards it with its lock.

    Every paragraph of every source is a slot, even one without terms. A slot's terms are its
    paragraph's document terms plus those of each doc2query question attached to it (§3.8/§3.9).
    """

    def __init__(self) -> None:
        self._postings: dict[Term, _Postings] = {}
        self._shapes: dict[int, int] = {}  # one int object per distinct shape, shared by postings
        self._slot_source: list[str] = []
        self._slot_paragraph: list[int] = []
        self._slot_length: list[int] = []
        self._sources: dict[str, _SourceSlots] = {}
        self._live_slots = 0
        self._total_length = 0
        self._norms: dict[int, float] = {}  # length_norm by length, for ``_norms_avgdl``
        self._norms_avgdl = 0.0
        # Bounds over every posting ever stored (removals only make them looser, still valid).
        self._max_tf = 1
        self._min_length = _TF_MASK

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
        source_postings: set[_Postings] = set()
        for paragraph, text in enumerate(paragraphs):
            terms = document_terms(text)
            if questions:
                for question in questions.get(paragraph, ()):
                    terms.extend(document_terms(question))
            slot = first + paragraph
            counts = Counter(terms)
            length = len(terms)
            length_key = length << _SHAPE_SHIFT
            once = shared_shape(length_key | 1, length_key | 1)
            for term, tf in counts.items():
                posting = postings.get(term)
                if posting is None:
                    posting = postings[term] = _Postings(term)
                posting.slots.append(slot)
                posting.shapes.append(
                    once if tf == 1 else shared_shape(length_key | tf, length_key | tf)
                )
            source_postings.update(map(postings.__getitem__, counts))
            if length:
                self._max_tf = max(self._max_tf, *counts.values())
                self._min_length = min(self._min_length, length)
            self._slot_source.append(source)
            self._slot_paragraph.append(paragraph)
            self._slot_length.append(length)
            self._total_length += length
        self._live_slots += len(paragraphs)
        self._sources[source] = _SourceSlots(first, len(paragraphs), tuple(source_postings))

    def remove_source(self, source: str) -> None:
        """Drop every slot of ``source`` (no-op for an unknown source)."""
        stored = self._sources.pop(source, None)
        if stored is None:
            return
        end = stored.first + stored.count
        for posting in stored.postings:
            low = bisect_left(posting.slots, stored.first)
            high = bisect_left(posting.slots, end, low)
            if low == 0 and high == len(posting.slots):
                del self._postings[posting.term]
            else:
                del posting.slots[low:high]
                del posting.shapes[low:high]
        self._live_slots -= stored.count
        self._total_length -= sum(self._slot_length[stored.first : end])

    def search(
        self, query: str, limit: int, eligible: Callable[[str], bool] | None = None
    ) -> list[LaneHit]:
        """The BM25 lane list for ``query``: the top ``max(4 × limit, 50)`` slots.

        Order: score descending, then source ascending (code point order, which is UTF-8 byte
        order), then paragraph ascending. Every slot holding at least one query term is a hit.
        Only slots of sources for which ``eligible(source)`` is true are scored and served;
        ``N``, ``df`` and ``avgdl`` always cover the whole index. ``[]`` when ``limit`` ≤ 0 or
        the query has no terms.
        """
        if limit <= 0:
            return []
        terms = query_terms(query)
        if not terms or not self._live_slots:
            return []
        allowed = None if eligible is None else self._eligible_slots(eligible)
        pool = pool_size(limit)
        return self._rank(self._pool_scores(terms, pool, allowed), pool)

    def term_evidence(
        self, query: str, source: str, paragraph: int
    ) -> list[TermEvidence] | None:
        """Per deduplicated query term, what it adds to the score of ``source``'s paragraph
        (``POST …/sources/search/explain``): ``tf`` in the paragraph, ``df`` slots holding it,
        its ``idf`` (0 for a term no slot holds) and its contribution (0 when ``tf`` is 0).
        Summed in this order in float32 they give the paragraph's search score. ``None`` when
        the index holds no such paragraph."""
        stored = self._sources.get(source)
        if stored is None or not 0 <= paragraph < stored.count:
            return None
        slot = stored.first + paragraph
        avgdl = average_length(self._total_length, self._live_slots)
        norm = length_norm(self._slot_length[slot], avgdl)
        evidence = []
        for term in query_terms(query):
            postings = self._postings.get(term)
            df = 0 if postings is None else len(postings.slots)
            term_idf = idf(self._live_slots, df) if df else 0.0
            tf = 0
            if postings is not None:
                position = bisect_left(postings.slots, slot)
                if position < df and postings.slots[position] == slot:
                    tf = postings.shapes[position] & _TF_MASK
            added = contribution(term_idf, tf, norm) if tf else 0.0
            evidence.append(TermEvidence(term, tf, df, term_idf, added))
        return evidence

    def _pool_scores(
        self, terms: list[Term], pool: int, allowed: bytearray | None
    ) -> dict[int, float]:
        """Exact scores of a set of eligible hits that holds the best ``pool`` of them.

        MaxScore pruning, exact by construction. Terms are taken by descending upper bound
        (rare terms first); each adds its contributions to the 64-bit partial sums of the slots
        holding it. Once the bounds of the remaining terms together fall below the
        ``pool``-th best partial sum, no slot outside the partial table can reach the pool, so
        the remaining terms only complete the sums of slots already there. Slots whose
        complete sum is below the ``pool``-th best are dropped; the survivors get their exact
        float32 score, summed in query-term order. Comparisons carry a relative margin far
        above the float32 rounding of a sum.
        """
        slot_count = self._live_slots
        avgdl = average_length(self._total_length, slot_count)
        if avgdl != self._norms_avgdl:
            self._norms, self._norms_avgdl = {}, avgdl
        norms = self._norms
        bounds = (self._max_tf, self._min_length)
        in_query_order = [
            _QueryTerm(postings, slot_count, avgdl, norms, bounds)
            for postings in map(self._postings.get, terms)
            if postings is not None
        ]
        margin = _MARGIN + len(in_query_order) * _MARGIN_PER_TERM
        by_bound = sorted(in_query_order, key=lambda term: term.bound, reverse=True)
        partial: dict[int, float] = {}
        for position, term in enumerate(by_bound):
            rest = by_bound[position:]
            reachable = math.fsum(t.bound for t in rest) * (1 + margin)
            floor = _pruning_floor(partial, pool, margin, by_bound[:position], rest)
            if floor is not None and reachable < floor:
                _complete_candidates(partial, rest, floor, margin)
                break
            _accumulate(term, partial, allowed)
        floor = _floor(partial, pool, margin)
        survivors = partial if floor is None else [s for s, p in partial.items() if p >= floor]
        return {slot: _exact_score(slot, in_query_order) for slot in survivors}

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


def _floor(partial: dict[int, float], pool: int, margin: float) -> float | None:
    """The ``pool``-th best partial sum less the margin, ``None`` with fewer candidates."""
    if len(partial) < pool:
        return None
    return heapq.nlargest(pool, partial.values())[-1] * (1 - margin)


def _pruning_floor(
    partial: dict[int, float],
    pool: int,
    margin: float,
    done: list[_QueryTerm],
    rest: list[_QueryTerm],
) -> float | None:
    """:func:`_floor`, only when pruning is possible and could pay.

    Finding the floor costs a pass over ``partial``; it is skipped when the bounds of the
    ``rest`` exceed those of the terms ``done`` (no partial sum can exceed the latter) or when
    the ``rest`` hold fewer postings than ``partial`` has entries.
    """
    if len(partial) < pool or math.fsum(t.bound for t in rest) >= math.fsum(t.bound for t in done):
        return None
    if sum(len(t.postings.slots) for t in rest) <= len(partial):
        return None
    return _floor(partial, pool, margin)


def _accumulate(term: _QueryTerm, partial: dict[int, float], allowed: bytearray | None) -> None:
    """Add ``term``'s contribution to the partial sum of every (eligible) slot holding it.

    Partial sums are 64-bit and only compared with margins, so their order of addition is free:
    a term with more postings than there are sums becomes a fresh table built in C-level calls,
    into which the existing sums are folded.
    """
    slots, shapes = term.postings.slots, term.postings.shapes
    eligible = None if allowed is None else map(allowed.__getitem__, slots)
    if len(partial) * 2 < len(slots):
        for shape in set(shapes).difference(term.by_shape):
            term.value(shape)
        pairs = zip(slots, map(term.by_shape.__getitem__, shapes), strict=True)
        incoming = dict(pairs if eligible is None else compress(pairs, eligible))
        folded = incoming.get
        for slot, sum_so_far in partial.items():
            incoming[slot] = folded(slot, 0.0) + sum_so_far
        partial.clear()
        partial.update(incoming)
        return
    cached, before = term.by_shape.get, partial.get
    holders = zip(slots, shapes, strict=True)
    for slot, shape in holders if eligible is None else compress(holders, eligible):
        value = cached(shape)
        if value is None:
            value = term.value(shape)
        partial[slot] = before(slot, 0.0) + value


def _complete_candidates(
    partial: dict[int, float], rest: list[_QueryTerm], floor: float, margin: float
) -> None:
    """Add the ``rest`` terms to the candidates' sums, dropping on the way every candidate that
    cannot reach ``floor`` even with the bounds of the terms still to add."""
    for position, term in enumerate(rest):
        reachable = math.fsum(t.bound for t in rest[position:]) * (1 + margin)
        for slot in [s for s, p in partial.items() if p + reachable < floor]:
            del partial[slot]
        # Walking the postings costs ~1/10 of a bisection per candidate.
        if len(term.postings.slots) <= _WALK_OVER_BISECT * len(partial):
            cached = term.by_shape.get
            holders = zip(term.postings.slots, term.postings.shapes, strict=True)
            for slot, shape in holders:
                if slot in partial:
                    value = cached(shape)
                    partial[slot] += term.value(shape) if value is None else value
        else:
            for slot in list(partial):
                found = term.value_at(slot)
                if found is not None:
                    partial[slot] += found


def _exact_score(slot: int, in_query_order: list[_QueryTerm]) -> float:
    """The float32 BM25 score of ``slot``: contributions added in query-term order."""
    score = 0.0
    for term in in_query_order:
        found = term.value_at(slot)
        if found is not None:
            score = _unpack_f32(_pack_f32(score + found))[0]
    return score
