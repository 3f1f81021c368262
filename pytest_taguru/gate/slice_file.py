"""The slice thresholds file (``--taguru-slice-thresholds``): pytest-taguru's own small format.

::

    {"taguru_slice_thresholds": 1,
     "slices": {"history": {"min_cases": 3, "aggregate": {"recall.mrr": {"min": 0.8}}}}}

Each slice's ``aggregate`` has the thresholds file's aggregate syntax and is read by its reader
(``gate.file``: bounds, ``null`` sides, serde's words) and checked by its rules
(``gate.thresholds.bound_problem``), over the metrics a slice has (the per-case ones,
``score.slices``). ``min_cases`` (default 1): a slice holding fewer of the run's cases is
reported, not judged. The rest is read strictly, each problem named ``<file>:<line>: <field>``
(``core.own_json``). Any problem is a ``UsageError`` (exit 2) before the run touches the network.
"""

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from pytest_taguru.core.limits import MAX_SLICE_FILE_BYTES, U32_MAX
from pytest_taguru.core.own_json import (
    FieldError,
    Reader,
    Where,
    dotted,
    entries,
    fields,
    got,
    located,
    parse_own,
    stamp,
)
from pytest_taguru.core.serde import SerdeError
from pytest_taguru.core.suggest import did_you_mean
from pytest_taguru.core.textfile import UnreadableFile, read_bounded
from pytest_taguru.errors import UsageError
from pytest_taguru.gate.advice import name_hint, ratio_warnings
from pytest_taguru.gate.file import (
    Bound,
    ThresholdsFile,
    ThresholdsModel,
    ThresholdsParseError,
    read_bound,
    read_map,
)
from pytest_taguru.gate.thresholds import bound_problem
from pytest_taguru.score.slices import PER_CASE_NAMES

SLICE_THRESHOLDS_VERSION = 1
DEFAULT_MIN_CASES = 1


class SliceBounds(ThresholdsModel):
    """One slice's gate: bounds on its per-case metrics, judged from ``min_cases`` cases on."""

    min_cases: int = DEFAULT_MIN_CASES
    aggregate: dict[str, Bound] = Field(default_factory=dict)


class SliceThresholdsFile(ThresholdsModel):
    """The whole file (the JSON Schema ``slice-thresholds`` is generated from this model)."""

    taguru_slice_thresholds: int
    slices: dict[str, SliceBounds]


@dataclass(frozen=True)
class SliceThresholds:
    """A validated slice thresholds file, its path and identity (SHA-256 of the raw bytes)."""

    file: SliceThresholdsFile
    path: str
    sha256: str
    warnings: tuple[str, ...] = ()
    """Bounds that cannot mean what they say (a ratio bound outside 0..1), ``<path>: …``."""


# --- reading ---------------------------------------------------------------------------------


def _aggregate(value: Any, where: Where) -> dict[str, Bound]:
    """The thresholds file's aggregate section, read by its own reader; its messages name the
    field already (``… at slices.x.aggregate.recall.mrr``)."""
    path = dotted(where)
    try:
        pairs = list(read_map(value, path))
    except ThresholdsParseError as error:
        raise FieldError(where, str(error), named=True) from None
    bounds: dict[str, Bound] = {}
    for name, item in pairs:
        try:
            bounds[name] = read_bound(item, f"{path}.{name}")
        except ThresholdsParseError as error:
            raise FieldError((*where, name), str(error), named=True) from None
    return bounds


def _min_cases(value: Any, where: Where) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U32_MAX:
        raise FieldError(where, f"expected a whole number of cases, 0 or more, {got(value)}")
    return value


def _slice(value: Any, where: Where) -> SliceBounds:
    found = fields(
        value,
        where,
        {"min_cases": _min_cases, "aggregate": _aggregate},
        shape='a slice\'s gate ({"min_cases": …, "aggregate": {…}})',
    )
    return SliceBounds(**found)


def _slices(value: Any, where: Where) -> dict[str, SliceBounds]:
    pairs = entries(value, where, "an object of slice name → its gate")
    return {name: _slice(item, (*where, name)) for name, item in pairs}


def read_own_document(
    raw: bytes, path: str, readers: Mapping[str, Reader], *, shape: str
) -> dict[str, Any]:
    """The top-level object of one of our own files (every field required), read strictly:
    any problem is a ``UsageError`` naming ``path``, the line and the field (a syntax error:
    serde's ``at line L column C``)."""
    try:
        return fields(parse_own(raw), (), readers, required=tuple(readers), shape=shape)
    except SerdeError as error:
        raise UsageError(f"{path}: {error}") from None
    except FieldError as error:
        raise UsageError(located(path, raw, error)) from None


# --- checking --------------------------------------------------------------------------------


def _problems(
    file: SliceThresholdsFile, slice_names: Collection[str]
) -> list[tuple[FieldError, str | None]]:
    """Every semantic problem (with a hint), in document order: unknown slices, then per
    slice its unknown metric names and invalid bounds (by metric name)."""
    found: list[tuple[FieldError, str | None]] = []
    for name, gate in file.slices.items():
        where: Where = ("slices", name)
        if name not in slice_names:
            listing = f"its slices are {', '.join(slice_names)}" if slice_names else "it has none"
            advice = did_you_mean(name, slice_names) or listing
            hint = f"'{name}' is not a slice of the run — {advice}"
            found.append((FieldError(where, f"unknown slice '{name}'"), hint))
        for metric in sorted(gate.aggregate):
            at: Where = (*where, "aggregate", metric)
            if metric not in PER_CASE_NAMES:
                unknown = f"unknown (or not per-case) metric name '{metric}'"
                found.append((FieldError(at, unknown), name_hint(metric, PER_CASE_NAMES)))
            invalid = bound_problem(gate.aggregate[metric])
            if invalid is not None:
                found.append((FieldError(at, invalid), None))
    return found


def _as_thresholds(gate: SliceBounds) -> ThresholdsFile:
    """A slice's bounds as a thresholds file's aggregate section (its advice applies to them)."""
    return ThresholdsFile(taguru_evaluate_thresholds=1, aggregate=gate.aggregate)


def check_slice_thresholds(
    raw: bytes, *, path: str, slice_names: Collection[str]
) -> SliceThresholds:
    """Parse and validate ``raw`` (read from ``path``) against the run's ``slice_names``.

    Raises ``UsageError``: a parse problem stops at once (``<path>:<line>: …``); semantic
    problems are reported together, joined by ``"; "``, each with its line and field.
    """
    found = read_own_document(
        raw,
        path,
        {"taguru_slice_thresholds": stamp(SLICE_THRESHOLDS_VERSION), "slices": _slices},
        shape='a slice thresholds object ({"taguru_slice_thresholds": 1, "slices": {…}})',
    )
    file = SliceThresholdsFile(**found)
    problems = _problems(file, slice_names)
    if problems:
        refusal = UsageError("; ".join(located(path, raw, error) for error, _ in problems))
        refusal.hints = [f"{path}: {hint}" for _, hint in problems if hint]
        raise refusal
    warnings = tuple(
        f"{path}: slices.{name}.{line}"
        for name, gate in file.slices.items()
        for line in ratio_warnings(_as_thresholds(gate))
    )
    sha256 = hashlib.sha256(raw).hexdigest()
    return SliceThresholds(file=file, path=path, sha256=sha256, warnings=warnings)


def read_own_file(path: str) -> bytes:
    """The bytes of one of our small input files (slices, slice thresholds), at most
    ``MAX_SLICE_FILE_BYTES``; raises ``UsageError``."""
    try:
        return read_bounded(path, MAX_SLICE_FILE_BYTES)
    except UnreadableFile as error:
        raise UsageError(f"cannot read {path}: {error.reason}") from None


def load_slice_thresholds(path: str, *, slice_names: Collection[str]) -> SliceThresholds:
    return check_slice_thresholds(read_own_file(path), path=path, slice_names=slice_names)
