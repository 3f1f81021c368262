"""``artifact.case.case_summary``: what the controller keeps of a case until the run ends.
Every run-level number computed from the summaries equals the one computed from the blocks."""

from synthetic_run import synthetic_run

from pytest_taguru.artifact.case import PassageSearched, case_summary
from pytest_taguru.score.metrics import build_extra_metrics, build_metrics
from pytest_taguru.score.slices import slice_cards
from pytest_taguru.score.summary import run_summary

BLOCKS = synthetic_run(300).evaluation.cases


def test_a_summary_drops_the_hits_the_plan_and_the_unjudged_locators() -> None:
    assert any(block.label_coverage and block.label_coverage.unjudged for block in BLOCKS)
    for block in BLOCKS:
        summary = case_summary(block)
        if isinstance(summary.passage, PassageSearched):
            assert summary.passage.hits == [] and summary.passage.plan is None
        if summary.label_coverage is not None:
            assert summary.label_coverage.unjudged == []
            assert block.label_coverage is not None
            assert summary.label_coverage.judged_at_k == block.label_coverage.judged_at_k


def test_every_run_level_number_reads_the_same_from_the_summaries() -> None:
    summaries = [case_summary(block) for block in BLOCKS]
    assert build_metrics(summaries) == build_metrics(BLOCKS)
    assert build_extra_metrics(summaries) == build_extra_metrics(BLOCKS)
    assert run_summary(summaries) == run_summary(BLOCKS)
    globs = {"even": ("case-*[02468]",), "all": ("*",)}
    assert slice_cards(globs, summaries) == slice_cards(globs, BLOCKS)
