"""The slices in the run summary: each slice's per-case scores, then the slice gate's verdict.

Pure rendering of the artifact's ``slices`` block and the slice gate's report; numbers at the
summary's three decimals, metrics by the thresholds file's names (the registry's per-case
scores, in record order).
"""

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.gate.slices import SliceGateReport, not_judged_line
from pytest_taguru.report.assembly import fixed
from pytest_taguru.score.registry import CASE_SCORES


def slice_summary_lines(evaluation: Evaluation) -> list[str]:
    """``  slices (mean per case):`` and one line per slice: its case count and the mean of
    every per-case score some case of it has; nothing for a run without slices."""
    if evaluation.slices is None:
        return []
    lines = ["  slices (mean per case):"]
    for name, card in evaluation.slices.items():
        scores = [
            f"{metric} {fixed(value.mean, 3)}"
            for metric in CASE_SCORES
            if (value := card.metrics.get(metric)) is not None and value.n
        ]
        tail = f": {', '.join(scores)}" if scores else ""
        lines.append(f"    {name} — {card.n} case(s){tail}")
    return lines


def slice_gate_lines(report: SliceGateReport) -> list[str]:
    """The slice gate's verdict after the thresholds lines: PASS or FAIL with every violation,
    then the slices too small to judge, or why nothing was judged (a partial run)."""
    digest = report.sha256[:12]
    if report.aggregate_skipped is not None:
        return [
            f"  slice thresholds: not judged: {report.aggregate_skipped}; --taguru-gate-partial "
            "judges them on the subset"
        ]
    violations = report.violations or []
    if report.passed:
        lines = [f"  slice thresholds: PASS (sha256 {digest}…)"]
    else:
        lines = [f"  slice thresholds: FAIL — {len(violations)} violation(s) (sha256 {digest}…)"]
    lines += [f"    [slice {v.slice}] {v.metric}: {v.reason}" for v in violations]
    lines += [f"  {not_judged_line(item)}" for item in report.not_judged or []]
    return lines
