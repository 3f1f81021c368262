"""Wire models: the taguru server responses the evaluator reads, one model per shape.

This module holds the context, search, resolve, query and citation shapes; the evidence
package and its request are :mod:`pytest_taguru.core.wire_evidence`.

The plugin's client decodes with them and the reference server builds its answers with them,
so both sides share one definition. Decoding follows taguru's own client (serde): strict types
(``3.0`` is not an integer, strings are never coerced, ``null`` is not a missing value), extra
keys ignored everywhere except inside a citation ``locator`` (serde ``deny_unknown_fields``).

A field that taguru may omit is typed ``X | None = None``; the reference server serializes
with ``exclude_none`` only where the real server omits the key (see each model's docstring).
Specification: ``server-wire.md`` §2, ``evaluate-run.md`` §3.1 and §4.
"""

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pytest_taguru.core.jsontext import F32_FIELD
from pytest_taguru.core.limits import U32, U64

F32 = Annotated[float, F32_FIELD]
"""A 32-bit float on the server (scores, floors): written back as the shortest f32 text."""


class WireModel(BaseModel):
    """Base of every wire shape: strict scalars, extra keys ignored, immutable."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


# --- GET /contexts/{name} -------------------------------------------------------------------


class Revision(WireModel):
    """Revision lanes; compared for equality only (server-wire §3.10). Missing reads as 0."""

    graph: U64 = 0
    passages: U64 = 0
    config: U64 = 0


class TopConcept(WireModel):
    label: str
    count: U64


class ContextStats(WireModel):
    """Graph and store statistics; every member may be missing, none may be null."""

    associations: U64 = 0
    concepts: U64 = 0
    labels: U64 = 0
    sources: U64 = 0
    dead_edges: U64 = 0
    dead_attributions: U64 = 0
    unsourced_edges: U64 = 0
    unsourced_weight: float = 0.0
    arena_slack: U64 = 0
    footprint_bytes: U64 = 0
    top_concepts: list[TopConcept] = Field(default_factory=list)
    label_sample: list[str] = Field(default_factory=list)

    @field_validator("top_concepts", mode="before")
    @classmethod
    def _pairs_to_objects(cls, value: Any) -> Any:
        # taguru accepts both ``{label, count}`` objects and ``[label, count]`` pairs.
        if isinstance(value, list):
            return [
                {"label": item[0], "count": item[1]}
                if isinstance(item, list) and len(item) == 2
                else item
                for item in value
            ]
        return value


class ContextUsage(WireModel):
    """Advisory usage counters (server-wire §3.10)."""

    reads: U64 = 0
    writes: U64 = 0
    empty_reads: U64 = 0
    last_read_epoch: U64 = 0
    last_write_epoch: U64 = 0


class ContextEntry(WireModel):
    """A context directory entry (``GET /contexts/{name}``, ``GET /contexts`` items).

    ``revision`` may be missing (reads as zeros) but not ``null``; the four optional scalars
    are always written by the server, as ``null`` when unset.
    """

    name: str
    description: str
    pinned: bool
    loaded: bool
    dice_floor: float | None = None
    semantic_floor: float | None = None
    schema_mode: str | None = None
    revision: Revision = Field(default_factory=Revision)
    stats: ContextStats
    usage: ContextUsage

    @field_validator("revision", mode="before")
    @classmethod
    def _revision_not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("revision must be an object, not null")
        return value


class EmbeddingsStatus(WireModel):
    """``GET /contexts/{name}/embeddings``; only ``provider_model`` is read by the evaluator."""

    provider_model: str | None = None


# --- POST /contexts/{name}/sources/search ---------------------------------------------------


class LanePlan(WireModel):
    """One lane of a search plan; ``reason`` only when it did not run, ``floor`` only vector."""

    ran: bool
    reason: str | None = None
    floor: Annotated[float | None, F32_FIELD] = None


class PlanLanes(WireModel):
    bm25: LanePlan
    vector: LanePlan


class SourceFilter(WireModel):
    eligible_sources: U64
    total_sources: U64


class ContextPlan(WireModel):
    """``plan.contexts[]``; ``filter`` only when a tags/time filter was given."""

    context: str
    lanes: PlanLanes
    filter: SourceFilter | None = None


class SearchPlan(WireModel):
    contexts: list[ContextPlan]


class LaneRank(WireModel):
    """A hit's evidence from one lane: its 1-based rank and that lane's score."""

    rank: U64
    score: F32


class HitLanes(WireModel):
    bm25: LaneRank | None = None
    vector: LaneRank | None = None


class SearchHit(WireModel):
    """One paragraph hit; ``text`` is corpus text and never leaves the client."""

    source: str
    paragraph: U32
    score: F32
    text: str
    lanes: HitLanes


class SearchResult(WireModel):
    """The strict ``{plan, hits}`` shape of ``sources/search`` (evaluate-run §4.1)."""

    plan: SearchPlan
    hits: list[SearchHit]


# --- POST /contexts/{name}/resolve, resolve_label -------------------------------------------


class ResolveCandidate(WireModel):
    """A resolve candidate; ``kind`` only on the lexical tier."""

    name: str
    score: float
    tier: str
    kind: str | None = None
    gloss: str | None = None
    types: list[str] | None = None


# --- POST /contexts/{name}/query ------------------------------------------------------------


class Locator(BaseModel):
    """A paragraph locator such as ``{"kind": "page", "value": "2"}``; extra keys refused."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    kind: str
    value: str


class Attribution(WireModel):
    """One source's share of an association, with its paragraph when recorded."""

    source: str
    weight: float
    count: U64
    paragraph: U32 | None = None
    section: str | None = None
    locator: Locator | None = None


class Association(WireModel):
    subject: str
    label: str
    object: str
    weight: float
    count: U64
    attributions: list[Attribution]


class QueryPlan(WireModel):
    contexts: list[str]


class QueryResult(WireModel):
    """``POST /contexts/{name}/query``: ``total`` counts matches before the limit."""

    total: U64
    matches: list[Association]
    plan: QueryPlan | None = None


# --- POST /contexts/{name}/citations --------------------------------------------------------


class Citation(WireModel):
    """One paragraph by locator; ``section``/``locator`` are ``null`` when there is none."""

    text: str
    source: str
    section: str | None = None
    locator: Locator | None = None
