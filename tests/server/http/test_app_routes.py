"""Route semantics of the reference server: server-wire §2, §3 worked examples and pitfalls."""

import pytest
from app_client import FixedClock, client, refusal, result, sake
from starlette.testclient import TestClient

from pytest_taguru.server.store import Store


@pytest.fixture
def http() -> TestClient:
    return sake(client())


def test_worked_example_directory_entry(http: TestClient) -> None:
    entry = result(http.get("/contexts/sake"))
    assert entry["revision"] == {"graph": 4, "passages": 2, "config": 0}
    assert entry["usage"]["writes"] == 3
    stats = entry["stats"]
    assert (stats["associations"], stats["concepts"], stats["labels"], stats["sources"]) == (
        3,
        4,
        3,
        1,
    )
    assert stats["top_concepts"][:2] == [
        {"label": "青嶺酒造", "count": 2},
        {"label": "高瀬", "count": 2},
    ]
    assert stats["label_sample"] == ["杜氏", "創業年", "出身"]
    assert entry["schema_mode"] is None and entry["dice_floor"] is None
    listing = result(http.get("/contexts/sake/sources"))
    assert listing["sources"] == ["corpus/brewery.md", "corpus/rice.md"]
    assert listing["entries"][0] == {"name": "corpus/brewery.md", "stored_at": 1_767_225_600}


def test_worked_example_resolves(http: TestClient) -> None:
    def resolve(cue: str, route: str = "resolve") -> list[dict[str, object]]:
        found: list[dict[str, object]] = result(
            http.post(f"/contexts/sake/{route}", json={"cue": cue, "limit": 5})
        )
        return found

    assert resolve("青嶺酒蔵") == [
        {
            "name": "青嶺酒造",
            "score": 0.6666666666666666,
            "tier": "lexical",
            "kind": "fuzzy",
            "gloss": "青嶺酒造。杜氏は高瀬。創業年は1907年。",
        }
    ]
    assert [(c["score"], c["kind"]) for c in resolve("青嶺")] == [(0.5, "containment")]
    assert [(c["name"], c["kind"]) for c in resolve("ＡＯＭＩＮＥ brewery")] == [
        ("青嶺酒造", "alias")
    ]
    assert resolve("杜氏", "resolve_label")[0]["gloss"] == "杜氏。青嶺酒造の杜氏は高瀬。"
    assert resolve("高瀬")[0]["gloss"] == "高瀬。青嶺酒造の杜氏は高瀬。出身は南部。"
    assert resolve("") == []
    assert result(http.post("/contexts/sake/resolve", json={"cue": "高瀬", "limit": 0})) == []
    assert resolve("杜氏") == [] and resolve("高瀬", "resolve_label") == []


def test_gloss_only_on_the_first_eight(http: TestClient) -> None:
    items = [
        {"subject": f"名前{i:02d}", "label": "x", "object": "y", "weight": 1.0} for i in range(10)
    ]
    result(http.post("/contexts/sake/associations", json=items))
    found = result(http.post("/contexts/sake/resolve", json={"cue": "名前"}))
    assert len(found) == 10
    assert all("gloss" in c for c in found[:8]) and not any("gloss" in c for c in found[8:])


def test_worked_example_query_and_citation(http: TestClient) -> None:
    query = {"subject": "青嶺酒造", "label": "杜氏", "object": "高瀬", "limit": 1}
    assert result(http.post("/contexts/sake/query", json=query)) == {
        "total": 1,
        "matches": [
            {
                "subject": "青嶺酒造",
                "label": "杜氏",
                "object": "高瀬",
                "weight": 2.0,
                "count": 1,
                "attributions": [
                    {
                        "source": "corpus/brewery.md",
                        "weight": 2.0,
                        "count": 1,
                        "paragraph": 1,
                        "section": "沿革",
                        "locator": {"kind": "page", "value": "2"},
                    }
                ],
            }
        ],
        "plan": {"contexts": ["sake"]},
    }
    aliased = result(http.post("/contexts/sake/query", json={"subject": "Aomine Brewery"}))
    assert aliased["total"] == 2 and aliased["matches"][0]["subject"] == "青嶺酒造"
    assert (
        result(http.post("/contexts/sake/query", json={"subject": "aomine brewery"}))["total"] == 0
    )
    cited = result(
        http.post("/contexts/sake/citations", json={"source": "corpus/brewery.md", "paragraph": 1})
    )
    assert cited == {
        "text": "杜氏は高瀬である。",
        "source": "corpus/brewery.md",
        "section": "沿革",
        "locator": {"kind": "page", "value": "2"},
    }


def test_worked_example_search(http: TestClient) -> None:
    found = result(
        http.post("/contexts/sake/sources/search", json={"query": "杜氏は誰", "limit": 10})
    )
    assert found == {
        "plan": {
            "contexts": [
                {
                    "context": "sake",
                    "lanes": {
                        "bm25": {"ran": True},
                        "vector": {"ran": False, "reason": "no embedding provider is configured"},
                    },
                }
            ]
        },
        "hits": [
            {
                "source": "corpus/brewery.md",
                "paragraph": 1,
                "score": 2.1578243,
                "text": "杜氏は高瀬である。",
                "lanes": {"bm25": {"rank": 1, "score": 2.1578243}},
            }
        ],
    }


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"query": "杜氏", "limit": 0}, "the requested limit is 0"),
        ({"query": "。、", "limit": 3}, "the query yields no searchable terms"),
        ({"query": "", "limit": 0}, "the requested limit is 0"),
    ],
)
def test_search_skipped_lanes(http: TestClient, body: dict[str, object], reason: str) -> None:
    found = result(http.post("/contexts/sake/sources/search", json={**body, "tags": ["米"]}))
    lanes = found["plan"]["contexts"][0]["lanes"]
    assert lanes == {
        "bm25": {"ran": False, "reason": reason},
        "vector": {"ran": False, "reason": reason},
    }
    assert found["plan"]["contexts"][0]["filter"] == {"eligible_sources": 0, "total_sources": 2}
    assert found["hits"] == []


def test_search_filters_and_limits() -> None:
    clock = FixedClock(1000)
    http = client(Store(clock))
    result(http.put("/contexts/c"))
    text = "\n\n".join(f"酒造 段落{i}" for i in range(8))
    result(
        http.post(
            "/contexts/c/sources",
            json={
                "passages": {"a.md": text, "b.md": "酒造の話", "c.md": "酒造"},
                "tags": {"a.md": ["x", "x", "y"], "b.md": ["z"]},
                "dates": {"b.md": 50},
            },
        )
    )
    search = "/contexts/c/sources/search"
    hits = result(http.post(search, json={"query": "酒造"}))["hits"]
    assert len(hits) == 5
    assert [h["lanes"]["bm25"]["rank"] for h in hits] == [1, 2, 3, 4, 5]
    assert all(h["lanes"]["bm25"]["score"] == h["score"] for h in hits)
    tagged = result(http.post(search, json={"query": "酒造", "tags": ["z"], "limit": 10}))
    assert {h["source"] for h in tagged["hits"]} == {"b.md"}
    assert tagged["plan"]["contexts"][0]["filter"] == {"eligible_sources": 1, "total_sources": 3}
    windowed = result(http.post(search, json={"query": "酒造", "since": 900, "until": 1001}))
    assert {h["source"] for h in windowed["hits"]} == {"a.md", "c.md"}
    early = result(http.post(search, json={"query": "酒造", "until": 51}))
    assert {h["source"] for h in early["hits"]} == {"b.md"}
    assert len(result(http.post(search, json={"query": "酒造", "limit": 5000}))["hits"]) == 10
    listing = result(http.get("/contexts/c/sources"))
    assert listing["entries"][0] == {"name": "a.md", "stored_at": 1000, "tags": ["x", "y"]}
    assert listing["entries"][1] == {"name": "b.md", "stored_at": 1000, "date": 50, "tags": ["z"]}


def test_empty_context_search_runs_bm25() -> None:
    http = client()
    result(http.put("/contexts/e"))
    found = result(http.post("/contexts/e/sources/search", json={"query": "anything"}))
    assert found["hits"] == [] and found["plan"]["contexts"][0]["lanes"]["bm25"] == {"ran": True}


def test_usage_counters(http: TestClient) -> None:
    before = result(http.get("/contexts/sake"))["usage"]
    http.post("/contexts/sake/resolve", json={"cue": "高瀬"})
    http.post("/contexts/sake/resolve", json={"cue": "存在しない"})
    http.post("/contexts/sake/sources/search", json={"query": "zzz"})
    http.post("/contexts/sake/citations", json={"source": "nope", "paragraph": 0})
    http.post("/contexts/sake/query", json={"subject": "高瀬"})
    http.get("/contexts/sake/sources")
    after = result(http.get("/contexts/sake"))["usage"]
    assert after["reads"] - before["reads"] == 5
    assert after["empty_reads"] - before["empty_reads"] == 3
    assert after["last_read_epoch"] == 1_767_225_600
    assert after["writes"] == before["writes"]


def test_revision_lanes(http: TestClient) -> None:
    def revision() -> dict[str, int]:
        entry: dict[str, dict[str, int]] = result(http.get("/contexts/sake"))
        return entry["revision"]

    result(http.post("/contexts/sake/sources", json={"passages": SAME_RICE}))
    assert revision() == {"graph": 4, "passages": 3, "config": 0}
    assert (
        result(
            http.post("/contexts/sake/aliases", json={"concepts": {"Aomine Brewery": "青嶺酒造"}})
        )
        == 1
    )
    assert revision()["graph"] == 5
    result(http.post("/contexts/sake/sources", json={"passages": {}}))
    assert revision()["passages"] == 3
    assert result(http.get("/contexts/sake"))["usage"]["writes"] == 6
    retracted = result(
        http.post("/contexts/sake/sources/retract", json={"source": "corpus/brewery.md"})
    )
    assert retracted == {"associations_touched": 2, "passage_removed": True}
    assert revision() == {"graph": 6, "passages": 4, "config": 0}


SAME_RICE = {"corpus/rice.md": "原料米には山田錦を使う。"}


def test_dead_edges_and_revival(http: TestClient) -> None:
    triple = {"subject": "高瀬", "label": "出身", "object": "南部"}
    assert result(http.post("/contexts/sake/associations/retract", json=triple)) == {
        "retracted": True,
        "attributions_removed": 0,
    }
    assert (
        result(http.post("/contexts/sake/associations/retract", json=triple))["retracted"] is False
    )
    dead = result(http.post("/contexts/sake/query", json=triple))
    assert dead["total"] == 1
    assert dead["matches"][0] == {**triple, "weight": 0.0, "count": 0, "attributions": []}
    assert result(http.get("/contexts/sake"))["stats"]["dead_edges"] == 1
    assert result(http.post("/contexts/sake/resolve", json={"cue": "南部"}))[0]["gloss"] == "南部。"
    result(http.post("/contexts/sake/associations", json=[{**triple, "weight": 3.0}]))
    assert result(http.post("/contexts/sake/query", json=triple))["matches"][0]["weight"] == 3.0


def test_accumulation_and_attribution_rules(http: TestClient) -> None:
    base = {"subject": "青嶺酒造", "label": "杜氏", "object": "高瀬"}
    result(
        http.post(
            "/contexts/sake/associations",
            json=[
                {**base, "weight": 4.0, "source": "corpus/brewery.md", "paragraph": 0},
                {**base, "weight": 1.0},
                {**base, "weight": 1.0, "source": "corpus/rice.md", "paragraph": 7},
            ],
        )
    )
    match = result(http.post("/contexts/sake/query", json=base))["matches"][0]
    assert (match["weight"], match["count"]) == (2.0, 4)
    assert [
        (a["source"], a["weight"], a["count"], a["paragraph"]) for a in match["attributions"]
    ] == [
        ("corpus/brewery.md", 6.0, 2, 1),
        ("corpus/rice.md", 1.0, 1, None),
    ]
    assert (
        match["attributions"][1]["section"] is None and match["attributions"][1]["locator"] is None
    )


def test_query_ordering_paging_and_window() -> None:
    clock = FixedClock(100)
    http = client(Store(clock))
    result(http.put("/contexts/q"))
    result(
        http.post(
            "/contexts/q/sources",
            json={"passages": {"old.md": "x", "new.md": "y"}, "dates": {"old.md": 10}},
        )
    )
    result(
        http.post(
            "/contexts/q/associations",
            json=[
                {"subject": "a", "label": "r", "object": "b", "weight": -5.0, "source": "old.md"},
                {"subject": "a", "label": "r", "object": "c", "weight": 2.0, "source": "new.md"},
                {"subject": "a", "label": "r", "object": "c", "weight": 4.0},
                {"subject": "a", "label": "s", "object": "d", "weight": 5.0, "source": "new.md"},
                {
                    "subject": "a",
                    "label": "t",
                    "object": "e",
                    "weight": 1.0,
                    "source": "only-graph.md",
                },
            ],
        )
    )
    page = result(http.post("/contexts/q/query", json={"subject": "a", "limit": 2}))
    assert page["total"] == 4
    assert [(m["object"], m["weight"]) for m in page["matches"]] == [("b", -5.0), ("d", 5.0)]
    last = page["matches"][-1]
    cursor = {k: last[k] for k in ("weight", "subject", "label", "object")}
    rest = result(http.post("/contexts/q/query", json={"subject": "a", "after": cursor}))
    assert rest["total"] == 4
    assert [m["object"] for m in rest["matches"]] == ["c", "e"]
    windowed = result(http.post("/contexts/q/query", json={"subject": "a", "since": 50}))
    assert [(m["object"], m["weight"], m["count"]) for m in windowed["matches"]] == [
        ("d", 5.0, 1),
        ("c", 2.0, 1),
    ]
    assert result(http.post("/contexts/q/query", json={"subject": "a", "until": 50}))["total"] == 1
    assert result(http.post("/contexts/q/query", json={"subject": "a", "limit": 0})) == {
        "total": 4,
        "matches": [],
        "plan": {"contexts": ["q"]},
    }
    typed = result(http.post("/contexts/q/query", json={"subject": "a", "object_types": ["T"]}))
    assert typed["total"] == 0
    assert (
        result(http.post("/contexts/q/query", json={"subject": ["zz", "a"], "label": "s"}))["total"]
        == 1
    )


def test_paragraph_nulling_depends_on_population_order() -> None:
    http = client()
    result(http.put("/contexts/p"))
    item = {
        "subject": "a",
        "label": "r",
        "object": "b",
        "weight": 1.0,
        "source": "d.md",
        "paragraph": 5,
    }
    result(http.post("/contexts/p/associations", json=[item]))
    result(http.post("/contexts/p/sources", json={"passages": {"d.md": "one"}}))
    result(http.post("/contexts/p/associations", json=[{**item, "source": "e.md", "object": "c"}]))
    result(http.post("/contexts/p/sources", json={"passages": {"f.md": "one"}}))
    result(http.post("/contexts/p/associations", json=[{**item, "source": "f.md", "object": "d"}]))
    matches = result(http.post("/contexts/p/query", json={"subject": "a"}))["matches"]
    assert {m["object"]: m["attributions"][0]["paragraph"] for m in matches} == {
        "b": 5,
        "c": 5,
        "d": None,
    }


def test_alias_registration_and_removal(http: TestClient) -> None:
    path = "/contexts/sake/aliases"
    body = refusal(http.post(path, json={"concepts": {"A": "高瀬", "B": "無い"}}), 409, "conflict")
    assert (
        body["error"] == "applied 1 aliases, then concept alias 'B' → '無い': "
        "the canonical spelling is not interned"
    )
    body = refusal(http.post(path, json={"concepts": {"A": "南部"}}), 409, "conflict")
    assert body["error"].endswith("the alias already resolves to a different record")
    refusal(http.post(path, json={"labels": {"X": "高瀬"}}), 409, "conflict")
    assert result(http.post(path, json={"labels": {"master": "杜氏"}})) == 1
    listing = result(http.get(path))
    assert listing == {
        "total": 3,
        "concepts": {"A": "高瀬", "Aomine Brewery": "青嶺酒造"},
        "labels": {"master": "杜氏"},
    }
    first = result(http.get(path, params={"limit": 1}))
    assert first["concepts"] == {"A": "高瀬"} and first["total"] == 3
    second = result(http.get(path, params={"limit": 2, "after": "concept:A"}))
    assert second["concepts"] == {"Aomine Brewery": "青嶺酒造"} and second["labels"] == {
        "master": "杜氏"
    }
    assert result(http.get(path, params={"prefix": "m"}))["total"] == 1
    body = refusal(http.request("DELETE", path, json={"concepts": ["A", "高瀬"]}), 409, "conflict")
    assert body["error"] == (
        "removed 1 aliases, then '高瀬' is not a concept alias "
        "(canonical names cannot be removed this way)"
    )
    assert result(http.request("DELETE", path, json={"labels": ["master"]})) == 1
    assert result(http.post("/contexts/sake/query", json={"label": "master"}))["total"] == 0


def test_context_listing() -> None:
    http = client()
    for name, pinned in (("b", True), ("a", False), ("c", True)):
        result(http.put(f"/contexts/{name}", json={"pinned": pinned, "dice_floor": 7}))
    listing = result(http.get("/contexts", params={"limit": 0}))
    assert listing["total"] == 3 and [c["name"] for c in listing["contexts"]] == ["a"]
    assert [c["name"] for c in result(http.get("/contexts?after=a"))["contexts"]] == ["b", "c"]
    pinned = result(http.get("/contexts?pinned=true&after=b"))
    assert pinned["total"] == 2 and [c["name"] for c in pinned["contexts"]] == ["c"]
    assert listing["contexts"][0]["dice_floor"] == 1.0
    assert result(http.get("/contexts/a/embeddings")) == {"provider_model": None}


def test_sources_keyset_ends_on_an_empty_page(http: TestClient) -> None:
    first = result(http.get("/contexts/sake/sources?limit=1"))
    assert first["sources"] == ["corpus/brewery.md"] and first["total"] == 2
    second = result(
        http.get("/contexts/sake/sources", params={"limit": 1, "after": "corpus/brewery.md"})
    )
    assert second["sources"] == ["corpus/rice.md"]
    assert (
        result(http.get("/contexts/sake/sources", params={"after": "corpus/rice.md"}))["sources"]
        == []
    )
    assert result(http.get("/contexts/sake/sources", params={"prefix": "corpus/r"}))["total"] == 1


def test_empty_passage_is_listed_without_paragraphs(http: TestClient) -> None:
    result(http.post("/contexts/sake/sources", json={"passages": {"blank.md": " \n\n"}}))
    assert "blank.md" in result(http.get("/contexts/sake/sources"))["sources"]
    refusal(
        http.post("/contexts/sake/citations", json={"source": "blank.md", "paragraph": 0}),
        404,
        "no_paragraph",
    )


def test_probes_are_bare_json(http: TestClient) -> None:
    assert http.get("/health").json() == {"status": "ok", "version": "0.9.3"}
    assert http.get("/version").json()["http_contract"] == {"current": 1, "supported": [1]}
    assert http.get("/live").text == "ok"


def test_percent_encoded_context_names() -> None:
    http = client()
    assert result(http.put("/contexts/%E9%85%92%20%E8%94%B5")) is True
    assert result(http.get("/contexts"))["contexts"][0]["name"] == "酒 蔵"
    assert result(http.get("/contexts/%E9%85%92%20%E8%94%B5/sources"))["total"] == 0
