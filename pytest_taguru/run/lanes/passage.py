"""The passage lane (evaluate-run.md §4.1): ``POST sources/search`` and what the run records of it.

Every server-side failure (transport, status, envelope, shape) is recorded in the lane's
outcome and never raised. Hits keep their text only in memory (``HitLocator.text``, always
set here: ``""`` when a fallback hit carries none), for the budget accounting of the assembly
module and ``--taguru-show-text``; the artifact never carries it.
"""

import math
from dataclasses import dataclass
from typing import Any, TypeGuard

from pydantic import ValidationError

from pytest_taguru.artifact.case import (
    HitLocator,
    Passage,
    PassageFailed,
    PassageSearched,
)
from pytest_taguru.core.jsontext import to_f32
from pytest_taguru.core.limits import U32_MAX, U64_MAX
from pytest_taguru.core.wire import (
    ContextPlan,
    HitLanes,
    LanePlan,
    LaneRank,
    PlanLanes,
    SearchResult,
)
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.lanes import clock
from pytest_taguru.run.lanes.request_bodies import (
    search_body,
)

NO_RECOGNIZABLE_HITS = "response carries no recognizable hits (plan/hits shape mismatch)"
HIT_WITHOUT_SOURCE = "a hit is missing 'source'"
HIT_WITHOUT_PARAGRAPH = "a hit is missing 'paragraph'"
_NO_LANES = HitLanes()  # frozen: one shared value for every hit without lanes


@dataclass(frozen=True)
class PassageFetch:
    """A successful ``sources/search`` call: hits in server order (each with its text), the
    plan if strict."""

    hits: list[HitLocator]
    plan: ContextPlan | None
    latency_ms: int


def fetch_passage_hits(
    client: TaguruClient, context: str, case: EvalCase
) -> PassageFetch | PassageFailed:
    """``POST sources/search`` and its strict-then-fallback parse; the hits keep their text.

    Latency stops when the envelope is unwrapped (before parsing) or when the failure is known.
    HTTP messages are truncated; the three fixed shape messages are not.
    """
    started = clock.monotonic_ns()
    try:
        result = client.post_json(["contexts", context, "sources", "search"], search_body(case))
    except CallFailed as failure:
        return PassageFailed(message=failure.truncated(), latency_ms=clock.call_ms(client, started))
    latency_ms = clock.call_ms(client, started)
    try:
        page = SearchResult.model_validate(result)
    except ValidationError:
        return _fallback_hits(result, latency_ms)
    plan = _recorded_plan(page.plan.contexts[0]) if page.plan.contexts else None
    hits = [
        HitLocator(
            source=hit.source,
            paragraph=hit.paragraph,
            score=to_f32(hit.score),
            lanes=_recorded_lanes(hit.lanes),
            text=hit.text,
        )
        for hit in page.hits
    ]
    return PassageFetch(hits, plan, latency_ms)


def _recorded_lanes(lanes: HitLanes) -> HitLanes:
    if lanes.bm25 is None and lanes.vector is None:
        return _NO_LANES
    return HitLanes(bm25=_recorded_rank(lanes.bm25), vector=_recorded_rank(lanes.vector))


def _recorded_rank(lane: LaneRank | None) -> LaneRank | None:
    return None if lane is None else LaneRank(rank=lane.rank, score=to_f32(lane.score))


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
    hits: list[HitLocator] = []
    for raw in raw_hits:
        item = raw if isinstance(raw, dict) else {}
        source, paragraph, score = item.get("source"), item.get("paragraph"), item.get("score")
        if not isinstance(source, str):
            return PassageFailed(message=HIT_WITHOUT_SOURCE, latency_ms=latency_ms)
        if not _is_uint(paragraph):
            return PassageFailed(message=HIT_WITHOUT_PARAGRAPH, latency_ms=latency_ms)
        text = item.get("text")
        hits.append(
            HitLocator(
                source=source,
                paragraph=paragraph % (U32_MAX + 1),
                score=_number_as_f32(score),
                lanes=_NO_LANES,
                text=text if isinstance(text, str) else "",
            )
        )
    return PassageFetch(hits, None, latency_ms)


def search_passage_lane(client: TaguruClient, context: str, case: EvalCase) -> Passage:
    """The baseline passage lane: every hit the server returned, in its order; a hit's text
    stays in the process only (``HitLocator.text``, for ``--taguru-show-text``)."""
    fetched = fetch_passage_hits(client, context, case)
    if isinstance(fetched, PassageFailed):
        return fetched
    return PassageSearched(
        plan=fetched.plan,
        hits=fetched.hits,
        latency_ms=fetched.latency_ms,
    )
