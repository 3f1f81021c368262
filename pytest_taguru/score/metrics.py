"""Run metrics: the 31-metric catalog, its ``definitions`` block, and aggregation over cases.

Every metric is either a ``distribution`` of per-case samples or a ``ratio`` over a run-level
population; all 31 keys are always present, with nulls when a population is empty. The
numbers behind the stdout summary (``RunSummary``) are computed here too; printing is not.
Specification: ``evaluate-run.md`` §6 and §8.2, ``assembly.md`` §1.11,
``thresholds-and-compare.md`` Appendix N.4.
"""

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from pytest_taguru.artifact.assembly import BudgetBlock, EvidenceAssembled
from pytest_taguru.artifact.case import (
    CaseBlock,
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    LaneCross,
    PassageFailed,
    PositionAmbiguous,
    PositionNotFound,
    SectionMatched,
    SectionNotChecked,
)
from pytest_taguru.artifact.evaluation import Definition, Distribution, MetricValue, Ratio
from pytest_taguru.score.case import is_valid

Statistic = Literal["distribution", "ratio"]
Member = TypeVar("Member")

_SEARCH = "POST /contexts/{name}/sources/search"
_RESOLVE = "POST /contexts/{name}/resolve"
_RESOLVE_LABEL = "POST /contexts/{name}/resolve_label"
_QUERY = "POST /contexts/{name}/query"
_CITATIONS = "POST /contexts/{name}/citations"
_EVIDENCE = "POST /contexts/{name}/evidence"
_BUDGET = "crate::api::evidence::budget"
_LANES = "derived from coverage.* and recall.recall_at_k"


@dataclass(frozen=True)
class MetricSpec:
    """One catalog row: what a metric measures and where its numbers come from."""

    name: str
    unit: str
    statistic: Statistic
    source: str
    description: str
    caveat: str | None

    def definition(self) -> Definition:
        """The ``definitions`` entry; scopes follow the statistic (§6.3)."""
        return Definition(
            unit=self.unit,
            statistic=self.statistic,
            scopes=["case"] if self.statistic == "distribution" else ["run"],
            description=self.description,
            source=self.source,
            caveat=self.caveat,
        )


_NO_BUDGET = "Empty unless a --max-* flag or --assembly put a budget on the evidence."
_NO_RECALL = "Only cases that searched successfully and declared a relevance-1+ source count."
_CROSS_TAB = (
    "Only cases declaring both a structural and a graded source expectation whose passage "
    "lane searched are counted."
)

CATALOG: tuple[MetricSpec, ...] = (
    MetricSpec("budget.bytes_used", "byte", "distribution", _BUDGET,
               "UTF-8 bytes of the evidence each budgeted case kept.", _NO_BUDGET),
    MetricSpec("budget.items_used", "item", "distribution", _BUDGET,
               "Number of evidence items each budgeted case kept.", _NO_BUDGET),
    MetricSpec("budget.omitted_rate", "ratio", "ratio", f"{_BUDGET}, {_EVIDENCE}",
               "Fraction of candidates considered across budgeted cases that were left out "
               "because a budget ceiling was reached.", _NO_BUDGET),
    MetricSpec("budget.tokens_used", "token", "distribution", _BUDGET,
               "Estimated tokens of the evidence each budgeted case kept.", _NO_BUDGET),
    MetricSpec("citations.locator_validity", "ratio", "distribution", _CITATIONS,
               "For each case, the fraction of its expected citations that resolved and passed "
               "any declared section and quote check.",
               "Cases without expected_citations contribute no sample."),
    MetricSpec("citations.no_paragraph", "ratio", "ratio", _CITATIONS,
               "Fraction of all citation checks answered 404 with code no_paragraph.", None),
    MetricSpec("citations.no_source", "ratio", "ratio", _CITATIONS,
               "Fraction of all citation checks answered 404 with code no_source.", None),
    MetricSpec("citations.other", "ratio", "ratio", _CITATIONS,
               "Fraction of all citation checks that failed for any other reason, so that "
               "resolved, no_source, no_paragraph and other add up to the whole.", None),
    MetricSpec("citations.quote_match", "ratio", "ratio",
               f"eval.jsonl expected_citations.quote, {_CITATIONS}",
               "Among resolved checks with a declared quote, the fraction whose folded "
               "paragraph text contains the folded quote.",
               "n is 0 when no resolved check declared a quote."),
    MetricSpec("citations.recall", "ratio", "distribution",
               f"eval.jsonl expected_citations, {_SEARCH}, {_QUERY}",
               "For each case, the fraction of its expected citation locators that appeared "
               "among its passage hits or query attributions.",
               "Cases without expected_citations contribute no sample."),
    MetricSpec("citations.resolved", "ratio", "ratio", _CITATIONS,
               "Fraction of all citation checks whose locator resolved to a paragraph.", None),
    MetricSpec("citations.section_match", "ratio", "ratio",
               f"eval.jsonl expected_citations.section, {_CITATIONS}",
               "Among resolved checks with a declared section (null included), the fraction "
               "whose section label was the declared one.",
               "n is 0 when no resolved check declared a section."),
    MetricSpec("coverage.associations", "ratio", "distribution",
               f"eval.jsonl expected_associations, {_QUERY}",
               "For each case, the fraction of its expected associations that a query on the "
               "pinned names found at least once.",
               "Cases without expected_associations contribute no sample; a position that "
               "did not resolve to exactly one name leaves its association uncovered."),
    MetricSpec("coverage.concepts", "ratio", "distribution",
               f"eval.jsonl expected_concepts, {_RESOLVE}",
               "For each case, the fraction of its expected concepts that some cue resolved "
               "to, compared after folding.",
               "Cases without expected_concepts contribute no sample."),
    MetricSpec("coverage.labels", "ratio", "distribution",
               f"eval.jsonl expected_labels, {_RESOLVE_LABEL}",
               "For each case, the fraction of its expected labels that some cue resolved "
               "to, compared after folding.",
               "Cases without expected_labels contribute no sample."),
    MetricSpec("diversity.sources", "source", "distribution", f"{_SEARCH}, {_EVIDENCE}",
               "For each case, how many different sources its scored hits came from.",
               "Cases whose passage or evidence call failed contribute no sample."),
    MetricSpec("lanes.both", "ratio", "ratio", _LANES,
               "Fraction of cross-tab cases where the structural and the passage lane both "
               "found something expected.", None),
    MetricSpec("lanes.neither", "ratio", "ratio", _LANES,
               "Fraction of cross-tab cases where neither lane found anything expected.", None),
    MetricSpec("lanes.passage_hit", "ratio", "ratio", _LANES,
               "Fraction of cross-tab cases whose hits matched at least one expected source.",
               _CROSS_TAB),
    MetricSpec("lanes.structural_hit", "ratio", "ratio", _LANES,
               "Fraction of cross-tab cases whose structural coverage matched at least one "
               "expectation.", _CROSS_TAB),
    MetricSpec("latency.citation_ms", "ms", "distribution", _CITATIONS,
               "Milliseconds taken by each citation check, from request to computed outcome.",
               "Empty when no case declared expected_citations."),
    MetricSpec("latency.evidence_ms", "ms", "distribution", _EVIDENCE,
               "Milliseconds taken by each assembly-mode evidence call, failed ones included.",
               "Empty unless the run used --assembly."),
    MetricSpec("latency.passage_ms", "ms", "distribution", _SEARCH,
               "Milliseconds taken by each case's passage call, failed ones included.", None),
    MetricSpec("latency.query_ms", "ms", "distribution", _QUERY,
               "Milliseconds taken by each association query, errored ones included.",
               "Empty unless some association resolved all three positions to one name."),
    MetricSpec("latency.resolve_ms", "ms", "distribution", f"{_RESOLVE}, {_RESOLVE_LABEL}",
               "Milliseconds taken by each resolve or resolve_label call, for coverage cues "
               "and association positions alike.", None),
    MetricSpec("passage.failure_rate", "ratio", "ratio", _SEARCH,
               "Fraction of cases whose passage call failed or answered in an unusable shape.",
               None),
    MetricSpec("recall.mrr", "ratio", "distribution", f"eval.jsonl expected_sources, {_SEARCH}",
               "For each case, one over the 1-based rank of the first hit matching any "
               "expected source, or 0 when none does.", _NO_RECALL),
    MetricSpec("recall.ndcg", "ratio", "distribution",
               f"eval.jsonl expected_sources.relevance, {_SEARCH}",
               "For each case, discounted gain of the graded expectations at their first "
               "matching hits, relative to the ideal ordering.", _NO_RECALL),
    MetricSpec("recall.recall_at_k", "ratio", "distribution",
               f"eval.jsonl expected_sources, {_SEARCH}",
               "For each case, the fraction of its graded expected sources matched by any hit.",
               _NO_RECALL),
    MetricSpec("rerank.ran", "ratio", "ratio", f"{_EVIDENCE} plan.reranker",
               "Fraction of assembled --rerank cases with a non-empty pool whose reranker "
               "actually reordered it.", "Empty unless the run used --rerank."),
    MetricSpec("structural.case_rate", "ratio", "ratio", "eval.jsonl case fields",
               "Fraction of cases that declared a concept, label or association expectation "
               "and so ran the structural lane.", None),
)  # fmt: skip


def _byte_order(names: Iterable[str]) -> list[str]:
    """Names sorted by their UTF-8 bytes, the writer's key order (§7.1)."""
    return sorted(names, key=lambda name: name.encode("utf-8"))


def definitions() -> dict[str, Definition]:
    """The ``definitions`` block: one entry per catalog metric, keys in byte-wise order."""
    by_name = {spec.name: spec for spec in CATALOG}
    return {name: by_name[name].definition() for name in _byte_order(by_name)}


# --- value shapes (§6.1) ---------------------------------------------------------------------


def _total_order(value: float) -> tuple[float, float]:
    # IEEE total order for finite values: -0.0 sorts before 0.0.
    return value, math.copysign(1.0, value)


def distribution(samples: Iterable[float]) -> Distribution:
    """Summarize per-case samples (§6.1, Appendix N.4).

    Non-finite samples are dropped; the rest sorted ascending (``s₁ ≤ … ≤ sₙ``).
    ``sum = (((−0.0 + s₁) + s₂) + … + sₙ)``, ``mean = sum / n``, ``min = s₁``, ``max = sₙ``,
    ``pXX = s_i`` with ``i = clamp(⌈XX·n / 100⌉, 1, n)`` in integer arithmetic (nearest rank,
    never interpolated). Every statistic is a double; all are ``None`` when ``n = 0``.
    """
    ordered = sorted((float(s) for s in samples if math.isfinite(s)), key=_total_order)
    count = len(ordered)
    if count == 0:
        return Distribution(n=0)
    total = -0.0
    for sample in ordered:
        total += sample

    def nearest_rank(percent: int) -> float:
        rank = -(-percent * count // 100)
        return ordered[min(max(rank, 1), count) - 1]

    return Distribution(
        n=count,
        min=ordered[0],
        p50=nearest_rank(50),
        p90=nearest_rank(90),
        p99=nearest_rank(99),
        max=ordered[-1],
        mean=total / count,
        sum=total,
    )


def ratio(numerator: int, n: int) -> Ratio:
    """``value = numerator / n`` over a run-level population of size ``n`` (§6.1).

    With ``n = 0``: ``{value: null, n: 0, numerator: null}``.
    """
    if n == 0:
        return Ratio(value=None, n=0, numerator=None)
    return Ratio(value=numerator / n, n=n, numerator=numerator)


def _share(population: Iterable[Member], counted: Callable[[Member], bool]) -> Ratio:
    """A ratio whose ``n`` is the population size and numerator the members ``counted``."""
    members = list(population)
    return ratio(sum(1 for member in members if counted(member)), len(members))


# --- populations (§6.2, assembly.md §1.11) ---------------------------------------------------


def _checks(cases: Sequence[CaseBlock]) -> Iterator[CitationCheck]:
    for case in cases:
        if case.citations is not None:
            yield from case.citations.checks


def _resolve_latencies(cases: Sequence[CaseBlock]) -> Iterator[int]:
    """Every cue resolution, then the three positions of every probe, errored ones included."""
    for case in cases:
        if case.structural is None:
            continue
        yield from (cue.latency_ms for cue in case.structural.cues)
        for probe in case.structural.associations:
            yield from (probe.subject.latency_ms, probe.label.latency_ms, probe.object.latency_ms)


def _query_latencies(cases: Sequence[CaseBlock]) -> Iterator[int]:
    for case in cases:
        if case.structural is not None:
            for probe in case.structural.associations:
                if probe.query is not None:
                    yield probe.query.latency_ms


def _assembled(case: CaseBlock) -> EvidenceAssembled | None:
    return case.evidence if isinstance(case.evidence, EvidenceAssembled) else None


def _budget_only_omitted(case: CaseBlock, budget: BudgetBlock) -> int:
    """Candidates a budget ceiling (not deduplication) dropped (assembly.md §1.11).

    Assembled case: ``omitted_by_reason[budget_exceeded] +
    omitted_by_reason[contradiction_group_exceeds_budget]``; baseline: ``omitted_total``.
    """
    evidence = _assembled(case)
    if evidence is not None:
        reasons = evidence.omitted_by_reason or {}
        return reasons.get("budget_exceeded", 0) + reasons.get(
            "contradiction_group_exceeds_budget", 0
        )
    return budget.omitted_total


def _omitted_rate(cases: Sequence[CaseBlock]) -> Ratio:
    """Σ budget-only omitted / Σ (omitted_total + items_used) over cases with a budget."""
    numerator = denominator = 0
    for case in cases:
        if case.budget is not None:
            numerator += _budget_only_omitted(case, case.budget)
            denominator += case.budget.omitted_total + case.budget.items_used
    return ratio(numerator, denominator)


def _rerank_ran(cases: Sequence[CaseBlock], rerank_requested: bool) -> Ratio:
    """Over assembled cases of a ``--rerank`` run, minus ``empty_pool`` ones: ``ran`` true."""
    assembled = [evidence for case in cases if (evidence := _assembled(case)) is not None]
    attempted = [
        evidence.reranker
        for evidence in assembled
        if rerank_requested and evidence.reranker.reason != "empty_pool"
    ]
    return _share(attempted, lambda reranker: reranker.ran)


def _both(cross: LaneCross) -> bool:
    return cross.structural_hit and cross.passage_hit


def _neither(cross: LaneCross) -> bool:
    return not cross.structural_hit and not cross.passage_hit


def _code(check: CitationCheck) -> str | None:
    return check.code if isinstance(check, CheckUnresolved) else None


def build_metrics(
    cases: Sequence[CaseBlock], *, rerank_requested: bool = False
) -> dict[str, MetricValue]:
    """All 31 metrics over the case blocks, keys in byte-wise order (§6.2).

    ``rerank_requested`` is whether the run was given ``--rerank``; without it ``rerank.ran``
    has no population. The hook metrics read the ``budget`` and ``evidence`` blocks as
    ``assembly.md`` §1.8 shapes them; in a baseline run those are absent and the hook metrics
    have ``n = 0``.
    """
    checks = list(_checks(cases))
    resolved = [check for check in checks if isinstance(check, CheckResolved)]
    crossed = [case.lane_cross for case in cases if case.lane_cross is not None]
    recalls = [case.recall for case in cases if case.recall is not None]
    citations = [case.citations for case in cases if case.citations is not None]
    coverages = [case.coverage for case in cases if case.coverage is not None]
    budgets = [case.budget for case in cases if case.budget is not None]
    values: dict[str, MetricValue] = {
        "budget.bytes_used": distribution(b.bytes_used for b in budgets),
        "budget.items_used": distribution(b.items_used for b in budgets),
        "budget.omitted_rate": _omitted_rate(cases),
        "budget.tokens_used": distribution(b.tokens_used for b in budgets),
        "citations.locator_validity": distribution(c.validity.value for c in citations),
        "citations.no_paragraph": _share(checks, lambda c: _code(c) == "no_paragraph"),
        "citations.no_source": _share(checks, lambda c: _code(c) == "no_source"),
        "citations.other": _share(
            checks,
            lambda c: isinstance(c, CheckUnresolved)
            and c.code not in ("no_source", "no_paragraph"),
        ),
        "citations.quote_match": _share(
            [check.quote for check in resolved if check.quote is not None],
            lambda quote: quote.matched,
        ),
        "citations.recall": distribution(c.recall.value for c in citations),
        "citations.resolved": _share(checks, lambda c: isinstance(c, CheckResolved)),
        "citations.section_match": _share(
            [c.section for c in resolved if not isinstance(c.section, SectionNotChecked)],
            lambda section: isinstance(section, SectionMatched),
        ),
        "coverage.associations": distribution(
            c.associations.value for c in coverages if c.associations is not None
        ),
        "coverage.concepts": distribution(
            c.concepts.value for c in coverages if c.concepts is not None
        ),
        "coverage.labels": distribution(c.labels.value for c in coverages if c.labels is not None),
        "diversity.sources": distribution(
            case.diversity_sources for case in cases if case.diversity_sources is not None
        ),
        "lanes.both": _share(crossed, _both),
        "lanes.neither": _share(crossed, _neither),
        "lanes.passage_hit": _share(crossed, lambda x: x.passage_hit),
        "lanes.structural_hit": _share(crossed, lambda x: x.structural_hit),
        "latency.citation_ms": distribution(check.latency_ms for check in checks),
        "latency.evidence_ms": distribution(
            case.evidence.latency_ms for case in cases if case.evidence is not None
        ),
        "latency.passage_ms": distribution(case.passage.latency_ms for case in cases),
        "latency.query_ms": distribution(_query_latencies(cases)),
        "latency.resolve_ms": distribution(_resolve_latencies(cases)),
        "passage.failure_rate": _share(cases, lambda case: isinstance(case.passage, PassageFailed)),
        "recall.mrr": distribution(r.mrr for r in recalls),
        "recall.ndcg": distribution(r.ndcg for r in recalls),
        "recall.recall_at_k": distribution(r.recall_at_k for r in recalls),
        "rerank.ran": _rerank_ran(cases, rerank_requested),
        "structural.case_rate": _share(cases, lambda case: case.structural is not None),
    }
    return {name: values[name] for name in _byte_order(values)}


# --- the stdout summary numbers (§8.2) -------------------------------------------------------

INVALID_SHOWN = 3
"""How many invalid citation locators the summary lists before counting the rest."""


@dataclass(frozen=True)
class InvalidLocator:
    """A declared citation that failed locator validity, for a reproduction hint."""

    source: str
    paragraph: int


@dataclass(frozen=True)
class RunSummary:
    """The numbers of the stdout summary; means are ``None`` when their population is empty."""

    cases: int
    passage_ok: int
    passage_failed: int
    structural_cases: int
    ambiguous_positions: int
    not_found_positions: int
    recall_cases: int
    mean_recall_at_k: float | None
    mean_mrr: float | None
    mean_ndcg: float | None
    cross_tab_cases: int
    cross_tab_both: int
    cross_tab_neither: int
    citation_cases: int
    mean_citation_recall: float | None
    mean_locator_validity: float | None
    invalid_locators: tuple[InvalidLocator, ...]
    more_invalid_locators: int


def plain_mean(values: Sequence[float]) -> float | None:
    """``(((−0.0 + v₁) + v₂) + … + vₙ) / n`` in the order given (taguru's summary means), or
    ``None`` for no values. Unlike a distribution's ``mean`` the values are not sorted first,
    which can change the last bits and so a rounded digit."""
    if not values:
        return None
    total = -0.0
    for value in values:
        total += value
    return total / len(values)


def run_summary(cases: Sequence[CaseBlock]) -> RunSummary:
    """Compute ``RunSummary`` from case blocks in case order (§8.2).

    Ambiguous / not-found counts are over association positions only (cue resolutions and
    errored positions excluded). Each mean is a :func:`plain_mean` in case order. The invalid
    locators are the first three invalid checks in case order,
    then check order; ``more_invalid_locators`` counts the rest.
    """
    positions = [
        position
        for case in cases
        if case.structural is not None
        for probe in case.structural.associations
        for position in (probe.subject, probe.label, probe.object)
    ]
    recalls = [case.recall for case in cases if case.recall is not None]
    citations = [case.citations for case in cases if case.citations is not None]
    crossed = [case.lane_cross for case in cases if case.lane_cross is not None]
    invalid = [
        InvalidLocator(check.source, check.paragraph)
        for check in _checks(cases)
        if not is_valid(check)
    ]
    failed = sum(isinstance(case.passage, PassageFailed) for case in cases)
    return RunSummary(
        cases=len(cases),
        passage_ok=len(cases) - failed,
        passage_failed=failed,
        structural_cases=sum(case.structural is not None for case in cases),
        ambiguous_positions=sum(isinstance(p, PositionAmbiguous) for p in positions),
        not_found_positions=sum(isinstance(p, PositionNotFound) for p in positions),
        recall_cases=len(recalls),
        mean_recall_at_k=plain_mean([r.recall_at_k for r in recalls]),
        mean_mrr=plain_mean([r.mrr for r in recalls]),
        mean_ndcg=plain_mean([r.ndcg for r in recalls]),
        cross_tab_cases=len(crossed),
        cross_tab_both=sum(map(_both, crossed)),
        cross_tab_neither=sum(map(_neither, crossed)),
        citation_cases=len(citations),
        mean_citation_recall=plain_mean([c.recall.value for c in citations]),
        mean_locator_validity=plain_mean([c.validity.value for c in citations]),
        invalid_locators=tuple(invalid[:INVALID_SHOWN]),
        more_invalid_locators=max(len(invalid) - INVALID_SHOWN, 0),
    )
