"""The failure text of a case that broke a case-scoped bound: a drill-down, not a traceback.

Pure: it reads the eval case (what was declared), its case block (what the server answered,
already stripped of corpus text) and the case's violations, and says which bound broke,
where each expectation stood, and how to reproduce the relevant requests — with the
matching ``*/explain`` call where taguru has one (``sources/search``, ``resolve``,
``resolve_label``). Served text never appears: the block does not carry it, and the
declared quote of a citation is not echoed either.
"""

import json
from collections.abc import Iterator, Sequence
from typing import Any

from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    CitationCheck,
    CueResolution,
    PassageSearched,
    Position,
    PositionAmbiguous,
    PositionErrored,
    PositionResolved,
    QueryErrored,
    QueryQueried,
    SectionCheck,
    SectionMatched,
    SectionMismatched,
)
from pytest_taguru.core.jsontext import Float32, dumps_compact
from pytest_taguru.gate.thresholds import CaseViolation
from pytest_taguru.run.dataset import EvalCase, ExpectedSource
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


def json_body(fields: dict[str, Any]) -> str:
    """A request body as one line, ``{"key": value, ...}`` (taguru's reproduction-hint style)."""
    return "{" + ", ".join(
        f"{json.dumps(key, ensure_ascii=False)}: {dumps_compact(value)}"
        for key, value in fields.items()
    ) + "}"


def _request(context: str, route: str, fields: dict[str, Any]) -> str:
    return f"POST /contexts/{context}/{route} {json_body(fields)}"


def _paragraphs(entry: ExpectedSource) -> str:
    if not entry.paragraphs:
        return "any paragraph"
    noun = "paragraph" if len(entry.paragraphs) == 1 else "paragraphs"
    return f"{noun} " + ", ".join(str(number) for number in entry.paragraphs)


def _source_lines(case: EvalCase, block: CaseBlock) -> Iterator[str]:
    """Where each expected source was served: its 1-based rank among the hits, or not at all."""
    if not case.expected_sources:
        return
    yield "expected sources:"
    passage = block.passage
    for entry in case.expected_sources:
        scored = "" if entry.relevance >= 1 else " — not scored"
        label = f"  {entry.source} ({_paragraphs(entry)}, relevance {entry.relevance}{scored})"
        if not isinstance(passage, PassageSearched):
            yield f"{label}: not scored — the passage lane failed"
            continue
        rank = next(
            (index for index, hit in enumerate(passage.hits) if satisfies(hit, entry)), None
        )
        if rank is None:
            yield f"{label}: not in the top {len(passage.hits)}"
        else:
            hit = passage.hits[rank]
            yield f"{label}: served at rank {rank + 1} ({hit.source}#{hit.paragraph})"


def _passage_line(block: CaseBlock) -> str:
    passage = block.passage
    if isinstance(passage, PassageSearched):
        return (
            f"passage lane: searched, {len(passage.hits)} hit(s) for limit {block.limit} "
            f"({passage.latency_ms} ms)"
        )
    return f"passage lane: failed after {passage.latency_ms} ms: {passage.message}"


def _kind_cues(block: CaseBlock, kind: str) -> list[CueResolution]:
    return [cue for cue in block.structural.cues if cue.kind == kind] if block.structural else []


def _missed_names(case: EvalCase, block: CaseBlock, kind: str) -> tuple[list[str], list[str]]:
    """The declared concepts (``kind`` concept) or labels (``kind`` label) and those missed."""
    expected = case.expected_concepts if kind == "concept" else case.expected_labels
    covered = names_covered(expected, _kind_cues(block, kind), kind)
    return expected, [name for name, hit in zip(expected, covered, strict=True) if not hit]


def _names_lines(case: EvalCase, block: CaseBlock, kind: str) -> Iterator[str]:
    """Missed concepts or labels, and the cues of that kind that errored."""
    expected, missing = _missed_names(case, block, kind)
    if not expected or block.structural is None:
        return
    cues = _kind_cues(block, kind)
    yield f"{kind}s: {len(expected) - len(missing)} of {len(expected)} resolved"
    tried = ", ".join(cue.cue for cue in cues)
    for name in missing:
        yield f"  missed {kind} '{name}': not among the names resolved from cue(s) {tried}"
    for cue in cues:
        if cue.error is not None:
            yield f"  cue '{cue.cue}' errored: {cue.error}"


def _position(name: str, position: Position) -> str:
    if isinstance(position, PositionResolved):
        return f"{name} resolved as {position.name} ({position.tier})"
    if isinstance(position, PositionAmbiguous):
        candidates = ", ".join(position.candidates)
        return f"{name} ambiguous ({position.tier}; candidates: {candidates})"
    if isinstance(position, PositionErrored):
        return f"{name} errored ({position.message})"
    return f"{name} not_found"


def _query_outcome(probe: AssociationProbe) -> str:
    if isinstance(probe.query, QueryQueried):
        return f"query returned total {probe.query.total}"
    if isinstance(probe.query, QueryErrored):
        return f"query errored ({probe.query.message})"
    return "query never ran (a position did not pin)"


def _association_lines(block: CaseBlock) -> Iterator[str]:
    probes = block.structural.associations if block.structural is not None else []
    if not probes:
        return
    missing = [probe for probe in probes if not association_covered(probe)]
    yield f"associations: {len(probes) - len(missing)} of {len(probes)} found"
    for probe in missing:
        positions = "; ".join(
            _position(name, position)
            for name, position in (
                ("subject", probe.subject), ("label", probe.label), ("object", probe.object)
            )
        )
        yield (
            f"  missed ({probe.subject_cue}, {probe.label_cue}, {probe.object_cue}): "
            f"{positions}; {_query_outcome(probe)}"
        )


def _section(check: SectionCheck) -> str:
    if isinstance(check, SectionMatched | SectionMismatched):
        expected = "outside every section" if check.expected is None else f"'{check.expected}'"
        return f"section {check.check} (expected {expected})"
    return "section not checked"


def _check_outcome(check: CitationCheck) -> str:
    served = "served" if check.served else "not served"
    if isinstance(check, CheckResolved):
        quote = ""
        if check.quote is not None:
            quote = ", quote matched" if check.quote.matched else ", quote not found in it"
        return f"{served}, resolved, {_section(check.section)}{quote}"
    code = check.code if check.code is not None else "no code"
    return f"{served}, unresolved ({code}): {check.message}"


def _citation_lines(block: CaseBlock) -> Iterator[str]:
    if block.citations is None:
        return
    yield "citations:"
    for check in block.citations.checks:
        yield f"  ({check.source}, {check.paragraph}): {_check_outcome(check)}"


def _missed_sources(case: EvalCase, block: CaseBlock) -> list[ExpectedSource]:
    passage = block.passage
    hits = passage.hits if isinstance(passage, PassageSearched) else []
    return [
        entry for entry in case.expected_sources
        if entry.relevance >= 1 and not any(satisfies(hit, entry) for hit in hits)
    ]


def _printed_search_body(case: EvalCase) -> dict[str, Any]:
    """The passage lane's search body, its floor printed as its 32-bit text (§4.1)."""
    return search_body(case, floor_type=Float32)


def _explain_search(case: EvalCase, context: str, source: str, paragraph: int | None) -> str:
    body = _printed_search_body(case)
    target: dict[str, Any] = {"query": body.pop("query"), "source": source}
    if paragraph is not None:
        target["paragraph"] = paragraph
    return _request(context, "sources/search/explain", target | body)


def _passage_requests(case: EvalCase, block: CaseBlock, context: str) -> Iterator[str]:
    yield _request(context, "sources/search", _printed_search_body(case))
    for entry in _missed_sources(case, block):
        paragraphs: list[int | None] = [*entry.paragraphs] or [None]
        for paragraph in paragraphs:
            yield _explain_search(case, context, entry.source, paragraph)


def _resolve_requests(case: EvalCase, block: CaseBlock, context: str, kind: str) -> Iterator[str]:
    """Per missed name and cue: the resolve call the lane made, then its explain call."""
    route = "resolve" if kind == "concept" else "resolve_label"
    for name in _missed_names(case, block, kind)[1]:
        for cue in list(case.cues) or [case.query]:
            body = resolve_body(cue)
            yield _request(context, route, body)
            explain = {"cue": body["cue"], "expected": name, "limit": body["limit"]}
            yield _request(context, f"{route}/explain", explain)


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
            yield _request(context, "query", query_body(subject, label, object_))
            continue
        for route, cue, position in (
            ("resolve", probe.subject_cue, probe.subject),
            ("resolve_label", probe.label_cue, probe.label),
            ("resolve", probe.object_cue, probe.object),
        ):
            if not isinstance(position, PositionResolved):
                yield _request(context, route, resolve_body(cue))


def _citation_requests(
    case: EvalCase, block: CaseBlock, context: str, metric: str
) -> Iterator[str]:
    checks = block.citations.checks if block.citations is not None else []
    for check in checks:
        if metric == "citations.recall" and not check.served:
            yield _explain_search(case, context, check.source, check.paragraph)
        if metric == "citations.locator_validity" and not is_valid(check):
            yield _request(context, "citations", citation_body(check.source, check.paragraph))


def reproduction_requests(
    case: EvalCase, block: CaseBlock, metrics: set[str], context: str
) -> list[str]:
    """The requests behind ``metrics`` (the violated ones, or those a case fell short on),
    each once, in lane order."""
    requests: list[str] = []
    if metrics & SEARCHED_METRICS:
        requests += _passage_requests(case, block, context)
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


def _origin(item: CaseViolation) -> str:
    """`` (bound from …)`` after a violated bound; nothing when the thresholds file that set
    it is not at hand (a report rendered from a saved artifact)."""
    if item.origin is None:
        return ""
    if item.origin == "default":
        return " (bound from cases.default)"
    return f" (bound from cases.overrides.{item.violation.case_id})"


def render_drilldown(
    *,
    case: EvalCase,
    block: CaseBlock,
    violations: Sequence[CaseViolation],
    context: str,
    eval_path: str,
) -> str:
    """The failure text of one case (no trailing newline).

    Sections, each only when it applies: header with ``<eval_path>:<line>``; the query; each
    violated bound (``<metric>: <reason> (bound from cases.default | cases.overrides.<id>)``,
    without the parenthesis when the origin is ``None``);
    the passage outcome and every expected source's 1-based rank or ``not in the top k``;
    missed concepts and labels; missed associations with each position's outcome; every
    citation check (served / resolved / section / quote); the reproduction requests.
    """
    lines = [
        f"taguru case '{case.case_id}' broke {len(violations)} case-scoped threshold(s) "
        f"at {eval_path}:{case.line}",
        f"query: {case.query}",
        "violated:",
    ]
    lines += [
        f"  {item.violation.metric}: {item.violation.reason}{_origin(item)}"
        for item in violations
    ]
    lines.append(_passage_line(block))
    lines += _source_lines(case, block)
    lines += _names_lines(case, block, "concept")
    lines += _names_lines(case, block, "label")
    lines += _association_lines(block)
    lines += _citation_lines(block)
    violated = {item.violation.metric for item in violations}
    requests = reproduction_requests(case, block, violated, context)
    if requests:
        lines.append("reproduce:")
        lines += [f"  {request}" for request in requests]
    return "\n".join(lines)
