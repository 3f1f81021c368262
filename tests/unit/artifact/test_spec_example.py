"""The complete example of evaluate-run.md §7.8, rebuilt from its inputs and server responses.

The eval cases are the two case lines of §2.6; the lane results are what the §7.8 responses
and latencies produce. Scoring and metrics must reproduce the golden ``cases`` and ``metrics``
byte for byte, and the §8.2 summary numbers.
"""

import json
from typing import Any

import pytest
from paths import SPEC_7_8_EVALUATION

from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    CheckUnresolved,
    CueResolution,
    PassageSearched,
    PositionAmbiguous,
    PositionResolved,
    QuoteCheck,
    SectionMatched,
    Structural,
)
from pytest_taguru.artifact.evaluation import Evaluation, parse_evaluation
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.jsontext import dumps_pretty
from pytest_taguru.core.text import normalize_entry, trim
from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.score.case import LaneResults, build_case_block, served_locators
from pytest_taguru.score.metrics import build_metrics
from pytest_taguru.score.summary import InvalidLocator, run_summary

GOLDEN = SPEC_7_8_EVALUATION

CASE_LINES = [
    '{"case_id":"brand-origin-001","query":"青嶺はどこの蔵の酒か","cues":["青嶺"],'
    '"expected_sources":[{"source":"corpus/brewery.md","paragraphs":[0],"relevance":3},'
    '{"source":"corpus/history.md"}],"expected_concepts":["青嶺酒造"],'
    '"expected_citations":[{"source":"corpus/brewery.md","paragraph":0,"section":"沿革",'
    '"quote":"1897年に創業"}],"options":{"limit":3}}',
    '{"case_id":"pairing-002","query":"青嶺に合う料理","expected_sources":'
    '[{"source":"corpus/pairing.md","relevance":2},{"source":"corpus/menu.md"}],'
    '"expected_associations":[{"subject":"青嶺","label":"合う","object":"焼き魚"}],'
    '"expected_citations":[{"source":"corpus/pairing.md","paragraph":5,"section":null}]}',
]

PLAN = {
    "context": "sake",
    "lanes": {"bm25": {"ran": True}, "vector": {"ran": True, "floor": 0.35}},
}
SEARCH_1 = [  # response #7
    {"source": "corpus/history.md", "paragraph": 2, "score": 0.032786883, "text": "…",
     "lanes": {"bm25": {"rank": 1, "score": 6.84}, "vector": {"rank": 1, "score": 0.74}}},
    {"source": "corpus/brewery.md", "paragraph": 0, "score": 0.032258064, "text": "…",
     "lanes": {"bm25": {"rank": 2, "score": 5.91}, "vector": {"rank": 2, "score": 0.71}}},
    {"source": "corpus/products.md", "paragraph": 1, "score": 0.015873017, "text": "…",
     "lanes": {"bm25": {"rank": 3, "score": 2.05}}},
]  # fmt: skip
SEARCH_2 = [  # response #10
    {"source": "corpus/brewery.md", "paragraph": 1, "score": 0.016393442, "text": "…",
     "lanes": {"bm25": {"rank": 1, "score": 3.12}}},
    {"source": "corpus/pairing.md", "paragraph": 2, "score": 0.016129032, "text": "…",
     "lanes": {"vector": {"rank": 1, "score": 0.66}}},
]  # fmt: skip
AORANE = ["青嶺", "青嶺酒造"]  # responses #8 and #11: two lexical candidates
CITATION_1_TEXT = "青嶺酒造は1897年に創業した蔵元である。"  # response #9, section 沿革
CITATION_2_ERROR = (  # response #14, a 404 with code no_paragraph
    "http://localhost:8248/contexts/sake/citations answered 404: "
    "paragraph 5 out of range for source 'corpus/pairing.md' in context 'sake'"
)


def passage(hits: list[dict[str, Any]], latency_ms: int) -> PassageSearched:
    """The searched outcome: plan kept, each hit without its text."""
    return PassageSearched.model_validate(
        {
            "plan": PLAN,
            "hits": [{k: v for k, v in hit.items() if k != "text"} for hit in hits],
            "latency_ms": latency_ms,
        }
    )


def eval_cases() -> list[EvalCase]:
    return [EvalCase.model_validate(json.loads(line)) for line in CASE_LINES]


def lane_results() -> list[LaneResults]:
    first_passage = passage(SEARCH_1, 14)
    first_structural = Structural(
        cues=[
            CueResolution(
                cue="青嶺", kind="concept", resolved_names=AORANE, tier="lexical", latency_ms=3
            )
        ]
    )
    served = served_locators(first_passage, first_structural)
    quote = "1897年に創業"
    first_check = CheckResolved(
        source="corpus/brewery.md",
        paragraph=0,
        served=("corpus/brewery.md", 0) in served,
        section=SectionMatched(expected="沿革"),
        quote=QuoteCheck(
            declared=quote,
            matched=normalize_entry(trim(quote)) in normalize_entry(trim(CITATION_1_TEXT)),
        ),
        latency_ms=4,
    )

    second_passage = passage(SEARCH_2, 9)
    second_structural = Structural(
        associations=[
            AssociationProbe(
                subject_cue="青嶺",
                label_cue="合う",
                object_cue="焼き魚",
                subject=PositionAmbiguous(tier="lexical", candidates=AORANE, latency_ms=2),
                label=PositionResolved(name="合う", tier="lexical", latency_ms=2),
                object=PositionResolved(name="焼き魚", tier="semantic", latency_ms=5),
            )
        ]
    )
    served = served_locators(second_passage, second_structural)
    second_check = CheckUnresolved(
        source="corpus/pairing.md",
        paragraph=5,
        served=("corpus/pairing.md", 5) in served,
        code="no_paragraph",
        message=CITATION_2_ERROR,
        latency_ms=3,
    )
    return [
        LaneResults(passage=first_passage, structural=first_structural, checks=[first_check]),
        LaneResults(passage=second_passage, structural=second_structural, checks=[second_check]),
    ]


@pytest.fixture(scope="module")
def golden() -> Evaluation:
    return parse_evaluation(GOLDEN.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def cases() -> list[CaseBlock]:
    return [
        build_case_block(case, lanes)
        for case, lanes in zip(eval_cases(), lane_results(), strict=True)
    ]


def test_case_blocks_match_the_golden_text(golden: Evaluation, cases: list[CaseBlock]) -> None:
    # taguru's keys byte for byte; pytest-taguru's own label_coverage comes after them.
    taguru_keys = [case.model_copy(update={"label_coverage": None}) for case in cases]
    assert dumps_pretty(to_jsonable(taguru_keys)) == dumps_pretty(to_jsonable(golden.cases))
    assert [list(to_jsonable(case))[-1] for case in cases] == ["label_coverage"] * 2


def test_label_coverage_of_the_example(cases: list[CaseBlock]) -> None:
    """By hand. brand-origin-001: history.md#2 (history.md, any paragraph) and brewery.md#0
    judged, products.md#1 not (rank 3): judged@k 2/3. Both graded entries matched, so recall
    and MRR cannot move; nDCG is (3/log2 3 + 1) / (3 + 1/log2 3) = 0.79671 and, with
    products.md#1 (discount 1/2) graded g, (2.89279 + g/2) / ideal: 0.82131 for g = 1, 0.81753
    for 2, 0.81456 for 3 — the greatest is not at the top grade.
    pairing-002: pairing.md#2 judged, brewery.md#1 not (rank 1): judged@k 1/2; recall 1/2 →
    (1+1)/(2+1); MRR 1/2 → 1; nDCG 2/log2 3 / (2 + 1/log2 3) = 0.47962 → (3 + 2/log2 3) /
    (3 + 2/log2 3 + 1/2) = 0.89500 with grade 3."""
    first, second = (case.label_coverage for case in cases)
    assert first is not None and second is not None
    assert (first.hits, first.judged, first.judged_at_k) == (3, 2, 2 / 3)
    assert [(u.rank, u.source, u.paragraph) for u in first.unjudged] == [
        (3, "corpus/products.md", 1)
    ]
    assert first.recall_at_k is not None and first.mrr is not None and first.ndcg is not None
    assert (first.recall_at_k.low, first.recall_at_k.high) == (1.0, 1.0)
    assert (first.mrr.low, first.mrr.high) == (1.0, 1.0)
    assert round(first.ndcg.low, 5) == 0.79671
    assert round(first.ndcg.high, 5) == 0.82131
    assert (second.hits, second.judged, second.judged_at_k) == (2, 1, 0.5)
    assert [(u.rank, u.source) for u in second.unjudged] == [(1, "corpus/brewery.md")]
    assert second.recall_at_k is not None and second.mrr is not None and second.ndcg is not None
    assert (second.recall_at_k.low, second.recall_at_k.high) == (0.5, 2 / 3)
    assert (second.mrr.low, second.mrr.high) == (0.5, 1.0)
    assert round(second.ndcg.low, 5) == 0.47962
    assert round(second.ndcg.high, 5) == 0.89500


def test_metrics_match_the_golden_text(golden: Evaluation, cases: list[CaseBlock]) -> None:
    metrics = build_metrics(cases)
    assert list(metrics) == list(golden.metrics)
    assert dumps_pretty(to_jsonable(metrics)) == dumps_pretty(to_jsonable(golden.metrics))


def test_golden_metrics_text_is_the_file_text(golden: Evaluation) -> None:
    # Guards the comparison above: the golden's metrics survive the read/write round trip.
    raw = json.loads(GOLDEN.read_text(encoding="utf-8"))["metrics"]
    assert to_jsonable(golden.metrics) == raw


def test_summary_numbers_of_section_8_2(cases: list[CaseBlock]) -> None:
    summary = run_summary(cases)
    assert (summary.cases, summary.passage_ok, summary.passage_failed) == (2, 2, 0)
    assert (summary.structural_cases, summary.ambiguous_positions) == (2, 1)
    assert summary.not_found_positions == 0
    assert summary.recall_cases == 2
    assert f"{summary.mean_recall_at_k:.3f} {summary.mean_mrr:.3f} {summary.mean_ndcg:.3f}" == (
        "0.750 0.750 0.638"
    )
    assert (summary.cross_tab_cases, summary.cross_tab_both, summary.cross_tab_neither) == (
        2,
        1,
        0,
    )
    assert summary.citation_cases == 2
    assert (summary.mean_citation_recall, summary.mean_locator_validity) == (0.5, 0.5)
    assert summary.invalid_locators == (InvalidLocator("corpus/pairing.md", 5),)
    assert summary.more_invalid_locators == 0
