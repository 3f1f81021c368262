"""taguru's NDJSON import stream: grammar refusals and batch semantics (server-wire §2.14)."""

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from app_client import client, refusal, result
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import WIRE_FIXTURES

from pytest_taguru.server.errors import ApiError
from pytest_taguru.server.ingest.importer import apply_import, parse_import
from pytest_taguru.server.runner import ImportFileError, ReferenceServer
from pytest_taguru.server.store import Store


def ndjson(*records: Any) -> bytes:
    return "\n".join(
        r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records
    ).encode()


FIXTURES = WIRE_FIXTURES / "http"
HEADER = {"taguru_batch": 1, "context": "c", "source": "doc.md", "create": {}}
EDGE = {"subject": "a", "label": "r", "object": "b", "weight": 1.0}


def refused(raw: bytes) -> str:
    with pytest.raises(ApiError) as caught:
        parse_import(raw)
    error = caught.value
    assert (error.code, error.http_status) == ("malformed_request", 400)
    assert error.extras == {"integrity": "nothing_written", "retryable_after_correction": True}
    return error.message


@pytest.mark.parametrize(
    ("records", "fragment"),
    [
        ([EDGE], "line 1: an operation line before any batch header"),
        ([HEADER, "{nope"], "line 2: not JSON"),
        ([HEADER, [1, 2]], "line 2: not a batch header or an operation line"),
        ([HEADER, {"weight": 1}], "line 2: not a batch header or an operation line"),
        ([HEADER, {**EDGE, "source": "x"}], "line 2: source"),
        ([{**HEADER, "taguru_batch": 2}], "line 1: taguru_batch"),
        ([{**HEADER, "context": ""}], "line 1: context"),
        ([{**HEADER, "context": "x" * 65}], "line 1: context"),
        ([{**HEADER, "create": {"bogus": 1}}], "line 1: create.bogus"),
        ([HEADER, {"passage": "p"}, {"passage": "q"}], "line 3: a second passage line"),
        ([HEADER, {**EDGE, "weight": 2e6}], "line 2: weight"),
        ([HEADER, {**EDGE, "paragraph": 1.0}], "line 2: paragraph"),
        ([HEADER, {"alias": "x", "canonical": "a", "kind": "thing"}], "line 2: kind"),
        (
            [
                HEADER,
                {"alias": "x", "canonical": "a", "kind": "concept"},
                {"alias": "x", "canonical": "b", "kind": "concept"},
            ],
            "line 3: concept alias 'x' appears twice",
        ),
        ([HEADER, {"passage": "p", "tags": ["t"] * 33}], "line 2: tags"),
        ([HEADER, {"paragraph": 0, "section": "s"}], "without a passage line"),
        ([HEADER, {**EDGE, "paragraph": 0}], "association with a paragraph but no passage line"),
        ([HEADER, EDGE, HEADER], "is already stated by an earlier batch of this stream"),
        (["", "  "], "empty file"),
        ([{"taguru_schema": 1}], "taguru_schema"),
    ],
)
def test_parse_refusals(records: list[Any], fragment: str) -> None:
    assert fragment in refused(ndjson(*records))


def test_ninth_distinct_question_refuses_and_repeats_fold() -> None:
    questions = [{"paragraph": 0, "question": f"q{i}"} for i in range(8)]
    batch = parse_import(ndjson(HEADER, {"passage": "p"}, *questions, questions[0]))[0]
    assert len(batch.questions) == 8
    message = refused(
        ndjson(HEADER, {"passage": "p"}, *questions, {"paragraph": 0, "question": "q9"})
    )
    assert message.startswith("line 11: ")


def test_bom_blank_lines_and_whitespace_are_tolerated() -> None:
    raw = "\ufeff".encode() + b"\n  " + ndjson(HEADER) + b"\r\n\n\t" + ndjson(EDGE) + b"  \n"
    [batch] = parse_import(raw)
    assert (batch.context, batch.source, len(batch.associations)) == ("c", "doc.md", 1)


def test_apply_outcome_and_idempotent_repost() -> None:
    store = Store(lambda: 50)
    raw = ndjson(
        {**HEADER, "create": {"description": "d", "dice_floor": 3}},
        {"passage": "one\n\ntwo", "date": 7, "tags": ["b", "a", "b"], "stored_at": 9},
        {"paragraph": 1, "question": "q"},
        {"paragraph": 1, "section": "S"},
        {"paragraph": 4, "locator": {"kind": "page", "value": "1"}},
        {**EDGE, "paragraph": 9},
        {"alias": "A", "canonical": "a", "kind": "concept"},
    )
    first = apply_import(store, parse_import(raw))["batches"][0]
    assert first == {
        "context": "c",
        "source": "doc.md",
        "created": True,
        "retracted": 0,
        "associations": 1,
        "aliases": 1,
        "passage_stored": True,
        "passage_dropped": False,
        "questions_stored": 1,
        "questions_dropped": 0,
        "sections_stored": 1,
        "sections_dropped": 0,
        "locators_stored": 0,
        "locators_dropped": 1,
        "association_paragraphs_dropped": 1,
        "schema_violations": 0,
    }
    context = store.contexts["c"]
    assert context.options.dice_floor == 1.0
    assert context.passages["doc.md"].tags == ("a", "b")
    assert context.passages["doc.md"].stored_at == 9
    second = apply_import(store, parse_import(raw))["batches"][0]
    assert (second["created"], second["retracted"]) == (False, 1)
    [edge] = context.graph.edges.values()
    assert (edge.total, edge.count) == (1.0, 1)
    counters = context.counters
    assert (counters.graph, counters.passages, counters.writes) == (2 + 3, 3, 2)
    dropped = apply_import(store, parse_import(ndjson({**HEADER, "create": None}, EDGE)))
    assert dropped["batches"][0]["passage_dropped"] is True
    assert "doc.md" not in context.passages


def test_missing_context_without_create_is_404_with_issue() -> None:
    with pytest.raises(ApiError) as caught:
        apply_import(Store(), parse_import(ndjson({**HEADER, "create": None}, EDGE)))
    error = caught.value
    assert (error.http_status, error.code) == (404, "no_context")
    assert [(i.path, i.kind) for i in error.issues] == [("batches[0].create", "missing")]
    assert error.extras["integrity"] == "nothing_written"


def test_alias_may_name_a_concept_this_batch_interns() -> None:
    store = Store()
    raw = ndjson(
        HEADER,
        {"alias": "B", "canonical": "b", "kind": "concept"},
        EDGE,
        {"alias": "R", "canonical": "r", "kind": "label"},
    )
    assert apply_import(store, parse_import(raw))["batches"][0]["aliases"] == 2


def test_dry_run_writes_nothing() -> None:
    store = Store()
    outcome = apply_import(store, parse_import(ndjson(HEADER, EDGE)), dry_run=True)
    assert outcome["batches"][0]["created"] is True
    assert store.contexts == {}


def test_import_fixture_refusal_over_http() -> None:
    http = client()
    fixture = json.loads(FIXTURES.joinpath("import_refusal_durable_prefix.json").read_text("utf-8"))
    body = refusal(http.post("/import", content=fixture["request"].encode()), 409, "conflict")
    assert body["durable_batches"] == 1 and body["integrity"] == "durable_prefix"
    assert result(http.get("/contexts/corpus-h"))["revision"]["graph"] == 1
    single = ndjson(
        {"taguru_batch": 1, "context": "corpus-h", "source": "d3"},
        {"alias": "Z", "canonical": "nowhere", "kind": "label"},
    )
    body = refusal(http.post("/import", content=single), 409, "conflict")
    assert body["error"] == (
        "label alias 'Z' → 'nowhere': the canonical spelling is not interned; nothing was applied"
    )
    assert body["integrity"] == "nothing_written" and "durable_batches" not in body
    assert body["issues"][0]["path"] == "batches[0].labels['Z']"
    refusal(http.post("/import", content=b"{"), 400, "malformed_request")


def test_in_process_server_from_import_files(tmp_path: Path) -> None:
    good = tmp_path / "good.ndjson"
    good.write_bytes(ndjson(HEADER, {"passage": "杜氏は高瀬である。"}, EDGE))
    with ReferenceServer.from_import_files([good], token="t") as server:
        assert server.url.startswith("http://127.0.0.1:")
        headers = {"authorization": "Bearer t"}
        sources = httpx.get(server.url + "/contexts/c/sources", headers=headers).json()
        assert sources["result"]["sources"] == ["doc.md"]
    bad = tmp_path / "bad.ndjson"
    bad.write_bytes(ndjson(HEADER, "{oops"))
    with pytest.raises(ImportFileError, match=r"bad\.ndjson: line 2: not JSON"):
        ReferenceServer.from_import_files([good, bad])


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_parser_refuses_any_bad_stream_with_the_envelope(raw: bytes) -> None:
    try:
        batches = parse_import(raw)
    except ApiError as error:
        assert error.code == "malformed_request" and error.http_status == 400
    else:
        assert batches
