"""Label gaps: a regressed case whose drop may only be missing labels (pytest-taguru's own).

A retrieval change that surfaces good but unlabelled passages pushes the labelled ones down and
looks like a regression. A regressed case is a **label gap** when

* every metric that moved down is a ranking metric the labels decide (recall@k, MRR, nDCG —
  not coverage, citations or diversity), and
* HEAD's hits hold at least one unjudged locator that BASE's did not hold unjudged (a hit new
  to the top k, or one whose label is gone) — read from both sides' ``label_coverage``.

Its record keeps taguru's ``kind`` (``regressed``) and gains a ``label_gap`` key; the verdict is
"label first, then judge": ``taguru-evaluate unjudged HEAD.json`` queues the hits to label. An
artifact without ``label_coverage`` (taguru's own) never yields a label gap.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_taguru.artifact.view import CaseView
from pytest_taguru.score.registry import RECALL

LABEL_DECIDED = frozenset(metric.name for metric in RECALL)
"""The metrics unjudged hits can move: recall@k, MRR, nDCG."""


@dataclass(frozen=True)
class LabelGap:
    """Why a regressed case is a label gap: how many unjudged hits are new in HEAD, and
    judged@k on each side."""

    new_unjudged: int
    judged_at_k_base: float | None
    judged_at_k_head: float | None


def label_gap(moved_down: Sequence[str], base: CaseView, head: CaseView) -> LabelGap | None:
    """The label gap of a regressed case whose metrics ``moved_down``, or ``None``."""
    if not moved_down or not set(moved_down) <= LABEL_DECIDED:
        return None
    before, after = base.label_coverage, head.label_coverage
    if before is None or after is None:
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
    return frozenset(metric for metric, gap_only in blamed.items() if gap_only) & LABEL_DECIDED
