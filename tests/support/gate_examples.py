"""The runs of the worked examples A-1..A-6 (thresholds-and-compare.md A.8), as artifacts.

Shared by the thresholds, gate-report and drill-down tests; the thresholds files themselves
are byte-exact files under tests/golden/thresholds/.
"""

from typing import Any

from paths import GOLDEN

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import (
    STATISTIC_SHAPES,
    Corpus,
    Distribution,
    Evaluation,
    MetricValue,
    Ratio,
)
from pytest_taguru.gate.thresholds import Thresholds, check_thresholds
from pytest_taguru.score.metrics import definitions
from pytest_taguru.score.shapes import distribution

GOLDEN = GOLDEN / "thresholds"
METRIC_NAMES = frozenset(definitions())


def golden_bytes(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()


def load_golden(name: str, case_ids: tuple[str, ...] = ()) -> Thresholds:
    return check_thresholds(
        golden_bytes(name), path=name, metric_names=METRIC_NAMES, case_ids=case_ids
    )


def evaluation(
    *,
    metrics: dict[str, MetricValue] | None = None,
    cases: list[dict[str, Any]] | None = None,
    stable: bool = True,
) -> Evaluation:
    """A run whose metrics are empty except ``metrics``; case blocks given as JSON data."""
    known = definitions()
    values: dict[str, MetricValue] = {
        name: STATISTIC_SHAPES[definition.statistic]() for name, definition in known.items()
    }
    values.update(metrics or {})
    return Evaluation(
        taguru_evaluation=1,
        generated_at="2026-07-29T12:00:00Z",
        corpus=Corpus(stable=stable),
        definitions=known,
        cases=[CaseBlock.model_validate({"query": "q", **case}) for case in cases or []],
        metrics=values,
    )


def run_a1() -> Evaluation:
    return evaluation(
        metrics={
            "recall.recall_at_k": distribution([0.5, 1.0, 0.75]),
            "citations.resolved": Ratio(value=0.75, n=4, numerator=3),
            "latency.passage_ms": distribution([10, 20]),
            "coverage.labels": Distribution(n=0),
            "rerank.ran": Ratio(value=None, n=0, numerator=None),
        }
    )


A2_CASES = ("easy", "hard-case", "cite-only")


def run_a2() -> Evaluation:
    return evaluation(
        cases=[
            {
                "case_id": "easy",
                "passage": {"outcome": "searched", "latency_ms": 40},
                "recall": {
                    "recall_at_k": 1.0,
                    "mrr": 1.0,
                    "ndcg": 1.0,
                    "expected_total": 1,
                    "matched": 1,
                },
            },
            {
                "case_id": "hard-case",
                "passage": {"outcome": "searched", "latency_ms": 250},
                "recall": {
                    "recall_at_k": 1.0,
                    "mrr": 0.5,
                    "ndcg": 0.63,
                    "expected_total": 1,
                    "matched": 1,
                },
            },
            {
                "case_id": "cite-only",
                "passage": {"outcome": "failed", "message": "x", "latency_ms": 7},
                "citations": {
                    "recall": {"expected_total": 2, "matched": 1, "value": 0.5},
                    "validity": {"expected_total": 2, "valid": 2, "value": 1.0},
                },
            },
        ],
        stable=False,
    )


def run_a4() -> Evaluation:
    return evaluation(
        cases=[
            {
                "case_id": "c1",
                "passage": {"outcome": "searched", "latency_ms": 5},
                "coverage": {"concepts": {"expected": 1, "matched": 1, "value": 1.0}},
                "diversity_sources": 2,
            },
            {"case_id": "c2", "passage": {"outcome": "failed", "message": "x", "latency_ms": 3}},
        ],
        stable=False,
    )


def run_a5() -> Evaluation:
    return evaluation(metrics={"recall.recall_at_k": distribution([0.1, 0.9, 0.2])})


A6_CASES = tuple(f"k{index:02d}" for index in range(12))


def run_a6() -> Evaluation:
    return evaluation(
        metrics={"latency.passage_ms": distribution([500] * 12)},
        cases=[
            {"case_id": case_id, "passage": {"outcome": "searched", "latency_ms": 500}}
            for case_id in A6_CASES
        ],
    )


A2_LINES = [
    "  thresholds: FAIL — 4 violation(s) (sha256 22c4e4cee3a0…)",
    "    [corpus] corpus.stable: the context's revision changed during this run "
    "(corpus.revision_before != corpus.revision_after) and allow_unstable_corpus is false",
    "    [case easy] recall.recall_at_k: 1.000000 > max 0.950000",
    "    [case hard-case] latency.passage_ms: 250.000000 > max 100.000000",
    "    [case cite-only] citations.recall: 0.500000 < min 1.000000",
    "  3 case-scoped threshold(s) skipped as not applicable",
]
"""The terminal lines of worked example A2 (A.8): a live run and the offline gate print them."""
