"""The numbers behind the stdout summary (``RunSummary``), computed from the case blocks.

Printing is not done here (``report.summary``). Specification: ``evaluate-run.md`` §8.2.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_taguru.artifact.case import (
    CaseBlock,
    PassageFailed,
    PositionAmbiguous,
    PositionNotFound,
)
from pytest_taguru.score.case import is_valid
from pytest_taguru.score.populations import RunCases, both_hit, neither_hit

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
    retried_requests: int = 0
    """Requests sent again over the run (the case blocks' ``retries``)."""
    retried_cases: int = 0


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
    run = RunCases(cases)
    crossed = run.lane_crosses
    invalid = [
        InvalidLocator(check.source, check.paragraph) for check in run.checks if not is_valid(check)
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
        cross_tab_both=sum(map(both_hit, crossed)),
        cross_tab_neither=sum(map(neither_hit, crossed)),
        citation_cases=len(citations),
        mean_citation_recall=plain_mean([c.recall.value for c in citations]),
        mean_locator_validity=plain_mean([c.validity.value for c in citations]),
        invalid_locators=tuple(invalid[:INVALID_SHOWN]),
        more_invalid_locators=max(len(invalid) - INVALID_SHOWN, 0),
        retried_requests=sum(case.retries or 0 for case in cases),
        retried_cases=sum(bool(case.retries) for case in cases),
    )
