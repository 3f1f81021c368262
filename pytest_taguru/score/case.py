"""Per-case scoring: what one case's lane results mean, as pure functions (no I/O).

Scoring reads ranks, dataset labels and counts only; no server score ever enters a formula.
Each rule takes only the dataset fields it needs; ``build_case_block`` assembles the whole
case block from an eval case and its lane results.
Specification: ``evaluate-run.md`` §4.4, §5 and §7.4.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_taguru.artifact.assembly import BudgetBlock, Evidence
from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    CitationCheck,
    CitationRecall,
    Citations,
    CitationValidity,
    Coverage,
    CoverageCounts,
    CueResolution,
    HitLocator,
    LaneCross,
    Passage,
    PassageSearched,
    PositionErrored,
    QueryErrored,
    QueryQueried,
    Recall,
    SectionMismatched,
    Structural,
)
from pytest_taguru.core.text import normalize_entry, trim
from pytest_taguru.run.eval_models import EvalCase, ExpectedSource
from pytest_taguru.score.label_coverage import Judgements, Unjudged, label_coverage_block

MISSED_KEPT = 3
"""How many ``missed`` entries a case block keeps; the rest are only counted."""


@dataclass(frozen=True)
class LaneResults:
    """What the lanes of one case produced, handed to ``build_case_block``.

    ``structural`` is ``None`` when the structural lane did not run; ``checks`` is ``None``
    when the case declared no expected citations, else one check per declared citation.
    """

    passage: Passage
    structural: Structural | None
    checks: list[CitationCheck] | None


# --- the passage lane ------------------------------------------------------------------------


def searched_hits(passage: Passage) -> list[HitLocator] | None:
    """The hits of a searched passage outcome; ``None`` when the passage lane failed."""
    return passage.hits if isinstance(passage, PassageSearched) else None


def satisfies(hit: HitLocator, expected: ExpectedSource) -> bool:
    """Source matching (§5.1), the one rule recall and ``missed`` share.

    ``hit.source == expected.source`` (exact, never folded) and
    (``expected.paragraphs`` is empty or ``hit.paragraph ∈ expected.paragraphs``).
    """
    return hit.source == expected.source and (
        not expected.paragraphs or hit.paragraph in expected.paragraphs
    )


class HitsBySource:
    """A case's hits with their 0-based ranks grouped by source: the only candidates of
    :func:`satisfies`, which needs equal sources. Each expected entry then looks at the hits
    of its own source, not at every hit (1,000 hits × every label at ``limit`` 1000)."""

    def __init__(self, hits: Sequence[HitLocator]) -> None:
        self._hits = hits
        self._ranks: dict[str, list[int]] = {}
        for rank, hit in enumerate(hits):
            self._ranks.setdefault(hit.source, []).append(rank)

    def ranks(self, expected: ExpectedSource) -> list[int]:
        """The 0-based ranks of the hits satisfying ``expected``, ascending."""
        hits = self._hits
        candidates = self._ranks.get(expected.source, ())
        return [rank for rank in candidates if satisfies(hits[rank], expected)]

    def first_rank(self, expected: ExpectedSource) -> int | None:
        """``first(e)``: the 0-based rank of the first hit satisfying ``expected``, if any."""
        return next(iter(self.ranks(expected)), None)


def score_recall(
    hits: Sequence[HitLocator], expected_sources: Iterable[ExpectedSource]
) -> Recall | None:
    """recall@k, MRR and nDCG of searched hits (§5.2); ``None`` when no relevance ≥ 1 entry.

    With ``E`` the relevance-≥1 entries in declared order (``m = |E|``), ``r`` 0-based ranks
    and ``first(e)`` the first rank satisfying ``e``:

    * ``recall_at_k = |{e : first(e) defined}| / m``
    * ``mrr = 1 / (r* + 1)``, ``r*`` the first rank satisfying any ``e``; 0.0 if none
    * ``DCG = Σ_e rel(e) / log2(first(e) + 2)`` over matched ``e`` in declared order,
      ``IDCG = Σ_j rel_(j) / log2(j + 2)`` over all of ``E`` sorted by relevance descending,
      ``ndcg = min(DCG / IDCG, 1.0)`` (linear gain; each expectation credited once; DCG
      starts from -0.0, so an unmatched nDCG is -0.0 as in taguru).

    The caller passes hits only for a searched passage; a failed lane has no recall block.
    """
    graded = [entry for entry in expected_sources if entry.relevance >= 1]
    if not graded:
        return None
    by_source = HitsBySource(hits)
    firsts = [by_source.first_rank(entry) for entry in graded]
    ranks = [rank for rank in firsts if rank is not None]
    # Rust's float ``Iterator::sum`` starts from -0.0 (Rust ≥ 1.83), so when nothing matched
    # taguru's DCG, and hence its nDCG, is -0.0 and is written as such.
    dcg = -0.0
    for entry, rank in zip(graded, firsts, strict=True):
        if rank is not None:
            dcg += entry.relevance / math.log2(rank + 2)
    idcg = 0.0
    for position, relevance in enumerate(sorted((e.relevance for e in graded), reverse=True)):
        idcg += relevance / math.log2(position + 2)
    return Recall(
        recall_at_k=len(ranks) / len(graded),
        mrr=1.0 / (min(ranks) + 1) if ranks else 0.0,
        ndcg=min(dcg / idcg, 1.0) if idcg > 0.0 else 0.0,
        expected_total=len(graded),
        matched=len(ranks),
    )


def judgements(
    hits: Sequence[HitLocator], expected_sources: Sequence[ExpectedSource]
) -> Judgements | None:
    """Which hits the labels judge (``score.label_coverage``); ``None`` for a case without an
    ``expected_sources`` entry (no passage labels at all, e.g. a structural-only case).

    A hit is judged when ``satisfies(hit, e)`` for some entry ``e`` of any relevance, 0
    included. Unjudged locators are kept once, at their first rank (1-based).
    """
    if not expected_sources:
        return None
    judged = [False] * len(hits)
    graded: list[tuple[int, int | None]] = []
    by_source = HitsBySource(hits)
    for entry in expected_sources:
        ranks = by_source.ranks(entry)
        for rank in ranks:
            judged[rank] = True
        first = ranks[0] if ranks else None
        if entry.relevance >= 1:
            graded.append((entry.relevance, first))
    unjudged: dict[tuple[str, int], Unjudged] = {}
    for rank, (hit, is_judged) in enumerate(zip(hits, judged, strict=True), start=1):
        if not is_judged and (hit.source, hit.paragraph) not in unjudged:
            unjudged[hit.source, hit.paragraph] = Unjudged(rank, hit.source, hit.paragraph)
    return Judgements(len(hits), sum(judged), tuple(unjudged.values()), tuple(graded))


def diversity_sources(passage: Passage) -> int | None:
    """Distinct ``source`` strings among a searched passage's hits (§5.8); ``None`` if failed."""
    hits = searched_hits(passage)
    return None if hits is None else len({hit.source for hit in hits})


# --- the structural lane ---------------------------------------------------------------------


def _fold(text: str) -> str:
    return normalize_entry(trim(text))


def names_covered(expected: Sequence[str], cues: Iterable[CueResolution], kind: str) -> list[bool]:
    """Per expected entry: whether any name resolved by a ``kind`` cue matches it (§5.3).

    ``covered(c) = ∃ n ∈ ⋃ resolved_names of kind-cues : fold(n) == fold(c)`` with
    ``fold = normalize_entry ∘ trim``. Errored resolutions carry no names, so add nothing.
    """
    resolved = {_fold(name) for cue in cues if cue.kind == kind for name in cue.resolved_names}
    return [_fold(entry) in resolved for entry in expected]


def association_covered(probe: AssociationProbe) -> bool:
    """An expected association is covered when its pinned query ran with ``total ≥ 1``."""
    return isinstance(probe.query, QueryQueried) and probe.query.total >= 1


def _counts(covered: Sequence[bool]) -> CoverageCounts:
    matched = sum(covered)
    return CoverageCounts(expected=len(covered), matched=matched, value=matched / len(covered))


def coverage(
    structural: Structural,
    expected_concepts: Sequence[str],
    expected_labels: Sequence[str],
) -> Coverage | None:
    """The coverage block of a case whose structural lane ran (§5.3).

    Each sub-block is ``{expected, matched, value = matched / expected}``: ``concepts``
    (iff expected concepts were declared) and ``labels`` (likewise) by folded name,
    ``associations`` (iff probes exist, one per expected association) by
    ``association_covered``. ``None`` when no sub-block applies.
    """
    block = Coverage(
        concepts=_counts(names_covered(expected_concepts, structural.cues, "concept"))
        if expected_concepts
        else None,
        labels=_counts(names_covered(expected_labels, structural.cues, "label"))
        if expected_labels
        else None,
        associations=_counts([association_covered(p) for p in structural.associations])
        if structural.associations
        else None,
    )
    present = (block.concepts, block.labels, block.associations)
    return block if any(sub is not None for sub in present) else None


def lane_cross(coverage_block: Coverage | None, recall: Recall | None) -> LaneCross | None:
    """The lane cross-tab (§5.4), present iff both a coverage and a recall block exist.

    That is exactly §5.4's eligibility: coverage exists iff a structural expectation was
    declared, recall iff the passage lane searched and a relevance-≥1 source was declared.
    ``structural_hit`` = some coverage sub-block has ``matched > 0``;
    ``passage_hit`` = ``recall.matched > 0``.
    """
    if coverage_block is None or recall is None:
        return None
    subs = (coverage_block.concepts, coverage_block.labels, coverage_block.associations)
    return LaneCross(
        structural_hit=any(sub is not None and sub.matched > 0 for sub in subs),
        passage_hit=recall.matched > 0,
    )


# --- the citation lane -----------------------------------------------------------------------


def served_locators(passage: Passage, structural: Structural | None) -> set[tuple[str, int]]:
    """The served-locator set of a case (§4.4), computed before any citation request.

    ``{(h.source, h.paragraph) : h ∈ hits}`` of a searched passage (nothing when it failed)
    ``∪ {(a.source, a.paragraph) : a.paragraph ≠ null}`` over the attributions of every
    probe whose query was ``queried``, whatever its ``total``.
    """
    served = {(hit.source, hit.paragraph) for hit in searched_hits(passage) or []}
    for probe in structural.associations if structural is not None else []:
        if isinstance(probe.query, QueryQueried):
            served.update(
                (attribution.source, attribution.paragraph)
                for attribution in probe.query.attributions or []
                if attribution.paragraph is not None
            )
    return served


def is_valid(check: CitationCheck) -> bool:
    """Locator validity of one check (§5.5).

    ``valid = resolved ∧ section ≠ mismatched ∧ (no quote declared ∨ quote matched)``.
    """
    return (
        isinstance(check, CheckResolved)
        and not isinstance(check.section, SectionMismatched)
        and (check.quote is None or check.quote.matched)
    )


def citations_block(checks: Sequence[CitationCheck]) -> Citations:
    """Citation recall and locator validity over a case's checks (§5.5), never combined.

    With ``n = |checks| ≥ 1``: ``recall.value = |{served}| / n`` and
    ``validity.value = |{is_valid}| / n``.
    """
    if not checks:
        raise ValueError("a citations block needs at least one check")
    total = len(checks)
    served = sum(check.served for check in checks)
    valid = sum(is_valid(check) for check in checks)
    return Citations(
        recall=CitationRecall(expected_total=total, matched=served, value=served / total),
        validity=CitationValidity(expected_total=total, valid=valid, value=valid / total),
        checks=list(checks),
    )


# --- missed[] --------------------------------------------------------------------------------


def _association_miss(probe: AssociationProbe) -> str | None:
    """Why an expected association was not found, or ``None`` when it was (§5.7 step 4)."""
    if association_covered(probe):
        return None
    prefix = f"expected_associations: ({probe.subject_cue}, {probe.label_cue}, {probe.object_cue}) "
    if isinstance(probe.query, QueryQueried):
        return prefix + "query returned no association"
    if isinstance(probe.query, QueryErrored):
        return prefix + "query errored"
    positions = (("subject", probe.subject), ("label", probe.label), ("object", probe.object))
    errored = [
        f"{name}: {position.message}"
        for name, position in positions
        if isinstance(position, PositionErrored)
    ]
    if errored:
        return prefix + "a position could not be resolved due to a transport error: " + "; ".join(
            errored
        )
    return prefix + "query never ran (a position did not pin)"


def missed(
    *,
    hits: Sequence[HitLocator] | None,
    expected_sources: Iterable[ExpectedSource],
    expected_concepts: Sequence[str],
    expected_labels: Sequence[str],
    structural: Structural | None,
    checks: Sequence[CitationCheck] | None,
) -> tuple[list[str], int]:
    """``missed[]`` and ``missed_truncated`` (§5.7): the first 3 misses and the dropped count.

    Order: sources (only when ``hits`` is not ``None``, i.e. the passage searched; relevance
    ≠ 0 entries no hit satisfies) → uncovered concepts → uncovered labels → associations
    (``_association_miss``) → per check, "not served" then "failed locator validity".
    ``missed_truncated = max(total − 3, 0)``.
    """
    entries: list[str] = []
    if hits is not None:
        by_source = HitsBySource(hits)
        entries.extend(
            f"expected_sources: '{entry.source}' not found among passage hits"
            for entry in expected_sources
            if entry.relevance != 0 and by_source.first_rank(entry) is None
        )
    cues = structural.cues if structural is not None else []
    for field, kind, expected in (
        ("expected_concepts", "concept", expected_concepts),
        ("expected_labels", "label", expected_labels),
    ):
        covered = names_covered(expected, cues, kind)
        entries.extend(
            f"{field}: '{entry}' not resolved"
            for entry, hit in zip(expected, covered, strict=True)
            if not hit
        )
    for probe in structural.associations if structural is not None else []:
        miss = _association_miss(probe)
        if miss is not None:
            entries.append(miss)
    for check in checks or []:
        locator = f"expected_citations: ({check.source}, {check.paragraph})"
        if not check.served:
            entries.append(f"{locator} not found among served results")
        if not is_valid(check):
            entries.append(f"{locator} failed locator validity")
    return entries[:MISSED_KEPT], max(len(entries) - MISSED_KEPT, 0)


# --- the case block --------------------------------------------------------------------------


def build_case_block(
    case: EvalCase,
    lanes: LaneResults,
    *,
    evidence: Evidence | None = None,
    budget: BudgetBlock | None = None,
) -> CaseBlock:
    """Assemble one case block in writer order (§7.4) from the case and its lane results.

    ``cues`` echoes the declared cues only (absent when none); ``limit`` is the effective
    limit. ``evidence`` and ``budget`` are the assembly/budget hooks, passed through as given.
    """
    hits = searched_hits(lanes.passage)
    recall = score_recall(hits, case.expected_sources) if hits is not None else None
    judged = judgements(hits, case.expected_sources) if hits is not None else None
    coverage_block = (
        coverage(lanes.structural, case.expected_concepts, case.expected_labels)
        if lanes.structural is not None
        else None
    )
    if case.expected_citations and len(lanes.checks or []) != len(case.expected_citations):
        raise ValueError(
            f"case {case.case_id!r}: {len(lanes.checks or [])} citation checks for "
            f"{len(case.expected_citations)} expected citations"
        )
    checks = lanes.checks if case.expected_citations else None
    missed_entries, missed_truncated = missed(
        hits=hits,
        expected_sources=case.expected_sources,
        expected_concepts=case.expected_concepts,
        expected_labels=case.expected_labels,
        structural=lanes.structural,
        checks=checks,
    )
    return CaseBlock(
        case_id=case.case_id,
        query=case.query,
        cues=list(case.cues) if case.cues else None,
        limit=case.effective_limit,
        passage=lanes.passage,
        structural=lanes.structural,
        recall=recall,
        coverage=coverage_block,
        lane_cross=lane_cross(coverage_block, recall),
        citations=citations_block(checks) if checks else None,
        missed=missed_entries,
        missed_truncated=missed_truncated,
        evidence=evidence,
        budget=budget,
        diversity_sources=diversity_sources(lanes.passage),
        label_coverage=None if judged is None else label_coverage_block(judged, recall),
    )
