"""The numbers behind the stdout summary (``RunSummary``), computed from the case blocks.

Printing is not done here (``report.summary``). Specification: ``evaluate-run.md`` §8.2.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_taguru.artifact.case import (
    CaseBlock,
    PassageFailed,
    PositionAmbiguous,
    PositionNotFound,
)
from pytest_taguru.score.case import is_valid
from pytest_taguru.score.populations import both_hit, neither_hit

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


class _RunningMean:
    """``(((−0.0 + v₁) + v₂) + … + vₙ) / n`` in the order given (taguru's summary means), or
    ``None`` for no values. Unlike a distribution's ``mean`` the values are not sorted first,
    which can change the last bits and so a rounded digit."""

    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.total, self.n = -0.0, 0

    def add(self, value: float) -> None:
        self.total += value
        self.n += 1

    def value(self) -> float | None:
        return self.total / self.n if self.n else None


class SummaryTally:
    """``RunSummary`` gathered one case block at a time, in case order (§8.2).

    Ambiguous / not-found counts are over association positions only (cue resolutions and
    errored positions excluded). Each mean is a :class:`_RunningMean` in case order. The invalid
    locators are the first three invalid checks in case order, then check order;
    ``more_invalid_locators`` counts the rest.
    """

    def __init__(self) -> None:
        self.cases = self.passage_failed = self.structural_cases = 0
        self.ambiguous_positions = self.not_found_positions = self.recall_cases = 0
        self.cross_tab_cases = self.cross_tab_both = self.cross_tab_neither = 0
        self.citation_cases = self.retried_requests = self.retried_cases = 0
        self.recall_at_k, self.mrr, self.ndcg = _RunningMean(), _RunningMean(), _RunningMean()
        self.citation_recall, self.locator_validity = _RunningMean(), _RunningMean()
        self.invalid: list[InvalidLocator] = []
        self.more_invalid = 0

    def add(self, case: CaseBlock) -> None:
        self.cases += 1
        self.passage_failed += isinstance(case.passage, PassageFailed)
        self.retried_requests += case.retries or 0
        self.retried_cases += bool(case.retries)
        if case.structural is not None:
            self.structural_cases += 1
            for probe in case.structural.associations:
                for position in (probe.subject, probe.label, probe.object):
                    self.ambiguous_positions += isinstance(position, PositionAmbiguous)
                    self.not_found_positions += isinstance(position, PositionNotFound)
        if case.recall is not None:
            self.recall_cases += 1
            self.recall_at_k.add(case.recall.recall_at_k)
            self.mrr.add(case.recall.mrr)
            self.ndcg.add(case.recall.ndcg)
        if case.lane_cross is not None:
            self.cross_tab_cases += 1
            self.cross_tab_both += both_hit(case.lane_cross)
            self.cross_tab_neither += neither_hit(case.lane_cross)
        if case.citations is not None:
            self.citation_cases += 1
            self.citation_recall.add(case.citations.recall.value)
            self.locator_validity.add(case.citations.validity.value)
            for check in case.citations.checks:
                if is_valid(check):
                    continue
                if len(self.invalid) < INVALID_SHOWN:
                    self.invalid.append(InvalidLocator(check.source, check.paragraph))
                else:
                    self.more_invalid += 1

    def result(self) -> RunSummary:
        return RunSummary(
            cases=self.cases,
            passage_ok=self.cases - self.passage_failed,
            passage_failed=self.passage_failed,
            structural_cases=self.structural_cases,
            ambiguous_positions=self.ambiguous_positions,
            not_found_positions=self.not_found_positions,
            recall_cases=self.recall_cases,
            mean_recall_at_k=self.recall_at_k.value(),
            mean_mrr=self.mrr.value(),
            mean_ndcg=self.ndcg.value(),
            cross_tab_cases=self.cross_tab_cases,
            cross_tab_both=self.cross_tab_both,
            cross_tab_neither=self.cross_tab_neither,
            citation_cases=self.citation_cases,
            mean_citation_recall=self.citation_recall.value(),
            mean_locator_validity=self.locator_validity.value(),
            invalid_locators=tuple(self.invalid),
            more_invalid_locators=self.more_invalid,
            retried_requests=self.retried_requests,
            retried_cases=self.retried_cases,
        )


def run_summary(cases: Iterable[CaseBlock]) -> RunSummary:
    """``RunSummary`` of case blocks in case order (:class:`SummaryTally`)."""
    tally = SummaryTally()
    for case in cases:
        tally.add(case)
    return tally.result()
