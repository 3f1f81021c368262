"""taguru's five evidence fixtures: the shared accounting reproduces every cost in them, and the
assembly lane decodes each one into the case blocks of ``assembly.md`` §1.5 and §1.8.

The lane is tested against the recorded responses replayed by ``httpx.MockTransport``.
"""

import json
from typing import Any

import httpx
import pytest
from paths import WIRE_FIXTURES
from pydantic import ValidationError

from pytest_taguru.artifact.assembly import EvidenceAssembled, EvidenceFailed
from pytest_taguru.artifact.case import PassageFailed, PassageSearched
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.budget import Limits, Unit, admit, item_cost, measure, stamp_cost
from pytest_taguru.core.serde import read_json
from pytest_taguru.core.wire_evidence import EvidenceBudgetRequest, EvidencePackage, EvidenceRequest
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.run.lanes.assembly import AssemblyLane, PassageOutcome, evidence_locators
from pytest_taguru.score.case import diversity_sources

FIXTURES = WIRE_FIXTURES
BASE = "http://taguru.test:8248"
CONTEXT = "sake"
EVIDENCE_FIXTURES = [
    "evidence_budget_constrained",
    "evidence_communities_degrade_and_rerank_reason",
    "evidence_contradiction_group",
    "evidence_duplicate_passage",
    "evidence_mixed_lanes",
]
ERROR_FIXTURES = [
    "error_forbidden",
    "error_malformed_request",
    "error_no_context",
    "error_over_limit",
]


def fixture(name: str) -> dict[str, Any]:
    """A fixture read as taguru's client reads it (serde floats)."""
    loaded: dict[str, Any] = read_json((FIXTURES / "http" / f"{name}.json").read_text("utf-8"))
    return loaded


def package_of(name: str) -> dict[str, Any]:
    result: dict[str, Any] = fixture(name)["response"]["result"]
    return result


def test_the_five_evidence_fixtures_are_all_here() -> None:
    found = sorted(path.stem for path in (FIXTURES / "http").glob("evidence_*.json"))
    assert found == EVIDENCE_FIXTURES


# --- accounting ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", EVIDENCE_FIXTURES)
def test_every_item_cost_is_reproduced(name: str) -> None:
    items = package_of(name)["items"]
    assert items
    for item in items:
        cost = item_cost(item)
        assert (cost.bytes, cost.estimated_tokens) == (item["bytes"], item["estimated_tokens"])
        assert stamp_cost(item) == item


def admission_units(package: dict[str, Any]) -> list[Unit[list[str]]]:
    """The admitted items regrouped as their admission units (a contradiction group is one)."""
    citations = {(c["source"], c["paragraph"]): measure(c) for c in package["citations"]}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for item in package["items"]:
        group = min([item["candidate_id"], *item.get("contradicts", [])])
        grouped.setdefault(group, []).append(item)
    units = []
    for members in grouped.values():
        refs = [(r["source"], r["paragraph"]) for m in members for r in m["citation_refs"]]
        units.append(
            Unit(
                [m["candidate_id"] for m in members],
                tuple(item_cost(m) for m in members),
                tuple((ref, citations[ref]) for ref in refs),
            )
        )
    return units


@pytest.mark.parametrize("name", EVIDENCE_FIXTURES)
def test_every_package_usage_is_reproduced(name: str) -> None:
    package = package_of(name)
    limits = Limits(**package["budget"]["limits"])
    admission = admit(admission_units(package), limits)
    assert admission.omitted == []
    assert admission.usage.as_json(limits) == package["budget"]


def test_the_contradiction_group_is_one_unit_and_one_token_ceiling() -> None:
    package = package_of("evidence_contradiction_group")
    units = admission_units(package)
    assert len(units) == 1 and len(units[0].items) == 2
    assert [item["estimated_tokens"] for item in package["items"]] == [146, 140]
    assert package["budget"]["tokens_used"] == 370  # ceil(1478 / 4), not 146 + 140 + …


def test_a_unit_past_the_item_ceiling_is_omitted_as_the_fixture_says() -> None:
    """budget_constrained: two admitted units fill max_items 2; a third would be omitted."""
    package = package_of("evidence_budget_constrained")
    units = admission_units(package)
    extra = Unit(["association\x00s2\x00rel\x00o2"], units[0].items)
    admission = admit([*units, extra], Limits(**package["budget"]["limits"]))
    assert admission.omitted == [extra.payload]
    assert admission.usage.as_json(Limits(**package["budget"]["limits"])) == package["budget"]


# --- the assembly lane over the recorded responses ----------------------------------------


def replaying(status: int, body: Any, seen: list[httpx.Request]) -> TaguruClient:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=json.dumps(body, ensure_ascii=False).encode())

    return TaguruClient(BASE, None, transport=httpx.MockTransport(handler))


def assemble(name: str, case: EvalCase | None = None) -> tuple[PassageOutcome, dict[str, Any]]:
    recorded = fixture(name)
    seen: list[httpx.Request] = []
    client = replaying(recorded["status"], recorded["response"], seen)
    eval_case = case or EvalCase.model_validate({"case_id": "a", "query": "青嶺酒造"})
    outcome = AssemblyLane(Limits())(client, CONTEXT, eval_case)
    assert len(seen) == 1
    assert seen[0].url.raw_path == f"/contexts/{CONTEXT}/evidence".encode()
    sent = json.loads(seen[0].content)
    shapes = json.loads((FIXTURES / "shapes.json").read_text("utf-8"))
    assert set(shapes["required_request_fields"][recorded["route"]]) <= set(sent)
    return outcome, sent


@pytest.mark.parametrize("name", EVIDENCE_FIXTURES)
def test_each_package_becomes_the_case_blocks(name: str) -> None:
    package = package_of(name)
    outcome, _ = assemble(name)
    evidence, passage, budget = outcome.evidence, outcome.passage, outcome.budget
    assert isinstance(evidence, EvidenceAssembled) and isinstance(passage, PassageSearched)
    assert passage.plan is None
    assert budget is not None
    assert to_jsonable(budget) == {**package["budget"], "omitted_total": package["omitted_total"]}
    assert [item.candidate_id for item in evidence.items] == [
        item["candidate_id"] for item in package["items"]
    ]
    assert to_jsonable(evidence.selection) == package["plan"]["selection"]
    assert to_jsonable(evidence.reranker) == package["plan"]["reranker"]
    assert evidence.omitted_by_reason == (package["omitted_by_reason"] or None)
    items = EvidencePackage.model_validate(package).items
    assert [(h.source, h.paragraph) for h in passage.hits] == evidence_locators(items)[:10]
    text = json.dumps(to_jsonable(outcome.evidence), ensure_ascii=False)
    for item in package["items"]:
        payload = item.get("passage") or item.get("community") or {}
        assert payload.get("text", "\x01") not in text


def test_mixed_lanes_hits_keep_the_duplicate_locator() -> None:
    outcome, _ = assemble("evidence_mixed_lanes")
    assert to_jsonable(outcome.passage)["hits"] == [
        {"source": "docs/kura.md", "paragraph": 0, "score": 0.0, "lanes": {}},
        {"source": "docs/kura.md", "paragraph": 0, "score": 0.0, "lanes": {}},
    ]
    assert diversity_sources(outcome.passage) == 1
    evidence = to_jsonable(outcome.evidence)
    assert evidence["items"][1] == {
        "candidate_id": "passage\x00sake\x00docs/kura.md\x000",
        "kind": "passage",
        "fused_rank": 2,
        "source": "docs/kura.md",
        "paragraph": 0,
        "citation_refs": [],
    }
    assert "source" not in evidence["items"][0]
    assert "omitted_by_reason" not in evidence


def test_degraded_reranker_and_community_lane_are_recorded_verbatim() -> None:
    outcome, _ = assemble("evidence_communities_degrade_and_rerank_reason")
    assert to_jsonable(outcome.evidence)["reranker"] == {
        "configured": False,
        "ran": False,
        "reason": "not_configured",
    }
    # An association without citation_refs contributes no hit.
    assert isinstance(outcome.passage, PassageSearched) and outcome.passage.hits == []
    assert diversity_sources(outcome.passage) == 0


def test_duplicate_omissions_are_counted_but_not_budget_only() -> None:
    outcome, _ = assemble("evidence_duplicate_passage")
    assert isinstance(outcome.evidence, EvidenceAssembled)
    assert outcome.evidence.omitted_by_reason == {"duplicate_passage": 1}
    assert outcome.budget is not None and outcome.budget.omitted_total == 1


@pytest.mark.parametrize("name", ERROR_FIXTURES)
def test_refusals_fail_the_lane_with_the_server_text(name: str) -> None:
    recorded = fixture(name)
    outcome, _ = assemble(name)
    assert isinstance(outcome.passage, PassageFailed)
    assert isinstance(outcome.evidence, EvidenceFailed)
    expected = (
        f"{BASE}/contexts/{CONTEXT}/evidence answered {recorded['status']}: "
        f"{recorded['response']['error']}"
    )
    cut = expected.encode()[:200].decode("utf-8", "ignore")
    assert outcome.evidence.message == (expected if cut == expected else cut + "…")
    assert outcome.passage.message == outcome.evidence.message
    assert outcome.budget is None


# --- the request model (for the reference server) ------------------------------------------


@pytest.mark.parametrize("name", EVIDENCE_FIXTURES)
def test_every_recorded_request_parses(name: str) -> None:
    request = EvidenceRequest.model_validate(fixture(name)["request"])
    assert isinstance(request.origins, list)


def test_the_body_the_lane_sends_parses_back() -> None:
    case = EvalCase.model_validate(
        {"case_id": "a", "query": "q", "cues": ["c"], "options": {"limit": 1000, "floor": 0.4}}
    )
    _, sent = assemble("evidence_mixed_lanes", case)
    request = EvidenceRequest.model_validate(sent)
    assert request.origins == ["c"] and request.text_fallback_query == "q"
    assert request.search_limit == 1000 and request.semantic_floor == pytest.approx(0.4)
    assert request.budget == EvidenceBudgetRequest(max_items=40, max_bytes=65536, max_tokens=4000)
    assert request.rerank is None and request.include_communities is False


def test_request_nulls_strings_and_unknown_keys() -> None:
    request = EvidenceRequest.model_validate(
        {"origins": "one", "labels": "l", "semantic_floor": None, "rerank": None,
         "budget": {"max_items": 0, "unknown": 1}, "unknown": True}
    )  # fmt: skip
    assert (request.origins, request.labels, request.rerank) == (["one"], ["l"], None)
    assert request.budget == EvidenceBudgetRequest(max_items=0)
    assert EvidenceRequest.model_validate({"origins": [], "rerank": {}}).rerank is not None


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"origins": None},
        {"origins": ["a"], "include_communities": None},
        {"origins": ["a"], "budget": "x"},
        {"origins": ["a"], "rerank": 5},
        {"origins": ["a"], "search_limit": -1},
        {"origins": ["a"], "search_limit": 2.0},
    ],
)
def test_malformed_requests_are_refused(body: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        EvidenceRequest.model_validate(body)
