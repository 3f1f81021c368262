"""Every malformed request of server-wire §1.5, §2 and §5 gets taguru's status, code, message."""

import json
from typing import Any

import pytest
from app_client import client, refusal, result, sake
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pytest_taguru.server.errors import ApiError
from pytest_taguru.server.http.app import create_app
from pytest_taguru.server.http.validate import parse_associations, parse_store_passages
from pytest_taguru.server.store import Store


@pytest.fixture
def http() -> TestClient:
    return sake(client())


TYPED_ROUTES = [
    "/contexts/sake/resolve",
    "/contexts/sake/resolve_label",
    "/contexts/sake/query",
    "/contexts/sake/sources/search",
    "/contexts/sake/citations",
    "/contexts/sake/sources/retract",
    "/contexts/sake/associations/retract",
    "/contexts/sake/aliases",
]
HAND_ROUTES = ["/contexts/sake/sources", "/contexts/sake/associations"]


@pytest.mark.parametrize("path", TYPED_ROUTES + HAND_ROUTES)
def test_missing_json_content_type_is_415(http: TestClient, path: str) -> None:
    body = refusal(http.post(path, content=b"{}"), 415, "malformed_request")
    assert body["error"] == "Expected request with `Content-Type: application/json`"
    body = refusal(
        http.post(path, content=b"{}", headers={"content-type": "text/plain"}),
        415,
        "malformed_request",
    )


@pytest.mark.parametrize("path", TYPED_ROUTES + HAND_ROUTES)
@pytest.mark.parametrize("raw", [b"{", b"", b"[1,", b'{"cue": NaN}'])
def test_broken_json_is_400(http: TestClient, path: str, raw: bytes) -> None:
    response = http.post(path, content=raw, headers={"content-type": "application/json"})
    refusal(response, 400, "malformed_request")


def test_json_suffix_content_type_is_accepted(http: TestClient) -> None:
    response = http.post(
        "/contexts/sake/resolve",
        content=b'{"cue": "x"}',
        headers={"content-type": "application/vnd.api+json; charset=utf-8"},
    )
    assert result(response) == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/contexts/sake/resolve", {}),
        ("/contexts/sake/resolve", {"cue": 5}),
        ("/contexts/sake/resolve", {"cue": "x", "limit": -1}),
        ("/contexts/sake/resolve", {"cue": "x", "limit": 1.0}),
        ("/contexts/sake/resolve", {"cue": "x", "limit": True}),
        ("/contexts/sake/resolve", ["cue"]),
        ("/contexts/sake/sources/search", {"limit": 1}),
        ("/contexts/sake/sources/search", {"query": "x", "tags": None}),
        ("/contexts/sake/sources/search", {"query": "x", "since": 1.5}),
        ("/contexts/sake/query", {"subject": 5}),
        (
            "/contexts/sake/query",
            {
                "subject": "x",
                "after": {"weight": 1.0, "subject": "a", "label": "b", "object": "c", "extra": 1},
            },
        ),
        ("/contexts/sake/query", {"subject": "x", "limit": -3}),
        ("/contexts/sake/citations", {"paragraph": 0}),
        ("/contexts/sake/citations", {"source": "a"}),
        ("/contexts/sake/citations", {"source": "a", "paragraph": -1}),
        ("/contexts/sake/citations", {"source": "a", "paragraph": 1.0}),
        ("/contexts/sake/citations", {"source": "a", "paragraph": 2**32}),
        ("/contexts/sake/citations", {"source": "a", "paragraph": 0, "index": 0}),
        ("/contexts/sake/aliases", {"concepts": {"a": 1}}),
        ("/contexts/sake/sources/retract", {}),
        ("/contexts/sake/associations/retract", {"subject": "a", "label": "b"}),
    ],
)
def test_wrong_shape_is_422(http: TestClient, path: str, body: Any) -> None:
    found = refusal(http.post(path, json=body), 422, "malformed_request")
    assert found["error"].startswith("Failed to deserialize the JSON body into the target type: ")


def test_unknown_members_are_ignored(http: TestClient) -> None:
    assert result(http.post("/contexts/sake/resolve", json={"cue": "高瀬", "x": 1}))
    cited = result(
        http.post("/contexts/sake/citations", json={"source": "corpus/rice.md", "index": 0})
    )
    assert cited["text"] == "原料米には山田錦を使う。"


def test_body_over_the_cap_is_413() -> None:
    http = TestClient(create_app(Store(), body_cap=64))
    body = refusal(
        http.post("/contexts/x/resolve", json={"cue": "x" * 100}), 413, "payload_too_large"
    )
    assert "length limit" in body["error"]


def test_unknown_path_and_method() -> None:
    http = client()
    body = refusal(http.get("/passages?x=1"), 404, "unknown_path")
    assert body["error"] == "no route for GET /passages?x=1; GET /protocol lists the API"
    refusal(http.post("/contexts/x/passages", json={}), 404, "unknown_path")
    body = refusal(http.post("/contexts", json={}), 405, "method_not_allowed")
    assert body["error"] == "POST is not supported on /contexts; GET /protocol lists the API"


def test_create_context_errors_in_order() -> None:
    http = client()
    refusal(http.put("/contexts/a", content=b"{"), 400, "malformed_request")
    refusal(http.put("/contexts/a", json={"description": None}), 400, "malformed_request")
    long_name = "n" * 65
    body = refusal(http.put(f"/contexts/{long_name}", content=b"{"), 400, "malformed_request")
    body = refusal(http.put(f"/contexts/{long_name}"), 400, "invalid_argument")
    assert (
        body["error"] == "the context name is 65 bytes, over the 64-byte cap; nothing was applied"
    )
    body = refusal(
        http.put("/contexts/a", json={"description": "d" * 4097}), 400, "invalid_argument"
    )
    assert (
        body["error"]
        == "the description is 4097 bytes, over the 4096-byte cap; nothing was applied"
    )
    assert result(http.put("/contexts/a")) is True
    # The create body is read regardless of Content-Type.
    plain = {"content-type": "text/plain"}
    assert result(http.put("/contexts/b", content=b'{"pinned": true}', headers=plain)) is True
    assert result(http.get("/contexts/b"))["pinned"] is True
    body = refusal(http.put("/contexts/a", json={}), 409, "already_exists")
    assert body["error"] == "context 'a' already exists"


def test_no_context_is_404_with_message() -> None:
    http = client()
    requests: list[tuple[str, str, Any]] = [
        ("GET", "/contexts/nope", None),
        ("GET", "/contexts/nope/embeddings", None),
        ("GET", "/contexts/nope/sources", None),
        ("GET", "/contexts/nope/aliases", None),
        ("POST", "/contexts/nope/resolve", {"cue": "x"}),
        ("POST", "/contexts/nope/resolve_label", {"cue": "x"}),
        ("POST", "/contexts/nope/query", {"subject": "x"}),
        ("POST", "/contexts/nope/sources/search", {"query": "x"}),
        ("POST", "/contexts/nope/citations", {"source": "x", "paragraph": 0}),
        ("POST", "/contexts/nope/sources", {"passages": {}}),
        ("POST", "/contexts/nope/associations", []),
        ("POST", "/contexts/nope/aliases", {}),
        ("DELETE", "/contexts/nope/aliases", {"concepts": ["x"]}),
        ("POST", "/contexts/nope/sources/retract", {"source": "x"}),
        (
            "POST",
            "/contexts/nope/associations/retract",
            {"subject": "a", "label": "b", "object": "c"},
        ),
    ]
    for method, path, body in requests:
        found = refusal(http.request(method, path, json=body), 404, "no_context")
        assert found["error"] == "context 'nope' not found"


def test_search_filter_errors_win_over_404_in_order() -> None:
    http = client()
    path = "/contexts/nope/sources/search"
    body = refusal(http.post(path, json={"query": "x", "tags": ["t"] * 1001}), 400, "over_limit")
    assert (
        body["error"]
        == "tags carries 1001 items, past the per-request limit of 1000; split the request"
    )
    body = refusal(
        http.post(path, json={"query": "x", "tags": ["ok", ""]}), 400, "invalid_argument"
    )
    assert body["error"] == "a filter tag must not be empty; nothing was applied"
    body = refusal(
        http.post(path, json={"query": "x", "tags": ["t" * 129]}), 400, "invalid_argument"
    )
    assert body["error"] == "a filter tag is 129 bytes, over the 128-byte cap; nothing was applied"
    body = refusal(
        http.post(path, json={"query": "x", "since": 5, "until": 5}), 400, "invalid_argument"
    )
    assert body["error"] == (
        "since 5 is not before until 5 — the window is half-open [since, until) and this one "
        "selects nothing"
    )
    tags = [f"t{i}" for i in range(33)]
    body = refusal(http.post(path, json={"query": "x", "tags": tags}), 400, "over_limit")
    assert body["error"] == "33 distinct filter tags where at most 32 may be named"
    refusal(http.post(path, json={"query": "x", "tags": ["a"] * 40}), 404, "no_context")


def test_query_validation_order() -> None:
    http = client()
    path = "/contexts/nope/query"
    body = refusal(http.post(path, json={"label": ["x"] * 1001}), 400, "over_limit")
    assert body["error"].startswith("label carries 1001 items")
    body = refusal(http.post(path, json={"subject": [], "limit": 3}), 400, "invalid_argument")
    assert body["error"] == "'subject', 'label', or 'object' must pin at least one value"
    body = refusal(
        http.post(path, json={"subject": "x", "object_types": ["t"] * 1001}), 400, "over_limit"
    )
    assert body["error"].startswith("object_types carries 1001 items")
    refusal(http.post(path, json={"subject": "x", "since": 9, "until": 3}), 400, "invalid_argument")
    refusal(
        http.post(path, json={"subject": "x", "since": 9, "until": 3, "subject_types": "T"}),
        404,
        "no_context",
    )


def test_citation_errors_in_order(http: TestClient) -> None:
    path = "/contexts/sake/citations"
    body = refusal(
        http.post("/contexts/nope/citations", json={"source": "", "paragraph": 0}),
        400,
        "invalid_argument",
    )
    assert body["error"] == "source must not be empty; nothing was applied"
    body = refusal(
        http.post(path, json={"source": "s" * 1025, "paragraph": 0}), 400, "invalid_argument"
    )
    assert body["error"] == "source is 1025 bytes, over the 1024-byte cap; nothing was applied"
    body = refusal(http.post(path, json={"source": "x.md", "paragraph": 0}), 404, "no_source")
    assert body["error"] == "source 'x.md' not found in context 'sake'"
    body = refusal(
        http.post(path, json={"source": "corpus/rice.md", "paragraph": 1}), 404, "no_paragraph"
    )
    assert body["error"] == "paragraph 1 out of range for source 'corpus/rice.md' in context 'sake'"


def test_listing_query_string_errors(http: TestClient) -> None:
    refusal(http.get("/contexts?limit=abc"), 400, "malformed_request")
    refusal(http.get("/contexts/sake/sources?limit=-1"), 400, "malformed_request")
    refusal(http.get("/contexts?pinned=yes"), 400, "malformed_request")
    body = refusal(
        http.get("/contexts/sake/sources", params={"after": "a" * 1033}), 400, "invalid_argument"
    )
    assert body["error"] == "after is 1033 bytes, over the 1032-byte cap; nothing was applied"
    refusal(
        http.get("/contexts/sake/sources", params={"prefix": "a" * 1033}), 400, "invalid_argument"
    )
    refusal(http.get("/contexts/sake/aliases", params={"after": "Aomine"}), 400, "invalid_argument")
    assert result(http.get("/contexts/sake/sources?limit=2&unknown=1"))["total"] == 2


def test_alias_request_errors(http: TestClient) -> None:
    path = "/contexts/sake/aliases"
    pairs = {f"a{i}": "高瀬" for i in range(10_001)}
    body = refusal(http.post(path, json={"concepts": pairs}), 400, "over_limit")
    assert body["error"] == (
        "batch of 10001 aliases exceeds the per-request limit of 10000; split the ingest"
    )
    body = refusal(http.post(path, json={"concepts": {"": "高瀬"}}), 400, "invalid_argument")
    assert body["error"] == "a concepts alias must not be empty; nothing was applied"
    body = refusal(http.post(path, json={"labels": {"x": "c" * 1025}}), 400, "invalid_argument")
    assert (
        body["error"]
        == "a labels canonical is 1025 bytes, over the 1024-byte cap; nothing was applied"
    )
    body = refusal(http.request("DELETE", path, json={}), 400, "invalid_argument")
    assert body["error"] == "the request names no aliases to remove"
    body = refusal(http.request("DELETE", path, json={"labels": ["x"] * 10_001}), 400, "over_limit")
    assert body["error"] == (
        "batch of 10001 alias removals exceeds the per-request limit of 10000; split the request"
    )
    refusal(http.request("DELETE", path, json={"concepts": [""]}), 400, "invalid_argument")


def test_associations_batch_issues(http: TestClient) -> None:
    path = "/contexts/sake/associations"
    items = [
        {"subject": None, "label": "", "object": 3, "weight": 1e7, "paragraph": 1.0},
        5,
        {"subject": "s", "label": "l", "object": "o", "weight": "1", "source": "", "paragraph": -1},
    ]
    body = refusal(http.post(path, json=items), 400, "invalid_argument")
    assert [(i["path"], i["kind"], i["actual"]) for i in body["issues"]] == [
        ("associations[0].subject", "missing", "absent"),
        ("associations[0].label", "empty", "an empty string"),
        ("associations[0].object", "type", "number"),
        ("associations[0].weight", "range", "number 10000000.0"),
        ("associations[0].paragraph", "type", "number"),
        ("associations[1]", "type", "number"),
        ("associations[2].weight", "type", "string"),
        ("associations[2].source", "empty", "an empty string"),
        ("associations[2].paragraph", "type", "number"),
    ]
    assert body["issues_total"] == 9
    assert body["integrity"] == "nothing_written"
    assert body["retryable_after_correction"] is True
    assert body["error"].startswith(
        "the associations batch refused 9 issue(s):\n"
        "- associations[0].subject: expected a non-empty string, got absent\n"
    )
    assert body["error"].endswith("; nothing was applied")
    body = refusal(http.post(path, json={"subject": "x"}), 400, "invalid_argument")
    assert body["issues"] == [
        {"path": "associations", "kind": "type", "expected": "an array", "actual": "object"}
    ]
    body = refusal(http.post(path, json=[{"x": 1}] * 10_001), 400, "over_limit")
    assert "issues" not in body
    assert body["error"] == (
        "batch of 10001 associations exceeds the per-request limit of 10000; split the ingest"
    )
    assert result(http.get("/contexts/sake"))["revision"]["graph"] == 4


def test_passage_store_issues(http: TestClient) -> None:
    path = "/contexts/sake/sources"
    body = refusal(
        http.post(
            path,
            json={
                "passages": {"a.md": "text", "": "x", "b.md": 5},
                "questions": {"a.md": [{"paragraph": 0, "question": "q"}] * 9},
                "sections": {"zz.md": [{"paragraph": 0, "section": ""}]},
                "locators": {"a.md": [{"paragraph": 0, "locator": {"kind": "page"}}]},
                "tags": {"a.md": ["t"] * 33},
                "dates": {"a.md": -5},
            },
        ),
        400,
        "invalid_argument",
    )
    issues = [(i["path"], i["kind"]) for i in body["issues"]]
    assert issues[:3] == [
        ("passages['']", "empty"),
        ("passages['b.md']", "type"),
        ("questions['a.md'][8].paragraph", "over_limit"),
    ]
    assert ("sections['zz.md']", "unknown_reference") in issues
    assert ("sections['zz.md'][0].section", "empty") in issues
    assert ("locators['a.md'][0].locator.value", "missing") in issues
    assert ("tags['a.md']", "over_limit") in issues
    assert issues[-1] == ("dates['a.md']", "type")
    assert body["error"].startswith(f"the passage store refused {len(issues)} issue(s):")
    body = refusal(http.post(path, json=[]), 400, "invalid_argument")
    assert body["issues"] == [
        {"path": "", "kind": "type", "expected": "an object", "actual": "array"}
    ]
    body = refusal(http.post(path, json={"passages": None}), 400, "invalid_argument")
    assert body["issues"][0]["kind"] == "missing"
    many = {f"s{i}": "t" for i in range(1001)}
    body = refusal(http.post(path, json={"passages": many}), 400, "over_limit")
    assert (
        body["error"]
        == "batch of 1001 passages exceeds the per-request limit of 1000; split the store"
    )


def test_issue_list_is_capped_at_twenty(http: TestClient) -> None:
    items = [{"subject": "", "label": "l", "object": "o", "weight": 1.0}] * 25
    body = refusal(http.post("/contexts/sake/associations", json=items), 400, "invalid_argument")
    assert len(body["issues"]) == 20 and body["issues_total"] == 25
    assert "\n… and 5 more issue(s); nothing was applied" in body["error"]


def test_error_bodies_are_json_objects(http: TestClient) -> None:
    response = http.post("/contexts/sake/resolve", json={})
    assert json.loads(response.text)["status"] == "error"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_hand_validators_answer_issues_or_values(body: Any) -> None:
    for parse in (parse_associations, parse_store_passages):
        try:
            parse(body)
        except ApiError as error:
            assert error.code in ("invalid_argument", "over_limit")
            if error.code == "invalid_argument":
                assert 1 <= len(error.issues) <= 20 and error.issues_total >= len(error.issues)
