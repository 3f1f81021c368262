"""What the run-level metrics are drawn from: populations and samples over the case blocks.

Pure: everything is read from the case blocks of one run (in run order) and the run's own
``--rerank`` flag. Specification: ``evaluate-run.md`` §6.2, ``assembly.md`` §1.11.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from pytest_taguru.artifact.assembly import BudgetBlock, EvidenceAssembled, RerankerRecord
from pytest_taguru.artifact.case import (
    CaseBlock,
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    LaneCross,
)


@dataclass(frozen=True)
class RunCases:
    """The case blocks of one run, in run order, and whether the run was given ``--rerank``.

    The populations several metrics share are computed once, on first use.
    """

    blocks: Sequence[CaseBlock]
    rerank_requested: bool = False

    @cached_property
    def checks(self) -> list[CitationCheck]:
        """Every citation check of every case: case order, then check order."""
        return [
            check
            for case in self.blocks
            if case.citations is not None
            for check in case.citations.checks
        ]

    @cached_property
    def resolved_checks(self) -> list[CheckResolved]:
        return [check for check in self.checks if isinstance(check, CheckResolved)]

    @cached_property
    def lane_crosses(self) -> list[LaneCross]:
        """The cross-tab population: the cases with a ``lane_cross`` block (§5.4)."""
        return [case.lane_cross for case in self.blocks if case.lane_cross is not None]

    @cached_property
    def budgets(self) -> list[BudgetBlock]:
        return [case.budget for case in self.blocks if case.budget is not None]


def unresolved_code(check: CitationCheck) -> str | None:
    """The error code of an unresolved check; ``None`` for a resolved one (or no code)."""
    return check.code if isinstance(check, CheckUnresolved) else None


def both_hit(cross: LaneCross) -> bool:
    return cross.structural_hit and cross.passage_hit


def neither_hit(cross: LaneCross) -> bool:
    return not cross.structural_hit and not cross.passage_hit


def resolve_latencies(run: RunCases) -> Iterator[int]:
    """Every cue resolution, then the three positions of every probe, errored ones included."""
    for case in run.blocks:
        if case.structural is None:
            continue
        yield from (cue.latency_ms for cue in case.structural.cues)
        for probe in case.structural.associations:
            yield from (probe.subject.latency_ms, probe.label.latency_ms, probe.object.latency_ms)


def query_latencies(run: RunCases) -> Iterator[int]:
    """One per probe whose ``query`` key exists, queried or errored."""
    for case in run.blocks:
        if case.structural is not None:
            for probe in case.structural.associations:
                if probe.query is not None:
                    yield probe.query.latency_ms


def evidence_latencies(run: RunCases) -> Iterator[int]:
    """One per case with an ``evidence`` block, assembled or failed."""
    return (case.evidence.latency_ms for case in run.blocks if case.evidence is not None)


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


def omitted_counts(run: RunCases) -> tuple[int, int]:
    """``budget.omitted_rate``'s ``(numerator, n)``: Σ budget-only omitted and
    Σ (``omitted_total`` + ``items_used``), both over the cases with a budget."""
    numerator = denominator = 0
    for case in run.blocks:
        if case.budget is not None:
            numerator += _budget_only_omitted(case, case.budget)
            denominator += case.budget.omitted_total + case.budget.items_used
    return numerator, denominator


def rerank_attempts(run: RunCases) -> list[RerankerRecord]:
    """The rerankers of assembled cases in a ``--rerank`` run, minus ``empty_pool`` ones."""
    if not run.rerank_requested:
        return []
    assembled = [evidence for case in run.blocks if (evidence := _assembled(case)) is not None]
    return [
        evidence.reranker for evidence in assembled if evidence.reranker.reason != "empty_pool"
    ]
