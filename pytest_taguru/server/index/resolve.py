"""Lexical resolve of a cue against the spellings of one namespace (server-wire.md §3.2).

With ``n`` = normalize_entry(cue) and every stored spelling ``s`` (normalized, non-empty):

* exact: ``s == n`` → 1.0; containment: ``s`` in ``n`` or ``n`` in ``s`` →
  min(chars) / max(chars);
* fuzzy, only when nothing matched exactly and only for spellings not matched above: Dice
  ``2c / (|Q| + |P|)`` over distinct non-stop bigrams (``c`` = shared ones, ``P`` non-empty,
  ``c ≥ 1``), kept when ≥ the floor. A bigram is a stop-gram when more than
  ``max(⌊S / 20⌋, 64)`` spellings contain it (``S`` = number of spellings);
* per record the best score (exact/containment recorded before fuzzy, first kept on ties);
  an exact record whose canonical does not normalize to ``n`` reports ``alias``;
* sorted by score descending, then canonical name ascending, cut to ``limit``.

Index for speed (10k names in well under a millisecond per cue): spellings by normalized text
(every substring of the cue whose length some spelling has is looked up, which finds every
spelling contained in the cue), spellings by character and by bigram (a spelling containing
the cue contains the cue's rarest bigram — or its only character — so only those are checked
with ``in``), and bigram document frequencies for the stop-gram rule.
"""

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from pytest_taguru.core.text import normalize_entry

CandidateKind = Literal["exact", "alias", "containment", "fuzzy"]

DEFAULT_DICE_FLOOR = 0.3
_STOP_GRAM_SHARE = 20  # a bigram in more than S / 20 spellings is a stop-gram ...
_STOP_GRAM_MINIMUM = 64  # ... but never when in at most 64 spellings


@dataclass(frozen=True, slots=True)
class Candidate:
    """One lexical resolve candidate."""

    name: str
    """Canonical name of the record."""
    score: float
    """64-bit score: 1.0 exact/alias, a character ratio for containment, Dice for fuzzy."""
    kind: CandidateKind


@dataclass(frozen=True, slots=True)
class _Spelling:
    text: str  # normalized
    record: str  # canonical name it resolves to
    bigrams: frozenset[str]


def bigrams(text: str) -> frozenset[str]:
    """Distinct pairs of adjacent code points (spaces and punctuation included)."""
    return frozenset(text[i : i + 2] for i in range(len(text) - 1))


def stop_gram_threshold(spellings: int) -> int:
    """A bigram contained in more than this many spellings is a stop-gram."""
    return max(spellings // _STOP_GRAM_SHARE, _STOP_GRAM_MINIMUM)


class EntryIndex:
    """Spellings of one namespace (concepts, or relation labels). Not thread-safe.

    A record is a canonical name; its spellings are the canonical itself and its aliases. Two
    spellings that normalize identically are still two entries.
    """

    def __init__(self) -> None:
        self._spellings: dict[int, _Spelling] = {}
        self._next_id = 0
        self._canonical_ids: dict[str, int] = {}
        self._alias_ids: dict[str, int] = {}
        self._record_aliases: dict[str, set[str]] = {}
        self._by_text: dict[str, set[int]] = {}
        self._by_char: dict[str, set[int]] = {}
        self._by_bigram: dict[str, set[int]] = {}
        self._lengths: Counter[int] = Counter()
        self._non_stop_sizes: dict[int, int] = {}  # |P| per spelling, valid until a mutation

    def __len__(self) -> int:
        """Number of spellings (``S`` of the stop-gram rule), empty and duplicates included."""
        return len(self._spellings)

    def add_canonical(self, name: str) -> None:
        """Intern the canonical ``name`` as a record with its own spelling (idempotent)."""
        if name not in self._canonical_ids:
            self._canonical_ids[name] = self._insert(name, name)
            self._record_aliases[name] = set()

    def add_alias(self, alias: str, canonical: str) -> None:
        """Add ``alias`` as a spelling of ``canonical``'s record.

        ``canonical`` may itself be an alias (its record is used). Re-adding a spelling of the
        same record is a no-op. The alias rules (§3.3) are the store's to enforce; this raises
        ``KeyError`` for an unknown canonical and ``ValueError`` for a spelling of another record.
        """
        record = self.record_of(canonical)
        if record is None:
            raise KeyError(canonical)
        existing = self.record_of(alias)
        if existing is not None:
            if existing != record:
                raise ValueError(f"{alias!r} already resolves to a different record")
            return
        self._alias_ids[alias] = self._insert(alias, record)
        self._record_aliases[record].add(alias)

    def remove_alias(self, alias: str) -> None:
        """Drop the alias spelling ``alias`` (no-op when it is not an alias)."""
        spelling_id = self._alias_ids.pop(alias, None)
        if spelling_id is not None:
            record = self._spellings[spelling_id].record
            self._record_aliases[record].discard(alias)
            self._delete(spelling_id)

    def forget(self, canonical: str) -> None:
        """Drop the record ``canonical`` and all its alias spellings (no-op when unknown)."""
        spelling_id = self._canonical_ids.pop(canonical, None)
        if spelling_id is None:
            return
        for alias in self._record_aliases.pop(canonical):
            self._delete(self._alias_ids.pop(alias))
        self._delete(spelling_id)

    def record_of(self, spelling: str) -> str | None:
        """The canonical name ``spelling`` (raw, exact) resolves to, if it is interned."""
        if spelling in self._canonical_ids:
            return spelling
        alias_id = self._alias_ids.get(spelling)
        return None if alias_id is None else self._spellings[alias_id].record

    def resolve(
        self, cue: str, limit: int, dice_floor: float = DEFAULT_DICE_FLOOR
    ) -> list[Candidate]:
        """The lexical candidates of ``cue`` (§3.2.2), best first, cut to ``limit``.

        ``[]`` when the normalized cue is empty or ``limit`` ≤ 0. ``dice_floor`` (clamped to
        [0, 1]) gates only fuzzy matches, inclusively.
        """
        normalized = normalize_entry(cue)
        if not normalized or limit <= 0:
            return []
        contained = self._containment_scores(normalized)
        best: dict[str, tuple[float, CandidateKind]] = {}
        has_exact = False
        for spelling_id, score in contained.items():
            spelling = self._spellings[spelling_id]
            exact = spelling.text == normalized
            has_exact = has_exact or exact
            _keep_best(best, spelling.record, score, "exact" if exact else "containment")
        if not has_exact:
            floor = min(max(dice_floor, 0.0), 1.0)
            for spelling_id, score in self._fuzzy_scores(normalized, contained).items():
                if score >= floor:
                    _keep_best(best, self._spellings[spelling_id].record, score, "fuzzy")
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:limit]
        return [
            Candidate(name=name, score=score, kind=self._refined_kind(name, kind, normalized))
            for name, (score, kind) in ranked
        ]

    def _refined_kind(self, name: str, kind: CandidateKind, normalized: str) -> CandidateKind:
        # An exact match through a spelling other than the canonical's own is an alias match.
        canonical_text = self._spellings[self._canonical_ids[name]].text
        return "alias" if kind == "exact" and canonical_text != normalized else kind

    def _containment_scores(self, cue: str) -> dict[int, float]:
        """Spellings equal to, contained in, or containing ``cue``, with min/max char ratio."""
        cue_length = len(cue)
        scores: dict[int, float] = {}
        by_text = self._by_text
        for length in self._lengths:
            if length > cue_length:
                continue
            score = length / cue_length
            for start in range(cue_length - length + 1):
                for spelling_id in by_text.get(cue[start : start + length], ()):
                    scores[spelling_id] = score
        for spelling_id in self._spellings_sharing_rarest_piece(cue):
            text = self._spellings[spelling_id].text
            if len(text) > cue_length and cue in text:
                scores[spelling_id] = cue_length / len(text)
        return scores

    def _spellings_sharing_rarest_piece(self, cue: str) -> set[int]:
        """Spellings holding the cue's rarest bigram (its character when it has no bigram)."""
        if len(cue) == 1:
            return self._by_char.get(cue, set())
        rarest: set[int] | None = None
        for gram in bigrams(cue):
            holders = self._by_bigram.get(gram)
            if holders is None:
                return set()
            if rarest is None or len(holders) < len(rarest):
                rarest = holders
        return rarest or set()

    def _fuzzy_scores(self, cue: str, excluded: dict[int, float]) -> dict[int, float]:
        """Dice score of every spelling sharing a non-stop bigram with ``cue``, not ``excluded``."""
        threshold = stop_gram_threshold(len(self._spellings))
        by_bigram = self._by_bigram
        query = [g for g in bigrams(cue) if len(by_bigram.get(g, ())) <= threshold]
        shared: Counter[int] = Counter()
        for gram in query:
            shared.update(by_bigram.get(gram, ()))
        return {
            spelling_id: 2 * common / (len(query) + self._non_stop_size(spelling_id, threshold))
            for spelling_id, common in shared.items()
            if spelling_id not in excluded
        }

    def _non_stop_size(self, spelling_id: int, threshold: int) -> int:
        size = self._non_stop_sizes.get(spelling_id)
        if size is None:
            by_bigram = self._by_bigram
            size = sum(
                1 for g in self._spellings[spelling_id].bigrams if len(by_bigram[g]) <= threshold
            )
            self._non_stop_sizes[spelling_id] = size
        return size

    def _insert(self, raw: str, record: str) -> int:
        spelling_id = self._next_id
        self._next_id += 1
        text = normalize_entry(raw)
        spelling = _Spelling(text=text, record=record, bigrams=bigrams(text))
        self._spellings[spelling_id] = spelling
        self._non_stop_sizes.clear()
        if text:
            self._by_text.setdefault(text, set()).add(spelling_id)
            for char in set(text):
                self._by_char.setdefault(char, set()).add(spelling_id)
            for gram in spelling.bigrams:
                self._by_bigram.setdefault(gram, set()).add(spelling_id)
            self._lengths[len(text)] += 1
        return spelling_id

    def _delete(self, spelling_id: int) -> None:
        spelling = self._spellings.pop(spelling_id)
        self._non_stop_sizes.clear()
        text = spelling.text
        if not text:
            return
        _unlink(self._by_text, text, spelling_id)
        for char in set(text):
            _unlink(self._by_char, char, spelling_id)
        for gram in spelling.bigrams:
            _unlink(self._by_bigram, gram, spelling_id)
        self._lengths[len(text)] -= 1
        if not self._lengths[len(text)]:
            del self._lengths[len(text)]


def _keep_best(
    best: dict[str, tuple[float, CandidateKind]], record: str, score: float, kind: CandidateKind
) -> None:
    """Record ``score`` for ``record`` unless an equal or higher one was recorded first."""
    recorded = best.get(record)
    if recorded is None or score > recorded[0]:
        best[record] = (score, kind)


def _unlink(postings: dict[str, set[int]], key: str, spelling_id: int) -> None:
    holders = postings[key]
    holders.discard(spelling_id)
    if not holders:
        del postings[key]
