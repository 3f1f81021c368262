"""The budgeted passage lanes: assembly requests and outcomes, baseline truncation, run shapes.

Worked examples from ``assembly.md`` §4.1–§4.4; rules from §1.3–§1.12.
"""

import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lane_script import Script, case, error, ok, search_hit, written
from old_renderer import old_render

from pytest_taguru.artifact.assembly import (
    BudgetBlock,
    BudgetInput,
    EvidenceAssembled,
    EvidenceFailed,
    RerankerRecord,
)
from pytest_taguru.artifact.case import CaseBlock, PassageFailed, PassageSearched
from pytest_taguru.artifact.evaluation import Evaluation, Inputs
from pytest_taguru.artifact.writing import CASE_PAD, case_text, render, to_jsonable
from pytest_taguru.core.budget import (
    Limits,
    Unit,
    admit,
    item_cost,
    measure,
    passage_item,
    stamp_cost,
)
from pytest_taguru.core.serde import read_json
from pytest_taguru.core.wire import HitLanes, LaneRank
from pytest_taguru.core.wire_evidence import EvidenceItem
from pytest_taguru.report.assembly import assembly_summary_lines
from pytest_taguru.run.lanes import clock
from pytest_taguru.run.lanes.assembly import (
    NO_PACKAGE,
    AssemblyLane,
    RunShape,
    TruncatingLane,
    baseline_lane,
    evidence_body,
    evidence_locators,
    hits_from_items,
    run_case_lanes,
)
from pytest_taguru.run.settings import Settings
from pytest_taguru.score.case import LaneResults, build_case_block
from pytest_taguru.score.metrics import build_metrics

EVIDENCE = "/contexts/sake/evidence"
SEARCH = "/contexts/sake/sources/search"
KURA_TEXT = "青嶺酒造は雲居県霧沢町の蔵元である。"
NUL = "\x00"


@pytest.fixture(autouse=True)
def twelve_ms_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every latency measured is 12 ms: the clock advances 12 ms per reading pair."""
    readings: Iterator[int] = (step * 6_000_000 for step in range(10_000))
    monkeypatch.setattr(clock, "monotonic_ns", lambda: next(readings) * 2)


# --- the §4.3 package --------------------------------------------------------------------


def association(
    subject: str, label: str, obj: str, count: int, attributions: list[tuple[str, float, int]]
) -> dict[str, Any]:
    refs = [{"source": source, "paragraph": paragraph} for source, _, paragraph in attributions]
    return {
        "candidate_id": f"association{NUL}{subject}{NUL}{label}{NUL}{obj}",
        "kind": "association",
        "fused_rank": 0,
        "lane_ranks": [],
        "citation_refs": refs,
        "corroboration": {"sources": sorted({ref["source"] for ref in refs}), "attributions": refs},
        "association": {
            "subject": subject,
            "label": label,
            "object": obj,
            "weight": 1.0,
            "count": count,
            "attributions": [
                {"source": source, "weight": weight, "count": 1, "paragraph": paragraph,
                 "section": None, "locator": None}
                for source, weight, paragraph in attributions
            ],
        },
    }  # fmt: skip


def ranked(item: dict[str, Any], fused_rank: int, lane: str, rank: int) -> dict[str, Any]:
    return {**item, "fused_rank": fused_rank, "lane_ranks": [{"lane": lane, "rank": rank}]}


def citation(source: str, paragraph: int, text: str) -> dict[str, Any]:
    body = {"text": text, "source": source, "section": None, "locator": None}
    return {"source": source, "paragraph": paragraph, "citation": body}


def kura_package() -> dict[str, Any]:
    """The §4.3 response's ``result``, built and accounted with the shared budget module."""
    item_a = ranked(
        association("青嶺酒造", "杜氏", "高瀬", 2,
                    [("docs/kura.md", 1.0, 1), ("docs/toji.md", 0.5, 0)]),
        1, "graph_activate", 1,
    )  # fmt: skip
    item_b = ranked(
        association("青嶺酒造", "所在地", "雲居県", 1, [("docs/kura.md", 1.0, 0)]),
        3, "graph_activate", 2,
    )  # fmt: skip

    def passage(source: str, paragraph: int, text: str, fused: int, rank: int) -> dict[str, Any]:
        lanes_ = HitLanes(bm25=LaneRank(rank=rank, score=2.5))
        return passage_item(
            "sake", source=source, paragraph=paragraph, score=2.5, text=text, lanes=lanes_,
            fused_rank=fused, lane_rank=rank,
        )  # fmt: skip

    kura = passage("docs/kura.md", 0, KURA_TEXT, 2, 1)
    mizu = passage("docs/mizu.md", 2, "仕込み水は伏流水。", 5, 3)
    citations = {
        ("docs/kura.md", 0): citation("docs/kura.md", 0, KURA_TEXT),
        ("docs/kura.md", 1): citation("docs/kura.md", 1, "杜氏は高瀬である。"),
        ("docs/toji.md", 0): citation("docs/toji.md", 0, "高瀬は南部杜氏の流れを汲む。"),
    }

    def unit(item: dict[str, Any]) -> Unit[dict[str, Any]]:
        refs = [(ref["source"], ref["paragraph"]) for ref in item["citation_refs"]]
        return Unit(item, (item_cost(item),), tuple((ref, measure(citations[ref])) for ref in refs))

    limits = Limits.resolve(max_items=3)
    admission = admit([unit(item) for item in (item_a, kura, item_b, mizu)], limits)
    assert [item["fused_rank"] for item in admission.admitted] == [1, 2, 3]
    return {
        "items": [stamp_cost(item) for item in admission.admitted],
        "citations": [citations[key] for key in sorted(citations)],
        "budget": admission.usage.as_json(limits),
        "omitted": [
            {"candidate_id": f"passage{NUL}sake{NUL}docs/kura-copy.md{NUL}0", "kind": "passage",
             "reason": "duplicate_passage", "duplicate_of": kura["candidate_id"]},
            {"candidate_id": mizu["candidate_id"], "kind": "passage", "reason": "budget_exceeded"},
        ],
        "omitted_total": 2,
        "omitted_by_reason": {"budget_exceeded": 1, "duplicate_passage": 1},
        "plan": {
            "lanes": {"resolve": {"ran": True},
                      "query": {"ran": False, "reason": "no 'labels' given"},
                      "activate": {"ran": True}, "passages": {"ran": True},
                      "communities": {"ran": False, "reason": "include_communities was false"},
                      "citations": {"ran": True}},
            "selection": {"dedup_dropped": 0, "contradiction_groups": 0, "diversity_tier_width": 1},
            "reranker": {"configured": False, "ran": False},
        },
    }  # fmt: skip


KURA_CASE: dict[str, Any] = {
    "case_id": "kura-001",
    "query": "青嶺酒造の杜氏",
    "cues": ["青嶺酒造"],
    "options": {"limit": 3},
    "expected_sources": [
        {"source": "docs/toji.md", "relevance": 2},
        {"source": "docs/mizu.md", "relevance": 1},
    ],
}

KURA_BODY = {
    "origins": ["青嶺酒造"],
    "text_fallback_query": "青嶺酒造の杜氏",
    "search_limit": 3,
    "semantic_floor": None,
    "budget": {"max_items": 3, "max_bytes": 65536, "max_tokens": 4000},
}

KURA_EVIDENCE = {
    "outcome": "assembled",
    "latency_ms": 12,
    "items": [
        {"candidate_id": f"association{NUL}青嶺酒造{NUL}杜氏{NUL}高瀬", "kind": "association",
         "fused_rank": 1,
         "citation_refs": [{"source": "docs/kura.md", "paragraph": 1},
                           {"source": "docs/toji.md", "paragraph": 0}]},
        {"candidate_id": f"passage{NUL}sake{NUL}docs/kura.md{NUL}0", "kind": "passage",
         "fused_rank": 2, "source": "docs/kura.md", "paragraph": 0, "citation_refs": []},
        {"candidate_id": f"association{NUL}青嶺酒造{NUL}所在地{NUL}雲居県", "kind": "association",
         "fused_rank": 3, "citation_refs": [{"source": "docs/kura.md", "paragraph": 0}]},
    ],
    "omitted_by_reason": {"budget_exceeded": 1, "duplicate_passage": 1},
    "selection": {"dedup_dropped": 0, "contradiction_groups": 0, "diversity_tier_width": 1},
    "reranker": {"configured": False, "ran": False},
}  # fmt: skip

KURA_BUDGET = {
    "items_used": 3,
    "bytes_used": 2059,
    "tokens_used": 539,
    "limits": {"max_items": 3, "max_bytes": 65536, "max_tokens": 4000},
    "omitted_total": 2,
}


def hit(source: str, paragraph: int) -> dict[str, Any]:
    return {"source": source, "paragraph": paragraph, "score": 0.0, "lanes": {}}


def test_the_4_3_package_accounts_as_the_spec_says() -> None:
    package = kura_package()
    assert [item["bytes"] for item in package["items"]] == [715, 326, 539]
    assert [item["estimated_tokens"] for item in package["items"]] == [183, 86, 140]
    assert [measure(entry).bytes for entry in package["citations"]] == [170, 143, 158]
    usage = {key: value for key, value in KURA_BUDGET.items() if key != "omitted_total"}
    assert package["budget"] == usage


def test_worked_example_4_3_request_and_blocks() -> None:
    script = Script().post(EVIDENCE, KURA_BODY, ok(kura_package()))
    outcome = AssemblyLane(Limits.resolve(max_items=3))(script.client(), "sake", case(**KURA_CASE))
    assert script.done()
    assert script.seen[0].headers["content-type"] == "application/json"
    assert to_jsonable(outcome.passage) == {
        "outcome": "searched",
        "hits": [hit("docs/kura.md", 1), hit("docs/toji.md", 0), hit("docs/kura.md", 0)],
        "latency_ms": 12,
    }
    assert to_jsonable(outcome.evidence) == KURA_EVIDENCE
    assert to_jsonable(outcome.budget) == KURA_BUDGET


def test_worked_example_4_3_scores_the_derived_hits() -> None:
    eval_case = case(**KURA_CASE)
    script = Script().post(EVIDENCE, KURA_BODY, ok(kura_package()))
    results, outcome = run_case_lanes(
        script.client(), "sake", eval_case, AssemblyLane(Limits.resolve(max_items=3))
    )
    block = build_case_block(eval_case, results, evidence=outcome.evidence, budget=outcome.budget)
    assert block.diversity_sources == 2
    assert block.recall is not None
    assert (block.recall.recall_at_k, block.recall.mrr) == (0.5, 0.5)
    assert block.recall.ndcg == pytest.approx((2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert block.missed == ["expected_sources: 'docs/mizu.md' not found among passage hits"]
    written = render(Evaluation(cases=[block]))
    assert KURA_TEXT not in written and "杜氏は高瀬である" not in written
    assert '"candidate_id": "passage\\u0000sake\\u0000docs/kura.md\\u00000"' in written
    keys = list(read_json(written)["cases"][0])
    assert keys[-4:] == ["evidence", "budget", "diversity_sources", "label_coverage"]
    # A case's own text (rendered where it ran) is what the whole document writes of it.
    assert case_text(block) in written
    assert case_text(block) == old_render(block).replace("\n", "\n" + CASE_PAD)


def test_a_case_limit_of_ten_keeps_the_duplicate_locator() -> None:
    items = [EvidenceItem.model_validate(item) for item in kura_package()["items"]]
    assert [(h.source, h.paragraph) for h in hits_from_items(items, 10)] == [
        ("docs/kura.md", 1), ("docs/toji.md", 0), ("docs/kura.md", 0), ("docs/kura.md", 0),
    ]  # fmt: skip


# --- §1.4 request body -------------------------------------------------------------------


def test_body_without_cues_floor_rerank_and_with_filters() -> None:
    eval_case = case(
        query="酒", options={"limit": 1000, "floor": 0.4, "tags": ["t"], "since": 1, "until": 2}
    )
    body = evidence_body(eval_case, Limits.resolve(max_items=5000), "bge-m3")
    assert list(body) == [
        "origins", "text_fallback_query", "search_limit", "semantic_floor", "budget", "rerank",
    ]  # fmt: skip
    assert body["origins"] == ["酒"] and body["text_fallback_query"] == "酒"
    assert body["search_limit"] == 1000
    assert body["budget"] == {"max_items": 1000, "max_bytes": 65536, "max_tokens": 4000}
    assert body["rerank"] == {"model": "bge-m3"}
    script = Script().post(EVIDENCE, None, ok(kura_package()))
    AssemblyLane(Limits(), "bge-m3")(script.client(), "sake", eval_case)
    assert b'"semantic_floor":0.4000000059604645' in script.seen[0].content
    assert b"tags" not in script.seen[0].content


def test_an_empty_model_name_is_still_sent() -> None:
    assert evidence_body(case(), Limits(), "")["rerank"] == {"model": ""}
    assert "rerank" not in evidence_body(case(), Limits(), None)


# --- §1.5 hits -----------------------------------------------------------------------------


def item(kind: str, **payload: Any) -> EvidenceItem:
    data = {"candidate_id": kind, "kind": kind, "fused_rank": 1, "lane_ranks": [],
            "citation_refs": payload.pop("refs", []), **payload}  # fmt: skip
    return EvidenceItem.model_validate(data)


PASSAGE = {"source": "p.md", "paragraph": 4, "score": 1.0, "text": "t", "lanes": {}}
COMMUNITY = {"community": "c7", "score": 0.5, "text": "t", "paragraph": 2}


def test_own_locators_by_payload_not_kind() -> None:
    items = [
        item("community", community=COMMUNITY),
        item("association", refs=[{"source": "a.md", "paragraph": 1}]),
        item("future-kind", passage=PASSAGE, community=COMMUNITY),
        item("association"),
    ]
    assert evidence_locators(items) == [("community:c7", 2), ("a.md", 1), ("p.md", 4)]


def test_the_cap_applies_after_flattening() -> None:
    refs = [{"source": f"s{n}", "paragraph": n} for n in range(3)]
    items = [item("association", refs=refs), item("passage", passage=PASSAGE)]
    assert [h.source for h in hits_from_items(items, 2)] == ["s0", "s1"]
    assert [h.source for h in hits_from_items(items, 10)] == ["s0", "s1", "s2", "p.md"]


# --- failures ----------------------------------------------------------------------------


def run_assembly(answer: httpx.Response) -> Any:
    script = Script().post(EVIDENCE, None, answer)
    return AssemblyLane(Limits())(script.client(), "sake", case())


def test_an_http_failure_fails_both_blocks_with_one_truncated_message() -> None:
    outcome = run_assembly(error(500, "internal", "x" * 300))
    assert isinstance(outcome.passage, PassageFailed)
    assert isinstance(outcome.evidence, EvidenceFailed)
    message = outcome.passage.message
    assert message.startswith("http://localhost:8248/contexts/sake/evidence answered 500: xxx")
    assert message.endswith("…") and len(message.encode()) == 200 + 3
    assert outcome.evidence == EvidenceFailed(message=message, latency_ms=12)
    assert outcome.budget is None


def test_a_200_without_an_envelope_is_not_a_taguru_response() -> None:
    outcome = run_assembly(httpx.Response(200, json={"items": []}))
    assert outcome.passage.message == (
        'http://localhost:8248/contexts/sake/evidence: not a taguru response: {"items":[]}'
    )


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("items",), None),
        (("omitted_total",), 2.0),
        (("budget", "limits", "max_tokens"), -1),
        (("plan", "lanes", "citations"), None),
        (("plan", "reranker", "ran"), "no"),
        (("citations", 0, "citation", "locator"), {"kind": "p", "value": "1", "extra": 1}),
        (("items", 0, "citation_refs", 0, "paragraph"), 2**32),
        (("items", 1, "passage", "score"), "high"),
    ],
)
def test_a_package_that_does_not_decode_fails_the_lane(path: tuple[Any, ...], value: Any) -> None:
    package = kura_package()
    target: Any = package
    for key in path[:-1]:
        target = target[key]
    if value is None:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    outcome = run_assembly(ok(package))
    assert isinstance(outcome.evidence, EvidenceFailed)
    prefix = NO_PACKAGE.split("(")[0]
    assert outcome.evidence.message.startswith(prefix + "(") and outcome.budget is None
    assert outcome.passage == PassageFailed(message=outcome.evidence.message, latency_ms=12)


def test_open_vocabularies_and_unknown_keys_are_tolerated() -> None:
    package = kura_package()
    package["items"][0]["kind"] = "hyperedge"
    package["items"][0]["lane_ranks"][0]["lane"] = "graph_walk"
    package["items"][0]["novel"] = {"x": 1}
    package["omitted"][1]["reason"] = "novel_reason"
    package["plan"]["reranker"] = {"configured": True, "ran": False, "reason": "novel"}
    del package["items"][1]["bytes"]
    outcome = run_assembly(ok(package))
    assert isinstance(outcome.evidence, EvidenceAssembled)
    assert outcome.evidence.items[0].kind == "hyperedge"
    assert outcome.evidence.reranker == RerankerRecord(configured=True, ran=False, reason="novel")


def test_an_empty_omission_map_is_left_out() -> None:
    package = kura_package()
    package["omitted_by_reason"] = {}
    outcome = run_assembly(ok(package))
    assert "omitted_by_reason" not in to_jsonable(outcome.evidence)


# --- §1.6 baseline truncation ------------------------------------------------------------


NO_VECTOR = {"ran": False, "reason": "no embedding provider is configured"}
SEARCH_LANES = {"bm25": {"ran": True}, "vector": NO_VECTOR}
SEARCH_PLAN = {"contexts": [{"context": "sake", "lanes": SEARCH_LANES}]}
MAX_ITEMS_HITS = [
    search_hit("docs/kura.md", 0, 0.86304635, KURA_TEXT, bm25=(1, 0.86304635)),
    search_hit("docs/mizu.md", 2, 0.5, "仕込み水は伏流水。", bm25=(2, 0.5)),
    search_hit("docs/kura.md", 1, 0.25, "Toji: Takase", bm25=(3, 0.25)),
]


def test_worked_example_4_1_baseline_truncated_by_max_items() -> None:
    script = Script().post(SEARCH, None, ok({"plan": SEARCH_PLAN, "hits": MAX_ITEMS_HITS}))
    outcome = TruncatingLane(Limits.resolve(max_items=2))(script.client(), "sake", case())
    assert json.loads(script.seen[0].content)["limit"] == 10
    assert isinstance(outcome.passage, PassageSearched) and outcome.evidence is None
    assert outcome.passage.plan is not None
    assert written(outcome.passage)["hits"] == [
        {"source": "docs/kura.md", "paragraph": 0, "score": 0.86304635,
         "lanes": {"bm25": {"rank": 1, "score": 0.86304635}}},
        {"source": "docs/mizu.md", "paragraph": 2, "score": 0.5,
         "lanes": {"bm25": {"rank": 2, "score": 0.5}}},
    ]  # fmt: skip
    assert to_jsonable(outcome.budget) == {
        "items_used": 2, "bytes_used": 644, "tokens_used": 168,
        "limits": {"max_items": 2, "max_bytes": 65536, "max_tokens": 4000}, "omitted_total": 1,
    }  # fmt: skip
    results = LaneResults(passage=outcome.passage, structural=None, checks=None)
    block = build_case_block(case(), results, budget=outcome.budget)
    assert block.diversity_sources == 2


def test_worked_example_4_2_skip_and_continue_under_max_tokens() -> None:
    hits = [
        search_hit("a.md", 0, 0.5, "Toji: Takase", bm25=(1, 0.5)),
        search_hit("b.md", 3, 0.25, "x" * 400, bm25=(2, 0.25),
                   vector=(1, 0.25)),
        search_hit("c.md", 0, 0.125, "杜氏は高瀬である。", vector=(2, 0.125)),
    ]  # fmt: skip
    script = Script().post(SEARCH, None, ok({"plan": SEARCH_PLAN, "hits": hits}))
    outcome = TruncatingLane(Limits.resolve(max_tokens=200))(script.client(), "sake", case())
    assert isinstance(outcome.passage, PassageSearched)
    assert [(h.source, h.paragraph) for h in outcome.passage.hits] == [("a.md", 0), ("c.md", 0)]
    assert outcome.budget == BudgetBlock(
        items_used=2, bytes_used=564, tokens_used=144,
        limits=BudgetInput(max_items=40, max_bytes=65536, max_tokens=200), omitted_total=1,
    )  # fmt: skip


def test_fallback_hits_are_measured_without_lanes() -> None:
    """An older server's bare hit list: lanes read as empty, so the envelope says bm25."""
    hits = [{"source": "docs/kura.md", "paragraph": 0, "score": 0.86304635, "text": KURA_TEXT}]
    script = Script().post(SEARCH, None, ok(hits))
    outcome = TruncatingLane(Limits())(script.client(), "sake", case())
    # The §4.1 envelope minus the 36 bytes of '"bm25":{"rank":1,"score":0.86304635}'.
    assert outcome.budget is not None and outcome.budget.bytes_used == 2 + 340 - 36 + 2


def test_a_failed_search_has_no_budget_block() -> None:
    script = Script().post(SEARCH, None, error(503, "busy", "later"))
    outcome = TruncatingLane(Limits.resolve(max_items=2))(script.client(), "sake", case())
    assert isinstance(outcome.passage, PassageFailed) and outcome.budget is None


def test_the_plain_baseline_lane_is_the_search_lane() -> None:
    script = Script().post(SEARCH, None, ok({"plan": SEARCH_PLAN, "hits": MAX_ITEMS_HITS}))
    outcome = baseline_lane(script.client(), "sake", case())
    assert isinstance(outcome.passage, PassageSearched) and len(outcome.passage.hits) == 3
    assert (outcome.evidence, outcome.budget) == (None, None)


# --- call order ----------------------------------------------------------------------------


def test_the_evidence_call_comes_before_structural_and_citation_calls() -> None:
    eval_case = case(
        query="q", expected_concepts=["杜氏"],
        expected_citations=[{"source": "docs/kura.md", "paragraph": 1}],
    )  # fmt: skip
    resolved = [{"name": "杜氏", "score": 1.0, "tier": "lexical"}]
    cited = citation("docs/kura.md", 1, "杜氏は高瀬である。")["citation"]
    script = (
        Script()
        .post(EVIDENCE, None, ok(kura_package()))
        .post("/contexts/sake/resolve", None, ok(resolved))
        .post("/contexts/sake/citations", None, ok(cited))
    )
    results, _ = run_case_lanes(script.client(), "sake", eval_case, AssemblyLane(Limits()))
    assert script.done()
    assert results.checks is not None and results.checks[0].served


# --- §1.3, §1.9, §1.10 run shapes --------------------------------------------------------


def settings(**fields: Any) -> Settings:
    return Settings(eval_path="e.jsonl", context="sake", base_url=None, masked_url=None, **fields)


def test_run_shapes() -> None:
    plain = RunShape.from_settings(settings())
    assert (plain.mode, plain.budget_input, plain.rerank_requested) == ("baseline", None, False)
    assert plain.passage_lane() is baseline_lane

    truncated = RunShape.from_settings(settings(max_items=2))
    assert truncated.mode == "baseline"
    assert truncated.budget_input == BudgetInput(max_items=2, max_bytes=65536, max_tokens=4000)
    assert truncated.passage_lane() == TruncatingLane(Limits(2, 65536, 4000))

    assembly = RunShape.from_settings(settings(assembly=True, max_items=5000, rerank="m"))
    assert assembly.mode == "assembly" and assembly.rerank_requested
    assert assembly.budget_input == BudgetInput(max_items=1000, max_bytes=65536, max_tokens=4000)
    assert assembly.passage_lane() == AssemblyLane(Limits(1000, 65536, 4000), "m")
    assert RunShape.from_settings(settings(assembly=True)).budget_input == BudgetInput(
        max_items=40, max_bytes=65536, max_tokens=4000
    )


def test_filter_warnings_only_under_assembly() -> None:
    cases = [
        case(case_id="a", options={"tags": ["x"]}),
        case(case_id="b", options={"tags": []}),
        case(case_id="c", options={"until": 0}),
        case(case_id="d", options={"since": 5}),
    ]
    warnings = RunShape(assembly=True).filter_warnings(cases)
    assert warnings == [
        f"case '{name}': options.tags/since/until are not applied under --assembly "
        "(POST /contexts/{name}/evidence has no such request fields)"
        for name in ("a", "c", "d")
    ]
    assert RunShape(budget_given=True).filter_warnings(cases) == []


# --- §4.4 metrics and §1.12 summary lines ------------------------------------------------


def assembled_case(
    items_used: int, omitted: int, reasons: dict[str, int], reranker: dict[str, Any]
) -> CaseBlock:
    package = kura_package()
    package["items"] = package["items"][:items_used]
    package["budget"]["items_used"] = items_used
    package["omitted_total"] = omitted
    package["omitted_by_reason"] = reasons
    package["plan"]["reranker"] = reranker
    eval_case = case(**KURA_CASE)
    script = Script().post(EVIDENCE, None, ok(package))
    lane = AssemblyLane(Limits.resolve(max_items=3), "bge-m3")
    results, outcome = run_case_lanes(script.client(), "sake", eval_case, lane)
    return build_case_block(eval_case, results, evidence=outcome.evidence, budget=outcome.budget)


def example_run() -> list[CaseBlock]:
    eval_case = case(**KURA_CASE)
    script = Script().post(EVIDENCE, None, error(500, "internal", "boom"))
    results, failed = run_case_lanes(script.client(), "sake", eval_case, AssemblyLane(Limits()))
    return [
        assembled_case(3, 2, {"budget_exceeded": 1, "duplicate_passage": 1},
                       {"configured": True, "ran": True, "model": "bge-m3"}),
        assembled_case(3, 6, {"contradiction_group_exceeds_budget": 2, "duplicate_passage": 4},
                       {"configured": True, "ran": False, "reason": "provider_error"}),
        assembled_case(1, 0, {}, {"configured": True, "ran": False, "reason": "empty_pool"}),
        build_case_block(eval_case, results, evidence=failed.evidence, budget=failed.budget),
    ]  # fmt: skip


def test_worked_example_4_4_metrics_and_summary() -> None:
    cases = example_run()
    metrics = build_metrics(cases, rerank_requested=True)
    assert to_jsonable(metrics["budget.omitted_rate"]) == {"value": 0.2, "n": 15, "numerator": 3}
    assert to_jsonable(metrics["rerank.ran"]) == {"value": 0.5, "n": 2, "numerator": 1}
    assert to_jsonable(metrics["budget.items_used"]) == {
        "n": 3, "min": 1.0, "p50": 3.0, "p90": 3.0, "p99": 3.0, "max": 3.0,
        "mean": 2.3333333333333335, "sum": 7.0,
    }  # fmt: skip
    assert metrics["latency.evidence_ms"].n == 4
    assert to_jsonable(metrics["passage.failure_rate"])["numerator"] == 1
    assert metrics["diversity.sources"].n == 3
    budget = RunShape(assembly=True, limits=Limits.resolve(max_items=3)).budget_input
    inputs = Inputs(mode="assembly", budget=budget, rerank="bge-m3")
    lines = assembly_summary_lines(Evaluation(inputs=inputs, metrics=metrics))
    assert lines == [
        "  budget over 3 case(s): mean 2.3 item(s) / 2059.0 byte(s) / 539.0 token(s) used, "
        "budget-omitted rate 0.200",
        "  diversity over 3 case(s): mean 2.0 distinct source(s) in admitted evidence",
        "  rerank 'bge-m3' over 2 attempted case(s): 1 ran, 1 degraded",
    ]
    unreranked = build_metrics(cases)
    assert to_jsonable(unreranked["rerank.ran"]) == {"value": None, "n": 0, "numerator": None}


def test_not_configured_counts_as_attempted() -> None:
    reranker = {"configured": False, "ran": False, "reason": "not_configured"}
    cases = [assembled_case(1, 0, {}, reranker) for _ in range(3)]
    assert to_jsonable(build_metrics(cases, rerank_requested=True)["rerank.ran"]) == {
        "value": 0.0, "n": 3, "numerator": 0,
    }  # fmt: skip


def test_summary_lines_of_runs_without_samples() -> None:
    empty = Evaluation(inputs=Inputs(budget=BudgetInput(max_items=2, max_bytes=1, max_tokens=1)),
                       metrics=build_metrics([]))  # fmt: skip
    assert assembly_summary_lines(empty) == [
        "  budget over 0 case(s): mean n/a item(s) / n/a byte(s) / n/a token(s) used, "
        "budget-omitted rate n/a"
    ]
    assert assembly_summary_lines(Evaluation(metrics=build_metrics([]))) == []
    rerank_only = Evaluation(inputs=Inputs(rerank="m"), metrics=build_metrics([]))
    assert assembly_summary_lines(rerank_only) == [
        "  rerank 'm' over 0 attempted case(s): 0 ran, 0 degraded"
    ]


def test_evidence_and_budget_blocks_read_back_from_the_artifact() -> None:
    cases = example_run()
    again = Evaluation.model_validate(read_json(render(Evaluation(cases=cases))))
    assert again.cases == cases
    assert isinstance(again.cases[0].evidence, EvidenceAssembled)
    assert isinstance(again.cases[3].evidence, EvidenceFailed)


locators = st.tuples(st.sampled_from(["a.md", "b.md", "c.md"]), st.integers(0, 3))
evidence_items = st.one_of(
    st.builds(
        lambda refs: item("association", refs=[{"source": s, "paragraph": p} for s, p in refs]),
        st.lists(locators, max_size=3),
    ),
    st.builds(
        lambda loc: item("passage", passage={**PASSAGE, "source": loc[0], "paragraph": loc[1]}),
        locators,
    ),
    st.builds(
        lambda loc: item("community", community={**COMMUNITY, "community": loc[0]}),
        locators,
    ),
)


@given(st.lists(evidence_items, max_size=8), st.integers(1, 12))
def test_hits_are_the_capped_prefix_of_every_locator(items: list[EvidenceItem], limit: int) -> None:
    every = evidence_locators(items)
    own = sum(item.kind != "association" for item in items)
    assert all(source.startswith("community:") or source.endswith(".md") for source, _ in every)
    assert len(every) == own + sum(len(item.citation_refs) for item in items)
    hits = hits_from_items(items, limit)
    assert [(h.source, h.paragraph) for h in hits] == every[:limit]
    assert all(h.score == 0.0 and h.lanes == HitLanes() for h in hits)
