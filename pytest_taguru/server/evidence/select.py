"""Evidence candidates and their selection order (assembly.md §3.3–§3.5, §3.7, §3.8).

Pure functions over :class:`Candidate` values: reciprocal-rank fusion, near-duplicate passage
suppression, contradiction-group units and diversity tiering. Budget admission itself is
:func:`pytest_taguru.core.budget.admit`; the package is assembled in :mod:`evidence`.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_taguru.core.text import normalize_entry

RRF_K = 60
DUPLICATE_DICE = 0.9
NUL = "\x00"

Locator = tuple[str, int]


@dataclass
class Candidate:
    """One lane result, or (after :func:`fuse`) one distinct candidate.

    ``payload`` is the wire payload under the key ``kind`` (an AssociationOut, PassageHit or
    CommunityHit dict); ``text`` is what near-duplicate suppression and a reranker read;
    ``source`` is the primary source diversity tiering reads; ``origins`` are the located
    attributions an association can cite.
    """

    kind: str
    key: str
    payload: dict[str, Any]
    text: str
    source: str | None
    lane_ranks: dict[str, int]
    origins: set[Locator] = field(default_factory=set)
    fused_rank: int = 0

    @property
    def candidate_id(self) -> str:
        """``kind`` NUL canonical key (§3.3)."""
        return self.kind + NUL + self.key

    @property
    def subject_label(self) -> tuple[str, str] | None:
        """An association's ``(subject, label)``, the contradiction-group key."""
        if self.kind != "association":
            return None
        return self.payload["subject"], self.payload["label"]


def fused_score(lane_ranks: dict[str, int]) -> float:
    """Σ over the candidate's lanes of ``1 / (60 + best rank)``, lanes in name order."""
    return sum(1.0 / (RRF_K + lane_ranks[lane]) for lane in sorted(lane_ranks))


def fuse(raw: Iterable[Candidate]) -> tuple[list[Candidate], int]:
    """Merge by ``candidate_id``, order by RRF, number ``fused_rank`` from 1 (§3.4).

    A merged candidate keeps per lane its best (lowest) rank, the union of origin locators,
    and the payload of the appearance with the lowest lane rank (ties: smaller lane name).
    Order: fused score descending, then ``kind``, then canonical key ascending. Returns the
    fused list and ``dedup_dropped`` = raw count − distinct count.
    """
    merged: dict[str, Candidate] = {}
    best_appearance: dict[str, tuple[int, str]] = {}
    count = 0
    for candidate in raw:
        count += 1
        ((lane, rank),) = candidate.lane_ranks.items()
        found = merged.get(candidate.candidate_id)
        if found is None:
            merged[candidate.candidate_id] = Candidate(
                candidate.kind,
                candidate.key,
                candidate.payload,
                candidate.text,
                candidate.source,
                {lane: rank},
                set(candidate.origins),
            )
            best_appearance[candidate.candidate_id] = (rank, lane)
            continue
        found.lane_ranks[lane] = min(rank, found.lane_ranks.get(lane, rank))
        found.origins |= candidate.origins
        if (rank, lane) < best_appearance[candidate.candidate_id]:
            best_appearance[candidate.candidate_id] = (rank, lane)
            found.payload, found.text, found.source = (
                candidate.payload,
                candidate.text,
                candidate.source,
            )
    ordered = sorted(merged.values(), key=lambda c: (-fused_score(c.lane_ranks), c.kind, c.key))
    for position, candidate in enumerate(ordered, start=1):
        candidate.fused_rank = position
    return ordered, count - len(ordered)


def character_pairs(text: str) -> frozenset[str]:
    """The set of adjacent character pairs of ``normalize_entry(text)`` (§3.5).

    A pair is held as its two-character string (hashing is cheaper than for a tuple). One
    character ``c`` gives the single pair ``cc``; an empty text the empty set.
    """
    folded = normalize_entry(text)
    if len(folded) == 1:
        return frozenset({folded + folded})
    return frozenset(folded[i : i + 2] for i in range(len(folded) - 1))


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """``2·|A∩B| / (|A|+|B|)``, 1.0 when both sets are empty."""
    return dice_of_counts(len(a & b), len(a), len(b))


def dice_of_counts(shared: int, size_a: int, size_b: int) -> float:
    """:func:`dice` from ``|A∩B|``, ``|A|`` and ``|B|``."""
    return 1.0 if size_a == size_b == 0 else 2 * shared / (size_a + size_b)


@dataclass(frozen=True)
class Duplicate:
    """A passage dropped as a near-duplicate of the kept passage ``duplicate_of``."""

    candidate: Candidate
    duplicate_of: str


class _KeptPassages:
    """Kept passages' pair-set sizes with an inverted index ``pair → kept positions``.

    Dice ≥ 0.9 needs at least one shared pair (unless both sets are empty), so only kept
    passages sharing a pair are scored, each in one pass over the new passage's pairs.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.sizes: list[int] = []
        self.postings: dict[str, list[int]] = {}
        self.first_empty: int | None = None

    def first_duplicate(self, pairs: frozenset[str]) -> str | None:
        """The id of the first kept passage (kept order) with Dice ≥ 0.9, if any."""
        shared = Counter(pos for pair in pairs for pos in self.postings.get(pair, ()))
        hits = [
            pos
            for pos, count in shared.items()
            if dice_of_counts(count, len(pairs), self.sizes[pos]) >= DUPLICATE_DICE
        ]
        if not pairs and self.first_empty is not None:
            hits.append(self.first_empty)
        return self.ids[min(hits)] if hits else None

    def keep(self, candidate_id: str, pairs: frozenset[str]) -> None:
        position = len(self.ids)
        self.ids.append(candidate_id)
        self.sizes.append(len(pairs))
        for pair in pairs:
            self.postings.setdefault(pair, []).append(position)
        if not pairs and self.first_empty is None:
            self.first_empty = position


def suppress_duplicates(fused: Sequence[Candidate]) -> tuple[list[Candidate], list[Duplicate]]:
    """Drop passages whose pair set has Dice ≥ 0.9 with an earlier kept passage (§3.5).

    Walks in fused order; non-passages pass through; the first kept passage (in kept order)
    reaching the threshold names the duplicate's ``duplicate_of``.
    """
    survivors: list[Candidate] = []
    duplicates: list[Duplicate] = []
    kept = _KeptPassages()
    for candidate in fused:
        if candidate.kind != "passage":
            survivors.append(candidate)
            continue
        pairs = character_pairs(candidate.text)
        original = kept.first_duplicate(pairs)
        if original is not None:
            duplicates.append(Duplicate(candidate, original))
            continue
        kept.keep(candidate.candidate_id, pairs)
        survivors.append(candidate)
    return survivors, duplicates


def admission_units(survivors: Sequence[Candidate]) -> list[list[Candidate]]:
    """Contradiction groups as units (§3.7).

    Associations sharing ``(subject, label)`` with at least two members form one unit at the
    position of the first member, members in survivor order; every other survivor is a unit
    of one.
    """
    groups: dict[tuple[str, str], list[Candidate]] = {}
    for candidate in survivors:
        key = candidate.subject_label
        if key is not None:
            groups.setdefault(key, []).append(candidate)
    units: list[list[Candidate]] = []
    for candidate in survivors:
        key = candidate.subject_label
        if key is None:
            units.append([candidate])
        elif groups[key][0] is candidate:
            units.append(groups[key])
    return units


def contradicts(unit: Sequence[Candidate], member: Candidate) -> list[str]:
    """The sorted ids of the other members of ``member``'s unit (empty for a unit of one)."""
    return sorted(c.candidate_id for c in unit if c is not member)


def tier_width(max_items: int) -> int:
    """``max(1, floor(max_items / 4))`` (§3.8)."""
    return max(1, max_items // 4)


def diversity_tiers(units: Sequence[list[Candidate]], width: int) -> list[list[Candidate]]:
    """Within each chunk of ``width`` units: novel units, then repeats (§3.8).

    A unit is judged by its first member's source: none → novel (marks nothing); already seen
    in this walk → repeat; otherwise novel, and the source becomes seen. Relative order is
    kept within both halves; units never cross chunks.
    """
    seen: set[str] = set()
    ordered: list[list[Candidate]] = []
    for start in range(0, len(units), width):
        novel: list[list[Candidate]] = []
        repeat: list[list[Candidate]] = []
        for unit in units[start : start + width]:
            source = unit[0].source
            if source is None:
                novel.append(unit)
            elif source in seen:
                repeat.append(unit)
            else:
                seen.add(source)
                novel.append(unit)
        ordered += novel + repeat
    return ordered
