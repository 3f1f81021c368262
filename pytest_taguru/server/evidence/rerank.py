"""The optional reranker of evidence assembly and its ``plan.reranker`` values (assembly.md §3.6).

Configuration (read from the environment on each request):

* ``TAGURU_RERANK_MODEL=lexical-cross`` without ``TAGURU_RERANK_URL``: the built-in
  deterministic lexical cross-scorer (:class:`LexicalCrossReranker`), for tests and demos.
* ``TAGURU_RERANK_URL`` and ``TAGURU_RERANK_MODEL`` both set: an HTTP provider speaking the
  Cohere/Jina rerank shape (:class:`HttpReranker`), with ``TAGURU_RERANK_API_KEY`` (optional
  bearer key) and ``TAGURU_RERANK_TIMEOUT_SECS`` (per-attempt timeout, default 5, at least 1).
* anything else: no reranker (a request with ``rerank`` reports ``not_configured``).

Decision order for a request with ``rerank``: no provider → ``not_configured``; a pinned
``model`` different from the provider's → ``model_mismatch`` (no call); fewer than 2
survivors → ``empty_pool``; otherwise the provider is called, and anything but a complete
permutation keeps the original order with its reason. ``model`` appears only when it ran.
"""

import asyncio
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import httpx

from pytest_taguru.server.evidence.request import RerankRequest
from pytest_taguru.server.index.text import document_terms, query_terms

LEXICAL_CROSS = "lexical-cross"
DEFAULT_TIMEOUT_SECS = 5
MAX_PROVIDER_BODY = 4 * 1024 * 1024
RETRY_DELAY_SECS = 0.1
BREAKER_THRESHOLD = 3
BREAKER_PROBE_SECS = 30.0

NOT_CONFIGURED = "not_configured"
MODEL_MISMATCH = "model_mismatch"
EMPTY_POOL = "empty_pool"
INVALID_PERMUTATION = "invalid_permutation"
CIRCUIT_OPEN = "circuit_open"
PROVIDER_ERROR = "provider_error"


class Reranker(Protocol):
    """A provider: its model identity and one call returning indices or a degrade reason."""

    @property
    def model(self) -> str: ...

    async def order(self, query: str, documents: Sequence[str]) -> list[int] | str: ...


@dataclass(frozen=True)
class LexicalCrossReranker:
    """A deterministic cross-scorer over taguru's tokenizer (no network, no randomness).

    For the distinct query terms ``Q`` and a document's term occurrences ``D``::

        matched(d) = |{t ∈ Q : t occurs in D}|
        density(d) = |{occurrences in D that are in Q}| / |D|      (0 when D is empty)

    Documents are ordered by ``matched`` descending, then ``density`` descending, then their
    original position, which makes the answer a complete permutation.
    """

    model: str = LEXICAL_CROSS

    async def order(self, query: str, documents: Sequence[str]) -> list[int] | str:
        wanted = set(query_terms(query))

        def key(index: int) -> tuple[int, Fraction, int]:
            terms = document_terms(documents[index])
            hits = sum(1 for term in terms if term in wanted)
            density = Fraction(hits, len(terms)) if terms else Fraction(0)
            return -len(wanted.intersection(terms)), -density, index

        return sorted(range(len(documents)), key=key)


@dataclass
class _Breaker:
    """Opens after 3 consecutive failed attempts; then one probe per 30 s."""

    failures: int = 0
    opened_at: float | None = None

    def allows(self, now: float) -> bool:
        if self.opened_at is None:
            return True
        if now - self.opened_at >= BREAKER_PROBE_SECS:
            self.opened_at = now  # this call is the probe
            return True
        return False

    def record(self, ok: bool, now: float) -> None:
        if ok:
            self.failures, self.opened_at = 0, None
            return
        self.failures += 1
        if self.failures >= BREAKER_THRESHOLD:
            self.opened_at = now


_BREAKERS: dict[str, _Breaker] = {}


class _Retryable(Exception):
    """A transport failure, timeout, 429 or 5xx: worth one more attempt."""


class _Fatal(Exception):
    """Any other failed attempt (non-2xx, undecodable body): not retried."""


@dataclass(frozen=True)
class HttpReranker:
    """``POST url {"model", "query", "documents", "top_n"}`` → ``{"results": [{"index"}]}``.

    The order of ``results`` is the new order. One retry after 100 ms for 429/5xx/transport
    failures (a per-attempt timeout included); a body that is not JSON, has no ``results``
    array, a missing or non-integer ``index``, or exceeds 4 MiB is ``provider_error`` and not
    retried; decodable indices that are not a permutation of ``0..len`` are
    ``invalid_permutation``. A circuit breaker per URL answers ``circuit_open``.
    """

    url: str
    model: str
    api_key: str | None = None
    timeout_secs: float = DEFAULT_TIMEOUT_SECS
    transport: httpx.AsyncBaseTransport | None = None
    """Injected by tests (``httpx.MockTransport``); ``None`` uses the network."""

    async def order(self, query: str, documents: Sequence[str]) -> list[int] | str:
        breaker = _BREAKERS.setdefault(self.url, _Breaker())
        if not breaker.allows(time.monotonic()):
            return CIRCUIT_OPEN
        body: dict[str, Any] = {
            "model": self.model,
            "query": query,
            "documents": list(documents),
            "top_n": len(documents),
        }
        for attempt in range(2):
            try:
                indices = await self._attempt(body)
            except _Retryable:
                breaker.record(False, time.monotonic())
                if attempt == 0:
                    await asyncio.sleep(RETRY_DELAY_SECS)
                    continue
                return PROVIDER_ERROR
            except _Fatal:
                breaker.record(False, time.monotonic())
                return PROVIDER_ERROR
            breaker.record(True, time.monotonic())
            complete = sorted(indices) == list(range(len(documents)))
            return indices if complete else INVALID_PERMUTATION
        return PROVIDER_ERROR

    async def _attempt(self, body: dict[str, Any]) -> list[int]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            async with httpx.AsyncClient(
                timeout=self.timeout_secs, transport=self.transport
            ) as client:
                response = await client.post(self.url, json=body, headers=headers)
        except httpx.HTTPError as error:
            raise _Retryable from error
        if response.status_code == 429 or response.status_code >= 500:
            raise _Retryable
        if not 200 <= response.status_code < 300 or len(response.content) > MAX_PROVIDER_BODY:
            raise _Fatal
        return _decode_indices(response.content)


def _decode_indices(content: bytes) -> list[int]:
    try:
        decoded = json.loads(content)
    except ValueError as error:
        raise _Fatal from error
    results = decoded.get("results") if isinstance(decoded, dict) else None
    if not isinstance(results, list):
        raise _Fatal
    indices: list[int] = []
    for result in results:
        index = result.get("index") if isinstance(result, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise _Fatal
        indices.append(index)
    return indices


def reranker_from_env(environ: Mapping[str, str] | None = None) -> Reranker | None:
    """The configured provider (see the module docstring), or ``None``."""
    env = os.environ if environ is None else environ
    model = env.get("TAGURU_RERANK_MODEL") or None
    url = env.get("TAGURU_RERANK_URL") or None
    if model is None:
        return None
    if url is None:
        return LexicalCrossReranker() if model == LEXICAL_CROSS else None
    raw_timeout = env.get("TAGURU_RERANK_TIMEOUT_SECS", "")
    timeout = int(raw_timeout) if raw_timeout.isdigit() else DEFAULT_TIMEOUT_SECS
    return HttpReranker(
        url, model, env.get("TAGURU_RERANK_API_KEY") or None, float(max(timeout, 1))
    )


def plan(
    configured: bool, ran: bool, model: str | None = None, reason: str | None = None
) -> dict[str, Any]:
    """``plan.reranker``: ``configured``, ``ran``, then ``model``/``reason`` when present."""
    out: dict[str, Any] = {"configured": configured, "ran": ran}
    if model is not None:
        out["model"] = model
    if reason is not None:
        out["reason"] = reason
    return out


async def rerank(
    reranker: Reranker | None,
    request: RerankRequest | None,
    query: str,
    documents: Sequence[str],
) -> tuple[list[int] | None, dict[str, Any]]:
    """The new order of ``documents`` (``None`` = keep) and the ``plan.reranker`` object."""
    if request is None:
        return None, plan(reranker is not None, False)
    if reranker is None:
        return None, plan(False, False, reason=NOT_CONFIGURED)
    if request.model is not None and request.model != reranker.model:
        return None, plan(True, False, reason=MODEL_MISMATCH)
    if len(documents) < 2:
        return None, plan(True, False, reason=EMPTY_POOL)
    outcome = await reranker.order(query, documents)
    if isinstance(outcome, str):
        return None, plan(True, False, reason=outcome)
    return outcome, plan(True, True, model=reranker.model)
