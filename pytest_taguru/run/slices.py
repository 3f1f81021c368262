"""Slice definitions: named subsets of the eval set's cases, declared outside the eval format.

Two ways to declare them, one result (:class:`SliceDefinitions`):

* ``taguru_slices`` (ini key; ``--taguru-slices``), one slice per line::

      taguru_slices =
          history: history-*
          drinks: products-* pairing-*

* a slices file (``--taguru-slices-file``, ini ``taguru_slices_file``), pytest-taguru's own
  small versioned JSON, read by the one strict reader::

      {"taguru_slices": 1, "slices": {"history": ["history-*"], "drinks": ["products-*"]}}

A glob is matched against the case ids by :func:`fnmatch.fnmatchcase` (``*``, ``?``, ``[seq]``,
``[!seq]``, case-sensitive); a case may be in several slices. Which cases a slice holds is
``score.slices.resolve_slices``; a slice that holds none is a start-up warning
(:func:`empty_slice_warnings`), not an error. Every problem is a ``UsageError`` (exit 2), found
before any network call.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.core.limits import MAX_SLICE_NAME_CHARS, MAX_SLICES
from pytest_taguru.core.own_json import FieldError, Where, entries, got, stamp
from pytest_taguru.core.text import is_white_space
from pytest_taguru.errors import UsageError
from pytest_taguru.gate.slice_file import SliceThresholds, read_own_document, read_own_file
from pytest_taguru.gate.slices import SlicesGate, evaluate_slice_gate
from pytest_taguru.report.slices import slice_gate_lines
from pytest_taguru.score.slices import resolve_slices

SLICES_VERSION = 1
"""The only ``taguru_slices`` stamp a slices file may carry."""
LINE_SYNTAX = "name: glob [glob…]"


@dataclass(frozen=True)
class SliceDefinitions:
    """Slice name → its globs, in declaration order, and where they were declared."""

    globs: dict[str, tuple[str, ...]]
    origin: str
    """``--taguru-slices`` or the slices file's path, for messages."""


class SlicesFile(BaseModel):
    """A slices file (the JSON Schema ``slices`` is generated from this model)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    taguru_slices: int
    slices: dict[str, list[str]]


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a slice: it must have 1..64 characters, none of them white space
    (taguru's) or ``:`` (the line syntax's separator)."""
    if not name:
        return "a slice name must not be empty"
    if len(name) > MAX_SLICE_NAME_CHARS:
        return f"a slice name has at most {MAX_SLICE_NAME_CHARS} characters"
    if ":" in name or any(is_white_space(ch) for ch in name):
        return f"a slice name holds no white space and no ':', got '{name}'"
    return None


def _too_many(count: int) -> str | None:
    return f"more than {MAX_SLICES} slices" if count > MAX_SLICES else None


# --- taguru_slices: one slice per line -------------------------------------------------------


def parse_slice_lines(text: str, origin: str) -> SliceDefinitions:
    """``name: glob [glob…]`` per line (globs separated by white space); blank lines and lines
    starting with ``#`` are skipped. Errors name ``origin`` and the line of the value."""
    globs: dict[str, tuple[str, ...]] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, colon, rest = stripped.partition(":")
        name = name.strip()
        problem = (
            f'expected "{LINE_SYNTAX}", got "{stripped}"' if not colon else name_problem(name)
        )
        if problem is None and name in globs:
            problem = f"slice '{name}' is already defined on line {lines[name]}"
        if problem is None and not rest.split():
            problem = f"slice '{name}' needs at least one glob"
        if problem is None:
            problem = _too_many(len(globs) + 1)
        if problem is not None:
            raise UsageError(f"{origin}: line {number}: {problem}")
        globs[name], lines[name] = tuple(rest.split()), number
    if not globs:
        raise UsageError(f'{origin}: no slice defined (expected "{LINE_SYNTAX}" lines)')
    return SliceDefinitions(globs, origin)


@dataclass(frozen=True)
class SliceLinesParser:
    """The ``slices`` value parser of the option table (``run.flag_values.PARSERS``)."""

    needs: str = f'slice definitions, "{LINE_SYNTAX}" per line'

    def __call__(self, text: str | None, flag: str) -> SliceDefinitions:
        if text is None:
            raise UsageError(f"{flag} needs {self.needs}")
        return parse_slice_lines(text, flag)


# --- the slices file -------------------------------------------------------------------------


def _glob_list(value: Any, where: Where) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise FieldError(where, f"expected an array of globs over case ids, {got(value)}")
    if not value:
        raise FieldError(where, "needs at least one glob")
    for index, glob in enumerate(value):
        if not isinstance(glob, str) or not glob:
            raise FieldError((*where, index), f"expected a glob (a non-empty string), {got(glob)}")
    return tuple(value)


def _slice_map(value: Any, where: Where) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for name, globs in entries(value, where, "an object of slice name → globs"):
        problem = name_problem(name) or _too_many(len(found) + 1)
        if problem is not None:
            raise FieldError((*where, name), problem)
        found[name] = _glob_list(globs, (*where, name))
    return found


def read_slices_file(raw: bytes, path: str) -> SliceDefinitions:
    """A slices file's bytes, checked; raises ``UsageError`` naming ``path``, the line and the
    field of the first problem (a syntax error: serde's ``at line L column C``)."""
    found = read_own_document(
        raw,
        path,
        {"taguru_slices": stamp(SLICES_VERSION), "slices": _slice_map},
        shape='a slices object ({"taguru_slices": 1, "slices": {…}})',
    )
    if not found["slices"]:
        raise UsageError(f"{path}: no slice defined (slices is empty)")
    return SliceDefinitions(found["slices"], path)


def load_slices_file(path: str) -> SliceDefinitions:
    return read_slices_file(read_own_file(path), path)


def empty_slice_warnings(definitions: SliceDefinitions, case_ids: Iterable[str]) -> list[str]:
    """One warning per slice that holds no case of the eval set (its scorecard stays empty)."""
    membership = resolve_slices(definitions.globs, case_ids)
    return [
        f"{definitions.origin}: slice '{name}' ({' '.join(definitions.globs[name])}) matches "
        "no case id of the eval set"
        for name, members in membership.items()
        if not members
    ]


@dataclass(frozen=True)
class Slicing:
    """A run's slices and, when given, the slice thresholds file that gates them."""

    definitions: SliceDefinitions
    thresholds: SliceThresholds | None = None

    def gate_sources(self) -> list[SlicesGate]:
        """The ``eval.jsonl::[slices]`` result's source, with a slice thresholds file."""
        return [] if self.thresholds is None else [SlicesGate.of(self.thresholds)]


def judge_slices(
    slicing: Slicing | None, evaluation: Evaluation, *, aggregate_skipped: str | None
) -> tuple[Evaluation, list[str]]:
    """The artifact with its ``slice_thresholds`` block, and the summary's slice gate lines;
    unchanged without a slice thresholds file. ``aggregate_skipped``: why nothing is judged
    (the partial-run policy), or ``None``."""
    if slicing is None or slicing.thresholds is None:
        return evaluation, []
    cards = evaluation.slices or {}
    report = evaluate_slice_gate(slicing.thresholds, cards, aggregate_skipped=aggregate_skipped)
    judged = evaluation.model_copy(update={"slice_thresholds": report.to_block()})
    return judged, slice_gate_lines(report)
