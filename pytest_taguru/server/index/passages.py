"""Stored passages: one source's text split into paragraphs with its markers.

server-wire §3.6 (paragraphs), §3.7 (sections extend forward to the next marker, a locator
covers exactly one paragraph), §2.7 (out-of-range markers dropped and counted; several
section/locator markers on one paragraph collapse to the last one, the others dropped).
"""

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pytest_taguru.server.index.text import split_paragraphs

T = TypeVar("T")


@dataclass(frozen=True)
class Locator:
    """A paragraph locator such as page 2: ``{kind, value}``."""

    kind: str
    value: str

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "value": self.value}


@dataclass(frozen=True)
class PassageSubmission:
    """What one store names for one source (HTTP body or import batch), before splitting."""

    text: str
    questions: Sequence[tuple[int, str]] = ()
    sections: Sequence[tuple[int, str]] = ()
    locators: Sequence[tuple[int, Locator]] = ()
    tags: Sequence[str] = ()
    date: int | None = None
    stored_at: int | None = None


@dataclass(frozen=True)
class MarkerCounts:
    """Stored/dropped tallies of one store (``questions_stored`` … ``locators_dropped``)."""

    questions_stored: int = 0
    questions_dropped: int = 0
    sections_stored: int = 0
    sections_dropped: int = 0
    locators_stored: int = 0
    locators_dropped: int = 0

    def __add__(self, other: "MarkerCounts") -> "MarkerCounts":
        return MarkerCounts(
            self.questions_stored + other.questions_stored,
            self.questions_dropped + other.questions_dropped,
            self.sections_stored + other.sections_stored,
            self.sections_dropped + other.sections_dropped,
            self.locators_stored + other.locators_stored,
            self.locators_dropped + other.locators_dropped,
        )

    def as_json(self) -> dict[str, int]:
        return {
            "questions_stored": self.questions_stored,
            "questions_dropped": self.questions_dropped,
            "sections_stored": self.sections_stored,
            "sections_dropped": self.sections_dropped,
            "locators_stored": self.locators_stored,
            "locators_dropped": self.locators_dropped,
        }


@dataclass(frozen=True)
class StoredPassage:
    """One source's stored passage: paragraphs, sorted section starts, locators, metadata."""

    text: str
    paragraphs: tuple[str, ...]
    section_starts: tuple[int, ...]
    section_labels: tuple[str, ...]
    locators: dict[int, Locator]
    questions: dict[int, list[str]]
    tags: tuple[str, ...]
    date: int | None
    stored_at: int
    counts: MarkerCounts = field(default_factory=MarkerCounts)

    def section_of(self, paragraph: int) -> str | None:
        """Label of the marker with the greatest start ≤ ``paragraph``; None before the first
        marker and for a paragraph past the text (an attribution recorded before the passage)."""
        if paragraph >= len(self.paragraphs):
            return None
        position = bisect_right(self.section_starts, paragraph)
        return self.section_labels[position - 1] if position else None

    def locator_of(self, paragraph: int) -> Locator | None:
        """The locator recorded for exactly ``paragraph``."""
        return self.locators.get(paragraph)

    @property
    def effective_time(self) -> int:
        """``date`` when given, else ``stored_at`` (the §3.9 filter rule)."""
        return self.date if self.date is not None else self.stored_at


def build_passage(submission: PassageSubmission, now: int) -> StoredPassage:
    """Split the text and keep the markers that name an existing paragraph.

    Questions are all kept (one list per paragraph, in order); a section or locator naming
    the same paragraph as a later one is replaced by it and counts as dropped.
    """
    paragraphs = tuple(split_paragraphs(submission.text))
    count = len(paragraphs)
    questions: dict[int, list[str]] = {}
    for paragraph, question in submission.questions:
        if paragraph < count:
            questions.setdefault(paragraph, []).append(question)
    questions_dropped = len(dropped_markers(submission.questions, count, one_per_paragraph=False))
    sections = _last_marker_per_paragraph(submission.sections, count)
    locators = _last_marker_per_paragraph(submission.locators, count)
    starts = tuple(sorted(sections))
    counts = MarkerCounts(
        questions_stored=len(submission.questions) - questions_dropped,
        questions_dropped=questions_dropped,
        sections_stored=len(sections),
        sections_dropped=len(dropped_markers(submission.sections, count)),
        locators_stored=len(locators),
        locators_dropped=len(dropped_markers(submission.locators, count)),
    )
    return StoredPassage(
        text=submission.text,
        paragraphs=paragraphs,
        section_starts=starts,
        section_labels=tuple(sections[start] for start in starts),
        locators=locators,
        questions=questions,
        tags=tuple(sorted(set(submission.tags))),
        date=submission.date,
        stored_at=submission.stored_at if submission.stored_at is not None else now,
        counts=counts,
    )


def _last_marker_per_paragraph(
    markers: Sequence[tuple[int, T]], paragraph_count: int
) -> dict[int, T]:
    """The in-range markers, the last one per paragraph."""
    return {paragraph: marker for paragraph, marker in markers if paragraph < paragraph_count}


def dropped_markers(
    markers: Sequence[tuple[int, object]], paragraph_count: int, *, one_per_paragraph: bool = True
) -> list[int]:
    """Positions of the markers a store drops and counts: those naming a paragraph past the
    text and, for sections and locators (``one_per_paragraph``), those a later marker on the
    same paragraph replaces. (Questions accumulate, up to eight a paragraph.)"""
    last = {paragraph: position for position, (paragraph, _) in enumerate(markers)}
    return [
        position
        for position, (paragraph, _) in enumerate(markers)
        if paragraph >= paragraph_count or (one_per_paragraph and last[paragraph] != position)
    ]
