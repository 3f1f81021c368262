"""The ``*/explain`` routes and ``GET /protocol`` of the reference server."""

import json
from typing import Any

import pytest
from app_client import client, refusal, result
from starlette.testclient import TestClient

from pytest_taguru.server.http.app import ROUTES

RECORDS: list[dict[str, Any]] = [
    {"taguru_batch": 1, "context": "x", "source": "a.md", "create": {}},
    {"passage": "red apples grow here\n\napples and pears\n\nnothing in common", "tags": ["fruit"]},
    {"taguru_batch": 1, "context": "x", "source": "b.md"},
    {"passage": "apples apples apples red"},
    {"taguru_batch": 1, "context": "x", "source": "c.md"},
    {"passage": "pears only"},
    {"subject": "red apple", "label": "grows in", "object": "orchard", "weight": 1.0},
    {"subject": "green apple", "label": "grown by", "object": "farmer", "weight": 1.0},
]


@pytest.fixture
def http() -> TestClient:
    made = client()
    body = "".join(json.dumps(record) + "\n" for record in RECORDS)
    response = made.post("/import", content=body.encode())
    assert response.status_code == 200, response.text
    return made


def explain(http: TestClient, **body: Any) -> dict[str, Any]:
    found: dict[str, Any] = result(http.post("/contexts/x/sources/search/explain", json=body))
    return found


def search(http: TestClient, query: str, limit: int) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = result(
        http.post("/contexts/x/sources/search", json={"query": query, "limit": limit})
    )["hits"]
    return hits


def test_a_served_paragraph_adds_up_to_its_search_score(http: TestClient) -> None:
    [top] = search(http, "red apples", 1)
    found = explain(http, query="red apples", source=top["source"], paragraph=top["paragraph"])

    assert found["verdict"] == "served"
    assert found["summary"].startswith(f"served: paragraph {top['paragraph']} of '")
    assert found["bm25"]["score"] == top["score"]
    assert found["bm25"]["rank"] == 1 == found["ranking"]["rank"]
    assert [term["term"] for term in found["bm25"]["terms"]] == ["red", "apples"]
    assert all(term["tf"] >= 1.0 and term["df"] >= 1 for term in found["bm25"]["terms"])
    assert found["vector"] == {"ran": False, "reason": "no embedding provider is configured"}
    assert found["ranking"]["fused"] is False and found["ranking"]["served"] is True
    assert list(found) == [
        "verdict", "summary", "source", "paragraph", "paragraphs", "paragraph_named",
        "query_terms", "bm25", "vector", "ranking",
    ]  # fmt: skip


def test_below_the_cutoff_says_which_limit_reaches_it(http: TestClient) -> None:
    hits = search(http, "apples", 10)
    second = hits[1]
    found = explain(
        http, query="apples", source=second["source"], paragraph=second["paragraph"], limit=1
    )

    assert found["verdict"] == "below_cutoff"
    ranking = found["ranking"]
    assert (ranking["rank"], ranking["served"], ranking["limit_to_reach"]) == (2, False, 2)
    assert ranking["cutoff_score"] == hits[0]["score"]
    assert ranking["ranked"] == len(hits)
    assert found["summary"].endswith("; limit 2 reaches it")


def test_no_term_overlap_shows_both_sides(http: TestClient) -> None:
    found = explain(http, query="apples", source="a.md", paragraph=2)

    assert found["verdict"] == "no_term_overlap"
    assert found["paragraph_terms"] == ["nothing", "in", "common"]
    assert all(term["tf"] == 0.0 and term["contribution"] == 0.0 for term in found["bm25"]["terms"])
    assert "rank" not in found["ranking"] and "limit_to_reach" not in found["ranking"]


def test_without_a_paragraph_the_best_showing_is_explained(http: TestClient) -> None:
    found = explain(http, query="pears", source="a.md")

    assert (found["paragraph"], found["paragraph_named"]) == (1, False)
    assert explain(http, query="pears", source="a.md", index=1)["paragraph_named"] is True


@pytest.mark.parametrize(
    ("body", "verdict"),
    [
        ({"source": "zz.md"}, "not_stored"),
        ({"source": "a.md", "paragraph": 3}, "paragraph_out_of_range"),
        ({"source": "b.md", "tags": ["fruit"]}, "filtered_out"),
        ({"source": "a.md", "query": "!!"}, "no_query_terms"),
    ],
)
def test_the_verdicts_that_end_before_scoring(
    http: TestClient, body: dict[str, Any], verdict: str
) -> None:
    found = explain(http, **({"query": "apples"} | body))

    assert found["verdict"] == verdict
    assert "bm25" not in found and "ranking" not in found


def test_out_of_range_states_the_paragraph_count(http: TestClient) -> None:
    found = explain(http, query="apples", source="a.md", paragraph=7)

    assert found == {
        "verdict": "paragraph_out_of_range",
        "summary": "paragraph 7 is out of range for source 'a.md' — it stores 3 paragraph(s), "
        "0-based",
        "source": "a.md",
        "paragraph": 7,
        "paragraphs": 3,
    }


def test_explain_is_checked_like_the_search(http: TestClient) -> None:
    bad_window = {"query": "q", "source": "a.md", "since": 5, "until": 5}
    refusal(http.post("/contexts/x/sources/search/explain", json=bad_window), 400,
            "invalid_argument")  # fmt: skip
    missing = http.post("/contexts/x/sources/search/explain", json={"query": "q"})
    assert missing.status_code == 422
    refusal(
        http.post("/contexts/nope/sources/search/explain", json={"query": "q", "source": "a"}),
        404,
        "no_context",
    )


def resolve_explain(http: TestClient, route: str = "resolve", **body: Any) -> dict[str, Any]:
    found: dict[str, Any] = result(http.post(f"/contexts/x/{route}/explain", json=body))
    return found


@pytest.mark.parametrize(
    ("body", "verdict"),
    [
        ({"cue": "red apple", "expected": "red apple"}, "served"),
        ({"cue": "red apple", "expected": "orchard"}, "cue_resolved_exactly"),
        ({"cue": "apple", "expected": "green apple", "dice_floor": 0.9}, "served"),
        ({"cue": "red aple", "expected": "red apple", "dice_floor": 0.99}, "below_floor"),
        ({"cue": "apple", "expected": "green apple", "limit": 1}, "below_cutoff"),
        ({"cue": "banana", "expected": "orchard"}, "semantic_not_run"),
        ({"cue": "apple", "expected": "pineapple"}, "not_in_vocabulary"),
    ],
)
def test_resolve_verdicts(http: TestClient, body: dict[str, Any], verdict: str) -> None:
    found = resolve_explain(http, **body)

    assert found["verdict"] == verdict, found["summary"]
    assert found["in_vocabulary"] is (verdict != "not_in_vocabulary")


def test_below_the_floor_names_the_floor_that_would_show_it(http: TestClient) -> None:
    found = resolve_explain(http, cue="red aple", expected="red apple", dice_floor=0.99)

    score = found["lexical"]["score"]
    assert found["lexical"] == {"score": score, "kind": "fuzzy", "floor": 0.99,
                                "confident": False}  # fmt: skip
    assert found["summary"] == (
        f"the resolver scored 'red apple' {score:.4f} (fuzzy) against dice_floor 0.9900 — a "
        f"floor at or under {score:.4f} would have shown it"
    )
    assert found["semantic"] == {"entered": True, "reason": "no embedding provider is configured"}


def test_below_the_cutoff_of_resolve(http: TestClient) -> None:
    found = resolve_explain(http, cue="apple", expected="green apple", limit=1)

    assert found["ranking"] == {"rank": 2, "tier": "lexical", "score": found["ranking"]["score"],
                                "limit": 1, "served": False, "limit_to_reach": 2}  # fmt: skip


def test_not_in_vocabulary_attaches_the_nearest_spellings(http: TestClient) -> None:
    found = resolve_explain(http, cue="apple", expected="red aple")

    nearest = found["nearest"]
    assert nearest["lexical"][0]["name"] == "red apple"
    assert nearest["semantic"] == []
    assert nearest["semantic_note"] == "no embedding provider is configured"


def test_labels_have_their_own_vocabulary(http: TestClient) -> None:
    assert resolve_explain(http, "resolve_label", cue="grows", expected="grows in")["verdict"] == (
        "served"
    )
    found = resolve_explain(http, "resolve_label", cue="grows", expected="orchard")
    assert found["verdict"] == "not_in_vocabulary"
    assert "label vocabulary" in found["summary"]


def test_an_explanation_is_a_read(http: TestClient) -> None:
    before = result(http.get("/contexts/x"))["usage"]
    explain(http, query="apples", source="zz.md")
    resolve_explain(http, cue="apple", expected="red apple")
    after = result(http.get("/contexts/x"))["usage"]

    assert after["reads"] == before["reads"] + 2
    assert after["empty_reads"] == before["empty_reads"] + 1  # not_stored
    assert after["writes"] == before["writes"]


def test_protocol_lists_every_route_and_unknown_paths_point_at_it(http: TestClient) -> None:
    response = http.get("/protocol")

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    for route in ROUTES:
        for method in route.methods - {"HEAD"}:  # type: ignore[attr-defined]
            assert f"- `{method} {route.path}`" in response.text  # type: ignore[attr-defined]
    missing = refusal(http.get("/nowhere"), 404, "unknown_path")
    assert missing["error"].endswith("GET /protocol lists the API")
