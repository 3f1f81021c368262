"""The structural lane (evaluate-run.md §4.2, §4.3): coverage cues, association probes, /query.

Each resolve call is reduced to its top tier; a position resolves only to exactly one name,
and ``/query`` runs only when all three positions did. Failures are recorded, never raised.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import ConfigDict, TypeAdapter, ValidationError

from pytest_taguru.artifact.case import (
    AssociationProbe,
    AttributionLocator,
    CueResolution,
    Position,
    PositionAmbiguous,
    PositionErrored,
    PositionNotFound,
    PositionResolved,
    QueryErrored,
    QueryProbe,
    QueryQueried,
    Structural,
)
from pytest_taguru.core.text import truncate_message
from pytest_taguru.core.wire import QueryResult, ResolveCandidate
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.envelope import decode_error_text
from pytest_taguru.run.eval_models import RESOLVE_LIMIT, EvalCase, ExpectedAssociation
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.lanes import clock
from pytest_taguru.run.lanes.request_bodies import query_body, resolve_body

ResolveEndpoint = Literal["resolve", "resolve_label"]

_CANDIDATES = TypeAdapter(list[ResolveCandidate], config=ConfigDict(strict=True))


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
    started = clock.monotonic_ns()
    try:
        result = client.post_json(["contexts", context, endpoint], resolve_body(cue))
    except CallFailed as failure:
        return ResolveCall([], failure.truncated(), clock.call_ms(client, started))
    latency_ms = clock.call_ms(client, started)
    try:
        candidates = _CANDIDATES.validate_python(result)
    except ValidationError as error:
        message = truncate_message(f"{endpoint} response did not parse: {decode_error_text(error)}")
        return ResolveCall([], message, clock.call_ms(client, started))
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
    started = clock.monotonic_ns()
    try:
        result = client.post_json(["contexts", context, "query"], body)
    except CallFailed as failure:
        return QueryErrored(message=failure.truncated(), latency_ms=clock.call_ms(client, started))
    latency_ms = clock.call_ms(client, started)
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
