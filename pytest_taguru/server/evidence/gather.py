"""The retrieval lanes of evidence assembly over one context (assembly.md §3.2, §3.3, §3.11).

Runs under the store lock and returns plain data: the raw candidates of every lane (one per
lane result, ranked 1.. within its lane), the stored text of every located attribution, and
the six lane plans. Simplifications a reference server may make (§3.11), stated once here:

* resolve — the lexical resolver of ``POST …/resolve``; an origin's top candidate is an anchor;
* query — live associations whose subject is an anchor and whose label is named, by |weight|
  descending then ``(subject, label, object)``, first 100;
* activate — one hop: live associations with an anchor as subject or object, same order, cut
  to ``activate_limit`` (default 20, at most 1000). ``activate_decay`` scales every strength
  alike, so it never changes this order;
* passages — the BM25 lane of ``sources/search`` over the canonical query (no vector lane);
* communities — a search over the derived ``<name>::communities`` context when one exists
  (each stored source is a community id), else the missing-artifact reason.
"""

from dataclasses import dataclass, field
from typing import Any

from pytest_taguru.core.budget import passage_item
from pytest_taguru.core.jsontext import Float32
from pytest_taguru.core.wire import Association, HitLanes
from pytest_taguru.server.context import Context
from pytest_taguru.server.evidence.request import EvidenceRequest
from pytest_taguru.server.evidence.select import NUL, Candidate, Locator
from pytest_taguru.server.graph_reads import association_out
from pytest_taguru.server.index.graph import MatchRow
from pytest_taguru.server.index.resolve import DEFAULT_DICE_FLOOR
from pytest_taguru.server.index.search import SourceFilterSpec, search
from pytest_taguru.server.store import Store

QUERY_LANE_CAP = 100
MAX_MATCH_LIMIT = 1000
DEFAULT_ACTIVATE_LIMIT = 20
DEFAULT_SEARCH_LIMIT = 5
MAX_SEARCH_LIMIT = 200

ORIGINS_EMPTY = "origins was empty"
NO_ANCHORS = "no anchors resolved from 'origins'"
NO_LABELS = "no 'labels' given"
COMMUNITIES_OFF = "include_communities was false"


def no_communities_artifact(name: str) -> str:
    """The communities lane's reason when the derived context does not exist."""
    return (
        f"no communities artifact for '{name}': context '{name}::communities' does not exist"
        " — run `taguru communities` to build it"
    )


def lane_plan(reason: str | None = None) -> dict[str, Any]:
    """``{"ran": true}``, or ``{"ran": false, "reason": …}`` for a skipped lane."""
    return {"ran": True} if reason is None else {"ran": False, "reason": reason}


@dataclass
class Gathered:
    """Everything the lanes found: raw candidates, citation texts by locator, lane plans."""

    candidates: list[Candidate] = field(default_factory=list)
    citations: dict[Locator, dict[str, Any]] = field(default_factory=dict)
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)


def gather(store: Store, context: Context, request: EvidenceRequest) -> Gathered:
    """Run resolve → query → activate → passages → communities → citations (§3.2)."""
    found = Gathered()
    anchors = resolve_anchors(store, context, request)
    found.plans["resolve"] = lane_plan(ORIGINS_EMPTY if not request.origins else None)
    if not anchors:
        found.plans["query"] = lane_plan(NO_ANCHORS)
    elif not request.labels:
        found.plans["query"] = lane_plan(NO_LABELS)
    else:
        rows = context.graph.query(anchors, list(request.labels), [], None)
        found.candidates += _association_lane(
            store, context, rows, "graph_query", QUERY_LANE_CAP, live_only=False
        )
        found.plans["query"] = lane_plan()
    if anchors:
        limit = min(
            DEFAULT_ACTIVATE_LIMIT if request.activate_limit is None else request.activate_limit,
            MAX_MATCH_LIMIT,
        )
        rows = context.graph.query(anchors, [], [], None)
        rows += context.graph.query([], [], anchors, None)
        found.candidates += _association_lane(
            store, context, rows, "graph_activate", limit, live_only=True
        )
        found.plans["activate"] = lane_plan()
    else:
        found.plans["activate"] = lane_plan(NO_ANCHORS)
    search_limit = min(
        DEFAULT_SEARCH_LIMIT if request.search_limit is None else request.search_limit,
        MAX_SEARCH_LIMIT,
    )
    reason, hits = _search(store, context, request.canonical_query, search_limit)
    found.candidates += [_passage(context.name, hit, rank) for rank, hit in enumerate(hits, 1)]
    found.plans["passages"] = lane_plan(reason)
    found.plans["communities"] = _communities(store, context.name, request, search_limit, found)
    found.citations = _citations(context, found.candidates)
    found.plans["citations"] = lane_plan()
    return found


def resolve_anchors(store: Store, context: Context, request: EvidenceRequest) -> list[str]:
    """Each origin's top lexical resolve candidate, in origin order, without repeats.

    Every origin's resolve is a served resolve: it counts one read (empty when it found
    nothing), as taguru's per-origin resolve does (server-wire §3.10).
    """
    floor = request.dice_floor if request.dice_floor is not None else context.options.dice_floor
    floor = DEFAULT_DICE_FLOOR if floor is None else min(max(floor, 0.0), 1.0)
    anchors: list[str] = []
    for cue in request.origins:
        index = context.graph.concepts.index
        top = [] if request.resolve_limit == 0 else index.resolve(cue, 1, floor)
        store.note_read(context, empty=not top)
        if top and top[0].name not in anchors:
            anchors.append(top[0].name)
    return anchors


def _association_lane(
    store: Store,
    context: Context,
    rows: list[MatchRow],
    lane: str,
    limit: int,
    *,
    live_only: bool,
) -> list[Candidate]:
    """The lane's candidates ranked as ``/query`` ranks matches, cut to ``limit``.

    The query lane is ``/query``'s match set, dead edges included (until compaction); the
    activate lane walks live edges only. The read is empty when nothing matched at all.
    """
    matched = {row.triple: row for row in rows if row.count > 0 or not live_only}
    ordered = sorted(matched.values(), key=lambda r: (-abs(r.weight), *r.triple))[:limit]
    store.note_read(context, empty=not matched)
    return [
        association_candidate(association_out(context, row), lane, rank)
        for rank, row in enumerate(ordered, start=1)
    ]


def association_candidate(association: Association, lane: str, rank: int) -> Candidate:
    """An association candidate (§3.3): key ``subject NUL label NUL object``.

    Primary source: the attribution with the largest |weight|; ties → smallest source, then
    one with a paragraph over one without, then the smallest paragraph. Origins: every
    attribution locator that has a paragraph.
    """
    attributions = association.attributions
    primary = min(
        attributions,
        key=lambda a: (-abs(a.weight), a.source, a.paragraph is None, a.paragraph or 0),
        default=None,
    )
    return Candidate(
        kind="association",
        key=NUL.join((association.subject, association.label, association.object)),
        payload=association.model_dump(),
        text=f"{association.subject} {association.label} {association.object}",
        source=None if primary is None else primary.source,
        lane_ranks={lane: rank},
        origins={(a.source, a.paragraph) for a in attributions if a.paragraph is not None},
    )


def _search(
    store: Store, context: Context, query: str, limit: int
) -> tuple[str | None, list[dict[str, Any]]]:
    """The BM25 lane's skip reason (if any) and hits, as ``sources/search`` serves them."""
    result = search(context, query, limit, SourceFilterSpec())
    bm25 = result["plan"]["contexts"][0]["lanes"]["bm25"]
    hits: list[dict[str, Any]] = result["hits"]
    store.note_read(context, empty=not hits)
    return (None if bm25["ran"] else bm25["reason"]), hits


def _passage(name: str, hit: dict[str, Any], rank: int) -> Candidate:
    item = passage_item(
        name,
        source=hit["source"],
        paragraph=hit["paragraph"],
        score=hit["score"],
        text=hit["text"],
        lanes=HitLanes.model_validate(hit["lanes"]),
        fused_rank=0,
        lane_rank=rank,
    )
    return Candidate(
        kind="passage",
        key=NUL.join((name, hit["source"], str(hit["paragraph"]))),
        payload=item["passage"],
        text=hit["text"],
        source=hit["source"],
        lane_ranks={item["lane_ranks"][0]["lane"]: rank},
    )


def _communities(
    store: Store, name: str, request: EvidenceRequest, limit: int, found: Gathered
) -> dict[str, Any]:
    if not request.include_communities:
        return lane_plan(COMMUNITIES_OFF)
    derived = store.contexts.get(f"{name}::communities")
    if derived is None:
        return lane_plan(no_communities_artifact(name))
    _, hits = _search(store, derived, request.canonical_query, limit)
    for rank, hit in enumerate(hits, start=1):
        community = f"community:{hit['source']}"
        found.candidates.append(
            Candidate(
                kind="community",
                key=NUL.join((name, community, str(hit["paragraph"]))),
                payload={
                    "community": hit["source"],
                    "score": Float32(hit["score"]),
                    "text": hit["text"],
                    "paragraph": hit["paragraph"],
                },
                text=hit["text"],
                source=community,
                lane_ranks={"community": rank},
            )
        )
    return lane_plan()


def _citations(context: Context, candidates: list[Candidate]) -> dict[Locator, dict[str, Any]]:
    """The stored text of every located attribution; unknown locators are skipped (§3.2)."""
    found: dict[Locator, dict[str, Any]] = {}
    for source, paragraph in sorted({loc for c in candidates for loc in c.origins}):
        passage = context.passages.get(source)
        if passage is None or paragraph >= len(passage.paragraphs):
            continue
        locator = passage.locator_of(paragraph)
        found[(source, paragraph)] = {
            "text": passage.paragraphs[paragraph],
            "source": source,
            "section": passage.section_of(paragraph),
            "locator": None if locator is None else {"kind": locator.kind, "value": locator.value},
        }
    return found
