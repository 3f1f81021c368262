"""taguru's golden wire fixtures decoded through the plugin's client, lanes and preflight."""

import json
from typing import Any

import httpx
import pytest
from paths import WIRE_FIXTURES

from pytest_taguru.artifact.case import PassageSearched, QueryQueried
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.core.serde import read_json
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.lanes.passage import search_passage_lane
from pytest_taguru.run.lanes.structural import run_query
from pytest_taguru.run.preflight import read_context_entry, read_provider_model, skew_warning

FIXTURES = WIRE_FIXTURES
BASE = "http://taguru.test:8248"
CONTEXT = "ctx"


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / "http" / f"{name}.json").read_text("utf-8"))
    return loaded


def serving(status: int, body: Any, seen: list[httpx.Request] | None = None) -> TaguruClient:
    """A client whose every request is answered with ``status`` and the JSON ``body``."""

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, content=json.dumps(body, ensure_ascii=False).encode())

    return TaguruClient(BASE, None, transport=httpx.MockTransport(handler))


def test_sources_search_decodes_strictly_and_sends_the_required_fields() -> None:
    recorded = fixture("sources_search")
    seen: list[httpx.Request] = []
    client = serving(recorded["status"], recorded["response"], seen)
    passage = search_passage_lane(
        client, CONTEXT, EvalCase.model_validate({"case_id": "a", "query": "酒造"})
    )
    assert isinstance(passage, PassageSearched)
    assert passage.plan is not None
    assert passage.plan.lanes.vector.reason == "no embedding provider is configured"
    written = read_json(dumps_compact(to_jsonable(passage)))
    assert written["hits"] == [
        {
            "source": "doc.md",
            "paragraph": 0,
            "score": 0.28768212,
            "lanes": {"bm25": {"rank": 1, "score": 0.28768212}},
        }
    ]
    shapes = json.loads((FIXTURES / "shapes.json").read_text("utf-8"))
    required = shapes["required_request_fields"][recorded["route"]]
    sent = json.loads(seen[0].content)
    assert set(required) <= set(sent)
    assert seen[0].url.path == recorded["route"].replace("{name}", CONTEXT)


def test_every_contexts_list_row_decodes_as_a_context_entry() -> None:
    recorded = fixture("contexts_list")
    rows = recorded["response"]["result"]["contexts"]
    assert rows
    for row in rows:
        facts = read_context_entry(serving(200, {"result": row, "status": "ok"}), CONTEXT)
        assert facts.revision.model_dump() == row["revision"]
        assert facts.last_write_epoch == row["usage"]["last_write_epoch"]


def test_embeddings_status_without_provider() -> None:
    recorded = fixture("embeddings_status")
    client = serving(recorded["status"], recorded["response"])
    assert read_provider_model(client, CONTEXT) is None


def test_recall_match_shape_decodes_as_a_query_result() -> None:
    recorded = fixture("recall")
    probe = run_query(serving(200, recorded["response"]), CONTEXT, "alpha", "connects_to", "beta")
    assert isinstance(probe, QueryQueried)
    assert (probe.total, probe.matches) == (1, 1)
    assert probe.attributions is not None
    assert [(a.source, a.paragraph) for a in probe.attributions] == [("doc.md", 0)]


def test_health_body_is_read_raw_by_the_skew_probe() -> None:
    recorded = fixture("health")
    client = serving(recorded["status"], recorded["response"])
    body = client.skew_probe()
    assert body is not None
    assert client.health() == body
    # Fixtures blank the version to 0.0.0, a different minor from this CLI's 0.9.
    warning = skew_warning(BASE, "0.9.3", body)
    assert warning is not None and " runs 0.0.0 — " in warning


@pytest.mark.parametrize(
    "name",
    [
        "error_no_context",
        "error_malformed_request",
        "error_over_limit",
        "error_forbidden",
        "changes_stale_cursor",
    ],
)
def test_error_envelopes_become_call_failures(name: str) -> None:
    recorded = fixture(name)
    response = recorded["response"]
    client = serving(recorded["status"], response)
    with pytest.raises(CallFailed) as caught:
        client.post_json(["contexts", CONTEXT, "evidence"], {})
    failure = caught.value
    url = f"{BASE}/contexts/{CONTEXT}/evidence"
    assert failure.message == f"{url} answered {recorded['status']}: {response['error']}"
    assert failure.status == recorded["status"]
    assert failure.code == (response["code"] if recorded["status"] == 404 else None)
