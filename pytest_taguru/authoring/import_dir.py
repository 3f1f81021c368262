"""A folder of Markdown and plain-text documents as a taguru import stream (``import-dir``).

One batch per file, in path order: the header (``"create": {}`` on the first, so a new context
is created), the file's text as the passage, a section line for each Markdown heading and a
locator line per paragraph where pages are known. Paragraphs are the reference server's own
(``server.index.text.paragraph_spans``, taguru's blank-line rule), so every paragraph number
the lines name exists and nothing is dropped on import. The output is a pure function of the
files' paths and bytes.

Markdown (``.md``, ``.markdown``):

* A front matter block (``---`` … ``---`` or ``...`` on the first lines) is not part of the
  passage. Its ``page: N`` is the page of the text's start; ``tags: [a, b]`` (or ``a, b``)
  become the passage's tags. Other keys are ignored.
* An ATX heading (``# Title`` … ``###### Title``) or a setext heading (``Title`` over ``===`` or
  ``---``), outside fenced code, starts a section labelled with its text, at the paragraph the
  heading line is in (the last heading of a paragraph wins, as taguru keeps one marker per
  paragraph).

Every file: a form feed (U+000C) starts a new page. When the text has form feeds or a
``page:``, every paragraph gets a ``page`` locator: the start page (``page:``, else 1) plus the
form feeds before the paragraph.
"""

import json
import os
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_taguru.core.text import trim
from pytest_taguru.errors import UsageError
from pytest_taguru.server.index.text import paragraph_spans
from pytest_taguru.server.ingest import import_lines as caps

MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt",)
BOM = "\ufeff"
FORM_FEED = "\f"

_FRONT_MATTER_OPEN = re.compile(r"---[ \t]*\r?\n")
_FRONT_MATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass
class DocumentBatch:
    """One file's batch: its source name, passage and markers."""

    source: str
    passage: str
    tags: list[str]
    paragraphs: int
    sections: list[tuple[int, str]] = field(default_factory=list)
    pages: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class ImportDir:
    """The stream's batches and what the conversion has to say (skipped files, cut labels)."""

    context: str
    batches: list[DocumentBatch]
    notes: list[str]
    ignored: int
    """Files of other kinds below the folder, not imported."""

    def lines(self) -> Iterator[dict[str, Any]]:
        """The import lines in stream order."""
        for index, batch in enumerate(self.batches):
            header: dict[str, Any] = {
                "taguru_batch": 1,
                "context": self.context,
                "source": batch.source,
            }
            if index == 0:
                header["create"] = {}
            yield header
            yield {"passage": batch.passage, **({"tags": batch.tags} if batch.tags else {})}
            for paragraph, label in batch.sections:
                yield {"paragraph": paragraph, "section": label}
            for paragraph, page in batch.pages:
                yield {"paragraph": paragraph, "locator": {"kind": "page", "value": page}}

    def text(self) -> str:
        """The NDJSON stream: one compact JSON object per line, UTF-8 kept, final newline."""
        return "".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
            for line in self.lines()
        )

    def summary(self) -> str:
        paragraphs = sum(batch.paragraphs for batch in self.batches)
        sections = sum(len(batch.sections) for batch in self.batches)
        pages = sum(len(batch.pages) for batch in self.batches)
        ignored = f"; {self.ignored} other file(s) ignored" if self.ignored else ""
        return (
            f"{len(self.batches)} source(s), {paragraphs} paragraph(s), {sections} section "
            f"marker(s), {pages} page locator(s) for context '{self.context}'{ignored}"
        )


def _documents(folder: Path) -> tuple[list[Path], int]:
    """Document files below ``folder`` in path order (hidden names skipped), and how many
    other files there are."""
    found: list[Path] = []
    ignored = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        for name in files:
            if name.startswith("."):
                continue
            if name.lower().endswith(MARKDOWN_SUFFIXES + TEXT_SUFFIXES):
                found.append(Path(root) / name)
            else:
                ignored += 1
    return sorted(found, key=lambda path: path.relative_to(folder).as_posix()), ignored


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """The ``key: value`` pairs of a leading front matter block, and the text after it."""
    opening = _FRONT_MATTER_OPEN.match(text)
    closing = _FRONT_MATTER_CLOSE.search(text, opening.end()) if opening else None
    if opening is None or closing is None:
        return {}, text
    pairs: dict[str, str] = {}
    for line in text[opening.end() : closing.start()].splitlines():
        key, colon, value = line.partition(":")
        if colon and trim(key):
            pairs[trim(key).lower()] = trim(value)
    rest = text[closing.end() :]
    return pairs, rest[1:] if rest.startswith("\n") else rest


def _tags(value: str, where: str) -> list[str]:
    inner = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    tags = [trim(tag).strip("'\"") for tag in inner.split(",")]
    tags = [tag for tag in tags if tag]
    if len(tags) > caps.MAX_TAGS:
        raise UsageError(f"{where}: {len(tags)} tags, at most {caps.MAX_TAGS} allowed")
    for tag in tags:
        if len(tag.encode()) > caps.MAX_TAG_BYTES:
            raise UsageError(f"{where}: tag '{tag}' is over the {caps.MAX_TAG_BYTES}-byte cap")
    return tags


def _headings(text: str) -> Iterator[tuple[int, str]]:
    """``(offset of the heading line, label)`` for each Markdown heading outside fenced code."""
    fence: str | None = None
    offset = 0
    lines = text.split("\n")
    for number, line in enumerate(lines):
        content = line.removesuffix("\r")
        opened = _FENCE.match(content)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        elif opened:
            fence = opened.group(1)
        else:
            atx = _ATX.match(content)
            after = lines[number + 1].removesuffix("\r") if number + 1 < len(lines) else ""
            if atx and trim(atx.group(1) or ""):
                yield offset, trim(atx.group(1))
            elif trim(content) and _SETEXT_UNDERLINE.match(after):
                yield offset, trim(content)
        offset += len(line) + 1


def _label(label: str, where: str, notes: list[str]) -> str:
    encoded = label.encode()
    if len(encoded) <= caps.MAX_MARKER_BYTES:
        return label
    cut = encoded[: caps.MAX_MARKER_BYTES].decode("utf-8", errors="ignore")
    notes.append(f"{where}: a heading over {caps.MAX_MARKER_BYTES} bytes was cut to fit")
    return cut


def _start_page(value: str | None, where: str) -> int | None:
    if value is None:
        return None
    if not value.isascii() or not value.isdigit():
        raise UsageError(f"{where}: front matter page '{value}' is not a page number")
    return int(value)


def convert_file(path: Path, source: str, notes: list[str]) -> DocumentBatch | None:
    """One document as a batch; None (with a note) when it has no paragraph."""
    where = str(path)
    try:
        text = path.read_bytes().decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as error:
        raise UsageError(
            f"{where}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
    except OSError as error:
        raise UsageError(f"cannot read {where}: {error.strerror}") from None
    markdown = path.name.lower().endswith(MARKDOWN_SUFFIXES)
    meta, text = _front_matter(text) if markdown else ({}, text)
    if len(text.encode()) > caps.MAX_PASSAGE_BYTES:
        raise UsageError(f"{where}: the text is over taguru's 8 MiB passage cap")
    spans = paragraph_spans(text)
    if not spans:
        notes.append(f"{where}: no paragraph (only blank lines); not imported")
        return None
    batch = DocumentBatch(source, text, _tags(meta.get("tags", ""), where), len(spans))
    starts = [start for start, _ in spans]
    if markdown:
        labels: dict[int, str] = {}
        for offset, label in _headings(text):
            paragraph = _paragraph_at(spans, starts, offset)
            if paragraph is not None:
                labels[paragraph] = _label(label, where, notes)
        batch.sections = sorted(labels.items())
    first_page = _start_page(meta.get("page"), where)
    if first_page is not None or FORM_FEED in text:
        page = 1 if first_page is None else first_page
        batch.pages = [
            (number, str(page + text.count(FORM_FEED, 0, start)))
            for number, start in enumerate(starts)
        ]
    return batch


def _paragraph_at(spans: list[tuple[int, int]], starts: list[int], offset: int) -> int | None:
    """The paragraph whose span holds ``offset`` (a heading line is never blank)."""
    number = bisect_right(starts, offset) - 1
    return number if number >= 0 and offset <= spans[number][1] else None


def import_dir(folder: str, context: str, prefix: str = "") -> ImportDir:
    """Convert every document below ``folder``; source names are ``prefix`` + the path relative
    to the folder, with ``/`` separators. Raises :class:`UsageError` naming the file."""
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"{folder}: not a folder")
    if not context or len(context.encode()) > caps.MAX_CONTEXT_NAME_BYTES:
        raise UsageError(f"--context must be 1..{caps.MAX_CONTEXT_NAME_BYTES} bytes")
    paths, ignored = _documents(root)
    notes: list[str] = []
    batches = []
    for path in paths:
        source = prefix + path.relative_to(root).as_posix()
        if len(source.encode()) > caps.MAX_NAME_BYTES:
            raise UsageError(f"{path}: the source name is over {caps.MAX_NAME_BYTES} bytes")
        batch = convert_file(path, source, notes)
        if batch is not None:
            batches.append(batch)
    if not batches:
        raise UsageError(f"{folder}: no Markdown (.md, .markdown) or text (.txt) document")
    return ImportDir(context, batches, notes, ignored)
