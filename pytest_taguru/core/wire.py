"""Wire models: the taguru server responses the evaluator reads, one model per shape.

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

U32 = Annotated[int, Field(ge=0, le=2**32 - 1)]
U64 = Annotated[int, Field(ge=0, le=2**64 - 1)]
F32 = Annotated[float, F32_FIELD]
"""A 32-bit float on the server (scores, floors): written back as the shortest f32 text."""


class WireModel(BaseModel):
    """Base of every wire shape: strict scalars, extra keys ignored, immutable."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class ErrorBody(WireModel):
    """Error envelope: ``{"status": "error", "code", "error", "time"}`` plus optional extras,
    each left out when it does not apply (server-wire §1.3)."""

    status: str = "error"
    code: str
    error: str
    time: float = 0.0
    issues: list[dict[str, Any]] | None = None
    issues_total: U64 | None = None
    integrity: str | None = None
    durable_batches: U64 | None = None
    retryable_after_correction: bool | None = None


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


class ContextList(WireModel):
    """``GET /contexts``."""

    contexts: list[ContextEntry]
    total: U64


class EmbeddingsStatus(WireModel):
    """``GET /contexts/{name}/embeddings``; only ``provider_model`` is read by the evaluator."""

    provider_model: str | None = None


class SourceEntry(WireModel):
    """One listed source; ``stored_at``, ``date`` and ``tags`` are left out when absent."""

    name: str
    stored_at: U64 | None = None
    date: U64 | None = None
    tags: list[str] | None = None


class SourcesPage(WireModel):
    """``GET /contexts/{name}/sources``: one keyset page of stored passage source names.

    ``total`` counts every stored source (after ``prefix``), independent of the page.
    """

    total: U64 = 0
    sources: list[str]
    entries: list[SourceEntry] = Field(default_factory=list)


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


# --- POST /contexts/{name}/evidence ---------------------------------------------------------
# Decoded as strictly as taguru's client does (assembly.md §2.6): the keys named there are
# required, integers are non-negative JSON integers, unknown keys are ignored. Keys the server
# may leave out (``corroboration``, ``contradicts``, the community extras, a lane's ``reason``,
# the reranker's ``model``/``reason``, an omission's ``duplicate_of``) are ``None`` when absent.


class EvidenceLaneRank(WireModel):
    """The best rank a candidate got in one retrieval lane (open vocabulary ``lane``)."""

    lane: str
    rank: U64


class CitationRef(WireModel):
    """A ``(source, paragraph)`` locator an item cites; its text is in ``citations[]``."""

    source: str
    paragraph: U32


class Corroboration(WireModel):
    """An association's distinct attribution sources and its resolved attribution locators."""

    sources: list[str]
    attributions: list[CitationRef]


class CommunityMember(WireModel):
    name: str
    strength: float


class CommunityHit(WireModel):
    """A community summary hit; the optional keys are left out when absent, empty or false."""

    community: str
    score: F32
    text: str
    paragraph: U32
    level: U64 | None = None
    parent: str | None = None
    concept_count: U64 | None = None
    members: list[CommunityMember] | None = None
    members_truncated: bool | None = None


class EvidenceItem(WireModel):
    """One admitted item; exactly one payload key, matching ``kind``, on a taguru server.

    The client derives an item's own locator from which payload is present (``passage``
    first, then ``community``), never from ``kind``.
    """

    candidate_id: str
    kind: str
    fused_rank: U64
    lane_ranks: list[EvidenceLaneRank]
    citation_refs: list[CitationRef]
    corroboration: Corroboration | None = None
    contradicts: list[str] | None = None
    bytes: U64 | None = None
    estimated_tokens: U64 | None = None
    association: Association | None = None
    passage: SearchHit | None = None
    community: CommunityHit | None = None


class EvidenceCitation(WireModel):
    """One cited paragraph, exactly once per locator, sorted by ``(source, paragraph)``."""

    source: str
    paragraph: U32
    citation: Citation


class BudgetLimits(WireModel):
    max_items: U64
    max_bytes: U64
    max_tokens: U64


class BudgetUsage(WireModel):
    """``budget``: what the admitted items and citations cost, and the limits applied."""

    items_used: U64
    bytes_used: U64
    tokens_used: U64
    limits: BudgetLimits


class OmittedCandidate(WireModel):
    """A non-admitted candidate; ``duplicate_of`` only for ``duplicate_passage``."""

    candidate_id: str
    kind: str
    reason: str
    duplicate_of: str | None = None


class EvidenceLanes(WireModel):
    """``plan.lanes``: all six lanes are required; a lane's ``reason`` only when it did not run."""

    resolve: LanePlan
    query: LanePlan
    activate: LanePlan
    passages: LanePlan
    communities: LanePlan
    citations: LanePlan


class Selection(WireModel):
    dedup_dropped: U64
    contradiction_groups: U64
    diversity_tier_width: U64


class RerankerPlan(WireModel):
    """``plan.reranker``: ``model`` only when it ran, ``reason`` only when requested but not run."""

    configured: bool
    ran: bool
    model: str | None = None
    reason: str | None = None


class EvidencePlan(WireModel):
    lanes: EvidenceLanes
    selection: Selection
    reranker: RerankerPlan


class EvidencePackage(WireModel):
    """The ``result`` of ``POST /contexts/{name}/evidence`` (assembly.md §2.4)."""

    items: list[EvidenceItem]
    citations: list[EvidenceCitation]
    budget: BudgetUsage
    omitted: list[OmittedCandidate]
    omitted_total: U64
    omitted_by_reason: dict[str, U64]
    plan: EvidencePlan


def _one_or_many(value: Any) -> Any:
    """A bare string stands for a one-element list (``origins``, ``labels``)."""
    return [value] if isinstance(value, str) else value


class EvidenceBudgetRequest(WireModel):
    """A request's ``budget``; each ceiling defaults (and is capped) per ``budget.Limits``."""

    max_items: U64 | None = None
    max_bytes: U64 | None = None
    max_tokens: U64 | None = None


class EvidenceRerankRequest(WireModel):
    """A request's ``rerank``: ``{}`` asks for the server's model, ``model`` pins one."""

    model: str | None = None


class EvidenceRequest(WireModel):
    """The body of ``POST /contexts/{name}/evidence`` (assembly.md §2.2).

    ``origins`` is required and not nullable; every other field may be absent or ``null``
    (meaning the same), except ``include_communities``, a plain boolean that only defaults
    when missing. Unknown keys are ignored, inside ``budget`` and ``rerank`` too.
    """

    origins: list[str]
    labels: list[str] | None = None
    dice_floor: float | None = None
    semantic_floor: float | None = None
    resolve_limit: U64 | None = None
    activate_decay: float | None = None
    activate_limit: U64 | None = None
    text_fallback_query: str | None = None
    search_limit: U64 | None = None
    include_communities: bool = False
    budget: EvidenceBudgetRequest | None = None
    rerank: EvidenceRerankRequest | None = None

    _origins_one_or_many = field_validator("origins", "labels", mode="before")(_one_or_many)
