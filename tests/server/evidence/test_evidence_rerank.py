"""The evidence reranker (assembly.md §3.6) and its ``plan.reranker`` table (§2.4)."""

import asyncio
import itertools
import json
import socket
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import pytest
from app_client import client, result
from test_evidence import TEXT, edge, populate

from pytest_taguru.server.evidence.request import RerankRequest
from pytest_taguru.server.evidence.rerank import (
    HttpReranker,
    LexicalCrossReranker,
    Reranker,
    rerank,
    reranker_from_env,
)

_urls = itertools.count()


def run(
    reranker: Reranker | None, request: RerankRequest | None, documents: Sequence[str]
) -> tuple[list[int] | None, dict[str, Any]]:
    return asyncio.run(rerank(reranker, request, "quick fox", documents))


def provider(handler: Callable[[httpx.Request], httpx.Response]) -> HttpReranker:
    """An HTTP reranker over a mock transport, with its own circuit breaker (unique URL)."""
    return HttpReranker(
        f"http://rerank.invalid/{next(_urls)}", "bge-m3", transport=httpx.MockTransport(handler)
    )


# --- configuration --------------------------------------------------------------------------


def test_configuration_from_the_environment() -> None:
    assert reranker_from_env({}) is None
    assert reranker_from_env({"TAGURU_RERANK_MODEL": "bge-m3"}) is None
    assert reranker_from_env({"TAGURU_RERANK_MODEL": "lexical-cross"}) == LexicalCrossReranker()
    remote = reranker_from_env(
        {
            "TAGURU_RERANK_MODEL": "bge-m3",
            "TAGURU_RERANK_URL": "http://127.0.0.1:9/rerank",
            "TAGURU_RERANK_API_KEY": "k",
            "TAGURU_RERANK_TIMEOUT_SECS": "0",
        }
    )
    assert remote == HttpReranker("http://127.0.0.1:9/rerank", "bge-m3", "k", 1.0)
    assert reranker_from_env({"TAGURU_RERANK_URL": "http://127.0.0.1:9/"}) is None


# --- the plan table, in decision order ------------------------------------------------------


def test_no_rerank_requested_reports_configuration_only() -> None:
    assert run(None, None, ["a", "b"]) == (None, {"configured": False, "ran": False})
    assert run(LexicalCrossReranker(), None, ["a", "b"]) == (
        None,
        {"configured": True, "ran": False},
    )


def test_degrade_reasons_in_order() -> None:
    lexical = LexicalCrossReranker()
    assert run(None, RerankRequest("x"), []) == (
        None,
        {"configured": False, "ran": False, "reason": "not_configured"},
    )
    assert run(lexical, RerankRequest("other"), []) == (
        None,
        {"configured": True, "ran": False, "reason": "model_mismatch"},
    )
    assert run(lexical, RerankRequest(), ["only one"]) == (
        None,
        {"configured": True, "ran": False, "reason": "empty_pool"},
    )


def test_lexical_cross_orders_by_matched_terms_then_density_then_position() -> None:
    documents = ["nothing here", "a fox", "the quick brown fox", "quick fox", "fox a"]
    order, plan = run(LexicalCrossReranker(), RerankRequest("lexical-cross"), documents)
    assert order == [3, 2, 1, 4, 0]
    assert plan == {"configured": True, "ran": True, "model": "lexical-cross"}


# --- the HTTP provider's degrades -----------------------------------------------------------


def test_http_provider_success_sends_the_cohere_shape() -> None:
    seen: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"results": [{"index": 1}, {"index": 0}]})

    order, plan = run(provider(answer), RerankRequest("bge-m3"), ["a", "b"])
    assert order == [1, 0]
    assert plan == {"configured": True, "ran": True, "model": "bge-m3"}
    assert seen == [{"model": "bge-m3", "query": "quick fox", "documents": ["a", "b"], "top_n": 2}]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"results": [{"index": 0}]}, "invalid_permutation"),
        ({"results": [{"index": 0}, {"index": 0}]}, "invalid_permutation"),
        ({"results": [{"index": 0}, {"index": 2}]}, "invalid_permutation"),
        ({"results": [{"index": "0"}, {"index": 1}]}, "provider_error"),
        ({"ranking": []}, "provider_error"),
        ("not json", "provider_error"),
    ],
)
def test_http_provider_bad_answers(body: Any, reason: str) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if isinstance(body, str):
            return httpx.Response(200, content=body.encode())
        return httpx.Response(200, json=body)

    assert run(provider(answer), RerankRequest(), ["a", "b"]) == (
        None,
        {"configured": True, "ran": False, "reason": reason},
    )


def test_http_provider_retries_once_then_the_breaker_opens() -> None:
    attempts: list[int] = []

    def failing(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        return httpx.Response(503)

    reranker = provider(failing)
    degraded = {"configured": True, "ran": False, "reason": "provider_error"}
    assert run(reranker, RerankRequest(), ["a", "b"]) == (None, degraded)
    assert len(attempts) == 2  # one retry
    assert run(reranker, RerankRequest(), ["a", "b"]) == (None, degraded)
    assert len(attempts) == 4  # the third failed attempt opened the breaker
    assert run(reranker, RerankRequest(), ["a", "b"])[1]["reason"] == "circuit_open"
    assert len(attempts) == 4  # no call while open


def test_http_provider_client_error_is_not_retried() -> None:
    attempts: list[int] = []

    def refusing(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        return httpx.Response(400)

    assert run(provider(refusing), RerankRequest(), ["a", "b"])[1]["reason"] == "provider_error"
    assert attempts == [1]


# --- over HTTP: TAGURU_RERANK_MODEL=lexical-cross -------------------------------------------


def corpus() -> Any:
    passages = {"a.md": "fox " + "x" * 40, "b.md": TEXT, "c.md": "quick fox"}
    return populate(client(), "c", passages, [edge("fox", "is", "animal")])


def test_reranker_on_reorders_admission(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAGURU_RERANK_MODEL", "lexical-cross")
    http = corpus()
    body = {"origins": ["fox"], "text_fallback_query": "quick fox", "rerank": {}}
    package = result(http.post("/contexts/c/evidence", json=body))
    assert package["plan"]["reranker"] == {
        "configured": True,
        "ran": True,
        "model": "lexical-cross",
    }
    sources = [item.get("passage", {}).get("source") for item in package["items"]]
    assert sources[:2] == ["c.md", "b.md"]
    plain = result(http.post("/contexts/c/evidence", json={**body, "rerank": None}))
    assert plain["plan"]["reranker"] == {"configured": True, "ran": False}
    assert [i["fused_rank"] for i in plain["items"]] != [i["fused_rank"] for i in package["items"]]


@pytest.mark.parametrize(
    ("configured", "rerank_body", "reason"),
    [
        (False, {"model": "lexical-cross"}, "not_configured"),
        (True, {"model": "bge-m3"}, "model_mismatch"),
    ],
)
def test_degraded_package_equals_the_plain_one_but_for_the_plan(
    monkeypatch: pytest.MonkeyPatch, configured: bool, rerank_body: Any, reason: str
) -> None:
    if configured:
        monkeypatch.setenv("TAGURU_RERANK_MODEL", "lexical-cross")
    else:
        monkeypatch.delenv("TAGURU_RERANK_MODEL", raising=False)
    monkeypatch.delenv("TAGURU_RERANK_URL", raising=False)
    http = corpus()
    body = {"origins": ["fox"], "text_fallback_query": "quick fox"}
    plain = result(http.post("/contexts/c/evidence", json=body))
    degraded = result(http.post("/contexts/c/evidence", json={**body, "rerank": rerank_body}))
    assert degraded["plan"].pop("reranker") == {
        "configured": configured,
        "ran": False,
        "reason": reason,
    }
    plain["plan"].pop("reranker")
    assert degraded == plain


def test_empty_pool_over_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAGURU_RERANK_MODEL", "lexical-cross")
    monkeypatch.delenv("TAGURU_RERANK_URL", raising=False)
    http = populate(client(), "c", {"a.md": TEXT, "b.md": TEXT})
    body = {"origins": [], "text_fallback_query": "fox", "rerank": {}}
    package = result(http.post("/contexts/c/evidence", json=body))
    # The second passage is a near-duplicate, so one survivor: nothing to rerank.
    assert package["plan"]["reranker"]["reason"] == "empty_pool"
    assert package["omitted_by_reason"] == {"duplicate_passage": 1}


def test_unreachable_provider_degrades_to_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("TAGURU_RERANK_MODEL", "bge-m3")
    monkeypatch.setenv("TAGURU_RERANK_URL", f"http://127.0.0.1:{port}/rerank")
    http = corpus()
    body = {"origins": ["fox"], "text_fallback_query": "quick fox", "rerank": {"model": "bge-m3"}}
    package = result(http.post("/contexts/c/evidence", json=body))
    assert package["plan"]["reranker"] == {
        "configured": True,
        "ran": False,
        "reason": "provider_error",
    }
