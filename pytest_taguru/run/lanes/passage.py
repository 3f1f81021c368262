"""The three lanes of one case — passage, structural, citation — run strictly in that order.

Every server-side failure (transport, status, envelope, shape) is recorded in the lane's
outcome and never raised; only programming errors propagate. ``run_lanes`` is a plain function
over a client, so any pytest-xdist worker can call it. Latencies are whole milliseconds of the
monotonic clock, truncated, with the clock points of §4.5. Specification: ``evaluate-run.md``
§3.2, §4.
"""

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeGuard

from pydantic import ConfigDict, TypeAdapter, ValidationError

from pytest_taguru.artifact.case import (
    AssociationProbe,
    AttributionLocator,
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    CueResolution,
    HitLocator,
    Passage,
    PassageFailed,
    PassageSearched,
    Position,
    PositionAmbiguous,
    PositionErrored,
    PositionNotFound,
    PositionResolved,
    QueryErrored,
    QueryProbe,
    QueryQueried,
    QuoteCheck,
    SectionCheck,
    SectionMatched,
    SectionMismatched,
    SectionNotChecked,
    Structural,
)
from pytest_taguru.core.jsontext import to_f32
from pytest_taguru.core.limits import U32_MAX, U64_MAX
from pytest_taguru.core.text import normalize_entry, trim, truncate_message
from pytest_taguru.core.wire import (
    Citation,
    ContextPlan,
    HitLanes,
    LanePlan,
    LaneRank,
    PlanLanes,
    QueryResult,
    ResolveCandidate,
    SearchResult,
)
from pytest_taguru.run.client import CallFailed, TaguruClient, decode_error_text
from pytest_taguru.run.dataset import RESOLVE_LIMIT, EvalCase, ExpectedAssociation, ExpectedCitation
from pytest_taguru.run.lanes.request_bodies import (
    citation_body,
    query_body,
    resolve_body,
    search_body,
)
from pytest_taguru.score.case import LaneResults, served_locators

NO_RECOGNIZABLE_HITS = "response carries no recognizable hits (plan/hits shape mismatch)"
HIT_WITHOUT_SOURCE = "a hit is missing 'source'"
HIT_WITHOUT_PARAGRAPH = "a hit is missing 'paragraph'"

_CANDIDATES = TypeAdapter(list[ResolveCandidate], config=ConfigDict(strict=True))

monotonic_ns = time.monotonic_ns
"""The latency clock (module level so tests can replace it)."""


def elapsed_ms(started_ns: int) -> int:
    """Whole milliseconds since ``started_ns`` on the latency clock, truncated."""
    return (monotonic_ns() - started_ns) // 1_000_000


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


# --- passage lane (§4.1) ---------------------------------------------------------------------


@dataclass(frozen=True)
class FetchedHit:
    """A hit as the client holds it: its recorded locator and, internally only, its text.

    ``text`` is ``""`` when a fallback hit carries none; it never reaches the artifact.
    """

    locator: HitLocator
    text: str


@dataclass(frozen=True)
class PassageFetch:
    """A successful ``sources/search`` call: hits in server order, the plan if strict."""

    hits: list[FetchedHit]
    plan: ContextPlan | None
    latency_ms: int


def fetch_passage_hits(
    client: TaguruClient, context: str, case: EvalCase
) -> PassageFetch | PassageFailed:
    """``POST sources/search`` and its strict-then-fallback parse; the hits keep their text.

    Latency stops when the envelope is unwrapped (before parsing) or when the failure is known.
    HTTP messages are truncated; the three fixed shape messages are not.
    """
    started = monotonic_ns()
    try:
        result = client.post_json(["contexts", context, "sources", "search"], search_body(case))
    except CallFailed as failure:
        return PassageFailed(message=failure.truncated(), latency_ms=elapsed_ms(started))
    latency_ms = elapsed_ms(started)
    try:
        page = SearchResult.model_validate(result)
    except ValidationError:
        return _fallback_hits(result, latency_ms)
    plan = _recorded_plan(page.plan.contexts[0]) if page.plan.contexts else None
    hits = [
        FetchedHit(
            HitLocator(
                source=hit.source,
                paragraph=hit.paragraph,
                score=to_f32(hit.score),
                lanes=_recorded_lanes(hit.lanes),
            ),
            hit.text,
        )
        for hit in page.hits
    ]
    return PassageFetch(hits, plan, latency_ms)


def _recorded_lanes(lanes: HitLanes) -> HitLanes:
    def rank(lane: LaneRank | None) -> LaneRank | None:
        return None if lane is None else LaneRank(rank=lane.rank, score=to_f32(lane.score))

    return HitLanes(bm25=rank(lanes.bm25), vector=rank(lanes.vector))


def _recorded_plan(plan: ContextPlan) -> ContextPlan:
    def lane(item: LanePlan) -> LanePlan:
        floor = None if item.floor is None else to_f32(item.floor)
        return LanePlan(ran=item.ran, reason=item.reason, floor=floor)

    lanes = PlanLanes(bm25=lane(plan.lanes.bm25), vector=lane(plan.lanes.vector))
    return ContextPlan(context=plan.context, lanes=lanes, filter=plan.filter)


def _is_uint(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= U64_MAX


def _number_as_f32(value: Any) -> float:
    """A JSON number narrowed to 32 bits (integers past the double range become ±inf); else 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    try:
        return to_f32(float(value))
    except OverflowError:
        return math.copysign(math.inf, value)


def _fallback_hits(result: Any, latency_ms: int) -> PassageFetch | PassageFailed:
    """Older servers: hits from ``result`` itself or ``result.hits``, lanes empty, no plan."""
    if isinstance(result, list):
        raw_hits: list[Any] = result
    elif isinstance(result, dict) and isinstance(result.get("hits"), list):
        raw_hits = result["hits"]
    else:
        return PassageFailed(message=NO_RECOGNIZABLE_HITS, latency_ms=latency_ms)
    hits: list[FetchedHit] = []
    for raw in raw_hits:
        item = raw if isinstance(raw, dict) else {}
        source, paragraph, score = item.get("source"), item.get("paragraph"), item.get("score")
        if not isinstance(source, str):
            return PassageFailed(message=HIT_WITHOUT_SOURCE, latency_ms=latency_ms)
        if not _is_uint(paragraph):
            return PassageFailed(message=HIT_WITHOUT_PARAGRAPH, latency_ms=latency_ms)
        text = item.get("text")
        hits.append(
            FetchedHit(
                HitLocator(
                    source=source,
                    paragraph=paragraph % (U32_MAX + 1),
                    score=_number_as_f32(score),
                    lanes=HitLanes(),
                ),
                text if isinstance(text, str) else "",
            )
        )
    return PassageFetch(hits, None, latency_ms)


def search_passage_lane(client: TaguruClient, context: str, case: EvalCase) -> Passage:
    """The baseline passage lane: every hit the server returned, in its order, without text."""
    fetched = fetch_passage_hits(client, context, case)
    if isinstance(fetched, PassageFailed):
        return fetched
    return PassageSearched(
        plan=fetched.plan,
        hits=[hit.locator for hit in fetched.hits],
        latency_ms=fetched.latency_ms,
    )


# --- structural lane (§4.2, §4.3) ------------------------------------------------------------

ResolveEndpoint = Literal["resolve", "resolve_label"]


@dataclass(frozen=True)
class ResolveCall:
    """One resolve call: the top-tier group on success, else the truncated message."""

    group: list[ResolveCandidate]
    error: str | None
    latency_ms: int


def top_tier(candidates: Sequence[ResolveCandidate]) -> list[ResolveCandidate]:
    """Every ``lexical`` candidate in order if there is one, else every ``semantic`` one.

    Any other tier string is ignored; tiers are never mixed.
    """
    lexical = [candidate for candidate in candidates if candidate.tier == "lexical"]
    return lexical or [candidate for candidate in candidates if candidate.tier == "semantic"]


def call_resolve(
    client: TaguruClient, context: str, endpoint: ResolveEndpoint, cue: str
) -> ResolveCall:
    """``POST resolve``/``resolve_label`` with ``{cue, limit: 5}``, reduced to its top tier.

    Success latency stops at the envelope unwrap; a failure's (decode failures included) when
    it is known. Every failure message is truncated.
    """
    started = monotonic_ns()
    try:
        result = client.post_json(["contexts", context, endpoint], resolve_body(cue))
    except CallFailed as failure:
        return ResolveCall([], failure.truncated(), elapsed_ms(started))
    latency_ms = elapsed_ms(started)
    try:
        candidates = _CANDIDATES.validate_python(result)
    except ValidationError as error:
        message = truncate_message(f"{endpoint} response did not parse: {decode_error_text(error)}")
        return ResolveCall([], message, elapsed_ms(started))
    return ResolveCall(top_tier(candidates), None, latency_ms)


def resolve_cue(
    client: TaguruClient, context: str, cue: str, kind: Literal["concept", "label"]
) -> CueResolution:
    """One coverage cue: the whole top-tier group's names; ``tier`` is its first member's."""
    call = call_resolve(client, context, "resolve" if kind == "concept" else "resolve_label", cue)
    return CueResolution(
        cue=cue,
        kind=kind,
        resolved_names=[candidate.name for candidate in call.group],
        tier=call.group[0].tier if call.group else None,
        limit=RESOLVE_LIMIT,
        latency_ms=call.latency_ms,
        error=call.error,
    )


def classify_position(call: ResolveCall) -> Position:
    """errored / not_found (0) / resolved (exactly 1) / ambiguous (2+ group entries)."""
    if call.error is not None:
        return PositionErrored(message=call.error, latency_ms=call.latency_ms)
    if not call.group:
        return PositionNotFound(latency_ms=call.latency_ms)
    first = call.group[0]
    if len(call.group) == 1:
        return PositionResolved(name=first.name, tier=first.tier, latency_ms=call.latency_ms)
    return PositionAmbiguous(
        tier=first.tier,
        candidates=[candidate.name for candidate in call.group],
        latency_ms=call.latency_ms,
    )


def run_query(
    client: TaguruClient, context: str, subject: str, label: str, object_: str
) -> QueryProbe:
    """``POST query`` pinned on three stored names, ``limit`` 1.

    HTTP and envelope failures are truncated; a decode failure is not, and its latency stops at
    the envelope unwrap like a success's.
    """
    body = query_body(subject, label, object_)
    started = monotonic_ns()
    try:
        result = client.post_json(["contexts", context, "query"], body)
    except CallFailed as failure:
        return QueryErrored(message=failure.truncated(), latency_ms=elapsed_ms(started))
    latency_ms = elapsed_ms(started)
    try:
        page = QueryResult.model_validate(result)
    except ValidationError as error:
        message = f"query response did not parse: {decode_error_text(error)}"
        return QueryErrored(message=message, latency_ms=latency_ms)
    attributions = [
        AttributionLocator(source=attribution.source, paragraph=attribution.paragraph)
        for match in page.matches
        for attribution in match.attributions
    ]
    return QueryQueried(
        total=page.total,
        matches=len(page.matches),
        attributions=attributions or None,
        latency_ms=latency_ms,
    )


def association_probe(
    client: TaguruClient, context: str, expected: ExpectedAssociation
) -> AssociationProbe:
    """All three positions, always, then ``/query`` only when all three resolved."""
    subject = classify_position(call_resolve(client, context, "resolve", expected.subject))
    label = classify_position(call_resolve(client, context, "resolve_label", expected.label))
    object_ = classify_position(call_resolve(client, context, "resolve", expected.object))
    query: QueryProbe | None = None
    if (
        isinstance(subject, PositionResolved)
        and isinstance(label, PositionResolved)
        and isinstance(object_, PositionResolved)
    ):
        query = run_query(client, context, subject.name, label.name, object_.name)
    return AssociationProbe(
        subject_cue=expected.subject,
        label_cue=expected.label,
        object_cue=expected.object,
        subject=subject,
        label=label,
        object=object_,
        query=query,
    )


def structural_lane(client: TaguruClient, context: str, case: EvalCase) -> Structural:
    """Concept cues, then label cues, then association probes (§4.2, §4.3).

    The cue list is the case's ``cues``, or the raw query alone when there are none.
    """
    cues = list(case.cues) or [case.query]
    resolutions: list[CueResolution] = []
    if case.expected_concepts:
        resolutions += [resolve_cue(client, context, cue, "concept") for cue in cues]
    if case.expected_labels:
        resolutions += [resolve_cue(client, context, cue, "label") for cue in cues]
    probes = [
        association_probe(client, context, expected) for expected in case.expected_associations
    ]
    return Structural(cues=resolutions, associations=probes)


# --- citation lane (§4.4) --------------------------------------------------------------------


def section_check(expected: ExpectedCitation, served: str | None) -> SectionCheck:
    """Three-valued and exact: key absent → not checked; else ``expected == served``."""
    if not expected.section_declared:
        return SectionNotChecked()
    if expected.section == served:
        return SectionMatched(expected=expected.section)
    return SectionMismatched(expected=expected.section)


def quote_matches(quote: str, text: str) -> bool:
    """``normalize_entry(trim(quote))`` is a substring of ``normalize_entry(trim(text))``."""
    return normalize_entry(trim(quote)) in normalize_entry(trim(text))


def check_citation(
    client: TaguruClient,
    context: str,
    expected: ExpectedCitation,
    served: set[tuple[str, int]],
) -> CitationCheck:
    """``POST citations`` for one declared locator, its outcome and checks.

    Only a 404 carries a ``code``; every message is truncated. Latency runs until the outcome,
    checks included, is computed.
    """
    is_served = (expected.source, expected.paragraph) in served
    body = citation_body(expected.source, expected.paragraph)
    started = monotonic_ns()
    code: str | None = None
    try:
        result = client.post_json(["contexts", context, "citations"], body)
        citation = Citation.model_validate(result)
    except CallFailed as failure:
        message = failure.truncated()
        code = failure.code if failure.not_found else None
    except ValidationError as error:
        message = truncate_message(f"citation response did not parse: {decode_error_text(error)}")
    else:
        section = section_check(expected, citation.section)
        quote = (
            None
            if expected.quote is None
            else QuoteCheck(
                declared=expected.quote, matched=quote_matches(expected.quote, citation.text)
            )
        )
        return CheckResolved(
            source=expected.source,
            paragraph=expected.paragraph,
            served=is_served,
            section=section,
            quote=quote,
            latency_ms=elapsed_ms(started),
        )
    return CheckUnresolved(
        source=expected.source,
        paragraph=expected.paragraph,
        served=is_served,
        code=code,
        message=message,
        latency_ms=elapsed_ms(started),
    )
