"""Findings of the spec-conformance review of the reference server (server-wire §1–§3, §5).

Each test pins one rule the first implementation got wrong: the JSON text of 32- and 64-bit
floats (§1.3), routing on the raw percent-encoded path (§1.1, §2 conventions), keyset
cursor checks and query-string integers (§1.5, §1.6, §2.6), and the context PATCH/DELETE
helpers (§2.3).
"""

import json
import re
from typing import Any

import httpx
import pytest
from app_client import client, refusal, result, sake
from starlette.testclient import TestClient

from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.server.compaction import CompactionSettings
from pytest_taguru.server.runner import ReferenceServer


@pytest.fixture
def http() -> TestClient:
    return sake(client())


def raw_member(response: Any, key: str) -> list[str]:
    """Every raw number text written for ``key`` in the response body."""
    return re.findall(rf'"{key}":(-?[0-9][0-9.eE+-]*)', response.text)


# --- §1.3: JSON text of floats --------------------------------------------------------------


def test_response_text_is_compact_json(http: TestClient) -> None:
    response = http.get("/contexts/sake")
    assert response.text.startswith('{"result":{"name":"sake",')
    assert ", " not in response.text.split('"description"')[0]


def test_search_scores_print_as_shortest_float32(http: TestClient) -> None:
    response = http.post("/contexts/sake/sources/search", json={"query": "杜氏は誰", "limit": 10})
    assert raw_member(response, "score") == ["2.1578243", "2.1578243"]


def test_semantic_floor_is_a_float32(http: TestClient) -> None:
    result(http.put("/contexts/floors", json={"semantic_floor": 0.123456789012}))
    response = http.get("/contexts/floors")
    assert raw_member(response, "semantic_floor") == ["0.12345679"]
    listed = http.get("/contexts?after=e")
    assert raw_member(listed, "semantic_floor") == ["0.12345679"]


def test_f64_values_use_serde_layout(http: TestClient) -> None:
    result(http.put("/contexts/tiny"))
    result(
        http.post(
            "/contexts/tiny/associations",
            json=[{"subject": "a", "label": "r", "object": "b", "weight": 0.00001}],
        )
    )
    response = http.post("/contexts/tiny/query", json={"subject": "a"})
    assert raw_member(response, "weight") == ["0.00001"]
    assert json.loads(response.text)["result"]["matches"][0]["weight"] == 0.00001
    time_text = raw_member(response, "time")[0]
    assert "e-0" not in time_text


# --- raw-path routing and percent-decoded context names ---------------------------------------


def test_trailing_slash_is_an_unknown_path(http: TestClient) -> None:
    for path in ("/contexts/", "/contexts/sake/", "/health/"):
        response = http.get(path, follow_redirects=False)
        body = refusal(response, 404, "unknown_path")
        assert body["error"] == f"no route for GET {path}; GET /protocol lists the API"


def test_percent_encoded_slash_stays_inside_the_context_name() -> None:
    http = client()
    assert result(http.put("/contexts/a%2Fb")) is True
    assert [c["name"] for c in result(http.get("/contexts"))["contexts"]] == ["a/b"]
    assert result(http.get("/contexts/a%2Fb"))["name"] == "a/b"
    assert result(http.get("/contexts/a%2Fb/sources"))["total"] == 0
    # `x%2Fsources` names the context "x/sources", never the listing of "x".
    result(http.put("/contexts/x"))
    body = refusal(http.get("/contexts/x%2Fsources"), 404, "no_context")
    assert body["error"] == "context 'x/sources' not found"


def test_percent_encoded_percent_and_literal_segments() -> None:
    http = client()
    assert result(http.put("/contexts/50%25")) is True
    assert result(http.get("/contexts/50%25"))["name"] == "50%"
    # Routing is on the raw path: an escaped literal segment is no route.
    refusal(http.get("/%63ontexts"), 404, "unknown_path")


def test_context_name_that_is_not_utf8_is_a_400() -> None:
    http = client()
    refusal(http.put("/contexts/%FF"), 400, "malformed_request")
    refusal(http.get("/contexts/%FF/sources"), 400, "malformed_request")
    assert result(http.get("/contexts"))["total"] == 0


# --- §1.5, §1.6, §2.6: query strings and keyset cursors -----------------------------------------


def test_keyset_prefix_is_checked_before_after(http: TestClient) -> None:
    for path in ("/contexts/sake/sources", "/contexts/sake/aliases"):
        body = refusal(
            http.get(path, params={"after": "a" * 1040, "prefix": "b" * 1033}),
            400,
            "invalid_argument",
        )
        assert body["error"] == "prefix is 1033 bytes, over the 1032-byte cap; nothing was applied"


def test_listing_limit_parses_as_rust_unsigned(http: TestClient) -> None:
    assert result(http.get("/contexts/sake/sources?limit=%2B1"))["sources"] == ["corpus/brewery.md"]
    refusal(http.get("/contexts/sake/sources?limit=" + "9" * 30), 400, "malformed_request")
    refusal(http.get("/contexts?limit=1&limit=2"), 400, "malformed_request")
    refusal(http.get("/contexts/sake/sources?after=a&after=b"), 400, "malformed_request")


def test_sources_listing_limits_and_entries(http: TestClient) -> None:
    result(
        http.post(
            "/contexts/sake/sources",
            json={
                "passages": {"corpus/zz.md": "x"},
                "dates": {"corpus/zz.md": 1700000000},
                "tags": {"corpus/zz.md": ["米", "b", "米"]},
            },
        )
    )
    zero = result(http.get("/contexts/sake/sources?limit=0"))
    assert zero["sources"] == ["corpus/brewery.md"] and zero["total"] == 3
    big = result(http.get("/contexts/sake/sources?limit=5000&prefix=corpus/z"))
    assert big["total"] == 1
    assert big["entries"] == [
        {
            "name": "corpus/zz.md",
            "stored_at": 1_767_225_600,
            "date": 1_700_000_000,
            "tags": ["b", "米"],
        }
    ]
    before = result(http.get("/contexts/sake"))["usage"]
    assert result(http.get("/contexts/sake/sources?after=corpus/zz.md"))["sources"] == []
    assert result(http.get("/contexts/sake"))["usage"] == before


# --- §2.3: PATCH and DELETE /contexts/{name} ----------------------------------------------------


def test_patch_context_changes_metadata_and_config_revision(http: TestClient) -> None:
    body = {"description": "new", "dice_floor": 7, "semantic_floor": 0.1}
    meta = result(http.patch("/contexts/sake", json=body))
    assert meta == {"description": "new", "pinned": False, "dice_floor": 1.0, "semantic_floor": 0.1}
    entry = result(http.get("/contexts/sake"))
    assert entry["revision"] == {"graph": 4, "passages": 2, "config": 1}
    assert entry["usage"]["writes"] == 3
    # Nothing changes: no bump; null and omitted mean "unchanged".
    same = result(http.patch("/contexts/sake", json={"description": "new", "pinned": None}))
    assert same == meta
    assert result(http.get("/contexts/sake"))["revision"]["config"] == 1
    refusal(http.patch("/contexts/nope", json={}), 404, "no_context")
    refusal(http.patch("/contexts/sake", content=b"{}"), 415, "malformed_request")
    refusal(http.patch("/contexts/sake", json={"pinned": "yes"}), 422, "malformed_request")
    body = refusal(
        http.patch("/contexts/sake", json={"description": "d" * 4097}), 400, "invalid_argument"
    )
    assert body["error"] == (
        "the description is 4097 bytes, over the 4096-byte cap; nothing was applied"
    )


def test_delete_context_then_recreate_from_zero(http: TestClient) -> None:
    assert result(http.delete("/contexts/sake")) is True
    refusal(http.get("/contexts/sake"), 404, "no_context")
    refusal(http.delete("/contexts/sake"), 404, "no_context")
    result(http.put("/contexts/sake"))
    entry = result(http.get("/contexts/sake"))
    assert entry["revision"] == {"graph": 0, "passages": 0, "config": 0}
    assert entry["usage"]["writes"] == 0 and entry["stats"]["associations"] == 0


# --- assembly §3.1/§3.2 with server-wire §3.10: evidence counts each origin's resolve ------------


def test_evidence_counts_one_read_per_origin_resolve(http: TestClient) -> None:
    before = result(http.get("/contexts/sake"))["usage"]
    result(http.post("/contexts/sake/evidence", json={"origins": ["青嶺酒造", "zzz"]}))
    after = result(http.get("/contexts/sake"))["usage"]
    # resolve ×2 (one empty), activate, passages; the query lane is skipped (no labels).
    assert after["reads"] - before["reads"] == 4
    assert after["empty_reads"] - before["empty_reads"] == 1


# --- §3.5/§3.7: an attribution paragraph past the passage has no section -------------------------


def test_attribution_paragraph_past_the_passage_has_no_section() -> None:
    http = client()
    result(http.put("/contexts/late"))
    # Asserted before the passage exists: the paragraph is kept as given (§3.4) ...
    result(
        http.post(
            "/contexts/late/associations",
            json=[
                {
                    "subject": "a",
                    "label": "r",
                    "object": "b",
                    "weight": 1,
                    "source": "d.md",
                    "paragraph": 5,
                }
            ],
        )
    )
    sections = {"d.md": [{"paragraph": 0, "section": "S"}]}
    locators = {"d.md": [{"paragraph": 1, "locator": {"kind": "page", "value": "1"}}]}
    body = {"passages": {"d.md": "one\n\ntwo"}, "sections": sections, "locators": locators}
    result(http.post("/contexts/late/sources", json=body))
    # ... and once the passage is stored, paragraph 5 is out of range: no marker covers it.
    match = result(http.post("/contexts/late/query", json={"subject": "a"}))["matches"][0]
    assert match["attributions"] == [
        {
            "source": "d.md",
            "weight": 1.0,
            "count": 1,
            "paragraph": 5,
            "section": None,
            "locator": None,
        }
    ]


# --- §3.5: the `after` cursor names an edge by identity ------------------------------------------


def test_query_cursor_excludes_its_own_edge_even_after_a_reweight() -> None:
    http = client()
    result(http.put("/contexts/paging"))
    edges = [
        {"subject": "a", "label": "r", "object": "b", "weight": 1.0},
        {"subject": "a", "label": "r", "object": "c", "weight": 0.5},
    ]
    result(http.post("/contexts/paging/associations", json=edges))
    first = result(http.post("/contexts/paging/query", json={"subject": "a", "limit": 1}))
    cursor = {k: first["matches"][0][k] for k in ("weight", "subject", "label", "object")}
    assert cursor == {"weight": 1.0, "subject": "a", "label": "r", "object": "b"}
    # The cursor's edge is re-averaged to 0.0 between pages: it now ranks after the cursor.
    reweight = [{"subject": "a", "label": "r", "object": "b", "weight": -1.0}]
    result(http.post("/contexts/paging/associations", json=reweight))
    second = result(http.post("/contexts/paging/query", json={"subject": "a", "after": cursor}))
    assert second["total"] == 2
    assert [m["object"] for m in second["matches"]] == ["c"]


# --- §1.5: the query string is decoded before the body --------------------------------------------


def test_query_string_is_refused_before_the_body(http: TestClient) -> None:
    retract = http.post("/contexts/sake/sources/retract?dry_run=maybe", content=b"{}")
    body = refusal(retract, 400, "malformed_request")
    assert body["error"].startswith("Failed to deserialize query string: dry_run")
    imported = refusal(
        http.post("/import?dry_run=maybe", content=b"not json"), 400, "malformed_request"
    )
    assert imported["error"].startswith("Failed to deserialize query string: dry_run")
    assert "integrity" not in imported


# --- §2.14: the import stream is refused at its first bad line, in stream order -----------------


def test_import_refuses_a_repeated_source_at_its_header_line(http: TestClient) -> None:
    lines = [
        b'{"taguru_batch": 1, "context": "sake", "source": "s"}',
        b'{"subject": "a", "label": "r", "object": "b", "weight": 1}',
        b'{"taguru_batch": 1, "context": "sake", "source": "s"}',
        b"not json",
    ]
    body = refusal(http.post("/import", content=b"\n".join(lines)), 400, "malformed_request")
    assert body["error"].startswith("line 3: ")
    assert body["integrity"] == "nothing_written"


def test_import_decodes_utf8_line_by_line(http: TestClient) -> None:
    lines = [b'{"taguru_batch": 1, "context": "sake", "source": "s"}', b"{oops", b"\xff"]
    body = refusal(http.post("/import", content=b"\n".join(lines)), 400, "malformed_request")
    assert body["error"].startswith("line 2: ")
    bad_utf8 = refusal(
        http.post("/import", content=b"\n".join(lines[:1] + lines[2:])), 400, "malformed_request"
    )
    assert bad_utf8["error"].startswith("line 2: not UTF-8")


# --- §1.5: numbers beyond the 64-bit float range are a JSON syntax error -----------------------


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"1" + b"0" * 400])
def test_out_of_range_numbers_are_broken_json(http: TestClient, number: bytes) -> None:
    edge = b'[{"subject": "a", "label": "r", "object": "b", "weight": ' + number + b"}]"
    headers = {"content-type": "application/json"}
    body = refusal(
        http.post("/contexts/sake/associations", content=edge, headers=headers),
        400,
        "malformed_request",
    )
    assert "out of range" in body["error"]


def test_raw_path_routing_over_real_http() -> None:
    with ReferenceServer(compaction=CompactionSettings(interval=None)) as server:
        assert httpx.put(server.url + "/contexts/%E9%85%92%2F%25").json()["result"] is True
        listed = httpx.get(server.url + "/contexts").json()["result"]["contexts"]
        assert [c["name"] for c in listed] == ["酒/%"]
        found = httpx.get(server.url + "/contexts/%E9%85%92%2F%25/sources")
        assert found.json()["result"]["total"] == 0
        assert httpx.get(server.url + "/contexts/").status_code == 404


def test_import_dry_run_refusal_is_worded_as_a_preview(http: TestClient) -> None:
    lines = [
        b'{"taguru_batch": 1, "context": "sake", "source": "a.md"}',
        b'{"taguru_batch": 1, "context": "sake", "source": "b.md"}',
        b'{"alias": "x", "canonical": "nowhere", "kind": "concept"}',
    ]
    body = refusal(http.post("/import?dry_run=true", content=b"\n".join(lines)), 409, "conflict")
    assert body["error"].startswith(
        "batch 2 of 2 (context 'sake', source 'b.md') would be refused — the 1 batch(es) before "
        "it previewed clean (dry_run=true; nothing is written); fixing the stream and re-running "
        "the preview is exact: "
    )
    assert body["integrity"] == "nothing_written" and "durable_batches" not in body
    assert result(http.get("/contexts/sake/sources"))["total"] == 2


# --- verified: §3.2.2 fuzzy floor precedence and clamping -----------------------------------------


def test_fuzzy_floor_request_then_context_then_default(http: TestClient) -> None:
    def names(body: dict[str, object]) -> list[str]:
        return [c["name"] for c in result(http.post("/contexts/sake/resolve", json=body))]

    typo = "青嶺酒蔵"  # Dice 4/6 against 青嶺酒造
    assert names({"cue": typo}) == ["青嶺酒造"]  # default floor 0.3
    result(http.patch("/contexts/sake", json={"dice_floor": 0.7}))
    assert names({"cue": typo}) == []  # the context's floor
    assert names({"cue": typo, "dice_floor": 0.5}) == ["青嶺酒造"]  # the request wins
    assert names({"cue": typo, "dice_floor": -3}) == ["青嶺酒造"]  # clamped to 0
    assert names({"cue": typo, "dice_floor": 5}) == []  # clamped to 1
    assert names({"cue": typo, "dice_floor": 4 / 6}) == ["青嶺酒造"]  # inclusive
    assert names({"cue": "青嶺", "dice_floor": 1}) == ["青嶺酒造"]  # containment is never floored


@pytest.mark.parametrize("number", [b"1e400", b"1" + b"0" * 400])
def test_evidence_number_out_of_range_is_400(http: TestClient, number: bytes) -> None:
    raw = b'{"origins": ["a"], "dice_floor": ' + number + b"}"
    headers = {"content-type": "application/json"}
    response = http.post("/contexts/sake/evidence", content=raw, headers=headers)
    assert "out of range" in refusal(response, 400, "malformed_request")["error"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/contexts/sake/sources/search", {"query": "杜氏は誰", "limit": 10}),
        ("/contexts/sake/evidence", {"origins": ["青嶺酒造"], "labels": ["杜氏"]}),
        ("/contexts/sake/query", {"subject": "青嶺酒造"}),
    ],
)
def test_response_text_is_serde_compact(http: TestClient, path: str, body: object) -> None:
    """The body re-serializes to itself with taguru's compact writer (assembly §1.7)."""
    response = http.post(path, json=body)
    assert response.status_code == 200
    assert dumps_compact(json.loads(response.text)) == response.text


# --- verified: §2.14 replacement, retraction step, dry run and counters ------------------------


def ndjson(*lines: dict[str, object]) -> bytes:
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()


def test_import_replacement_counts(http: TestClient) -> None:
    header = {"taguru_batch": 1, "context": "imp", "source": "s.md", "create": {}}
    first = ndjson(
        header,
        {"passage": "a b\n\nc d"},
        {"subject": "A", "label": "L", "object": "B", "weight": 1.0, "paragraph": 1},
        {"subject": "A", "label": "L", "object": "C", "weight": 1.0, "paragraph": 9},
        {"alias": "aa", "canonical": "A", "kind": "concept"},
    )
    outcome = result(http.post("/import", content=first))["batches"][0]
    assert (outcome["created"], outcome["retracted"], outcome["associations"]) == (True, 0, 2)
    assert (outcome["aliases"], outcome["association_paragraphs_dropped"]) == (1, 1)

    def state() -> tuple[dict[str, int], int]:
        entry = result(http.get("/contexts/imp"))
        return entry["revision"], entry["usage"]["writes"]

    assert state() == ({"graph": 3, "passages": 1, "config": 0}, 1)
    preview = result(http.post("/import?dry_run=true", content=ndjson(header)))["batches"][0]
    assert (preview["retracted"], preview["passage_dropped"]) == (2, True)
    assert state() == ({"graph": 3, "passages": 1, "config": 0}, 1)
    # Replacing the passage: the retraction step (+1 graph: the source is interned), the
    # passage retraction and the new passage (+2 passages), one write.
    again = result(http.post("/import", content=ndjson(header, {"passage": "x"})))["batches"][0]
    assert (again["created"], again["retracted"], again["passage_dropped"]) == (False, 2, False)
    assert state() == ({"graph": 4, "passages": 3, "config": 0}, 2)
    dropped = result(http.post("/import", content=ndjson(header)))["batches"][0]
    assert (dropped["retracted"], dropped["passage_dropped"]) == (0, True)
    assert state() == ({"graph": 5, "passages": 4, "config": 0}, 3)
    assert result(http.get("/contexts/imp/sources"))["total"] == 0


# --- assembly §3.2: the evidence query lane is /query's match set, dead edges included --------


def test_evidence_query_lane_keeps_dead_edges(http: TestClient) -> None:
    triple = {"subject": "青嶺酒造", "label": "杜氏", "object": "高瀬"}
    assert result(http.post("/contexts/sake/associations/retract", json=triple))["retracted"]
    before = result(http.get("/contexts/sake"))["usage"]
    package = result(
        http.post("/contexts/sake/evidence", json={"origins": ["青嶺酒造"], "labels": ["杜氏"]})
    )
    dead_id = "association\x00青嶺酒造\x00杜氏\x00高瀬"
    items = {item["candidate_id"]: item for item in package["items"]}
    assert items[dead_id]["lane_ranks"] == [{"lane": "graph_query", "rank": 1}]
    assert items[dead_id]["association"]["count"] == 0
    assert package["plan"]["lanes"]["query"] == {"ran": True}
    after = result(http.get("/contexts/sake"))["usage"]
    # resolve, query (total 1: not empty), activate, passages
    assert after["reads"] - before["reads"] == 4
