"""What an import file lost: the markers and association paragraphs a store drops, by line.

taguru accepts such lines and only counts them in its reply (``sections_dropped``,
``association_paragraphs_dropped`` …); a corpus loaded from a file at start-up has no reply to
read, so :func:`import_notes` says it instead: the counts, then the first lines with the
reason. The rules are the store's own (``index.passages.dropped_markers``).
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_taguru.server.index.passages import dropped_markers
from pytest_taguru.server.index.text import split_paragraphs
from pytest_taguru.server.ingest.importer import ImportBatch

SHOWN_LINES = 5
"""Dropped lines listed one by one; the rest are counted."""

_NOUNS = {
    "question": ("question", "questions"),
    "section": ("section marker", "section markers"),
    "locator": ("locator", "locators"),
    "association": ("association paragraph", "association paragraphs"),
}


@dataclass(frozen=True)
class DroppedLine:
    """One line whose paragraph the store did not keep."""

    line: int
    kind: str
    """``question``, ``section``, ``locator`` or ``association``."""
    paragraph: int
    reason: str


def _range(count: int) -> str:
    if count == 0:
        return "no paragraphs"
    return f"{count} paragraph{'s' if count != 1 else ''} (0-{count - 1})"


def dropped_lines(batches: Sequence[ImportBatch]) -> list[DroppedLine]:
    """Every dropped line of a parsed stream, in line order."""
    found: list[DroppedLine] = []
    for batch in batches:
        if batch.passage is None:
            continue  # the end-of-batch rule refused any marker without a passage line
        count = len(split_paragraphs(batch.passage.passage))
        past = f"source '{batch.source}' has {_range(count)}"
        markers: dict[str, Sequence[tuple[int, object]]] = {
            "question": batch.questions,
            "section": batch.sections,
            "locator": batch.locators,
            "association": [
                (a.paragraph, a) for a in batch.associations if a.paragraph is not None
            ],
        }
        association_lines = [
            line
            for line, a in zip(batch.marker_lines["association"], batch.associations, strict=True)
            if a.paragraph is not None
        ]
        for kind, entries in markers.items():
            lines = association_lines if kind == "association" else batch.marker_lines[kind]
            last = {paragraph: lines[position] for position, (paragraph, _) in enumerate(entries)}
            one_per_paragraph = kind in ("section", "locator")
            for position in dropped_markers(entries, count, one_per_paragraph=one_per_paragraph):
                paragraph = entries[position][0]
                reason = (
                    past
                    if paragraph >= count
                    else f"the {kind} on line {last[paragraph]} names the same paragraph"
                )
                found.append(DroppedLine(lines[position], kind, paragraph, reason))
    return sorted(found, key=lambda dropped: dropped.line)


def _counted(kind: str, count: int) -> str:
    singular, plural = _NOUNS[kind]
    return f"{count} {singular if count == 1 else plural}"


def import_notes(path: str, batches: Sequence[ImportBatch]) -> list[str]:
    """``<path>: the import dropped …`` and up to :data:`SHOWN_LINES` ``<path>:<line>: …``
    lines; empty when nothing was dropped."""
    dropped = dropped_lines(batches)
    if not dropped:
        return []
    counts = Counter(item.kind for item in dropped)
    summary = ", ".join(_counted(kind, counts[kind]) for kind in _NOUNS if counts[kind])
    notes = [f"{path}: the import dropped {summary} (taguru drops and counts them the same way)"]
    for item in dropped[:SHOWN_LINES]:
        what = _NOUNS[item.kind][0]
        effect = "stored as null" if item.kind == "association" else "dropped"
        where = f"{path}:{item.line}: {what} for paragraph {item.paragraph}"
        notes.append(f"{where} {effect}: {item.reason}")
    if len(dropped) > SHOWN_LINES:
        notes.append(f"{path}: … and {len(dropped) - SHOWN_LINES} more")
    return notes
