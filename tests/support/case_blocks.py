"""Case blocks for the metric tests: one case with just the parts a test names."""

from typing import Any

from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    PassageFailed,
    PassageSearched,
    PositionAmbiguous,
    PositionErrored,
    PositionNotFound,
    QueryErrored,
    QueryQueried,
    Structural,
)
from pytest_taguru.score.case import citations_block


def positions(latency: int) -> dict[str, Any]:
    return {
        "subject": PositionErrored(message="down", latency_ms=latency),
        "label": PositionNotFound(latency_ms=latency),
        "object": PositionAmbiguous(tier="semantic", candidates=["a", "b"], latency_ms=latency),
    }


def probe(query: QueryQueried | QueryErrored | None, latency: int = 1) -> AssociationProbe:
    return AssociationProbe(
        subject_cue="s", label_cue="l", object_cue="o", query=query, **positions(latency)
    )


def make_case(
    *,
    failed: bool = False,
    structural: Structural | None = None,
    checks: list[CitationCheck] | None = None,
    latency: int = 1,
    **extra: Any,
) -> CaseBlock:
    passage = (
        PassageFailed(message="x", latency_ms=latency)
        if failed
        else PassageSearched(hits=[], latency_ms=latency)
    )
    return CaseBlock(
        case_id="c",
        query="q",
        passage=passage,
        structural=structural,
        citations=citations_block(checks) if checks else None,
        **extra,
    )


def resolved_check(**fields: Any) -> CheckResolved:
    return CheckResolved(source="a", paragraph=0, served=False, **fields)


def unresolved_check(code: str | None, latency: int = 1) -> CheckUnresolved:
    return CheckUnresolved(source="a", paragraph=0, served=False, code=code, latency_ms=latency)
