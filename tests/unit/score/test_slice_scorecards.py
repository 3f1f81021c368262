"""Slice membership and scorecards: the run-level code, over each slice's cases."""

from fnmatch import fnmatchcase

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_run import synthetic_run

from pytest_taguru.artifact.evaluation import Distribution, Evaluation, parse_evaluation
from pytest_taguru.artifact.writing import render
from pytest_taguru.score.metrics import build_metrics
from pytest_taguru.score.registry import METRICS
from pytest_taguru.score.slices import PER_CASE_METRICS, resolve_slices, slice_card, slice_cards

IDS = ["history-founding", "history-wartime", "products-lineup", "pairing-kan", "miss-x", "H-1"]


def test_membership_follows_the_dataset_order_and_a_case_may_be_in_several_slices() -> None:
    globs = {"drinks": ["pairing-*", "products-*"], "history": ["history-*"], "h": ["[hH]*"]}
    assert resolve_slices(globs, IDS) == {
        "drinks": ("products-lineup", "pairing-kan"),
        "history": ("history-founding", "history-wartime"),
        "h": ("history-founding", "history-wartime", "H-1"),
    }


def test_globs_are_fnmatch_globs_matched_case_sensitively() -> None:
    globs = {
        "upper": ["H-?"],
        "not-history": ["[!h]*"],
        "exact": ["miss-x"],
        "nothing": ["History-*", "miss-"],
    }
    assert resolve_slices(globs, IDS) == {
        "upper": ("H-1",),
        "not-history": ("products-lineup", "pairing-kan", "miss-x", "H-1"),
        "exact": ("miss-x",),
        "nothing": (),
    }


GLOB = st.text(alphabet="ab*?[]!-", min_size=1, max_size=5)
CASE_ID = st.text(alphabet="ab-[]!*?", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(globs=st.lists(GLOB, min_size=1, max_size=3), ids=st.lists(CASE_ID, max_size=8))
def test_a_slice_holds_exactly_the_ids_some_glob_matches(globs: list[str], ids: list[str]) -> None:
    expected = tuple(case_id for case_id in ids if any(fnmatchcase(case_id, g) for g in globs))
    assert resolve_slices({"s": globs}, ids) == {"s": expected}


def test_the_scorecard_metrics_are_the_registry_per_case_ones() -> None:
    names = {metric.name for metric in PER_CASE_METRICS}
    assert names == {metric.name for metric in METRICS if metric.case_path is not None}
    assert len(names) == 10


def test_a_scorecard_holds_what_the_run_level_code_computes_for_the_same_cases() -> None:
    run = synthetic_run(60)
    cases = run.evaluation.cases
    subset = [case for case in cases if case.case_id.endswith(("1", "4", "7"))]
    card = slice_card(["*1", "*4", "*7"], subset)
    run_level = build_metrics(subset)
    assert card.n == len(subset) == 18
    assert card.globs == ["*1", "*4", "*7"]
    assert list(card.metrics) == sorted(card.metrics, key=str.encode)
    for name, value in card.metrics.items():
        assert isinstance(value, Distribution)
        assert value == run_level[name], name


def test_a_slice_of_every_case_is_the_run() -> None:
    run = synthetic_run(40)
    cards = slice_cards({"all": ["*"], "none": ["nope"]}, run.evaluation.cases)
    for name, value in cards["all"].metrics.items():
        assert value == run.evaluation.metrics[name]
    assert cards["none"].n == 0
    assert all(value == Distribution(n=0) for value in cards["none"].metrics.values())


def test_the_block_is_written_and_read_back_and_absent_without_slices() -> None:
    run = synthetic_run(30)
    # Read once: serde's float reader is not correctly rounded (N.2), so a 17-digit number
    # may come back a bit off; what was read once is written and read again unchanged.
    plain = render(run.evaluation)
    assert '"slices"' not in plain and '"slice_thresholds"' not in plain
    read_once = render(parse_evaluation(plain))
    assert render(parse_evaluation(read_once)) == read_once
    cards = slice_cards({"even": ["*[02468]"]}, run.evaluation.cases)
    sliced = run.evaluation.model_copy(update={"slices": cards})
    text = render(sliced)
    assert text.startswith(plain[: plain.rindex("\n}")])  # the slices block comes last
    again: Evaluation = parse_evaluation(text)
    assert again.slices is not None and list(again.slices) == ["even"]
    card, written = again.slices["even"], cards["even"]
    assert (card.globs, card.n, list(card.metrics)) == (written.globs, 15, list(written.metrics))
    for name, value in card.metrics.items():
        # serde's float reader is not correctly rounded: the last bit may differ (N.2).
        for key, number in value.model_dump().items():
            expected = getattr(written.metrics[name], key)
            assert number == (expected if expected is None else pytest.approx(expected, 1e-15))
