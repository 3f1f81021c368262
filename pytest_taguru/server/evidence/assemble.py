"""``POST /contexts/{name}/evidence``: a budgeted evidence package (assembly.md §2, §3).

Pipeline (§3.1): decode and refuse (:mod:`evidence_request`) → lanes under the store lock
(:mod:`evidence_lanes`) → reciprocal-rank fusion, k = 60 → near-duplicate passage suppression
(character-pair Dice ≥ 0.9) → optional reranker (:mod:`evidence_rerank`) → contradiction-group
units → diversity tiers (:mod:`evidence_select`) → skip-and-continue admission under the three
ceilings, measured over canonical compact JSON (:mod:`pytest_taguru.core.budget`) → the package.

Package keys in order: ``items``, ``citations``, ``budget``, ``omitted``, ``omitted_total``,
``omitted_by_reason``, ``plan``. ``omitted`` lists at most 20 entries: near-duplicates in fused
order, then budget omissions in walk order; the total and per-reason counts are exact.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from pytest_taguru.core.budget import Limits, Unit, admit, item_cost, measure, stamp_cost
from pytest_taguru.core.wire_evidence import EvidencePackage
from pytest_taguru.server.errors import ApiError
from pytest_taguru.server.evidence.gather import Gathered, gather
from pytest_taguru.server.evidence.request import (
    EvidenceRequest,
    RerankRequest,
    decode_evidence_request,
)
from pytest_taguru.server.evidence.rerank import Reranker, rerank, reranker_from_env
from pytest_taguru.server.evidence.select import (
    Candidate,
    Duplicate,
    Locator,
    admission_units,
    contradicts,
    diversity_tiers,
    fuse,
    suppress_duplicates,
    tier_width,
)
from pytest_taguru.server.http.bodies import (
    MISSING_JSON_CONTENT_TYPE,
    is_json_content_type,
    parse_json,
)
from pytest_taguru.server.http.transport import read_body
from pytest_taguru.server.store import Store

MAX_LISTED_OMISSIONS = 20
DUPLICATE_PASSAGE = "duplicate_passage"
BUDGET_EXCEEDED = "budget_exceeded"
GROUP_EXCEEDS_BUDGET = "contradiction_group_exceeds_budget"
LANE_ORDER = ("resolve", "query", "activate", "passages", "communities", "citations")


@dataclass(frozen=True)
class Measured:
    """One admission unit: its members' items (unstamped) and their citation needs."""

    members: tuple[Candidate, ...]
    items: tuple[dict[str, Any], ...]
    citations: tuple[Locator, ...]


def citation_refs(candidate: Candidate, cited: dict[Locator, dict[str, Any]]) -> list[Locator]:
    """An association's origin locators whose text resolved, sorted; ``[]`` otherwise."""
    return sorted(loc for loc in candidate.origins if loc in cited)


def locator_json(locator: Locator) -> dict[str, Any]:
    return {"source": locator[0], "paragraph": locator[1]}


def evidence_item(
    candidate: Candidate, refs: Sequence[Locator], others: Sequence[str]
) -> dict[str, Any]:
    """The item without its cost stamps, keys in §2.4 order."""
    item: dict[str, Any] = {
        "candidate_id": candidate.candidate_id,
        "kind": candidate.kind,
        "fused_rank": candidate.fused_rank,
        "lane_ranks": [
            {"lane": lane, "rank": candidate.lane_ranks[lane]}
            for lane in sorted(candidate.lane_ranks)
        ],
        "citation_refs": [locator_json(loc) for loc in refs],
    }
    attributions = (
        candidate.payload.get("attributions") if candidate.kind == "association" else None
    )
    if attributions:
        item["corroboration"] = {
            "sources": sorted({a["source"] for a in attributions}),
            "attributions": [locator_json(loc) for loc in refs],
        }
    if others:
        item["contradicts"] = list(others)
    item[candidate.kind] = candidate.payload
    return item


def citation_entry(locator: Locator, citation: dict[str, Any]) -> dict[str, Any]:
    return {"source": locator[0], "paragraph": locator[1], "citation": citation}


def measure_unit(unit: list[Candidate], cited: dict[Locator, dict[str, Any]]) -> Measured:
    items: list[dict[str, Any]] = []
    needed: dict[Locator, None] = {}
    for member in unit:
        refs = citation_refs(member, cited)
        items.append(evidence_item(member, refs, contradicts(unit, member)))
        needed.update(dict.fromkeys(refs))
    return Measured(tuple(unit), tuple(items), tuple(needed))


def omission(candidate: Candidate, reason: str, duplicate_of: str | None = None) -> dict[str, Any]:
    entry = {"candidate_id": candidate.candidate_id, "kind": candidate.kind, "reason": reason}
    if duplicate_of is not None:
        entry["duplicate_of"] = duplicate_of
    return entry


def select_and_admit(
    survivors: list[Candidate],
    duplicates: Sequence[Duplicate],
    cited: dict[Locator, dict[str, Any]],
    limits: Limits,
) -> tuple[dict[str, Any], dict[str, int]]:
    """Units, tiers and admission over the (possibly reranked) survivors (§3.7–§3.10).

    Returns the package's ``items``, ``citations``, ``budget`` and ``omitted*`` members, and
    the ``selection`` counters this step decides (``contradiction_groups``,
    ``diversity_tier_width``).
    """
    units = admission_units(survivors)
    width = tier_width(limits.max_items)
    measured = [measure_unit(unit, cited) for unit in diversity_tiers(units, width)]
    citation_costs = {loc: measure(citation_entry(loc, cited[loc])) for loc in cited}
    admission = admit(
        (
            Unit[Measured](
                unit,
                tuple(item_cost(item) for item in unit.items),
                tuple((loc, citation_costs[loc]) for loc in unit.citations),
            )
            for unit in measured
        ),
        limits,
    )
    omitted = [omission(d.candidate, DUPLICATE_PASSAGE, d.duplicate_of) for d in duplicates]
    for unit in admission.omitted:
        reason = GROUP_EXCEEDS_BUDGET if len(unit.members) > 1 else BUDGET_EXCEEDED
        omitted += [omission(member, reason) for member in unit.members]
    admitted_locators = sorted({loc for unit in admission.admitted for loc in unit.citations})
    by_reason: dict[str, int] = {}
    for entry in omitted:
        by_reason[entry["reason"]] = by_reason.get(entry["reason"], 0) + 1
    members = {
        "items": [stamp_cost(item) for unit in admission.admitted for item in unit.items],
        "citations": [citation_entry(loc, cited[loc]) for loc in admitted_locators],
        "budget": admission.usage.as_json(limits),
        "omitted": omitted[:MAX_LISTED_OMISSIONS],
        "omitted_total": len(omitted),
        "omitted_by_reason": dict(sorted(by_reason.items())),
    }
    groups = sum(1 for unit in units if len(unit) > 1)
    return members, {"contradiction_groups": groups, "diversity_tier_width": width}


async def assemble(
    gathered: Gathered,
    limits: Limits,
    query: str,
    rerank_request: RerankRequest | None,
    reranker: Reranker | None,
) -> dict[str, Any]:
    """The EvidencePackage from what the lanes found (pure apart from a provider call),
    checked against :class:`pytest_taguru.core.wire.EvidencePackage`."""
    fused, dedup_dropped = fuse(gathered.candidates)
    survivors, duplicates = suppress_duplicates(fused)
    order, reranker_plan = await rerank(
        reranker, rerank_request, query, [c.text for c in survivors]
    )
    if order is not None:
        survivors = [survivors[index] for index in order]
    members, selected = select_and_admit(survivors, duplicates, gathered.citations, limits)
    package = {
        **members,
        "plan": {
            "lanes": {lane: gathered.plans[lane] for lane in LANE_ORDER},
            "selection": {"dedup_dropped": dedup_dropped, **selected},
            "reranker": reranker_plan,
        },
    }
    # The shared client model must accept what is served (assembly.md §2.6); the dict itself
    # is returned because it keeps §2.4's key order and writes the always-present nulls.
    EvidencePackage.model_validate(package)
    return package


async def decode_body(request: Request) -> EvidenceRequest:
    """415 without a JSON content type, 413 over the body cap, 400 broken JSON, then 422 / 400
    ``over_limit`` from :func:`decode_evidence_request` (§2.3 order)."""
    if not is_json_content_type(request.headers.get("content-type")):
        raise ApiError("malformed_request", MISSING_JSON_CONTENT_TYPE, status=415)
    raw = await read_body(request)
    parse_json(raw)
    return decode_evidence_request(raw.decode("utf-8"))


async def assemble_evidence(request: Request) -> Any:
    """The route handler; the context lookup (404 ``no_context``) follows body validation."""
    body = await decode_body(request)
    store: Store = request.app.state.store
    name: str = request.path_params["name"]
    with store.reading(name) as context:
        gathered = gather(store, context, body)
    return await assemble(
        gathered, body.budget, body.canonical_query, body.rerank, reranker_from_env()
    )
