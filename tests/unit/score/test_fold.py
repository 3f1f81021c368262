"""``score.fold.RunFold``: the run-level numbers gathered one case block at a time equal the
batch functions' over the whole list (what the controller's streaming finish relies on)."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_run import synthetic_run
from test_metrics import assembly_run

from pytest_taguru.artifact.case import CaseBlock, case_summary
from pytest_taguru.score.fold import RunFold
from pytest_taguru.score.metrics import build_extra_metrics, build_metrics
from pytest_taguru.score.slices import slice_cards
from pytest_taguru.score.summary import run_summary

BLOCKS = synthetic_run(300).evaluation.cases
GLOBS = {"even": ("case-*[02468]",), "all": ("*",), "none": ("nothing-*",)}


def assert_fold_matches_batch(cases: list[CaseBlock], *, rerank: bool = False) -> None:
    fold = RunFold.of(cases, rerank_requested=rerank, slices=GLOBS)
    assert fold.metrics() == build_metrics(cases, rerank_requested=rerank)
    assert list(fold.metrics()) == list(build_metrics(cases))  # byte-wise key order
    assert fold.extra_metrics() == build_extra_metrics(cases)
    assert fold.summary() == run_summary(cases)
    assert fold.slice_cards() == slice_cards(GLOBS, cases)


def test_a_synthetic_run_folds_to_its_batch_numbers() -> None:
    assert any(block.structural for block in BLOCKS) and any(block.citations for block in BLOCKS)
    assert_fold_matches_batch(BLOCKS)
    assert_fold_matches_batch([case_summary(block) for block in BLOCKS])


def test_the_assembly_run_folds_to_its_batch_numbers_with_and_without_rerank() -> None:
    # A run's case ids are distinct (the batch scorecards key the cases by id).
    cases = [
        case.model_copy(update={"case_id": f"case-{index}"})
        for index, case in enumerate(assembly_run())
    ]
    assert_fold_matches_batch(cases, rerank=True)
    assert_fold_matches_batch(cases)


def test_an_empty_fold_is_an_empty_run() -> None:
    assert_fold_matches_batch([])
    assert RunFold().slice_cards() is None


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=0, max_value=300))
def test_metrics_do_not_depend_on_the_order_cases_come_in(rng: random.Random, size: int) -> None:
    cases = rng.sample(BLOCKS, size)
    shuffled = rng.sample(cases, len(cases))
    assert RunFold.of(shuffled).metrics() == build_metrics(cases)
    assert RunFold.of(shuffled).extra_metrics() == build_extra_metrics(cases)
