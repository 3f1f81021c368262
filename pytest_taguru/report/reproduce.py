"""The reproduction of a failed case: the requests behind its violated metrics, as the lanes sent
them, plus the matching ``*/explain`` call where taguru has one (``sources/search``, ``resolve``,
``resolve_label``; the reference server serves them too), and where to send them.

Pure. Every printed request is one a taguru server (and the reference server) answers: the
bodies are the lanes' own (``run.lanes.request_bodies``), a 32-bit floor printed as its shortest
text.
"""

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_taguru.artifact.case import CaseBlock, CueResolution, PassageSearched, PositionResolved
from pytest_taguru.core.jsontext import Float32, dumps_compact
from pytest_taguru.run.eval_models import EvalCase, ExpectedSource
from pytest_taguru.run.lanes.request_bodies import (
    citation_body,
    query_body,
    resolve_body,
    search_body,
)
from pytest_taguru.score.case import association_covered, is_valid, names_covered, satisfies
from pytest_taguru.score.registry import METRICS, SEARCH

SEARCHED_METRICS = frozenset(
    metric.name
    for metric in METRICS
    if metric.case_path is not None and SEARCH in metric.source.split(", ")
)
"""The case-scoped metrics read from the passage search: reproducing one starts with it."""

STANDALONE_SERVER = "python -m pytest_taguru.server --import"
"""How the reference server is started on its own (it listens on ``TAGURU_ADDR``)."""


@dataclass(frozen=True)
class ServerTarget:
    """Where a reproduction is sent: the run's server, or how to start the embedded one again."""

    masked_url: str | None
    serve_import: str | None = None
    """The ``--taguru-serve`` import file: the run's server is gone with the session."""
    token: bool = False
    """The run sent a bearer token, so must the reproduction."""

    def heading(self) -> str:
        auth = "; send the header 'Authorization: Bearer $TAGURU_API_TOKEN'" if self.token else ""
        if self.serve_import is not None:
            return (
                "reproduce (the run's embedded server stopped with the session; serve the same "
                f"corpus with '{STANDALONE_SERVER} {self.serve_import}', which listens on "
                f"TAGURU_ADDR, default 127.0.0.1:8248{auth}):"
            )
        return f"reproduce (on {self.masked_url}{auth}):"


def json_body(fields: dict[str, Any]) -> str:
    """A request body as one line, ``{"key": value, ...}`` (taguru's reproduction-hint style)."""
    return (
        "{"
        + ", ".join(
            f"{json.dumps(key, ensure_ascii=False)}: {dumps_compact(value)}"
            for key, value in fields.items()
        )
        + "}"
    )


def request_line(context: str, route: str, fields: dict[str, Any]) -> str:
    return f"POST /contexts/{context}/{route} {json_body(fields)}"


def scored_hits(block: CaseBlock) -> list[Any]:
    passage = block.passage
    return passage.hits if isinstance(passage, PassageSearched) else []


def missed_sources(case: EvalCase, block: CaseBlock) -> list[ExpectedSource]:
    """The scored expected sources (relevance ≥ 1) no hit satisfied."""
    hits = scored_hits(block)
    return [
        entry
        for entry in case.expected_sources
        if entry.relevance >= 1 and not any(satisfies(hit, entry) for hit in hits)
    ]


def kind_cues(block: CaseBlock, kind: str) -> list[CueResolution]:
    return [cue for cue in block.structural.cues if cue.kind == kind] if block.structural else []


def missed_names(case: EvalCase, block: CaseBlock, kind: str) -> tuple[Sequence[str], list[str]]:
    """The declared concepts (``kind`` concept) or labels (``kind`` label) and those missed."""
    expected = case.expected_concepts if kind == "concept" else case.expected_labels
    covered = names_covered(expected, kind_cues(block, kind), kind)
    return expected, [name for name, hit in zip(expected, covered, strict=True) if not hit]


def _printed_search_body(case: EvalCase) -> dict[str, Any]:
    """The passage lane's search body, its floor printed as its 32-bit text (§4.1)."""
    return search_body(case, floor_type=Float32)


def _explain_search(case: EvalCase, context: str, source: str, paragraph: int | None) -> str:
    body = _printed_search_body(case)
    target: dict[str, Any] = {"query": body.pop("query"), "source": source}
    if paragraph is not None:
        target["paragraph"] = paragraph
    return request_line(context, "sources/search/explain", target | body)


def _passage_requests(
    case: EvalCase, block: CaseBlock, context: str, absent: frozenset[tuple[str, int]]
) -> Iterator[str]:
    yield request_line(context, "sources/search", _printed_search_body(case))
    for entry in missed_sources(case, block):
        paragraphs: list[int | None] = [*entry.paragraphs] or [None]
        for paragraph in paragraphs:
            if paragraph is None or (entry.source, paragraph) not in absent:
                yield _explain_search(case, context, entry.source, paragraph)


def _resolve_requests(case: EvalCase, block: CaseBlock, context: str, kind: str) -> Iterator[str]:
    """Per missed name and cue: the resolve call the lane made, then its explain call."""
    route = "resolve" if kind == "concept" else "resolve_label"
    for name in missed_names(case, block, kind)[1]:
        for cue in list(case.cues) or [case.query]:
            body = resolve_body(cue)
            yield request_line(context, route, body)
            explain = {"cue": body["cue"], "expected": name, "limit": body["limit"]}
            yield request_line(context, f"{route}/explain", explain)


def _association_requests(block: CaseBlock, context: str) -> Iterator[str]:
    probes = block.structural.associations if block.structural is not None else []
    for probe in probes:
        if association_covered(probe):
            continue
        pinned = [probe.subject, probe.label, probe.object]
        if all(isinstance(position, PositionResolved) for position in pinned):
            subject, label, object_ = (
                position.name for position in pinned if isinstance(position, PositionResolved)
            )
            yield request_line(context, "query", query_body(subject, label, object_))
            continue
        for route, cue, position in (
            ("resolve", probe.subject_cue, probe.subject),
            ("resolve_label", probe.label_cue, probe.label),
            ("resolve", probe.object_cue, probe.object),
        ):
            if not isinstance(position, PositionResolved):
                yield request_line(context, route, resolve_body(cue))


def _citation_requests(
    case: EvalCase, block: CaseBlock, context: str, metric: str
) -> Iterator[str]:
    checks = block.citations.checks if block.citations is not None else []
    for check in checks:
        if metric == "citations.recall" and not check.served:
            yield _explain_search(case, context, check.source, check.paragraph)
        if metric == "citations.locator_validity" and not is_valid(check):
            body = citation_body(check.source, check.paragraph)
            yield request_line(context, "citations", body)


def reproduction_requests(
    case: EvalCase,
    block: CaseBlock,
    metrics: set[str],
    context: str,
    absent: frozenset[tuple[str, int]] = frozenset(),
) -> list[str]:
    """The requests behind ``metrics`` (the violated ones, or those a case fell short on), each
    once, in lane order. An expected paragraph known to be ``absent`` from its source gets no
    explain call (there is nothing to explain)."""
    requests: list[str] = []
    if metrics & SEARCHED_METRICS:
        requests += _passage_requests(case, block, context, absent)
    if "coverage.concepts" in metrics:
        requests += _resolve_requests(case, block, context, "concept")
    if "coverage.labels" in metrics:
        requests += _resolve_requests(case, block, context, "label")
    if "coverage.associations" in metrics:
        requests += _association_requests(block, context)
    for metric in ("citations.recall", "citations.locator_validity"):
        if metric in metrics:
            requests += _citation_requests(case, block, context, metric)
    return list(dict.fromkeys(requests))
