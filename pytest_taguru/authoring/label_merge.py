"""``label-merge``: a labelled queue (``authoring.label_queue``) folded back into eval.jsonl.

Every queue line whose ``relevance`` was filled in (0–3) becomes one ``expected_sources`` entry
of its case, ``{"source": s, "paragraphs": [p], "relevance": g}``, appended to the end of that
case's array (the key is added at the end of the line when the case has none) — taguru's own
syntax, no key of ours. Nothing else of the file changes: the text is edited in place, so every
other line, key, number and space stays as it was, and a queue without labels gives back the
same bytes. The caller validates the result with the dataset loader before writing it.

A bad queue is an input error naming ``queue:line: field``: not JSON, not a queue, an unknown
key, a relevance outside 0..=3, a case the eval set does not hold, a hit the eval set already
labels (a queue merged twice), or one hit labelled twice.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from pytest_taguru.artifact.case import HitLocator
from pytest_taguru.authoring.label_queue import QUEUE_VERSION, QueueHeader, QueueLine
from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.suggest import did_you_mean
from pytest_taguru.core.text import trim
from pytest_taguru.core.textfile import split_lines
from pytest_taguru.errors import UsageError, read_input_text
from pytest_taguru.run.dataset_errors import describe_error
from pytest_taguru.run.eval_models import MAX_RELEVANCE, EvalCase, EvalSet
from pytest_taguru.score.case import satisfies


@dataclass(frozen=True)
class Label:
    """A queue line with its relevance filled in, and where it was written."""

    line: int
    case_id: str
    source: str
    paragraph: int
    relevance: int


@dataclass(frozen=True)
class LabelledQueue:
    header: QueueHeader
    labels: tuple[Label, ...]
    unlabelled: int
    """Queue lines left with ``relevance: null``."""


def _problem(path: str, line: int, detail: str) -> UsageError:
    return UsageError(f"{path}:{line}: {detail}")


def _header(value: Any, path: str, line: int) -> QueueHeader:
    if not isinstance(value, dict) or "taguru_label_queue" not in value:
        raise _problem(path, line, "not a label queue: expected a taguru_label_queue header line")
    try:
        header = QueueHeader.model_validate(value)
    except ValidationError as error:
        raise _problem(path, line, describe_error(error, QueueHeader)) from None
    if not 1 <= header.taguru_label_queue <= QUEUE_VERSION:
        raise _problem(
            path,
            line,
            f"taguru_label_queue: {header.taguru_label_queue} is outside the readable range "
            f"1..={QUEUE_VERSION}",
        )
    return header


def _label(value: Any, path: str, line: int) -> QueueLine:
    if not isinstance(value, dict):
        raise _problem(path, line, "expected a queue line (an object)")
    try:
        entry = QueueLine.model_validate(value)
    except ValidationError as error:
        raise _problem(path, line, describe_error(error, QueueLine)) from None
    if entry.relevance is not None and not trim(entry.source):
        raise _problem(path, line, "source: must not be empty")
    if entry.relevance is not None and entry.relevance > MAX_RELEVANCE:
        raise _problem(
            path,
            line,
            f"relevance: must be 0..={MAX_RELEVANCE} (or null: not labelled), "
            f"got {entry.relevance}",
        )
    return entry


def load_labelled_queue(path: str) -> LabelledQueue:
    """:func:`read_labelled_queue` of the file at ``path`` (UTF-8, read whole, as eval.jsonl)."""
    return read_labelled_queue(read_input_text(path), path)


def read_labelled_queue(text: str, path: str) -> LabelledQueue:
    """The queue's header and its labelled lines (§ module docstring), by the strict reader.

    Lines are split and trimmed as eval.jsonl's are; blank lines are skipped.
    """
    header: QueueHeader | None = None
    labels: list[Label] = []
    unlabelled = 0
    for number, raw in enumerate(split_lines(text), start=1):
        line = trim(raw)
        if not line:
            continue
        try:
            value = read_json(line, exact_wide_integers=True)
        except SerdeError as error:
            raise _problem(path, number, f"not JSON: {error}") from None
        if header is None:
            header = _header(value, path, number)
            continue
        entry = _label(value, path, number)
        if entry.relevance is None:
            unlabelled += 1
        else:
            labels.append(
                Label(number, entry.case_id, entry.source, entry.paragraph, entry.relevance)
            )
    if header is None:
        raise UsageError(f"{path}: empty file: expected a taguru_label_queue header line")
    return LabelledQueue(header, tuple(labels), unlabelled)


# --- the eval set, edited in place ---------------------------------------------------------------

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]')
"""A JSON string, or a bracket or comma: everything that shapes a (valid) line's members."""
_SOURCES = "expected_sources"


def entry_text(label: Label, *, spaced: bool) -> str:
    """The ``expected_sources`` entry of a label, compact or in ``json.dumps``' default
    spacing (``", "``, ``": "``) to match the line it joins."""
    entry = {"source": label.source, "paragraphs": [label.paragraph], "relevance": label.relevance}
    return json.dumps(entry, ensure_ascii=False) if spaced else dumps_compact(entry)


def append_expected_sources(line: str, labels: Sequence[Label]) -> str:
    """``line`` (one valid eval case object) with an entry per label appended to its
    ``expected_sources`` array — the last one, should the key repeat, as the last one is what
    a reader keeps — or, without the key, with ``"expected_sources":[…]`` added at the end of
    the object. A line written with ``": "`` gets spaced entries, any other compact ones.
    Iterative: the loader has bounded the line's nesting already."""
    depth = 0
    previous = ""
    key: str | None = None
    opened: int | None = None
    array: tuple[int, int] | None = None
    end = len(line)
    for token in _TOKEN.finditer(line):
        text = token.group()
        if text in "[{":
            if depth == 1 and text == "[" and key == _SOURCES:
                opened = token.start()
            depth += 1
        elif text in "]}":
            depth -= 1
            if depth == 1 and opened is not None:
                array, opened = (opened, token.start()), None
            if depth == 0:
                end = token.start()
                break
        elif text != "," and depth == 1 and previous in ("{", ","):
            key = json.loads(text)  # a member's key (a value follows a colon)
        previous = text
    spaced = '": ' in line
    comma = ", " if spaced else ","
    added = comma.join(entry_text(label, spaced=spaced) for label in labels)
    if array is None:
        key_text = f'"{_SOURCES}": ' if spaced else f'"{_SOURCES}":'
        return f"{line[:end]}{comma}{key_text}[{added}]{line[end:]}"
    start, close = array
    separator = comma if line[start + 1 : close].strip(" \t\r\n") else ""
    return line[:close] + separator + added + line[close:]


def _already_labelled(case: EvalCase, label: Label) -> int | None:
    """The index of an entry of ``case`` that already labels the hit, if any (the scoring's
    own source-matching rule)."""
    hit = HitLocator(source=label.source, paragraph=label.paragraph, score=0.0)
    return next(
        (index for index, entry in enumerate(case.expected_sources) if satisfies(hit, entry)),
        None,
    )


def merge_labels(eval_text: str, eval_set: EvalSet, queue: LabelledQueue, queue_path: str) -> str:
    """The eval set's text with every label of ``queue`` appended to its case (in queue order);
    ``eval_text`` is the file ``eval_set`` was loaded from. Raises :class:`UsageError`
    ``queue:line: …`` for a label that cannot be merged."""
    cases = {case.case_id: case for case in eval_set.cases}
    first_line: dict[tuple[str, str, int], int] = {}
    added: dict[str, list[Label]] = {}
    for label in queue.labels:
        case = cases.get(label.case_id)
        if case is None:
            hint = did_you_mean(label.case_id, cases)
            raise _problem(
                queue_path,
                label.line,
                f"case_id: no case '{label.case_id}' in {eval_set.path}"
                + (f" — {hint}" if hint else ""),
            )
        where = f"case '{label.case_id}': {label.source}#{label.paragraph}"
        locator = (label.case_id, label.source, label.paragraph)
        if locator in first_line:
            raise _problem(
                queue_path,
                label.line,
                f"{where} is labelled twice (also line {first_line[locator]})",
            )
        index = _already_labelled(case, label)
        if index is not None:
            raise _problem(
                queue_path,
                label.line,
                f"{where} is already labelled by {eval_set.path}:{case.line}: "
                f"expected_sources[{index}]",
            )
        first_line[locator] = label.line
        added.setdefault(label.case_id, []).append(label)
    lines = eval_text.split("\n")  # physical lines, "\r" kept: the text is rebuilt unchanged
    for case_id, labels in added.items():
        number = cases[case_id].line
        lines[number - 1] = append_expected_sources(lines[number - 1], labels)
    return "\n".join(lines)
