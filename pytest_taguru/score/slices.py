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
from pytest_taguru.score.populations import RunCases
from pytest_taguru.score.registry import METRICS
from pytest_taguru.score.shapes import byte_order

PER_CASE_METRICS = tuple(metric for metric in METRICS if metric.case_path is not None)
"""The metrics with one value per case (the registry's case-scoped ones), in record order:
what a scorecard holds and what a slice thresholds file may bound."""
PER_CASE_NAMES = tuple(metric.name for metric in PER_CASE_METRICS)


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


def slice_card(globs: Sequence[str], cases: Sequence[CaseBlock]) -> SliceCard:
    """The scorecard of the slice defined by ``globs`` holding ``cases``: metrics in byte
    order, as in the run-level block."""
    run = RunCases(cases)
    by_name = {metric.name: metric for metric in PER_CASE_METRICS}
    metrics: dict[str, Distribution] = {}
    for name in byte_order(by_name):
        value = by_name[name].value(run)
        assert isinstance(value, Distribution), f"{name} is not drawn per case"
        metrics[name] = value
    return SliceCard(globs=list(globs), n=len(cases), metrics=metrics)


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
