"""The failure text of a case that broke a case-scoped bound: a drill-down, not a traceback.

Pure: it reads the eval case (what was declared), its case block (what the server answered) and
the case's violations, plus what the runner found out for it (:class:`DrilldownFacts`), and says
which bound broke, where each expectation stood and which hits outranked it, and how to
reproduce the relevant requests (``report.reproduce``). Served text appears only when asked for
(``--taguru-show-text``: a hit's text is kept in the process, never in the artifact); the
declared quote of a citation is never echoed.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    CitationCheck,
    HitLocator,
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
from pytest_taguru.gate.thresholds import CaseViolation
from pytest_taguru.report.reproduce import (
    ServerTarget,
    kind_cues,
    missed_names,
    reproduction_requests,
)
from pytest_taguru.run.eval_models import EvalCase, ExpectedSource
from pytest_taguru.score.case import association_covered, satisfies

HIT_LINE_CAP = 10
"""Outranking hits listed before ``... and N more``."""
TEXT_CAP = 200
"""Characters of a hit's text shown with ``--taguru-show-text``."""


@dataclass(frozen=True)
class DrilldownFacts:
    """What the drill-down knows beyond the case and its block."""

    server: ServerTarget
    absent_paragraphs: frozenset[tuple[str, int]] = frozenset()
    """Expected ``(source, paragraph)`` pairs the server says do not exist (``no_paragraph``)."""
    show_text: bool = False


def _paragraphs(entry: ExpectedSource) -> str:
    if not entry.paragraphs:
        return "any paragraph"
    noun = "paragraph" if len(entry.paragraphs) == 1 else "paragraphs"
    return f"{noun} " + ", ".join(str(number) for number in entry.paragraphs)


def _first_rank(hits: Sequence[HitLocator], entry: ExpectedSource) -> int | None:
    """The 0-based rank of the first hit satisfying ``entry``."""
    return next((index for index, hit in enumerate(hits) if satisfies(hit, entry)), None)


def _absent_text(entry: ExpectedSource, absent: frozenset[tuple[str, int]]) -> str:
    gone = [p for p in entry.paragraphs if (entry.source, p) in absent]
    if not gone:
        return ""
    numbers = ", ".join(str(p) for p in gone)
    noun = "paragraph" if len(gone) == 1 else "paragraphs"
    verb = "does" if len(gone) == 1 else "do"
    return f"; {noun} {numbers} {verb} not exist in {entry.source}"


def _source_lines(case: EvalCase, block: CaseBlock, facts: DrilldownFacts) -> Iterator[str]:
    """Where each expected source was served: its 1-based rank among the hits, or not at all;
    then the hits that outranked the expected ones (rank, locator, score)."""
    if not case.expected_sources:
        return
    yield "expected sources:"
    passage = block.passage
    depth = 0
    for entry in case.expected_sources:
        scored = "" if entry.relevance >= 1 else " — not scored"
        label = f"  {entry.source} ({_paragraphs(entry)}, relevance {entry.relevance}{scored})"
        if not isinstance(passage, PassageSearched):
            yield f"{label}: not scored — the passage lane failed"
            continue
        rank = _first_rank(passage.hits, entry)
        if rank is None:
            if entry.relevance >= 1:
                depth = len(passage.hits)
            absent = _absent_text(entry, facts.absent_paragraphs)
            yield f"{label}: not in the top {len(passage.hits)}{absent}"
        else:
            hit = passage.hits[rank]
            if entry.relevance >= 1:
                depth = max(depth, rank)
            yield f"{label}: served at rank {rank + 1} ({hit.source}#{hit.paragraph})"
    if isinstance(passage, PassageSearched) and depth:
        yield from _outranking_lines(case, passage.hits[:depth], facts.show_text)


def _outranking_lines(
    case: EvalCase, hits: Sequence[HitLocator], show_text: bool
) -> Iterator[str]:
    yield "hits ranked above an expected source:"
    for rank, hit in enumerate(hits[:HIT_LINE_CAP], start=1):
        expected = [e.source for e in case.expected_sources if satisfies(hit, e)]
        mark = f" = expected {', '.join(dict.fromkeys(expected))}" if expected else ""
        yield f"  {rank}. {hit.source}#{hit.paragraph} (score {hit.score:.4f}){mark}"
        if show_text and hit.text is not None:
            text = " ".join(hit.text.split())
            cut = text if len(text) <= TEXT_CAP else text[: TEXT_CAP - 1] + "…"
            yield f"     {cut}"
    if len(hits) > HIT_LINE_CAP:
        yield f"  ... and {len(hits) - HIT_LINE_CAP} more hit(s)"


def _passage_line(block: CaseBlock) -> str:
    passage = block.passage
    if isinstance(passage, PassageSearched):
        return (
            f"passage lane: searched, {len(passage.hits)} hit(s) for limit {block.limit} "
            f"({passage.latency_ms} ms)"
        )
    return f"passage lane: failed after {passage.latency_ms} ms: {passage.message}"


def _names_lines(case: EvalCase, block: CaseBlock, kind: str) -> Iterator[str]:
    """Missed concepts or labels, and the cues of that kind that errored."""
    expected, missing = missed_names(case, block, kind)
    if not expected or block.structural is None:
        return
    cues = kind_cues(block, kind)
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


def _section_name(name: str | None) -> str:
    return "outside every section" if name is None else f"'{name}'"


def _section(check: SectionCheck) -> str:
    if isinstance(check, SectionMismatched) and check.served is not None:
        return (
            f"section mismatched (expected {_section_name(check.expected)}, "
            f"served {_section_name(check.served.name)})"
        )
    if isinstance(check, SectionMatched | SectionMismatched):
        return f"section {check.check} (expected {_section_name(check.expected)})"
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
    facts: DrilldownFacts | None = None,
) -> str:
    """The failure text of one case (no trailing newline).

    Sections, each only when it applies: header with ``<eval_path>:<line>``; the query; each
    violated bound (``<metric>: <reason> (bound from cases.default | cases.overrides.<id>)``,
    without the parenthesis when the origin is ``None``);
    the passage outcome and every expected source's 1-based rank or ``not in the top k`` (and
    whether an expected paragraph exists at all), then the hits ranked above the deepest
    expectation; missed concepts and labels; missed associations with each position's outcome;
    every citation check (served / resolved / section / quote); the reproduction requests and
    where to send them.
    """
    facts = facts or DrilldownFacts(ServerTarget(masked_url=None))
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
    lines += _source_lines(case, block, facts)
    lines += _names_lines(case, block, "concept")
    lines += _names_lines(case, block, "label")
    lines += _association_lines(block)
    lines += _citation_lines(block)
    metrics = {item.violation.metric for item in violations}
    requests = reproduction_requests(case, block, metrics, context, facts.absent_paragraphs)
    if requests:
        lines.append(facts.server.heading() if facts.server.masked_url else "reproduce:")
        lines += [f"  {request}" for request in requests]
    return "\n".join(lines)
