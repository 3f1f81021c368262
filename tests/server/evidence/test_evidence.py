"""``POST /contexts/{name}/evidence`` over HTTP: refusals in order, the package, the plan."""

import re
from hashlib import sha256
from typing import Any

import pytest
from app_client import FixedClock, client, refusal, result
from starlette.testclient import TestClient

from pytest_taguru.server.http.app import create_app
from pytest_taguru.server.store import Store

DATA_PREFIX = "Failed to deserialize the JSON body into the target type: "
TEXT = "the quick brown fox jumps over the lazy dog"


def edge(subject: str, label: str, obj: str, weight: float = 1.0, **extra: Any) -> dict[str, Any]:
    return {"subject": subject, "label": label, "object": obj, "weight": weight, **extra}


def populate(
    http: TestClient,
    name: str,
    passages: dict[str, str] | None = None,
    edges: list[dict[str, Any]] | None = None,
) -> TestClient:
    result(http.put(f"/contexts/{name}", json={}))
    if passages:
        result(http.post(f"/contexts/{name}/sources", json={"passages": passages}))
    if edges:
        result(http.post(f"/contexts/{name}/associations", json=edges))
    return http


def evidence(http: TestClient, body: Any, name: str = "c") -> dict[str, Any]:
    package: dict[str, Any] = result(http.post(f"/contexts/{name}/evidence", json=body))
    return package


@pytest.fixture(autouse=True)
def no_reranker(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("TAGURU_RERANK_MODEL", "TAGURU_RERANK_URL"):
        monkeypatch.delenv(variable, raising=False)


# --- refusals, in the §2.3 order ------------------------------------------------------------


def test_missing_json_content_type_is_415_before_anything_else() -> None:
    http = client()
    response = http.post("/contexts/nowhere/evidence", content=b"{", headers={})
    body = refusal(response, 415, "malformed_request")
    assert body["error"] == "Expected request with `Content-Type: application/json`"


def test_body_over_the_cap_is_413() -> None:
    http = TestClient(create_app(Store(FixedClock()), body_cap=16))
    response = http.post("/contexts/nowhere/evidence", json={"origins": ["x" * 32]})
    refusal(response, 413, "payload_too_large")


def test_broken_json_is_400() -> None:
    response = client().post(
        "/contexts/nowhere/evidence",
        content=b'{"origins": [',
        headers={"content-type": "application/json"},
    )
    body = refusal(response, 400, "malformed_request")
    assert body["error"].startswith("Failed to parse the request body as JSON: ")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            '{"budget":"not-an-object","origins":["x"]}',
            'budget: invalid type: string "not-an-object", expected struct BudgetRequest '
            "at line 1 column 25",
        ),
        ('{"labels":["l"]}', "missing field `origins` at line 1 column 16"),
        (
            '{"origins":null}',
            "origins: data did not match any variant of untagged enum OneOrMany "
            "at line 1 column 15",
        ),
        (
            '{"origins":["a",1]}',
            "origins: data did not match any variant of untagged enum OneOrMany "
            "at line 1 column 18",
        ),
        (
            '{"origins":"a","rerank":5}',
            "rerank: invalid type: integer `5`, expected struct RerankRequest at line 1 column 25",
        ),
        (
            '{"origins":"a","include_communities":null}',
            "include_communities: invalid type: null, expected a boolean at line 1 column 41",
        ),
        (
            '{"origins":"a",\n"budget":{"max_items":-1}}',
            "budget.max_items: invalid value: integer `-1`, expected usize at line 2 column 24",
        ),
        (
            '{"origins":"a","search_limit":2.5}',
            "search_limit: invalid type: floating point `2.5`, expected usize at line 1 column 33",
        ),
        (
            '{"origins":"a","search_limit":true}',
            "search_limit: invalid type: boolean `true`, expected usize at line 1 column 34",
        ),
        (
            '{"origins":"a","text_fallback_query":7}',
            "text_fallback_query: invalid type: integer `7`, expected a string at line 1 column 38",
        ),
        (
            '{"origins":"a","rerank":{"model":["m"]}}',
            "rerank.model: invalid type: sequence, expected a string at line 1 column 38",
        ),
        (
            '{"origins":"a","semantic_floor":"0.4"}',
            'semantic_floor: invalid type: string "0.4", expected f32 at line 1 column 37',
        ),
        ('{"origins":"a","origins":"b"}', "duplicate field `origins` at line 1 column 24"),
        (
            "[]",
            "invalid type: sequence, expected struct AssembleEvidenceRequest at line 1 column 2",
        ),
    ],
)
def test_wrong_shapes_are_422_with_serde_messages(raw: str, message: str) -> None:
    # The context does not exist: the shape is judged first.
    response = client().post(
        "/contexts/nowhere/evidence",
        content=raw.encode(),
        headers={"content-type": "application/json"},
    )
    assert refusal(response, 422, "malformed_request")["error"] == DATA_PREFIX + message


def test_first_shape_problem_in_document_order_wins() -> None:
    raw = '{"search_limit":-1,"budget":"x"}'
    response = client().post(
        "/contexts/nowhere/evidence",
        content=raw.encode(),
        headers={"content-type": "application/json"},
    )
    error = refusal(response, 422, "malformed_request")["error"]
    assert error.startswith(DATA_PREFIX + "search_limit: invalid value")


def test_too_many_origins_then_labels_are_400_over_limit_before_the_context() -> None:
    http = client()
    body = refusal(
        http.post(
            "/contexts/nowhere/evidence", json={"origins": ["x"] * 1001, "labels": ["l"] * 1001}
        ),
        400,
        "over_limit",
    )
    assert body["error"] == (
        "origins carries 1001 items, past the per-request limit of 1000; split the request"
    )
    body = refusal(
        http.post(
            "/contexts/nowhere/evidence", json={"origins": ["x"] * 1000, "labels": ["l"] * 1001}
        ),
        400,
        "over_limit",
    )
    assert body["error"].startswith("labels carries 1001 items")


def test_unknown_context_is_404_after_a_valid_body() -> None:
    body = refusal(
        client().post("/contexts/nowhere/evidence", json={"origins": []}), 404, "no_context"
    )
    assert body["error"] == "context 'nowhere' not found"


# --- the request fields evaluate sends ------------------------------------------------------


def test_evaluate_request_is_accepted_with_nulls_unknown_keys_and_a_big_search_limit() -> None:
    # Distinct texts (no near-duplicates): "fox" and a hex digest.
    passages = {f"d{i:03}.md": f"fox {sha256(bytes(i)).hexdigest()}" for i in range(250)}
    http = populate(client(), "c", passages)
    package = evidence(
        http,
        {
            "origins": ["fox"],
            "text_fallback_query": "fox",
            "search_limit": 1000,
            "semantic_floor": None,
            "budget": {"max_items": 1000, "max_bytes": 1048576, "max_tokens": 10**9, "x": 1},
            "dice_floor": None,
            "something_new": {"ignored": True},
        },
    )
    # search_limit is capped at 200; everything fits, so 200 passages are admitted.
    assert package["budget"]["items_used"] == 200
    assert package["budget"]["limits"] == {
        "max_items": 1000,
        "max_bytes": 1048576,
        "max_tokens": 10**9,
    }
    assert package["plan"]["selection"]["diversity_tier_width"] == 250


def test_budget_ceilings_and_defaults_are_echoed() -> None:
    http = populate(client(), "c")
    package = evidence(http, {"origins": [], "budget": {"max_items": 5000, "max_bytes": 2**30}})
    assert package["budget"] == {
        "items_used": 0,
        "bytes_used": 4,
        "tokens_used": 1,
        "limits": {"max_items": 1000, "max_bytes": 1048576, "max_tokens": 4000},
    }


def test_lane_plans_for_empty_origins_and_zero_search_limit() -> None:
    http = populate(client(), "c", {"a.md": TEXT}, [edge("fox", "is", "animal")])
    lanes = evidence(http, {"origins": [], "search_limit": 0})["plan"]["lanes"]
    assert lanes == {
        "resolve": {"ran": False, "reason": "origins was empty"},
        "query": {"ran": False, "reason": "no anchors resolved from 'origins'"},
        "activate": {"ran": False, "reason": "no anchors resolved from 'origins'"},
        "passages": {"ran": False, "reason": "the requested limit is 0"},
        "communities": {"ran": False, "reason": "include_communities was false"},
        "citations": {"ran": True},
    }
    lanes = evidence(http, {"origins": "fox", "labels": "is", "text_fallback_query": "。"})["plan"][
        "lanes"
    ]
    assert lanes["query"] == {"ran": True} and lanes["activate"] == {"ran": True}
    assert lanes["passages"] == {"ran": False, "reason": "the query yields no searchable terms"}


def test_query_and_activate_lanes_merge_into_one_candidate() -> None:
    http = populate(
        client(), "c", None, [edge("fox", "is", "animal"), edge("dog", "chases", "fox")]
    )
    package = evidence(http, {"origins": ["fox"], "labels": ["is"], "search_limit": 0})
    ranks = {item["candidate_id"]: item["lane_ranks"] for item in package["items"]}
    assert ranks == {
        "association\x00fox\x00is\x00animal": [
            {"lane": "graph_activate", "rank": 2},
            {"lane": "graph_query", "rank": 1},
        ],
        "association\x00dog\x00chases\x00fox": [{"lane": "graph_activate", "rank": 1}],
    }
    assert package["plan"]["selection"]["dedup_dropped"] == 1
    assert [item["fused_rank"] for item in package["items"]] == [1, 2]
    assert package["items"][0]["candidate_id"] == "association\x00fox\x00is\x00animal"


def test_communities_lane_searches_the_derived_context() -> None:
    http = populate(client(), "c", {"a.md": TEXT})
    populate(http, "c::communities", {"7": "a community about the quick fox"})
    package = evidence(
        http, {"origins": [], "text_fallback_query": "fox", "include_communities": True}
    )
    assert package["plan"]["lanes"]["communities"] == {"ran": True}
    community = next(item for item in package["items"] if item["kind"] == "community")
    assert community["candidate_id"] == "community\x00c\x00community:7\x000"
    assert community["lane_ranks"] == [{"lane": "community", "rank": 1}]
    assert list(community["community"]) == ["community", "score", "text", "paragraph"]


# --- selection observable over HTTP ---------------------------------------------------------


def test_contradiction_group_over_budget_is_omitted_whole_and_the_walk_continues() -> None:
    edges = [
        edge("猫", "is_a", "哺乳類"),
        edge("猫", "is_a", "爬虫類"),
        edge("猫", "color", "黒", 0.5),
    ]
    http = populate(client(), "c", None, edges)
    package = evidence(http, {"origins": ["猫"], "budget": {"max_items": 1}})
    assert [item["candidate_id"] for item in package["items"]] == [
        "association\x00猫\x00color\x00黒"
    ]
    assert package["omitted"] == [
        {
            "candidate_id": "association\x00猫\x00is_a\x00哺乳類",
            "kind": "association",
            "reason": "contradiction_group_exceeds_budget",
        },
        {
            "candidate_id": "association\x00猫\x00is_a\x00爬虫類",
            "kind": "association",
            "reason": "contradiction_group_exceeds_budget",
        },
    ]
    assert package["omitted_by_reason"] == {"contradiction_group_exceeds_budget": 2}
    assert package["plan"]["selection"]["contradiction_groups"] == 1


def test_skip_and_continue_admits_a_later_smaller_item() -> None:
    passages = {"a.md": "fox " + "x" * 400, "b.md": "fox"}
    http = populate(client(), "c", passages)
    roomy = evidence(http, {"origins": [], "text_fallback_query": "fox"})
    sizes = {item["passage"]["source"]: item["bytes"] for item in roomy["items"]}
    assert [item["passage"]["source"] for item in roomy["items"]] == ["b.md", "a.md"]
    # Room for the small one alone: the walk skips a.md wherever it is and keeps b.md.
    budget = 2 + sizes["b.md"] + 2
    package = evidence(
        http, {"origins": [], "text_fallback_query": "fox", "budget": {"max_bytes": budget}}
    )
    assert [item["passage"]["source"] for item in package["items"]] == ["b.md"]
    assert package["budget"]["bytes_used"] == budget
    assert package["omitted"] == [
        {
            "candidate_id": "passage\x00c\x00a.md\x000",
            "kind": "passage",
            "reason": "budget_exceeded",
        }
    ]


def test_omitted_list_is_capped_at_twenty_but_counts_are_exact() -> None:
    http = populate(client(), "c", None, [edge("hub", f"rel{i:02}", "o") for i in range(30)])
    package = evidence(http, {"origins": ["hub"], "activate_limit": 30, "budget": {"max_items": 0}})
    assert len(package["omitted"]) == 20
    assert package["omitted_total"] == 30
    assert package["omitted_by_reason"] == {"budget_exceeded": 30}


def test_diversity_tiering_moves_a_repeated_source_behind_a_novel_one() -> None:
    passages = {"a.md": "fox fox fox\n\nfox fox zebra", "b.md": "fox and more words here"}
    http = populate(client(), "c", passages)
    package = evidence(
        http, {"origins": [], "text_fallback_query": "fox", "budget": {"max_items": 12}}
    )
    order = [(i["passage"]["source"], i["passage"]["paragraph"]) for i in package["items"]]
    fused = [i["fused_rank"] for i in package["items"]]
    # Tier width 3: a.md#0 and a.md#1 are fused 1 and 2, b.md 3; the repeat goes last.
    assert order == [("a.md", 0), ("b.md", 0), ("a.md", 1)]
    assert fused == [1, 3, 2]


def test_same_request_same_bytes() -> None:
    http = populate(client(), "c", {"a.md": TEXT, "b.md": TEXT}, [edge("fox", "is", "animal")])
    body = {"origins": ["fox"], "text_fallback_query": "quick fox"}
    first = http.post("/contexts/c/evidence", json=body).json()
    second = http.post("/contexts/c/evidence", json=body).json()
    first.pop("time"), second.pop("time")
    assert first == second


def test_scores_are_written_as_their_shortest_f32_text() -> None:
    text = "青嶺酒造は雲居県霧沢町の蔵元である。杜氏は高瀬である。"
    http = populate(client(), "sake", {"docs/kura.md": text})
    raw = http.post("/contexts/sake/evidence", json={"origins": ["青嶺酒造"]}).text
    assert re.search(r'"score": ?0\.86304635[,}]', raw), raw
    assert "0.8630463480949402" not in raw
