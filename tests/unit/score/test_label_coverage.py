"""Label coverage (``score.label_coverage``): judged@k, the metric bounds over every labelling,
and the single-label swing, against worked examples computed by hand and against brute force
through the real scorer (``score_recall``) on the eval set ``label-merge`` would write."""

import itertools
import json
import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.artifact.case import HitLocator, PassageSearched, Recall
from pytest_taguru.artifact.evaluation import Evaluation, parse_evaluation
from pytest_taguru.artifact.writing import render, to_jsonable
from pytest_taguru.core.serde import read_json
from pytest_taguru.run.eval_models import EvalCase, ExpectedSource
from pytest_taguru.score.case import LaneResults, build_case_block, judgements, score_recall
from pytest_taguru.score.label_coverage import (
    Judgements,
    label_swing,
    mrr_bounds,
    ndcg_bounds,
    recall_bounds,
)
from pytest_taguru.score.metrics import build_extra_metrics, build_metrics, definitions
from pytest_taguru.score.registry import (
    CASE_SCOPED_METRICS,
    CASE_SCORES,
    COMPARISON_METRICS,
    EXTRA_METRICS,
    METRICS,
    METRICS_BY_NAME,
)


def hit(source: str, paragraph: int = 0) -> HitLocator:
    return HitLocator(source=source, paragraph=paragraph, score=1.0)


def expect(source: str, paragraphs: Sequence[int] = (), relevance: int = 1) -> ExpectedSource:
    return ExpectedSource(source=source, paragraphs=list(paragraphs), relevance=relevance)


def scored(hits: list[HitLocator], expected: list[ExpectedSource]) -> tuple[Judgements, Recall]:
    judged, official = judgements(hits, expected), score_recall(hits, expected)
    assert judged is not None and official is not None
    return judged, official


# --- judged@k ----------------------------------------------------------------------------------


def test_judged_at_k_counts_source_and_paragraph_labels_relevance_zero_included() -> None:
    # a#0 is labelled through a's paragraph list, b#4 through b's whole-source entry of
    # relevance 0; a#1 (a names paragraphs, not 1) and c#0 carry no label: 2 of 4 judged.
    hits = [hit("a", 0), hit("a", 1), hit("b", 4), hit("c", 0)]
    expected = [expect("a", [0], 2), expect("b", relevance=0)]
    judged = judgements(hits, expected)
    assert judged is not None
    assert (judged.hits, judged.judged, judged.judged_at_k) == (4, 2, 0.5)
    assert [(u.rank, u.source, u.paragraph) for u in judged.unjudged] == [(2, "a", 1), (4, "c", 0)]


def test_a_repeated_unjudged_locator_is_listed_once_at_its_first_rank() -> None:
    judged = judgements([hit("x"), hit("a"), hit("x")], [expect("a")])
    assert judged is not None
    assert (judged.hits, judged.judged) == (3, 1)
    assert [(u.rank, u.source) for u in judged.unjudged] == [(1, "x")]


def test_judged_at_k_without_hits_or_without_labels() -> None:
    judged = judgements([], [expect("a")])
    assert judged is not None and judged.judged_at_k is None
    assert judgements([hit("a")], []) is None  # no expected_sources: no label coverage at all


# --- bounds: worked examples -------------------------------------------------------------------


def test_recall_and_mrr_bounds_worked_example() -> None:
    # m = 2 graded entries, a matched at rank 2 (0-based), b missed; two unjudged locators at
    # ranks 0 and 1. recall: low 1/2, high (1 + 2) / (2 + 2) = 3/4. MRR: low 1/3, high 1.
    judged, official = scored([hit("x"), hit("y"), hit("a")], [expect("a"), expect("b")])
    assert recall_bounds(judged, official).model_dump() == {"low": 0.5, "high": 0.75}
    assert mrr_bounds(judged, official).model_dump() == {"low": 1 / 3, "high": 1.0}


def test_ndcg_can_fall_below_the_official_value_worked_example() -> None:
    # a (relevance 3) at rank 0: nDCG 1. The unjudged hit at rank 5 graded 3 gives
    # (3 + 3/log2 7) / (3 + 3/log2 3) = 0.83155; graded 0 keeps 1.
    hits = [hit("a"), *(hit("j", p) for p in range(4)), hit("x")]
    judged, official = scored(hits, [expect("a", relevance=3), expect("j", relevance=0)])
    bounds = ndcg_bounds(judged, official)
    expected_low = (3 + 3 / math.log2(7)) / (3 + 3 / math.log2(3))
    assert bounds.low == pytest.approx(expected_low, abs=1e-15)
    assert round(bounds.low, 5) == 0.83155
    assert bounds.high == 1.0


def test_ndcg_high_worked_example() -> None:
    # a (relevance 1) at rank 2: DCG 1/2, nDCG 1/2. Grading the unjudged rank-0 hit 3 gives
    # (3 + 1/2) / (3 + 1/log2 3) = 0.96394; lower grades give less (0.91966 for grade 1).
    judged, official = scored(
        [hit("x"), hit("j"), hit("a")], [expect("a"), expect("j", relevance=0)]
    )
    bounds = ndcg_bounds(judged, official)
    assert bounds.low == 0.5
    assert bounds.high == pytest.approx(3.5 / (3 + 1 / math.log2(3)), abs=1e-15)


def test_without_unjudged_hits_the_bounds_are_the_official_values() -> None:
    judged, official = scored([hit("a"), hit("b")], [expect("a"), expect("b", relevance=0)])
    for bounds, value in (
        (recall_bounds(judged, official), official.recall_at_k),
        (mrr_bounds(judged, official), official.mrr),
        (ndcg_bounds(judged, official), official.ndcg),
    ):
        assert (bounds.low, bounds.high) == (value, value)


def test_an_unmatched_case_has_no_negative_zero_bound() -> None:
    judged, official = scored([hit("x")], [expect("a")])
    assert math.copysign(1.0, official.ndcg) == -1.0  # taguru's -0.0
    bounds = ndcg_bounds(judged, official)
    assert math.copysign(1.0, bounds.low) == 1.0
    # x graded 3 at rank 0, a (relevance 1) missed: 3 / (3 + 1/log2 3).
    assert bounds.high == pytest.approx(3 / (3 + 1 / math.log2(3)), abs=1e-15)


# --- bounds: brute force through the real scorer -----------------------------------------------


def labelled_scores(
    hits: list[HitLocator], expected: list[ExpectedSource], judged: Judgements
) -> list[Recall]:
    """score_recall under every labelling of the unjudged locators, each label an entry of its
    own (``{"source", "paragraphs": [p], "relevance": g}``, as label-merge writes it)."""
    results = []
    for grades in itertools.product(range(4), repeat=len(judged.unjudged)):
        labels = [
            expect(u.source, [u.paragraph], grade)
            for u, grade in zip(judged.unjudged, grades, strict=True)
        ]
        result = score_recall(hits, [*expected, *labels])
        assert result is not None
        results.append(result)
    return results


locators = st.tuples(st.sampled_from("abcdefg"), st.integers(0, 2))
entries = st.lists(
    st.tuples(
        st.sampled_from("abcdef"), st.lists(st.integers(0, 2), max_size=2), st.integers(0, 3)
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(served=st.lists(locators, max_size=8), declared=entries)
def test_bounds_are_the_least_and_greatest_value_over_every_labelling(
    served: list[tuple[str, int]], declared: list[tuple[str, list[int], int]]
) -> None:
    hits = [hit(source, paragraph) for source, paragraph in served]
    expected = [expect(source, paragraphs, relevance) for source, paragraphs, relevance in declared]
    judged = judgements(hits, expected)
    official = score_recall(hits, expected)
    assert judged is not None
    if official is None or len(judged.unjudged) > 4:
        return
    every = labelled_scores(hits, expected, judged)
    for bounds, field in (
        (recall_bounds(judged, official), "recall_at_k"),
        (mrr_bounds(judged, official), "mrr"),
        (ndcg_bounds(judged, official), "ndcg"),
    ):
        values = [getattr(result, field) for result in every]
        assert bounds.low == pytest.approx(min(values), abs=1e-12), field
        assert bounds.high == pytest.approx(max(values), abs=1e-12), field
        assert bounds.low <= getattr(official, field) <= bounds.high


@settings(max_examples=200, deadline=None)
@given(served=st.lists(locators, min_size=1, max_size=8), declared=entries)
def test_a_swing_is_the_spread_one_label_alone_can_cause(
    served: list[tuple[str, int]], declared: list[tuple[str, list[int], int]]
) -> None:
    hits = [hit(source, paragraph) for source, paragraph in served]
    expected = [expect(source, paragraphs, relevance) for source, paragraphs, relevance in declared]
    judged = judgements(hits, expected)
    assert judged is not None
    official = score_recall(hits, expected)
    for index, unjudged in enumerate(judged.unjudged):
        outcomes = [
            score_recall(hits, [*expected, expect(unjudged.source, [unjudged.paragraph], grade)])
            for grade in range(4)
        ]
        spread = 0.0
        for field in ("recall_at_k", "mrr", "ndcg"):
            values = [0.0 if o is None else getattr(o, field) for o in outcomes]
            spread += max(values) - min(values)
        assert label_swing(judged, official, index) == pytest.approx(spread, abs=1e-12)


def test_swing_worked_example() -> None:
    # a (relevance 1) at rank 2: recall 1, MRR 1/3, nDCG 1/2; x at rank 0 graded 0..3:
    # recall stays 1, MRR 1/3 → 1, nDCG 0.5 → 0.96394: swing 2/3 + 0.46394.
    judged, official = scored(
        [hit("x"), hit("j"), hit("a")], [expect("a"), expect("j", relevance=0)]
    )
    assert label_swing(judged, official, 0) == pytest.approx(1.13060709998332, abs=1e-12)


def test_swing_of_a_case_without_graded_entries_counts_from_zero() -> None:
    judged = judgements([hit("j"), hit("x")], [expect("j", relevance=0)])
    assert judged is not None
    # x at rank 1 (0-based): recall 1, MRR 1/2, nDCG 1/log2 3.
    assert label_swing(judged, None, 0) == pytest.approx(1 + 1 / 2 + 1 / math.log2(3))


# --- the case block ----------------------------------------------------------------------------


def test_the_case_block_carries_label_coverage_after_taguru_s_keys() -> None:
    case = EvalCase(
        case_id="c",
        query="q",
        expected_sources=[expect("a", [0], 3), expect("b", relevance=0)],
    )
    passage = PassageSearched(hits=[hit("x"), hit("a"), hit("b", 2)])
    block = build_case_block(case, LaneResults(passage=passage, structural=None, checks=None))
    written = to_jsonable(block)
    assert list(written)[-1] == "label_coverage"
    assert written["label_coverage"] == {
        "hits": 3,
        "judged": 2,
        "judged_at_k": 2 / 3,
        "unjudged": [{"rank": 1, "source": "x", "paragraph": 0}],
        "recall_at_k": {"low": 1.0, "high": 1.0},
        "mrr": {"low": 0.5, "high": 1.0},
        "ndcg": {"low": pytest.approx(0.63093, abs=1e-5), "high": 1.0},
    }


def test_no_label_coverage_without_expected_sources_or_a_search() -> None:
    case = EvalCase(case_id="c", query="q", expected_concepts=["x"])
    passage = PassageSearched(hits=[hit("x")])
    block = build_case_block(case, LaneResults(passage=passage, structural=None, checks=None))
    assert block.label_coverage is None


# --- the extra metrics: outside taguru's 31 ----------------------------------------------------


def test_the_extra_metrics_stay_out_of_every_list_derived_from_the_31() -> None:
    extra = {metric.name for metric in EXTRA_METRICS}
    bounds = [f"{m}_{side}" for m in ("recall_at_k", "mrr", "ndcg") for side in ("low", "high")]
    assert extra == {f"label_coverage.{name}" for name in ["judged_at_k", *bounds]}
    assert len(METRICS) == 31
    derived = (METRICS_BY_NAME, CASE_SCOPED_METRICS, COMPARISON_METRICS, CASE_SCORES)
    for names in (*derived, definitions()):
        assert not extra & set(names)
    assert not any(metric.compared for metric in EXTRA_METRICS)


def test_the_artifact_carries_them_in_extra_metrics_after_taguru_s_blocks() -> None:
    case = EvalCase(case_id="c", query="q", expected_sources=[expect("a", relevance=2)])
    passage = PassageSearched(hits=[hit("x"), hit("a")])
    block = build_case_block(case, LaneResults(passage=passage, structural=None, checks=None))
    evaluation = Evaluation(
        taguru_evaluation=1,
        definitions=definitions(),
        cases=[block],
        metrics=build_metrics([block]),
        extra_metrics=build_extra_metrics([block]),
    )
    written = read_json(render(evaluation))
    assert list(written)[-2:] == ["metrics", "extra_metrics"]
    assert list(written["metrics"]) == list(definitions())
    extra = written["extra_metrics"]
    assert list(extra) == ["definitions", "metrics"]
    assert list(extra["metrics"]) == sorted(extra["metrics"], key=str.encode)
    assert extra["definitions"]["label_coverage.judged_at_k"]["statistic"] == "distribution"
    assert extra["metrics"]["label_coverage.judged_at_k"]["mean"] == 0.5
    assert extra["metrics"]["label_coverage.mrr_low"]["mean"] == 0.5
    assert extra["metrics"]["label_coverage.mrr_high"]["mean"] == 1.0
    assert parse_evaluation(render(evaluation)) == evaluation


def test_a_malformed_extension_reads_as_absent_as_taguru_ignores_it() -> None:
    text = json.dumps(
        {
            "taguru_evaluation": 1,
            "cases": [{"case_id": "c", "query": "q", "passage": {"outcome": "searched"},
                       "label_coverage": {"hits": "many"}}],
            "extra_metrics": {"metrics": 3},
        }
    )  # fmt: skip
    evaluation = parse_evaluation(text)
    assert evaluation.extra_metrics is None
    assert evaluation.cases[0].label_coverage is None
