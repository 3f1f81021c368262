"""Replay every golden wire fixture whose route the reference server serves.

Each served fixture gets the population its request implies, then its request is replayed
and the response compared with the fixture (volatile fields blanked, floats with a
tolerance, closed enums checked against shapes.json). Fixtures of routes the reference
server does not serve are skipped with the reason.
"""

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from wire_compare import (
    HTTP_FIXTURES,
    assert_enums,
    assert_wire_equal,
    blank_volatile,
    load_fixture,
    load_shapes,
)

Setup = Callable[[httpx.Client], None]


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["result"]


def create(http: httpx.Client, name: str, description: str = "") -> None:
    ok(http.put(f"/contexts/{name}", json={"description": description}))


def nothing(http: httpx.Client) -> None:
    return None


def corpus_a(http: httpx.Client) -> None:
    """The contexts_list corpus: writes 2, reads 1, revision graph 1 / passages 1."""
    create(http, "corpus-a", "wire-contract corpus")
    ok(http.post("/contexts/corpus-a/sources", json={"passages": {"doc.md": "alpha beta"}}))
    edge = {"subject": "alpha", "label": "connects_to", "object": "beta", "weight": 1.0}
    ok(http.post("/contexts/corpus-a/associations", json=[{**edge, "source": "doc.md"}]))
    ok(http.post("/contexts/corpus-a/resolve", json={"cue": "alpha"}))


def postgres(http: httpx.Client) -> None:
    create(http, "corpus-d")
    edge = {"subject": "PostgreSQL 16", "label": "is_a", "object": "database", "weight": 1.0}
    ok(http.post("/contexts/corpus-d/associations", json=[edge]))


def postgres_aliased(http: httpx.Client) -> None:
    postgres(http)
    ok(http.post("/contexts/corpus-d/aliases", json={"concepts": {"Postgres": "PostgreSQL 16"}}))


def search_corpus(http: httpx.Client) -> None:
    create(http, "corpus-c")
    text = "青嶺酒造は雲居県霧沢町の蔵元である。"
    ok(http.post("/contexts/corpus-c/sources", json={"passages": {"doc.md": text}}))


# --- evidence fixtures (POST /contexts/{name}/evidence) -------------------------------------
# Each population is what the fixture's response implies: context names from the passage
# candidate ids where they show, passages with their locators, associations with weight 1.0.


def edge(subject: str, label: str, obj: str, **extra: Any) -> dict[str, Any]:
    return {"subject": subject, "label": label, "object": obj, "weight": 1.0, **extra}


def populate(
    http: httpx.Client,
    name: str,
    passages: dict[str, str] | None = None,
    edges: list[dict[str, Any]] | None = None,
    page_one: str | None = None,
) -> None:
    """Create ``name`` with ``passages`` (``page_one``'s paragraph 0 located at page 1)."""
    create(http, name)
    if passages:
        body: dict[str, Any] = {"passages": passages}
        if page_one is not None:
            locator = {"paragraph": 0, "locator": {"kind": "page", "value": "1"}}
            body["locators"] = {page_one: [locator]}
        ok(http.post(f"/contexts/{name}/sources", json=body))
    if edges:
        ok(http.post(f"/contexts/{name}/associations", json=edges))


def evidence_budget(http: httpx.Client) -> None:
    populate(http, "budget-corpus", edges=[edge(f"s{i}", "rel", f"o{i}") for i in range(5)])


def evidence_communities(http: httpx.Client) -> None:
    populate(http, "comm-corpus", edges=[edge("alpha", "rel", "beta")])


def evidence_contradiction(http: httpx.Client) -> None:
    passages = {"s1.md": "猫は哺乳類である。", "s2.md": "猫は爬虫類だと主張する文献もある。"}
    edges = [
        edge("猫", "is_a", "哺乳類", source="s1.md", paragraph=0),
        edge("猫", "is_a", "爬虫類", source="s2.md", paragraph=0),
    ]
    populate(http, "contra-corpus", passages, edges, page_one="s1.md")


def evidence_duplicate(http: httpx.Client) -> None:
    text = "the quick brown fox jumps over the lazy dog"
    populate(http, "dup-corpus", {"a.md": text, "b.md": text})


def evidence_mixed(http: httpx.Client) -> None:
    text = "青嶺酒造は雲居県霧沢町の蔵元である。杜氏は高瀬である。"
    edges = [edge("青嶺酒造", "杜氏", "高瀬", source="docs/kura.md", paragraph=0)]
    populate(http, "sake", {"docs/kura.md": text}, edges, page_one="docs/kura.md")


EVIDENCE_SERVED: dict[str, tuple[str, Setup]] = {
    "evidence_budget_constrained": ("budget-corpus", evidence_budget),
    "evidence_communities_degrade_and_rerank_reason": ("comm-corpus", evidence_communities),
    "evidence_contradiction_group": ("contra-corpus", evidence_contradiction),
    "evidence_duplicate_passage": ("dup-corpus", evidence_duplicate),
    "evidence_mixed_lanes": ("sake", evidence_mixed),
    "error_no_context": ("does-not-exist", nothing),
    "error_malformed_request": ("corpus-e", lambda http: create(http, "corpus-e")),
    "error_over_limit": ("corpus-e", lambda http: create(http, "corpus-e")),
}


# operation → (context the {name} placeholder becomes, population before the replay)
SERVED: dict[str, tuple[str, Setup]] = {
    "health": ("", nothing),
    "version": ("", nothing),
    "contexts_list": ("", corpus_a),
    "embeddings_status": ("corpus-b", lambda http: create(http, "corpus-b")),
    "store_passages": ("corpus-b", lambda http: create(http, "corpus-b")),
    "associations_store": ("corpus-b", lambda http: create(http, "corpus-b")),
    "aliases_register": ("corpus-d", postgres),
    "aliases_list": ("corpus-d", postgres_aliased),
    "aliases_remove": ("corpus-d", postgres_aliased),
    "sources_search": ("corpus-c", search_corpus),
    "import": ("", nothing),
    "import_refusal_durable_prefix": ("", nothing),
    **EVIDENCE_SERVED,
}

NOT_SERVED = {
    "recall": "POST /contexts/{name}/recall is not served (its match shape is checked via "
    "/query in test_query_matches_recall_fixture_shape)",
    "explore": "POST …/explore is not served by the reference server",
    "activate": "POST …/activate is not served by the reference server",
    "paths": "POST …/paths is not served by the reference server",
    "unreachable_from": "POST …/unreachable_from is not served by the reference server",
    "labels": "GET …/labels is not served by the reference server",
    "communities_search": "POST …/communities/search is not served by the reference server",
    "changes": "GET …/changes (change feed) is not served by the reference server",
    "changes_stale_cursor": "GET …/changes (change feed) is not served by the reference server",
    "promote": "POST …/promote is not served by the reference server",
    "promote_dry_run": "POST …/promote is not served by the reference server",
    "consolidation_audit": "audits are not served by the reference server",
    "drift_audit": "audits are not served by the reference server",
    "vocabulary_audit": "audits are not served by the reference server",
    "add_associations_warn": "needs an installed schema document (warn mode); the reference "
    "server has no schemas",
    "import_with_schema": "carries a taguru_schema record; the reference server has no schemas",
    "error_forbidden": "needs a key whose scope excludes the derived ::communities context; "
    "the reference server's keys are not scoped",
}


def all_fixtures() -> list[str]:
    return sorted(path.stem for path in HTTP_FIXTURES.glob("*.json"))


def skip_reason(name: str) -> str | None:
    if name in SERVED:
        return None
    if name in NOT_SERVED:
        return NOT_SERVED[name]
    return "unclassified fixture"


def replay(http: httpx.Client, fixture: dict[str, Any], context: str) -> httpx.Response:
    path = fixture["route"].replace("{name}", context)
    request = fixture["request"]
    if isinstance(request, str):
        return http.request(fixture["method"], path, content=request.encode())
    if request is None:
        return http.request(fixture["method"], path)
    return http.request(fixture["method"], path, json=request)


def test_every_fixture_is_classified() -> None:
    unclassified = [name for name in all_fixtures() if skip_reason(name) == "unclassified fixture"]
    assert unclassified == []


def fixture_params() -> list[Any]:
    return [
        pytest.param(name, marks=pytest.mark.skip(reason=reason) if reason else ())
        for name, reason in ((n, skip_reason(n)) for n in all_fixtures())
    ]


@pytest.mark.parametrize("name", fixture_params())
def test_fixture_replays(name: str, http: httpx.Client) -> None:
    fixture = load_fixture(name)
    context, setup = SERVED[name]
    setup(http)
    response = replay(http, fixture, context)
    assert response.status_code == fixture["status"], response.text
    body = response.json()
    assert_wire_equal(blank_volatile(body), blank_volatile(fixture["response"]))
    assert_enums(body)


def test_query_matches_recall_fixture_shape(http: httpx.Client) -> None:
    """/query answers recall's match shape; populate as recall.json implies and compare."""
    fixture = load_fixture("recall")
    create(http, "corpus-a")
    ok(
        http.post(
            "/contexts/corpus-a/sources",
            json={
                "passages": {"doc.md": "alpha connects to beta"},
                "locators": {
                    "doc.md": [{"paragraph": 0, "locator": {"kind": "page", "value": "1"}}]
                },
            },
        )
    )
    edge = {"subject": "alpha", "label": "connects_to", "object": "beta", "weight": 2.0}
    ok(
        http.post(
            "/contexts/corpus-a/associations", json=[{**edge, "source": "doc.md", "paragraph": 0}]
        )
    )
    response = http.post("/contexts/corpus-a/query", json={"subject": "alpha"})
    assert response.status_code == 200
    assert_wire_equal(blank_volatile(response.json()), fixture["response"])


@pytest.mark.parametrize(
    ("fixture_name", "path", "body"),
    [
        ("error_no_context", "/contexts/does-not-exist/query", {"subject": "x"}),
        ("error_no_context", "/contexts/does-not-exist/sources/search", {"query": "x"}),
    ],
)
def test_error_envelope_matches_fixture(
    fixture_name: str, path: str, body: Any, http: httpx.Client
) -> None:
    """The evidence-route error fixtures pin the envelope every route shares."""
    fixture = load_fixture(fixture_name)
    response = http.post(path, json=body)
    assert response.status_code == fixture["status"]
    assert_wire_equal(blank_volatile(response.json()), fixture["response"])


def test_over_limit_envelope_shape(http: httpx.Client) -> None:
    fixture = load_fixture("error_over_limit")
    response = http.post("/contexts/x/query", json={"subject": ["x"] * 1001})
    assert response.status_code == fixture["status"] == 400
    body = blank_volatile(response.json())
    assert sorted(body) == sorted(fixture["response"])
    assert body["code"] == "over_limit"
    assert body["error"] == (
        "subject carries 1001 items, past the per-request limit of 1000; split the request"
    )


@pytest.mark.parametrize("route", sorted(load_shapes()["required_request_fields"]))
def test_required_request_fields_are_enforced(route: str, http: httpx.Client) -> None:
    if route not in ("/contexts/{name}/sources/search", "/contexts/{name}/evidence"):
        pytest.skip(f"{route} is not served by the reference server")
    create(http, "corpus-c")
    for field in load_shapes()["required_request_fields"][route]:
        response = http.post(route.replace("{name}", "corpus-c"), json={"limit": 1})
        assert response.status_code == 422, field
        assert response.json()["code"] == "malformed_request"
        assert field in response.json()["error"]


def test_fixture_files_parse() -> None:
    for name in all_fixtures():
        assert json.loads((HTTP_FIXTURES / f"{name}.json").read_text("utf-8"))["route"]
