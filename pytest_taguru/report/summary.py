"""The run summary printed after the artifact is written (``evaluate-run.md`` §8.2).

Pure rendering of numbers computed elsewhere (``score.summary.run_summary``); the threshold lines
come from ``gate_report``. Lines keep taguru's own wording so logs read the same.
"""

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.errors import PREFIX
from pytest_taguru.report.assembly import assembly_summary_lines, fixed
from pytest_taguru.report.slices import slice_summary_lines
from pytest_taguru.score.summary import RunSummary


def _mean(value: float | None) -> str:
    return fixed(value, 3)


def summary_lines(
    evaluation: Evaluation,
    summary: RunSummary,
    *,
    partial_run_warning: str | None = None,
    not_written: str | None = None,
) -> list[str]:
    """§8.2 items 1–8: header (and pytest-taguru's replay line), passage/structural counts,
    recall, cross-tab, citations, hook lines, pytest-taguru's per-slice scores
    (``report.slices``) and retry total, the unstable-corpus warning, then the ``wrote`` line.

    ``partial_run_warning`` (pytest-taguru's own, for a run that left cases out) is shown just
    before the ``wrote`` line; ``not_written`` replaces that line with the reason the artifact
    was not written. The artifact's other ``warnings`` (the ``--assembly`` filter
    warnings) are not repeated here: taguru prints them on stderr at start-up only.
    """
    inputs = evaluation.inputs
    lines = [
        f"taguru evaluate: {inputs.url} / context '{inputs.context}'",
        *(
            [f"  replayed from {inputs.replayed}: no request reached a server"]
            if inputs.replayed is not None
            else []
        ),
        f"  {summary.cases} case(s) — passage: {summary.passage_ok} ok, "
        f"{summary.passage_failed} failed; structural lane ran on {summary.structural_cases} "
        f"case(s) ({summary.ambiguous_positions} ambiguous, {summary.not_found_positions} "
        "not-found position(s))",
    ]
    if summary.recall_cases:
        lines.append(
            f"  recall over {summary.recall_cases} case(s): mean recall@k "
            f"{_mean(summary.mean_recall_at_k)}, mean MRR {_mean(summary.mean_mrr)}, "
            f"mean nDCG {_mean(summary.mean_ndcg)}"
        )
    if summary.cross_tab_cases:
        lines.append(
            f"  lane cross-tab over {summary.cross_tab_cases} case(s) declaring both a "
            "structural and a source expectation (passage lane completed): "
            f"{summary.cross_tab_both} both, {summary.cross_tab_neither} neither"
        )
    if summary.citation_cases:
        lines.append(
            f"  citations over {summary.citation_cases} case(s): mean recall "
            f"{_mean(summary.mean_citation_recall)}, mean locator validity "
            f"{_mean(summary.mean_locator_validity)}"
        )
        lines += [
            f"    invalid locator — reproduce with: POST /contexts/{inputs.context}/citations "
            f'{{"source": "{hint.source}", "paragraph": {hint.paragraph}}}'
            for hint in summary.invalid_locators
        ]
        if summary.more_invalid_locators:
            lines.append(f"    ... and {summary.more_invalid_locators} more invalid locator(s)")
    lines += assembly_summary_lines(evaluation)
    lines += slice_summary_lines(evaluation)
    retried = retry_warning(summary)
    if retried is not None:
        lines.append(f"  {retried}")
    if not evaluation.corpus.stable:
        lines.append(
            "  WARNING: the context's revision changed during this run — a write landed "
            "mid-run (corpus.revision_before != corpus.revision_after)"
        )
    if inputs.shard is not None:
        lines.append(
            f"  shard {inputs.shard.index}/{inputs.shard.count} of the eval set's "
            f"{len(inputs.shard.case_ids)} cases: join the shards with taguru-evaluate merge"
        )
    if partial_run_warning is not None:
        lines.append(f"  WARNING: {partial_run_warning}")
    if not_written is None:
        lines.append(f"  wrote {inputs.out}")
    else:
        lines.append(f"  {inputs.out} was not written: {not_written}")
    return lines


def retry_warning(summary: RunSummary) -> str | None:
    """The run total of retried requests (a ``warnings[]`` entry and a summary line), or
    ``None`` when nothing was sent twice."""
    if not summary.retried_requests:
        return None
    return (
        f"retries: {summary.retried_requests} request(s) of {summary.retried_cases} case(s) "
        "were sent again (429/503 answers or connections cut off before an answer); their "
        "latencies are the final attempts'"
    )


REPORT_ONLY_NOTICE = (
    f"{PREFIX}no thresholds file given — this run is report-only: "
    "no quality bound can fail it"
)
