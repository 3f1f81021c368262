"""Label gaps: a regressed case whose drop may only be missing labels (pytest-taguru's own).

A retrieval change that surfaces good but unlabelled passages pushes the labelled ones down and
looks like a regression. A regressed case is a **label gap** when

* every metric that moved down is a ranking metric the labels decide (recall@k, MRR, nDCG —
  not coverage, citations or diversity);
* HEAD's hits hold at least one unjudged locator that BASE's did not hold unjudged (a hit new
  to the top k, or one whose label is gone): the drop coincides with new unjudged hits;
* labelling could undo it: for each metric that moved down, HEAD's greatest value over every
  labelling of its unjudged hits (``label_coverage``'s ``high``) reaches BASE's value. A
  labelled passage that left the top k is a real loss this way (new labels raise recall's
  denominator too), one pushed down by unlabelled newcomers is not.

Both sides' ``label_coverage`` is read; an artifact without it (taguru's own) never yields a
label gap. The record keeps taguru's ``kind`` (``regressed``) and gains a ``label_gap`` key;
the verdict is "label first, then judge": ``taguru-evaluate unjudged HEAD.json`` queues the
hits to label.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_taguru.artifact.view import CaseView, HighView, LabelCoverageView
from pytest_taguru.score.registry import RECALL

if TYPE_CHECKING:
    from pytest_taguru.compare.classify import MetricChange

LABEL_DECIDED = {
    metric.name: metric.case_path[-1] for metric in RECALL if metric.case_path is not None
}
"""The metrics unjudged hits can move (recall@k, MRR, nDCG), and their key in
``label_coverage``."""


@dataclass(frozen=True)
class LabelGap:
    """Why a regressed case is a label gap: how many unjudged hits are new in HEAD, and
    judged@k on each side."""

    new_unjudged: int
    judged_at_k_base: float | None
    judged_at_k_head: float | None


def _high(coverage: LabelCoverageView, metric: str) -> float | None:
    bounds: HighView | None = getattr(coverage, LABEL_DECIDED[metric])
    return None if bounds is None else bounds.high


def label_gap(
    moved_down: "Sequence[MetricChange]", base: CaseView, head: CaseView, *, epsilon: float
) -> LabelGap | None:
    """The label gap of a regressed case whose metrics ``moved_down``, or ``None``; a bound
    within ``epsilon`` (compare's) of BASE's value reaches it."""
    before, after = base.label_coverage, head.label_coverage
    if not moved_down or before is None or after is None:
        return None
    for change in moved_down:
        if change.metric not in LABEL_DECIDED or change.base is None:
            return None
        high = _high(after, change.metric)
        if high is None or high < change.base - epsilon:
            return None
    unjudged_before = {(hit.source, hit.paragraph) for hit in before.unjudged}
    new = sum((hit.source, hit.paragraph) not in unjudged_before for hit in after.unjudged)
    if not new:
        return None
    return LabelGap(new, before.judged_at_k, after.judged_at_k)


def excused_aggregates(
    gaps: Mapping[str, LabelGap], moved_down: Mapping[str, Sequence[str]]
) -> frozenset[str]:
    """The label-decided metrics whose worse aggregate ``--fail-on-regression`` forgives: every
    case that moved down on them (``moved_down``: case_id → metrics) is a label gap. Cases
    added or removed are not weighed."""
    blamed: dict[str, bool] = {}
    for case_id, metrics in moved_down.items():
        for metric in metrics:
            blamed[metric] = blamed.get(metric, True) and case_id in gaps
    return frozenset(metric for metric, gap_only in blamed.items() if gap_only) & set(
        LABEL_DECIDED
    )
