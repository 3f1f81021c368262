"""Per-slice scorecards: which cases each slice holds, and its per-case metrics over them.

Pure. Membership is resolved against the run's case ids in dataset order
(:func:`resolve_slices`, also what paired statistics per slice take); a scorecard holds the
slice's case count and, for every metric the registry draws per case, the very distribution
the run-level ``metrics`` block computes (``Metric.value``), over the slice's cases only.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import translate

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import Distribution, SliceCard
from pytest_taguru.score.metric_kind import MetricTally
from pytest_taguru.score.populations import RunCases
from pytest_taguru.score.registry import METRICS
from pytest_taguru.score.shapes import byte_order

PER_CASE_METRICS = tuple(metric for metric in METRICS if metric.case_path is not None)
"""The metrics with one value per case (the registry's case-scoped ones), in record order:
what a scorecard holds and what a slice thresholds file may bound."""
PER_CASE_NAMES = tuple(metric.name for metric in PER_CASE_METRICS)
_BY_NAME = {metric.name: metric for metric in PER_CASE_METRICS}


def _matcher(globs: Sequence[str]) -> re.Pattern[str]:
    """One pattern matching a case id that any of ``globs`` matches (``fnmatchcase`` rules)."""
    return re.compile("|".join(f"(?:{translate(glob)})" for glob in globs))


def resolve_slices(
    globs: Mapping[str, Sequence[str]], case_ids: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """Slice name → the case ids its globs match, in the order of ``case_ids`` (the dataset's);
    every slice is a key, in the order of ``globs``, one matching nothing with ``()``. A case
    may be in several slices."""
    ids = list(case_ids)
    matchers = {name: _matcher(patterns) for name, patterns in globs.items()}
    return {
        name: tuple(case_id for case_id in ids if matcher.match(case_id))
        for name, matcher in matchers.items()
    }


class SliceTally:
    """One slice's scorecard gathered a part of the run at a time (``score.fold``)."""

    def __init__(self, globs: Sequence[str]) -> None:
        self.globs = list(globs)
        self.matcher = _matcher(globs)
        self._n = 0
        self._tallies = {name: MetricTally(_BY_NAME[name]) for name in byte_order(_BY_NAME)}

    def add(self, run: RunCases) -> None:
        """Count the cases of ``run`` in (they are the slice's: no membership check here)."""
        self._n += len(run.blocks)
        for tally in self._tallies.values():
            tally.add(run)

    def card(self) -> SliceCard:
        """The scorecard: metrics in byte order, as in the run-level block."""
        metrics: dict[str, Distribution] = {}
        for name, tally in self._tallies.items():
            value = tally.value()
            assert isinstance(value, Distribution), f"{name} is not drawn per case"
            metrics[name] = value
        return SliceCard(globs=self.globs, n=self._n, metrics=metrics)


def slice_card(globs: Sequence[str], cases: Sequence[CaseBlock]) -> SliceCard:
    """The scorecard of the slice defined by ``globs`` holding ``cases``."""
    tally = SliceTally(globs)
    tally.add(RunCases(cases))
    return tally.card()


def slice_cards(
    globs: Mapping[str, Sequence[str]], cases: Sequence[CaseBlock]
) -> dict[str, SliceCard]:
    """The ``slices`` block: every slice's scorecard over the run's case blocks (in dataset
    order), slices in declaration order."""
    by_id = {case.case_id: case for case in cases}
    membership = resolve_slices(globs, by_id)
    return {
        name: slice_card(globs[name], [by_id[case_id] for case_id in members])
        for name, members in membership.items()
    }
