"""The metrics block: catalog and populations of evaluate-run.md §6 and assembly.md §1.11."""

from typing import Any

from case_blocks import make_case, probe, resolved_check, unresolved_check
from hypothesis import given
from hypothesis import strategies as st
from paths import SPEC_7_8_EVALUATION

from pytest_taguru.artifact.case import (
    CaseBlock,
    CitationCheck,
    CueResolution,
    QueryErrored,
    QueryQueried,
    QuoteCheck,
    SectionMatched,
    SectionMismatched,
    Structural,
)
from pytest_taguru.artifact.evaluation import Distribution, Ratio, parse_evaluation
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.score.metrics import build_metrics, definitions
from pytest_taguru.score.registry import METRICS
from pytest_taguru.score.shapes import distribution, ratio

GOLDEN = SPEC_7_8_EVALUATION


# --- §6.2 / §6.3 catalog and definitions -------------------------------------------------------


def test_definitions_cover_the_catalog_in_byte_order() -> None:
    names = list(definitions())
    assert len(names) == 31 == len(METRICS)
    assert names == sorted(names, key=lambda name: name.encode())


def test_definitions_agree_with_the_spec_example_except_prose() -> None:
    golden = parse_evaluation(GOLDEN.read_text(encoding="utf-8")).definitions
    ours = definitions()
    assert list(ours) == list(golden)
    for name, definition in ours.items():
        theirs = golden[name]
        assert (definition.unit, definition.statistic, definition.scopes, definition.source) == (
            theirs.unit,
            theirs.statistic,
            theirs.scopes,
            theirs.source,
        ), name
        assert (definition.caveat is None) == (theirs.caveat is None), name
        assert definition.description and definition.description != theirs.description, name


def test_passage_latency_includes_failed_passages() -> None:
    metrics = build_metrics([make_case(latency=5), make_case(failed=True, latency=2)])
    assert metrics["latency.passage_ms"] == distribution([5, 2])
    assert metrics["passage.failure_rate"] == ratio(1, 2)
    assert metrics["diversity.sources"] == distribution([])  # no diversity_sources given


def test_resolve_and_query_latencies() -> None:
    structural = Structural(
        cues=[CueResolution(cue="c", kind="label", latency_ms=7, error="x")],
        associations=[
            probe(None, latency=2),
            probe(QueryErrored(message="x", latency_ms=11), latency=3),
            probe(QueryQueried(total=0, matches=0, latency_ms=13), latency=4),
        ],
    )
    metrics = build_metrics([make_case(structural=structural), make_case()])
    assert metrics["latency.resolve_ms"] == distribution([7, 2, 2, 2, 3, 3, 3, 4, 4, 4])
    assert metrics["latency.query_ms"] == distribution([11, 13])
    assert metrics["structural.case_rate"] == ratio(1, 2)


def test_citation_populations() -> None:
    checks: list[CitationCheck] = [
        resolved_check(section=SectionMatched(expected=None), latency_ms=1),
        resolved_check(
            section=SectionMismatched(expected="s"),
            quote=QuoteCheck(declared="q", matched=True),
            latency_ms=2,
        ),
        resolved_check(quote=QuoteCheck(declared="q", matched=False), latency_ms=3),
        unresolved_check("no_source", 4),
        unresolved_check("no_paragraph", 5),
        unresolved_check(None, 6),
        unresolved_check("bad_request", 7),
    ]
    metrics = build_metrics([make_case(checks=checks[:4]), make_case(checks=checks[4:])])
    assert metrics["citations.resolved"] == ratio(3, 7)
    assert metrics["citations.no_source"] == ratio(1, 7)
    assert metrics["citations.no_paragraph"] == ratio(1, 7)
    assert metrics["citations.other"] == ratio(2, 7)
    assert metrics["citations.section_match"] == ratio(1, 2)
    assert metrics["citations.quote_match"] == ratio(1, 2)
    assert metrics["latency.citation_ms"] == distribution(range(1, 8))
    assert metrics["citations.locator_validity"] == distribution([0.25, 0.0])
    assert metrics["citations.recall"] == distribution([0.0, 0.0])


def test_the_four_citation_shares_add_up() -> None:
    checks: list[CitationCheck] = [resolved_check(), unresolved_check(None)]
    metrics = build_metrics([make_case(checks=checks)])
    total = 0
    for name in ("resolved", "no_source", "no_paragraph", "other"):
        value = metrics[f"citations.{name}"]
        assert isinstance(value, Ratio) and value.n == 2
        total += value.numerator or 0
    assert total == 2


def test_baseline_hook_metrics_have_no_samples() -> None:
    metrics = build_metrics([make_case()], rerank_requested=True)
    for name in (
        "budget.bytes_used",
        "budget.items_used",
        "budget.tokens_used",
        "latency.evidence_ms",
    ):
        assert metrics[name] == Distribution(n=0), name
    for name in ("budget.omitted_rate", "rerank.ran"):
        assert metrics[name] == Ratio(n=0), name  # fmt: skip


def assembled(
    items: int, omitted: int, reasons: dict[str, int], reranker: dict[str, Any]
) -> CaseBlock:
    return make_case(
        evidence={
            "outcome": "assembled",
            "latency_ms": 10,
            "items": [],
            "omitted_by_reason": reasons,
            "reranker": {"configured": True, **reranker},
        },
        budget={"items_used": items, "bytes_used": 100 * items, "tokens_used": 30 * items,
                "omitted_total": omitted},
    )  # fmt: skip


def assembly_run() -> list[CaseBlock]:
    """The run of assembly.md §4.4."""
    return [
        assembled(3, 2, {"budget_exceeded": 1, "duplicate_passage": 1},
                  {"ran": True, "model": "bge-m3"}),
        assembled(3, 6, {"contradiction_group_exceeds_budget": 2, "duplicate_passage": 4},
                  {"ran": False, "reason": "provider_error"}),
        assembled(1, 0, {}, {"ran": False, "reason": "empty_pool"}),
        make_case(failed=True, evidence={"outcome": "failed", "message": "x", "latency_ms": 4}),
    ]  # fmt: skip


def test_assembly_example_hook_metrics() -> None:
    metrics = build_metrics(assembly_run(), rerank_requested=True)
    assert metrics["budget.omitted_rate"] == ratio(3, 15)
    assert to_jsonable(metrics["budget.omitted_rate"]) == {"value": 0.2, "n": 15, "numerator": 3}
    assert metrics["rerank.ran"] == ratio(1, 2)
    assert to_jsonable(metrics["budget.items_used"]) == {
        "n": 3, "min": 1.0, "p50": 3.0, "p90": 3.0, "p99": 3.0, "max": 3.0,
        "mean": 2.3333333333333335, "sum": 7.0,
    }  # fmt: skip
    assert metrics["budget.bytes_used"] == distribution([300, 300, 100])
    assert metrics["latency.evidence_ms"] == distribution([10, 10, 10, 4])
    assert metrics["passage.failure_rate"] == ratio(1, 4)


def test_rerank_has_no_population_without_the_flag() -> None:
    assert build_metrics(assembly_run())["rerank.ran"] == ratio(0, 0)


def test_baseline_budget_counts_every_omission() -> None:
    case = make_case(budget={"items_used": 2, "bytes_used": 9, "tokens_used": 3,
                             "omitted_total": 2})  # fmt: skip
    assert build_metrics([case])["budget.omitted_rate"] == ratio(2, 4)


case_blocks = st.lists(
    st.builds(
        make_case,
        failed=st.booleans(),
        structural=st.none() | st.just(Structural()),
        latency=st.integers(0, 50),
    ),
    max_size=5,
)


@given(case_blocks)
def test_metrics_always_have_all_31_keys_in_order(cases: list[CaseBlock]) -> None:
    metrics = build_metrics(cases)
    assert list(metrics) == list(definitions())
    for name, value in metrics.items():
        shape = Distribution if definitions()[name].statistic == "distribution" else Ratio
        assert isinstance(value, shape), name
