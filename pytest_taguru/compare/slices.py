"""Slices in a comparison: each slice both runs carry, its per-case metrics base → head.

The ``slices`` block is pytest-taguru's own (``artifact.evaluation.SliceCard``), so it is read
here tolerantly, apart from taguru's rules for the rest of the file: a run without the block,
or with one this version cannot read, has no slices, and the comparison shows none. The
metrics are ``compare``'s classification metrics (the registry's per-case ones, timings left
out as too noisy), each slice's headline being its distribution's mean.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from pytest_taguru.artifact.evaluation import SliceCard
from pytest_taguru.artifact.view import LoadedRun
from pytest_taguru.compare.classify import AggregateDiff, ChangeReport
from pytest_taguru.core.serde import SerdeError, check_every_string
from pytest_taguru.score.registry import COMPARISON_METRICS
from pytest_taguru.score.slices import resolve_slices


@dataclass(frozen=True)
class SliceDiff:
    """One slice of both runs: its case counts, whether its globs are the same, and the metrics
    a side has a value of (record order)."""

    name: str
    cases_base: int
    cases_head: int
    same_globs: bool
    metrics: tuple[AggregateDiff, ...]


def read_cards(run: LoadedRun) -> dict[str, SliceCard] | None:
    """The run's scorecards, or ``None`` when it carries none it can be compared on."""
    block = run.slices
    if not isinstance(block, Mapping):
        return None
    try:
        check_every_string(block)  # names and globs are printed
        return {str(name): SliceCard.model_validate(card) for name, card in block.items()}
    except (SerdeError, ValidationError):
        return None


def slice_members(run: LoadedRun) -> dict[str, tuple[str, ...]] | None:
    """Slice name → the run's case ids its globs match (``score.slices``' rule), for the
    slices the run carries; ``None`` when it carries none."""
    cards = read_cards(run)
    if not cards:
        return None
    globs = {name: card.globs for name, card in cards.items()}
    return resolve_slices(globs, (case.case_id for case in run.view.cases))


def _mean(card: SliceCard, metric: str) -> float | None:
    value = card.metrics.get(metric)
    return None if value is None else value.mean


def slice_diff(name: str, base: SliceCard, head: SliceCard) -> SliceDiff:
    diffs = []
    for metric in COMPARISON_METRICS:
        b, h = _mean(base, metric), _mean(head, metric)
        if b is None and h is None:
            continue
        delta = h - b if b is not None and h is not None else None
        diffs.append(AggregateDiff(metric, "distribution", b, h, delta))
    return SliceDiff(name, base.n, head.n, base.globs == head.globs, tuple(diffs))


def slice_diffs(report: ChangeReport) -> tuple[SliceDiff, ...]:
    """Every slice both runs carry, in HEAD's order; none when either carries no slices."""
    base, head = read_cards(report.base), read_cards(report.head)
    if base is None or head is None:
        return ()
    return tuple(slice_diff(name, base[name], card) for name, card in head.items() if name in base)
