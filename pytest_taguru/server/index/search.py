"""Result assembly of ``POST /contexts/{name}/sources/search`` without a vector lane.

server-wire §2.12 and §3.9: the limit-0 check comes first, then the no-terms check (both
lanes skipped with the same reason); otherwise BM25 runs and the vector lane reports the
no-provider reason. Hits are the BM25 lane list cut to ``limit``, each with
``lanes.bm25 = {rank, score}``; ``plan.filter`` appears only when a filter was given.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_taguru.core.jsontext import Float32
from pytest_taguru.core.wire import (
    ContextPlan,
    LanePlan,
    PlanLanes,
    SearchPlan,
    SourceFilter,
)
from pytest_taguru.server.context import Context
from pytest_taguru.server.index.passages import StoredPassage
from pytest_taguru.server.index.text import query_terms

REASON_LIMIT_ZERO = "the requested limit is 0"
REASON_NO_TERMS = "the query yields no searchable terms"
REASON_NO_PROVIDER = "no embedding provider is configured"


@dataclass(frozen=True)
class SourceFilterSpec:
    """A validated ``tags``/``since``/``until`` filter; ``active`` when any was given."""

    tags: frozenset[str] = frozenset()
    since: int | None = None
    until: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.tags) or self.since is not None or self.until is not None

    def admits(self, passage: StoredPassage) -> bool:
        """Any-of tag match and ``since ≤ effective time < until`` (§3.9)."""
        if self.tags and not self.tags.intersection(passage.tags):
            return False
        moment = passage.effective_time
        if self.since is not None and moment < self.since:
            return False
        return self.until is None or moment < self.until


def search(context: Context, query: str, limit: int, spec: SourceFilterSpec) -> dict[str, Any]:
    """The ``{plan, hits}`` result for one context (caller holds the store lock)."""
    eligible: Callable[[str], bool] | None = None
    source_filter: SourceFilter | None = None
    if spec.active:
        admitted = {s for s, p in context.passages.items() if spec.admits(p)}
        eligible = admitted.__contains__
        source_filter = SourceFilter(
            eligible_sources=len(admitted), total_sources=len(context.passages)
        )
    if limit == 0:
        return _result(context.name, _skipped(REASON_LIMIT_ZERO), source_filter, [])
    if not query_terms(query):
        return _result(context.name, _skipped(REASON_NO_TERMS), source_filter, [])
    lanes = PlanLanes(
        bm25=LanePlan(ran=True), vector=LanePlan(ran=False, reason=REASON_NO_PROVIDER)
    )
    return _result(context.name, lanes, source_filter, _hits(context, query, limit, eligible))


def _hits(
    context: Context, query: str, limit: int, eligible: Callable[[str], bool] | None
) -> list[dict[str, Any]]:
    """The served hits as ``SearchHit`` dumps: plain dicts in the model's key order (a test
    holds them to the model), as a model per hit costs more than a whole deep search."""
    hits = []
    for hit in context.bm25.best(query, limit, eligible):
        # Scores are 32-bit on the server and print as the shortest float32 decimal (§1.3).
        score = Float32(hit.score)
        hits.append(
            {
                "source": hit.source,
                "paragraph": hit.paragraph,
                "score": score,
                "text": context.passages[hit.source].paragraphs[hit.paragraph],
                "lanes": {"bm25": {"rank": hit.rank, "score": score}},
            }
        )
    return hits


def _skipped(reason: str) -> PlanLanes:
    return PlanLanes(
        bm25=LanePlan(ran=False, reason=reason), vector=LanePlan(ran=False, reason=reason)
    )


def _result(
    name: str,
    lanes: PlanLanes,
    source_filter: SourceFilter | None,
    hits: list[dict[str, Any]],
) -> dict[str, Any]:
    plan = SearchPlan(contexts=[ContextPlan(context=name, lanes=lanes, filter=source_filter)])
    return {"plan": plan.model_dump(exclude_none=True), "hits": hits}
