"""One case's detail in the data island: what the artifact recorded, and what the eval set
declared, as compact arrays the page reads on demand (``assets/detail.js``, ``caseDetail``).

Keys of the detail object, each present only when it has something to say::

    cq  the declared cues; lm: the effective limit, when not the run's default
    p   a searched passage: [plan, lanes, exponent, then per hit: source, paragraph, score
        mantissa and, with lanes, its bm25 rank and vector rank]. plan: an index into
        ``plans`` (-1 for none); lanes: 1 when the hits carry lane ranks (0: that lane did not
        find the hit), 0 when every hit has only its bm25 lane at its own rank; a score is
        ``mantissa · 10^exponent`` (``compact.scaled_scores``; null when not finite); source:
        an index into ``sources``. The lanes' own scores are left out (the artifact has
        them); the call's latency is the case's ``latency.passage_ms`` column
    pf  a failed passage: its message
    cu  cues: [[cue, kind, [resolved names], tier, latency_ms, error], …]
    as  associations: [[subject cue, label cue, object cue, subject, label, object, query], …]
        position: ["resolved", name, tier, ms] | ["not_found", ms] | ["ambiguous", tier,
        [candidates], ms] | ["errored", message, ms]; query: null | ["queried", total,
        matches, [source, paragraph, …] or null, ms] | ["errored", message, ms]
    ck  citation checks: [[source, paragraph, served, "resolved", section, expected section,
        quote, ms] | [source, paragraph, served, "unresolved", code, message, ms], …];
        section: "not_checked" | "matched" | "mismatched"; quote: null (none declared) or
        whether the declared quote matched — never the quote itself: it is corpus text the
        eval author copied, and the drill-down does not echo it either
    m   missed (at most 3), mt: how many more
    ev  evidence: ["assembled", ms, [[kind, fused rank, source, paragraph, [source,
        paragraph, …]], …], omitted by reason, [dedup dropped, contradiction groups, tier
        width], [configured, ran, model, reason]] | ["failed", message, ms]
    bu  budget: [items, bytes, tokens, omitted, max items, max bytes, max tokens]
    v   case-scoped violations: [[metric, bound, threshold, actual, reason], …]
    xs  expected sources (eval set): [[source, [paragraphs], relevance, [hit positions]], …]
    xc, xl  expected concepts / labels (eval set): [[name, covered], …]
    xo  declared options (eval set): {"limit", "floor", "tags", "since", "until"}
    dd  the drill-down text of a case that broke a bound (eval set)
    rp  the reproduction requests of a case that missed something without breaking a bound

Scores are rounded to ``compact.SCORE_DIGITS`` significant digits; nothing here is corpus text
(the artifact carries none).
"""

from collections.abc import Sequence
from typing import Any

from pytest_taguru.artifact.assembly import BudgetBlock, Evidence, EvidenceAssembled
from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    CitationCheck,
    HitLocator,
    PassageSearched,
    Position,
    PositionAmbiguous,
    PositionErrored,
    PositionResolved,
    QueryProbe,
    QueryQueried,
    Structural,
)
from pytest_taguru.core.jsontext import to_f32
from pytest_taguru.core.wire import ContextPlan
from pytest_taguru.gate.thresholds import Violation
from pytest_taguru.report.html.compact import (
    StringTable,
    compact_json,
    figure,
    scaled_scores,
    score,
)
from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.score.case import names_covered, satisfies


def _trivial_lanes(hits: Sequence[HitLocator]) -> bool:
    """Every hit carries only its bm25 lane, at its own rank: nothing to add."""
    return all(
        hit.lanes.vector is None
        and hit.lanes.bm25 is not None
        and hit.lanes.bm25.rank == position + 1
        for position, hit in enumerate(hits)
    )


def _plan(plan: ContextPlan) -> dict[str, Any]:
    """A search plan as the page shows it: each lane's verdict, a floor at ``SCORE_DIGITS``."""
    lanes = {}
    for name, lane in (("bm25", plan.lanes.bm25), ("vector", plan.lanes.vector)):
        shown: dict[str, Any] = {"ran": lane.ran}
        if lane.reason is not None:
            shown["reason"] = lane.reason
        if lane.floor is not None:
            shown["floor"] = score(to_f32(lane.floor))
        lanes[name] = shown
    out: dict[str, Any] = {"lanes": lanes}
    if plan.filter is not None:
        out["filter"] = plan.filter.model_dump()
    return out


def _passage(
    passage: PassageSearched, strings: StringTable, plans: StringTable
) -> list[int | None]:
    hits = passage.hits
    plan = -1 if passage.plan is None else plans.ref(compact_json(_plan(passage.plan)))
    lanes = not _trivial_lanes(hits)
    # Narrowed again: a score read back from the artifact's text is the nearest double to its
    # 32-bit decimal, not the 32-bit value itself.
    exponent, mantissas = scaled_scores([to_f32(hit.score) for hit in hits])
    numbers: list[int | None] = [plan, int(lanes), exponent]
    for hit, mantissa in zip(hits, mantissas, strict=True):
        numbers += [strings.ref(hit.source), hit.paragraph, mantissa]
        if lanes:
            bm25, vector = hit.lanes.bm25, hit.lanes.vector
            numbers += [0 if bm25 is None else bm25.rank, 0 if vector is None else vector.rank]
    return numbers


def _position(position: Position) -> list[Any]:
    if isinstance(position, PositionResolved):
        return [position.outcome, position.name, position.tier, position.latency_ms]
    if isinstance(position, PositionAmbiguous):
        return [position.outcome, position.tier, position.candidates, position.latency_ms]
    if isinstance(position, PositionErrored):
        return [position.outcome, position.message, position.latency_ms]
    return [position.outcome, position.latency_ms]


def _query(query: QueryProbe | None, strings: StringTable) -> list[Any] | None:
    if query is None:
        return None
    if isinstance(query, QueryQueried):
        attributions = None
        if query.attributions is not None:
            attributions = []
            for item in query.attributions:
                attributions += [strings.ref(item.source), item.paragraph]
        return [query.outcome, query.total, query.matches, attributions, query.latency_ms]
    return [query.outcome, query.message, query.latency_ms]


def _probe(probe: AssociationProbe, strings: StringTable) -> list[Any]:
    return [
        probe.subject_cue,
        probe.label_cue,
        probe.object_cue,
        _position(probe.subject),
        _position(probe.label),
        _position(probe.object),
        _query(probe.query, strings),
    ]


def _structural(structural: Structural, strings: StringTable) -> dict[str, Any]:
    detail: dict[str, Any] = {}
    if structural.cues:
        detail["cu"] = [
            [cue.cue, cue.kind, cue.resolved_names, cue.tier, cue.latency_ms, cue.error]
            for cue in structural.cues
        ]
    if structural.associations:
        detail["as"] = [_probe(probe, strings) for probe in structural.associations]
    return detail


def _check(check: CitationCheck, strings: StringTable) -> list[Any]:
    head = [strings.ref(check.source), check.paragraph, check.served, check.outcome]
    if isinstance(check, CheckResolved):
        section = check.section
        expected = getattr(section, "expected", None)
        quote = check.quote
        return [
            *head,
            section.check,
            expected,
            None if quote is None else quote.matched,
            check.latency_ms,
        ]
    return [*head, check.code, check.message, check.latency_ms]


def _evidence(evidence: Evidence, strings: StringTable) -> list[Any]:
    if not isinstance(evidence, EvidenceAssembled):
        return [evidence.outcome, evidence.message, evidence.latency_ms]
    items = []
    for item in evidence.items:
        refs: list[Any] = []
        for ref in item.citation_refs:
            refs += [strings.ref(ref.source), ref.paragraph]
        source = None if item.source is None else strings.ref(item.source)
        items.append([item.kind, item.fused_rank, source, item.paragraph, refs])
    selection, reranker = evidence.selection, evidence.reranker
    return [
        evidence.outcome,
        evidence.latency_ms,
        items,
        evidence.omitted_by_reason or {},
        [selection.dedup_dropped, selection.contradiction_groups, selection.diversity_tier_width],
        [reranker.configured, reranker.ran, reranker.model, reranker.reason],
    ]


def _budget(budget: BudgetBlock) -> list[Any]:
    limits = budget.limits
    return [
        budget.items_used,
        budget.bytes_used,
        budget.tokens_used,
        budget.omitted_total,
        limits.max_items,
        limits.max_bytes,
        limits.max_tokens,
    ]


def recorded_detail(
    block: CaseBlock,
    *,
    default_limit: int,
    strings: StringTable,
    plans: StringTable,
    violations: Sequence[Violation],
) -> dict[str, Any]:
    """What the artifact recorded of one case (every key but the eval set's ``x*``, ``dd``,
    ``rp``). ``plans`` interns each distinct search plan as its JSON text."""
    detail: dict[str, Any] = {}
    if block.cues:
        detail["cq"] = block.cues
    if block.limit != default_limit:
        detail["lm"] = block.limit
    passage = block.passage
    if isinstance(passage, PassageSearched):
        detail["p"] = _passage(passage, strings, plans)
    else:
        detail["pf"] = passage.message
    if block.structural is not None:
        detail.update(_structural(block.structural, strings))
    if block.citations is not None and block.citations.checks:
        detail["ck"] = [_check(check, strings) for check in block.citations.checks]
    if block.missed:
        detail["m"] = block.missed
    if block.missed_truncated:
        detail["mt"] = block.missed_truncated
    if block.evidence is not None:
        detail["ev"] = _evidence(block.evidence, strings)
    if block.budget is not None:
        detail["bu"] = _budget(block.budget)
    if violations:
        detail["v"] = [
            [item.metric, item.bound, figure(item.threshold), figure(item.actual), item.reason]
            for item in violations
        ]
    return detail


def declared_detail(case: EvalCase, block: CaseBlock, strings: StringTable) -> dict[str, Any]:
    """What the eval set declared for one case, with where each expectation stood."""
    detail: dict[str, Any] = {}
    passage = block.passage
    hits = passage.hits if isinstance(passage, PassageSearched) else []
    if case.expected_sources:
        detail["xs"] = [
            [
                strings.ref(entry.source),
                list(entry.paragraphs),
                entry.relevance,
                [position for position, hit in enumerate(hits) if satisfies(hit, entry)],
            ]
            for entry in case.expected_sources
        ]
    cues = block.structural.cues if block.structural is not None else []
    for key, kind, names in (
        ("xc", "concept", case.expected_concepts),
        ("xl", "label", case.expected_labels),
    ):
        if names:
            covered = names_covered(names, cues, kind)
            detail[key] = [[name, hit] for name, hit in zip(names, covered, strict=True)]
    options = case.options.model_dump(exclude_defaults=True)
    if case.options.floor is not None:
        options["floor"] = score(case.options.floor)
    if options:
        detail["xo"] = options
    return detail
