"""Wire models of ``POST /contexts/{name}/evidence``: the package the evaluator reads and the
request body (assembly.md §2.2, §2.4), on :mod:`pytest_taguru.core.wire`'s base and shapes.

Decoded as strictly as taguru's client does (assembly.md §2.6): the keys named there are
required, integers are non-negative JSON integers, unknown keys are ignored. Keys the server
may leave out (``corroboration``, ``contradicts``, the community extras, a lane's ``reason``,
the reranker's ``model``/``reason``, an omission's ``duplicate_of``) are ``None`` when absent.
"""

from typing import Any

from pydantic import field_validator

from pytest_taguru.core.limits import U32, U64
from pytest_taguru.core.wire import F32, Association, Citation, LanePlan, SearchHit, WireModel


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
