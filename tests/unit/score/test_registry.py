"""The metric lexicon: the registry against the specification's tables, typed in as literals.

evaluate-run.md §6.2 (catalog: unit, statistic, caveat) and §6.3 (scopes, source);
thresholds-and-compare.md A.3.1 (the 31 names), A.3.2 (the ten case-scoped names and their
paths), B.4 (the nine classification metrics in record order); and the lists derived from
them for verbose output and the drill-down.
"""

from typing import Any

import pytest

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.view import CaseView
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.report.reproduce import SEARCHED_METRICS
from pytest_taguru.score.metrics import definitions
from pytest_taguru.score.registry import (
    CASE_SCOPED_METRICS,
    CASE_SCORES,
    COMPARISON_METRICS,
    METRICS,
    case_value,
)

SEARCH = "POST /contexts/{name}/sources/search"
RESOLVE = "POST /contexts/{name}/resolve"
RESOLVE_LABEL = "POST /contexts/{name}/resolve_label"
QUERY = "POST /contexts/{name}/query"
CITATIONS = "POST /contexts/{name}/citations"
EVIDENCE = "POST /contexts/{name}/evidence"
BUDGET = "crate::api::evidence::budget"
LANES = "derived from coverage.* and recall.recall_at_k"

# name: (unit, statistic, caveat, source) — §6.2 and §6.3, row by row.
CATALOG = {
    "budget.bytes_used": ("byte", "distribution", True, BUDGET),
    "budget.items_used": ("item", "distribution", True, BUDGET),
    "budget.omitted_rate": ("ratio", "ratio", True, f"{BUDGET}, {EVIDENCE}"),
    "budget.tokens_used": ("token", "distribution", True, BUDGET),
    "citations.locator_validity": ("ratio", "distribution", True, CITATIONS),
    "citations.no_paragraph": ("ratio", "ratio", False, CITATIONS),
    "citations.no_source": ("ratio", "ratio", False, CITATIONS),
    "citations.other": ("ratio", "ratio", False, CITATIONS),
    "citations.quote_match": (
        "ratio", "ratio", True, f"eval.jsonl expected_citations.quote, {CITATIONS}"
    ),
    "citations.recall": (
        "ratio", "distribution", True, f"eval.jsonl expected_citations, {SEARCH}, {QUERY}"
    ),
    "citations.resolved": ("ratio", "ratio", False, CITATIONS),
    "citations.section_match": (
        "ratio", "ratio", True, f"eval.jsonl expected_citations.section, {CITATIONS}"
    ),
    "coverage.associations": (
        "ratio", "distribution", True, f"eval.jsonl expected_associations, {QUERY}"
    ),
    "coverage.concepts": (
        "ratio", "distribution", True, f"eval.jsonl expected_concepts, {RESOLVE}"
    ),
    "coverage.labels": (
        "ratio", "distribution", True, f"eval.jsonl expected_labels, {RESOLVE_LABEL}"
    ),
    "diversity.sources": ("source", "distribution", True, f"{SEARCH}, {EVIDENCE}"),
    "lanes.both": ("ratio", "ratio", False, LANES),
    "lanes.neither": ("ratio", "ratio", False, LANES),
    "lanes.passage_hit": ("ratio", "ratio", True, LANES),
    "lanes.structural_hit": ("ratio", "ratio", True, LANES),
    "latency.citation_ms": ("ms", "distribution", True, CITATIONS),
    "latency.evidence_ms": ("ms", "distribution", True, EVIDENCE),
    "latency.passage_ms": ("ms", "distribution", False, SEARCH),
    "latency.query_ms": ("ms", "distribution", True, QUERY),
    "latency.resolve_ms": ("ms", "distribution", False, f"{RESOLVE}, {RESOLVE_LABEL}"),
    "passage.failure_rate": ("ratio", "ratio", False, SEARCH),
    "recall.mrr": ("ratio", "distribution", True, f"eval.jsonl expected_sources, {SEARCH}"),
    "recall.ndcg": (
        "ratio", "distribution", True, f"eval.jsonl expected_sources.relevance, {SEARCH}"
    ),
    "recall.recall_at_k": (
        "ratio", "distribution", True, f"eval.jsonl expected_sources, {SEARCH}"
    ),
    "rerank.ran": ("ratio", "ratio", True, f"{EVIDENCE} plan.reranker"),
    "structural.case_rate": ("ratio", "ratio", False, "eval.jsonl case fields"),
}  # fmt: skip

# A.3.2, in the table's order: name → the path of its value in a case block.
CASE_SCOPED = {
    "recall.recall_at_k": ("recall", "recall_at_k"),
    "recall.mrr": ("recall", "mrr"),
    "recall.ndcg": ("recall", "ndcg"),
    "coverage.concepts": ("coverage", "concepts", "value"),
    "coverage.labels": ("coverage", "labels", "value"),
    "coverage.associations": ("coverage", "associations", "value"),
    "citations.recall": ("citations", "recall", "value"),
    "citations.locator_validity": ("citations", "validity", "value"),
    "latency.passage_ms": ("passage", "latency_ms"),
    "diversity.sources": ("diversity_sources",),
}

# B.4, in record order.
COMPARED = (
    "recall.recall_at_k",
    "recall.mrr",
    "recall.ndcg",
    "coverage.concepts",
    "coverage.labels",
    "coverage.associations",
    "citations.recall",
    "citations.locator_validity",
    "diversity.sources",
)


def test_the_31_names() -> None:
    assert len(METRICS) == 31
    assert sorted(metric.name for metric in METRICS) == sorted(CATALOG)
    assert list(definitions()) == sorted(CATALOG, key=str.encode)


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_each_definition_follows_the_catalog(name: str) -> None:
    unit, statistic, caveat, source = CATALOG[name]
    definition = definitions()[name]
    assert (definition.unit, definition.statistic, definition.source) == (unit, statistic, source)
    assert definition.scopes == (["case"] if statistic == "distribution" else ["run"])
    assert (definition.caveat is not None) == caveat
    assert definition.description


def test_the_ten_case_scoped_names_in_table_order() -> None:
    assert tuple(CASE_SCOPED) == CASE_SCOPED_METRICS
    paths = {metric.name: metric.case_path for metric in METRICS if metric.case_path}
    assert paths == CASE_SCOPED


def test_the_nine_comparison_metrics_in_record_order() -> None:
    assert COMPARISON_METRICS == COMPARED
    assert tuple(n for n in CASE_SCOPED if n != "latency.passage_ms") == COMPARISON_METRICS


def test_the_per_case_scores_are_the_compared_ratios() -> None:
    assert COMPARED[:-1] == CASE_SCORES


def test_the_drilldown_reproduces_the_searched_metrics_with_a_search() -> None:
    searched = {
        "recall.recall_at_k", "recall.mrr", "recall.ndcg", "citations.recall",
        "latency.passage_ms", "diversity.sources",
    }  # fmt: skip
    assert searched == SEARCHED_METRICS


def block(**fields: Any) -> CaseBlock:
    return CaseBlock.model_validate(
        {"case_id": "c1", "query": "q", "passage": {"outcome": "searched", "latency_ms": 12}}
        | fields
    )


def full_block() -> CaseBlock:
    """A case block with a value for every case-scoped metric, each value distinct."""
    return block(
        recall={"recall_at_k": 0.1, "mrr": 0.2, "ndcg": 0.3, "expected_total": 1, "matched": 0},
        coverage={
            "concepts": {"expected": 2, "matched": 1, "value": 0.4},
            "labels": {"expected": 2, "matched": 1, "value": 0.5},
            "associations": {"expected": 2, "matched": 1, "value": 0.6},
        },
        citations={
            "recall": {"expected_total": 2, "matched": 1, "value": 0.7},
            "validity": {"expected_total": 2, "valid": 1, "value": 0.8},
        },
        diversity_sources=3,
    )


def test_case_values_come_from_the_documented_paths() -> None:
    full = full_block()
    assert {name: case_value(full, name) for name in CASE_SCOPED_METRICS} == {
        "recall.recall_at_k": 0.1,
        "recall.mrr": 0.2,
        "recall.ndcg": 0.3,
        "coverage.concepts": 0.4,
        "coverage.labels": 0.5,
        "coverage.associations": 0.6,
        "citations.recall": 0.7,
        "citations.locator_validity": 0.8,
        "latency.passage_ms": 12.0,
        "diversity.sources": 3.0,
    }
    failed = CaseBlock.model_validate(
        {
            "case_id": "c1",
            "query": "q",
            "passage": {"outcome": "failed", "message": "m", "latency_ms": 9},
        }
    )
    assert [name for name in CASE_SCOPED_METRICS if case_value(failed, name) is not None] == [
        "latency.passage_ms"
    ]


def test_one_path_serves_the_case_block_and_compares_case_view() -> None:
    written = full_block()
    view = CaseView.model_validate(to_jsonable(written), strict=False)
    from_view = [case_value(view, name) for name in COMPARISON_METRICS]
    assert from_view == [case_value(written, name) for name in COMPARISON_METRICS]
    assert None not in from_view
    empty = CaseView.model_validate({"case_id": "c", "citations": {}})
    assert [case_value(empty, name) for name in COMPARISON_METRICS] == [None] * 9


@pytest.mark.parametrize("name", ["latency.resolve_ms", "rerank.ran", "corpus.stable"])
def test_a_metric_without_a_case_value_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match=f"not a case-scoped metric: {name}"):
        case_value(full_block(), name)
