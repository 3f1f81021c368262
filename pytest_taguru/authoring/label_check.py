"""Lint an eval set's labels against the corpus a server holds, without scoring anything.

For every case, in file order: each expected source is stored, and so is each expected
paragraph; each expected citation's paragraph exists, has the declared section and contains
the declared quote (folded, as the citation lane compares it); each expected concept and label
resolves to itself (folded, as coverage compares it). A problem names the eval.jsonl line and
the field, and where something close exists it says so (the closest stored source; the nearest
paragraph that does contain the quote; the name the cue resolves to).

The corpus is read with the run's own client, preflight and lane rules (``run.preflight``
``list_sources``, the citation lane's ``section_check`` and ``quote_matches``, the structural
lane's ``resolve_cue``, coverage's ``names_covered``, the passage lane's search): what this
accepts is what a run would find. A server that cannot be read raises :class:`RunError`.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import ValidationError

from pytest_taguru.artifact.case import SectionMismatched
from pytest_taguru.core.suggest import did_you_mean
from pytest_taguru.core.wire import Citation
from pytest_taguru.errors import RunError
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.envelope import decode_error_text
from pytest_taguru.run.eval_models import CaseOptions, EvalCase, EvalSet, ExpectedCitation
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.lanes.citation import quote_matches, section_check
from pytest_taguru.run.lanes.passage import PassageFetch, fetch_passage_hits
from pytest_taguru.run.lanes.request_bodies import citation_body
from pytest_taguru.run.lanes.structural import resolve_cue
from pytest_taguru.run.preflight import list_sources
from pytest_taguru.score.case import names_covered

MAX_WALK = 10_000
"""Paragraphs read from one source when looking for the one that holds a quote."""
SEARCH_LIMIT = 10


@dataclass(frozen=True)
class Problem:
    """One labelling mistake: where it is written, what is wrong, what is close."""

    line: int
    case_id: str
    field: str
    message: str
    suggestion: str = ""

    def text(self, path: str) -> str:
        tail = f" — {self.suggestion}" if self.suggestion else ""
        return f"{path}:{self.line}: case '{self.case_id}': {self.field}: {self.message}{tail}"


Paragraph = Citation | str
"""A paragraph as served, or the 404 code that answered for it (``no_source``,
``no_paragraph``)."""


@dataclass
class CorpusReader:
    """The corpus of one context, read on demand and kept."""

    client: TaguruClient
    context: str
    sources: frozenset[str] = frozenset()
    _paragraphs: dict[tuple[str, int], Paragraph] = field(default_factory=dict)
    _counts: dict[str, int] = field(default_factory=dict)

    def read_sources(self) -> None:
        self.sources = list_sources(self.client, self.context)

    def paragraph(self, source: str, number: int) -> Paragraph:
        """``POST citations`` for one locator, as the citation lane sends it."""
        key = (source, number)
        if key not in self._paragraphs:
            try:
                result = self.client.post_json(
                    ["contexts", self.context, "citations"], citation_body(source, number)
                )
                self._paragraphs[key] = Citation.model_validate(result)
            except CallFailed as failure:
                if not failure.not_found or failure.code is None:
                    raise RunError(failure.message) from failure
                self._paragraphs[key] = failure.code
            except ValidationError as error:
                raise RunError(
                    f"citation response did not parse: {decode_error_text(error)}"
                ) from error
        return self._paragraphs[key]

    def paragraph_count(self, source: str) -> int:
        """How many paragraphs a stored source has: doubling, then halving, on existence."""
        if source not in self._counts:
            low, high = 0, 1  # paragraph ``low - 1`` exists; find the first that does not
            while high <= MAX_WALK and isinstance(self.paragraph(source, high - 1), Citation):
                low, high = high, high * 2
            while low < high:
                middle = (low + high) // 2
                if isinstance(self.paragraph(source, middle), Citation):
                    low = middle + 1
                else:
                    high = middle
            self._counts[source] = low
        return self._counts[source]

    def texts(self, source: str) -> Iterator[tuple[int, Citation]]:
        for number in range(min(self.paragraph_count(source), MAX_WALK)):
            found = self.paragraph(source, number)
            if isinstance(found, Citation):
                yield number, found

    def search(self, query: str) -> PassageFetch:
        """Passage search as the passage lane sends it, ``query`` as the case's query."""
        probe = EvalCase(case_id="check", query=query, options=CaseOptions(limit=SEARCH_LIMIT))
        fetched = fetch_passage_hits(self.client, self.context, probe)
        if not isinstance(fetched, PassageFetch):
            raise RunError(f"passage search failed: {fetched.message}")
        return fetched


def _range(count: int) -> str:
    return f"{count} paragraph{'' if count == 1 else 's'}" + (f" (0..{count - 1})" if count else "")


def _unknown_source(reader: CorpusReader, source: str) -> tuple[str, str]:
    return (
        f"'{source}' is not a source of '{reader.context}'",
        did_you_mean(source, reader.sources),
    )


def _check_sources(reader: CorpusReader, case: EvalCase) -> Iterator[tuple[str, str, str]]:
    for index, expected in enumerate(case.expected_sources):
        where = f"expected_sources[{index}]"
        if expected.source not in reader.sources:
            yield (f"{where}.source", *_unknown_source(reader, expected.source))
            continue
        count = reader.paragraph_count(expected.source)
        for position, number in enumerate(expected.paragraphs):
            if number >= count:
                message = f"'{expected.source}' has {_range(count)}, not paragraph {number}"
                yield f"{where}.paragraphs[{position}]", message, ""


def _quote_elsewhere(reader: CorpusReader, expected: ExpectedCitation, quote: str) -> str:
    """Where the quote is: the nearest paragraph of the same source, else a search hit."""
    holding = [n for n, found in reader.texts(expected.source) if quote_matches(quote, found.text)]
    if holding:
        nearest = min(holding, key=lambda n: (abs(n - expected.paragraph), n))
        return f"it is in paragraph {nearest}"
    for hit in reader.search(quote).hits:
        if quote_matches(quote, hit.text or ""):
            return f"it is in '{hit.source}' paragraph {hit.paragraph}"
    return "no paragraph of the corpus contains it"


def _section_elsewhere(reader: CorpusReader, expected: ExpectedCitation) -> str:
    """Where the declared section is in the source, or the closest label it has."""
    spans: dict[str | None, list[int]] = {}
    for number, found in reader.texts(expected.source):
        spans.setdefault(found.section, []).append(number)
    if expected.section in spans:
        numbers = spans[expected.section]
        where = "outside every section" if expected.section is None else "in it"
        return f"paragraphs {_numbers(numbers)} are {where}"
    labels = [label for label in spans if label is not None]
    if expected.section is not None and (close := did_you_mean(expected.section, labels)):
        return close
    return (
        "the source's sections: " + ", ".join(f"'{label}'" for label in labels)
        if labels
        else ("the source has no sections")
    )


def _numbers(numbers: Sequence[int]) -> str:
    """``0..2, 5``: runs of consecutive paragraph numbers."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"{run[0]}..{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


def _check_citation(
    reader: CorpusReader, where: str, expected: ExpectedCitation
) -> Iterator[tuple[str, str, str]]:
    if expected.source not in reader.sources:
        yield (f"{where}.source", *_unknown_source(reader, expected.source))
        return
    served = reader.paragraph(expected.source, expected.paragraph)
    if not isinstance(served, Citation):
        count = reader.paragraph_count(expected.source)
        message = f"'{expected.source}' has {_range(count)}, not paragraph {expected.paragraph}"
        yield f"{where}.paragraph", message, ""
        return
    if isinstance(section_check(expected, served.section), SectionMismatched):
        actual = (
            "lies outside every section"
            if served.section is None
            else (f"is in section '{served.section}'")
        )
        declared = "null" if expected.section is None else f"'{expected.section}'"
        message = f"declared {declared}, but the paragraph {actual}"
        yield f"{where}.section", message, _section_elsewhere(reader, expected)
    if expected.quote is not None and not quote_matches(expected.quote, served.text):
        message = f"'{expected.quote}' is not in '{expected.source}' paragraph {expected.paragraph}"
        yield f"{where}.quote", message, _quote_elsewhere(reader, expected, expected.quote)


def _check_names(
    reader: CorpusReader, kind: Literal["concept", "label"], names: Sequence[str]
) -> Iterator[tuple[str, str, str]]:
    for index, name in enumerate(names):
        resolution = resolve_cue(reader.client, reader.context, name, kind)
        if resolution.error is not None:
            raise RunError(resolution.error)
        if names_covered([name], [resolution], kind)[0]:
            continue
        found = resolution.resolved_names
        suggestion = f"it resolves to '{found[0]}'" if found else ""
        yield f"expected_{kind}s[{index}]", f"'{name}' does not resolve to a {kind}", suggestion


def check_case(reader: CorpusReader, case: EvalCase) -> list[Problem]:
    """Every problem of one case, in field order."""
    found = list(_check_sources(reader, case))
    for index, expected in enumerate(case.expected_citations):
        found += _check_citation(reader, f"expected_citations[{index}]", expected)
    found += _check_names(reader, "concept", case.expected_concepts)
    found += _check_names(reader, "label", case.expected_labels)
    return [Problem(case.line, case.case_id, *problem) for problem in found]


def check_eval_set(
    reader: CorpusReader, eval_set: EvalSet, skip: Sequence[str] = ()
) -> list[Problem]:
    """Every problem of every case not in ``skip``, in file order (the sources read first)."""
    reader.read_sources()
    problems: list[Problem] = []
    for case in eval_set.cases:
        if case.case_id not in skip:
            problems += check_case(reader, case)
    return problems
