"""A synthetic run with slices and a slice gate: its scorecards and the gate's report."""

import json
from typing import Any

from synthetic_run import SyntheticRun

from pytest_taguru.gate.slice_file import check_slice_thresholds
from pytest_taguru.gate.slices import evaluate_slice_gate
from pytest_taguru.score.slices import slice_cards

GLOBS = {
    "early": ["case-00000*", "case-00001*"],
    "sevens": ["*7"],
    "small": ["case-000003"],
    "empty": ["nothing-*"],
}
"""Over the synthetic case ids (``case-000000`` …)."""


def sliced_run(
    run: SyntheticRun, slice_bounds: dict[str, Any] | None = None, globs: dict[str, Any] = GLOBS
) -> SyntheticRun:
    """``run`` with the scorecards of ``globs`` and, given ``slice_bounds`` (a slice thresholds
    file's ``slices``), its slice gate's report."""
    evaluation = run.evaluation
    cards = slice_cards(globs, evaluation.cases)
    update: dict[str, Any] = {"slices": cards}
    if slice_bounds is not None:
        raw = json.dumps({"taguru_slice_thresholds": 1, "slices": slice_bounds}).encode()
        thresholds = check_slice_thresholds(raw, path="st.json", slice_names=list(globs))
        update["slice_thresholds"] = evaluate_slice_gate(thresholds, cards).to_block()
    return SyntheticRun(evaluation.model_copy(update=update), run.eval_set)
