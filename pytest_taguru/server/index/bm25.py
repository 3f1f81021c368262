"""BM25 lexical lane of the reference server (server-wire.md §3.9).

Scoring is taguru's float32 formula, step by step (:mod:`.bm25_score`).

Layout for speed: an inverted index ``term → (slot ids ascending, shapes)`` where a posting's
*shape* packs the slot length and the term frequency — a term's contribution depends on nothing
else, so it is computed once per distinct shape of a query term. Only the top ``pool`` slots
are served, so a search prunes with MaxScore (:mod:`.bm25_query`): common terms,
whose postings are long but whose contributions are small, are only looked up for slots that
rarer terms already made candidates, and only the final candidates get their exact score.
Slot ids are handed out increasingly and never reused; a source's slots are contiguous, so
removing a source deletes one slice from each of its terms' postings.
"""

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from pytest_taguru.server.index.bm25_query import (
    SHAPE_SHIFT,
    TF_MASK,
    Postings,
    QueryTerm,
    pool_scores,
)
from pytest_taguru.server.index.bm25_score import (
    average_length,
    contribution,
    idf,
    length_norm,
    pool_size,
)
from pytest_taguru.server.index.text import Term, document_terms, query_terms
from pytest_taguru.server.index.topk import best_slots


class LaneHit(NamedTuple):
    """One slot of the BM25 lane list (a tuple: a lane list may hold every slot)."""

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


@dataclass(frozen=True, slots=True)
class _SourceSlots:
    first: int
    count: int
    postings: tuple[Postings, ...]  # of the terms of its slots, to unlink them on removal


class Bm25Index:
    """BM25 over paragraph slots of one context. Not thread-safe: the store guards it with its lock.

    Every paragraph of every source is a slot, even one without terms. A slot's terms are its
    paragraph's document terms plus those of each doc2query question attached to it (§3.8/§3.9).
    """

    def __init__(self) -> None:
        self._postings: dict[Term, Postings] = {}
        self._shapes: dict[int, int] = {}  # one int object per distinct shape, shared by postings
        self._slot_source: list[str] = []
        self._slot_paragraph: list[int] = []
        self._slot_length: list[int] = []
        self._sources: dict[str, _SourceSlots] = {}
        self._live_slots = 0
        self._total_length = 0
        self._norms: dict[int, float] = {}  # length_norm by length, for ``_norms_avgdl``
        self._norms_avgdl = 0.0

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
        source_postings: set[Postings] = set()
        for paragraph, text in enumerate(paragraphs):
            terms = document_terms(text)
            if questions:
                for question in questions.get(paragraph, ()):
                    terms.extend(document_terms(question))
            slot = first + paragraph
            counts = Counter(terms)
            length = len(terms)
            length_key = length << SHAPE_SHIFT
            once = shared_shape(length_key | 1, length_key | 1)
            for term, tf in counts.items():
                posting = postings.get(term)
                if posting is None:
                    posting = postings[term] = Postings(term)
                posting.slots.append(slot)
                posting.shapes.append(
                    once if tf == 1 else shared_shape(length_key | tf, length_key | tf)
                )
            source_postings.update(map(postings.__getitem__, counts))
            self._slot_source.append(source)
            self._slot_paragraph.append(paragraph)
            self._slot_length.append(length)
            self._total_length += length
        for posting in source_postings:
            posting.known_extremes = None
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
                posting.known_extremes = None
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
        return self.best(query, pool_size(limit) if limit > 0 else 0, eligible)

    def best(
        self, query: str, count: int, eligible: Callable[[str], bool] | None = None
    ) -> list[LaneHit]:
        """The first ``count`` entries of a lane list at least that long, ranks included.

        A lane list's order does not depend on its length, so a caller serving only the first
        ``limit`` hits asks for those: MaxScore then prunes against the ``limit``-th best
        score rather than the ``4 × limit``-th. ``[]`` when ``count`` ≤ 0.
        """
        if count <= 0:
            return []
        terms = query_terms(query)
        if not terms or not self._live_slots:
            return []
        allowed = None if eligible is None else self._eligible_slots(eligible)
        return self._rank(self._pool_scores(terms, count, allowed), count)

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
                    tf = postings.shapes[position] & TF_MASK
            added = contribution(term_idf, tf, norm) if tf else 0.0
            evidence.append(TermEvidence(term, tf, df, term_idf, added))
        return evidence

    def _pool_scores(
        self, terms: list[Term], pool: int, allowed: bytearray | None
    ) -> dict[int, float]:
        """Exact scores of a set of eligible hits that holds the best ``pool`` of them."""
        slot_count = self._live_slots
        avgdl = average_length(self._total_length, slot_count)
        if avgdl != self._norms_avgdl:
            self._norms, self._norms_avgdl = {}, avgdl
        norms = self._norms
        in_query_order = [
            QueryTerm(postings, slot_count, avgdl, norms)
            for postings in map(self._postings.get, terms)
            if postings is not None
        ]
        return pool_scores(in_query_order, pool, allowed)

    def _eligible_slots(self, eligible: Callable[[str], bool]) -> bytearray:
        """A flag per slot id: 1 when its source is stored and ``eligible``."""
        allowed = bytearray(len(self._slot_length))
        for source, stored in self._sources.items():
            if eligible(source):
                allowed[stored.first : stored.first + stored.count] = b"\x01" * stored.count
        return allowed

    def _rank(self, scores: dict[int, float], pool: int) -> list[LaneHit]:
        """The ``pool`` best slots as lane hits, ranked score desc, source asc, paragraph asc."""
        source_of, paragraph_of = self._slot_source, self._slot_paragraph
        return [
            LaneHit(source_of[slot], paragraph_of[slot], scores[slot], position)
            for position, slot in enumerate(best_slots(scores, pool, source_of), start=1)
        ]
