"""One BM25 query against the postings: MaxScore pooling, then exact float32 scores.

The index (:mod:`.bm25`) owns the postings; this module scores a query against them. Only the
best ``pool`` slots are wanted, so candidates are found with MaxScore (see
:func:`pool_scores`) on 64-bit partial sums compared with margins, and only the survivors
get their exact score: each query term's contributions to all of them at once, added in
query-term order and rounded to float32 a whole list at a time (``array('f')`` rounds to
the nearest float32, ties to even, exactly as ``struct`` or a float32 cast does).
"""

import math
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from itertools import compress, repeat
from operator import add

from pytest_taguru.server.index.bm25_score import contribution, contributions, idf, length_norm
from pytest_taguru.server.index.text import Term
from pytest_taguru.server.index.topk import kth_largest

SHAPE_SHIFT = 32  # a posting's shape = len << 32 | tf (tf ≤ len < 2**31)
TF_MASK = (1 << SHAPE_SHIFT) - 1
# Relative margin on every pruning comparison: a float32 sum of n contributions is within
# n × 2**-24 of their exact sum, far inside this.
_MARGIN = 1e-4
_MARGIN_PER_TERM = 1e-6


class Postings:
    """One term's postings: slot ids ascending and their shapes."""

    __slots__ = ("known_extremes", "shapes", "slots", "term")

    def __init__(self, term: Term) -> None:
        self.term = term
        self.slots: list[int] = []
        self.shapes: list[int] = []
        self.known_extremes: tuple[int, int] | None = None
        """:meth:`extremes`, until the postings change (whoever changes them resets it)."""

    def extremes(self) -> tuple[int, int]:
        """The greatest tf and the least slot length among the postings."""
        if self.known_extremes is None:
            shapes = self.shapes
            greatest_tf = max(map(TF_MASK.__and__, shapes))
            self.known_extremes = greatest_tf, min(shapes) >> SHAPE_SHIFT
        return self.known_extremes


class QueryTerm:
    """A query term with postings, scored against one index state."""

    __slots__ = ("avgdl", "bound", "by_shape", "idf", "norms", "postings")

    def __init__(
        self, postings: Postings, slot_count: int, avgdl: float, norms: dict[int, float]
    ) -> None:
        self.postings = postings
        self.idf = idf(slot_count, len(postings.slots))
        self.avgdl = avgdl
        self.norms = norms
        self.by_shape: dict[int, float] = {}
        # No posting contributes more than one with the term's greatest tf and least length
        # (a contribution grows with tf and shrinks with len): the tighter this bound, the
        # sooner MaxScore prunes.
        max_tf, min_length = postings.extremes()
        self.bound = contribution(self.idf, max_tf, length_norm(min_length, avgdl))

    def value(self, shape: int) -> float:
        """The contribution of a posting of this shape (memoized)."""
        found = self.by_shape.get(shape)
        if found is None:
            self.values_of((shape,))
            found = self.by_shape[shape]
        return found

    def value_at(self, slot: int) -> float | None:
        """The contribution to ``slot``, or ``None`` when the slot lacks the term."""
        slots = self.postings.slots
        position = bisect_left(slots, slot)
        if position < len(slots) and slots[position] == slot:
            return self.value(self.postings.shapes[position])
        return None

    def values_of(self, shapes: Iterable[int]) -> None:
        """Memoize the contribution of every shape in ``shapes``, all at once."""
        new = list(set(shapes).difference(self.by_shape))
        if not new:
            return
        norms, avgdl = self.norms, self.avgdl
        for length in {shape >> SHAPE_SHIFT for shape in new}.difference(norms):
            norms[length] = length_norm(length, avgdl)
        tfs = [shape & TF_MASK for shape in new]
        shape_norms = [norms[shape >> SHAPE_SHIFT] for shape in new]
        self.by_shape.update(zip(new, contributions(self.idf, tfs, shape_norms), strict=True))

    def contributions(self, slots: list[int]) -> Iterable[float]:
        """This term's contribution to each of ``slots``, 0.0 where a slot lacks the term.

        Postings no longer than ``slots`` become a lookup table (built at C speed); longer
        ones are bisected once per slot, which costs less than building their table.
        """
        held, shapes = self.postings.slots, self.postings.shapes
        if len(held) <= len(slots):
            self.values_of(shapes)
            table = dict(zip(held, map(self.by_shape.__getitem__, shapes), strict=True))
            return map(table.get, slots, repeat(0.0))
        values, value = [], self.value
        count = len(held)
        for slot in slots:
            position = bisect_left(held, slot)
            holds = position < count and held[position] == slot
            values.append(value(shapes[position]) if holds else 0.0)
        return values


def exact_scores(slots: list[int], in_query_order: list[QueryTerm]) -> list[float]:
    """The float32 BM25 score of each of ``slots``: contributions added in query-term order,
    every sum rounded to float32 (adding 0.0 for a missing term changes nothing)."""
    sums: list[float] = [0.0] * len(slots)
    for term in in_query_order:
        sums = array("f", map(add, sums, term.contributions(slots))).tolist()
    return sums


def pool_scores(
    in_query_order: list[QueryTerm], pool: int, allowed: bytearray | None
) -> dict[int, float]:
    """Exact scores of a set of eligible hits that holds the best ``pool`` of them.

    MaxScore pruning, exact by construction. Terms are taken by descending upper bound
    (rare terms first); each adds its contributions to the 64-bit partial sums of the slots
    holding it. Once the bounds of the remaining terms together fall below the
    ``pool``-th best partial sum, no slot outside the partial table can reach the pool, so
    the remaining terms only complete the sums of slots already there. Slots whose
    complete sum is below the ``pool``-th best are dropped; the survivors get their exact
    float32 score (:func:`exact_scores`). Comparisons carry a relative margin far above the
    float32 rounding of a sum.
    """
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
    survivors = sorted(partial if floor is None else [s for s, p in partial.items() if p >= floor])
    return dict(zip(survivors, exact_scores(survivors, in_query_order), strict=True))


def _floor(partial: dict[int, float], pool: int, margin: float) -> float | None:
    """The ``pool``-th best partial sum less the margin, ``None`` with fewer candidates."""
    if len(partial) < pool:
        return None
    return kth_largest(list(partial.values()), pool) * (1 - margin)


def _pruning_floor(
    partial: dict[int, float],
    pool: int,
    margin: float,
    done: list[QueryTerm],
    rest: list[QueryTerm],
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


def _accumulate(term: QueryTerm, partial: dict[int, float], allowed: bytearray | None) -> None:
    """Add ``term``'s contribution to the partial sum of every (eligible) slot holding it.

    Partial sums are 64-bit and only compared with margins, so their order of addition is free:
    a term with more postings than there are sums becomes a fresh table built in C-level calls,
    into which the existing sums are folded.
    """
    slots, shapes = term.postings.slots, term.postings.shapes
    eligible = None if allowed is None else map(allowed.__getitem__, slots)
    if len(partial) * 2 < len(slots):
        term.values_of(shapes)
        pairs = zip(slots, map(term.by_shape.__getitem__, shapes), strict=True)
        incoming = dict(pairs if eligible is None else compress(pairs, eligible))
        folded = incoming.get
        for slot, sum_so_far in partial.items():
            incoming[slot] = folded(slot, 0.0) + sum_so_far
        partial.clear()
        partial.update(incoming)
        return
    term.values_of(shapes)
    value, before = term.by_shape.__getitem__, partial.get
    holders = zip(slots, shapes, strict=True)
    for slot, shape in holders if eligible is None else compress(holders, eligible):
        partial[slot] = before(slot, 0.0) + value(shape)


def _complete_candidates(
    partial: dict[int, float], rest: list[QueryTerm], floor: float, margin: float
) -> None:
    """Add the ``rest`` terms to the candidates' sums, dropping on the way every candidate that
    cannot reach ``floor`` even with the bounds of the terms still to add."""
    slots, sums = list(partial), list(partial.values())
    for position, term in enumerate(rest):
        reachable = math.fsum(t.bound for t in rest[position:]) * (1 + margin)
        reaching = [total + reachable >= floor for total in sums]
        slots, sums = list(compress(slots, reaching)), list(compress(sums, reaching))
        sums = list(map(add, sums, term.contributions(slots)))
    partial.clear()
    partial.update(zip(slots, sums, strict=True))
