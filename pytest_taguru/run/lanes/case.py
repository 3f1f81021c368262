"""The three lanes of one case — passage, structural, citation — run strictly in that order.

``run_lanes`` is a plain function over a client, so any pytest-xdist worker can call it.
Specification: ``evaluate-run.md`` §3.2, §4.
"""

from typing import Protocol

from pytest_taguru.artifact.case import CitationCheck, Passage
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.run.lanes.citation import check_citation
from pytest_taguru.run.lanes.passage import search_passage_lane
from pytest_taguru.run.lanes.structural import structural_lane
from pytest_taguru.score.case import LaneResults, served_locators


class PassageLane(Protocol):
    """A passage-lane strategy: the recorded ``case.passage`` of one case.

    The baseline is :func:`search_passage_lane`; the assembly and budget modes substitute their
    own without touching the structural or citation lanes.
    """

    def __call__(self, client: TaguruClient, context: str, case: EvalCase) -> Passage: ...


def run_lanes(
    client: TaguruClient,
    context: str,
    case: EvalCase,
    passage_lane: PassageLane | None = None,
) -> LaneResults:
    """Run one case's lanes in the fixed order passage → structural → citation (§3.2).

    The structural lane runs only when the case expects concepts, labels or associations; the
    citation lane only when it expects citations, after the served-locator set is computed.
    """
    passage = (passage_lane or search_passage_lane)(client, context, case)
    structural = structural_lane(client, context, case) if runs_structural_lane(case) else None
    checks: list[CitationCheck] | None = None
    if case.expected_citations:
        served = served_locators(passage, structural)
        checks = [
            check_citation(client, context, expected, served)
            for expected in case.expected_citations
        ]
    return LaneResults(passage=passage, structural=structural, checks=checks)


def runs_structural_lane(case: EvalCase) -> bool:
    return bool(case.expected_concepts or case.expected_labels or case.expected_associations)
