"""Metric shapes, catalog and populations of evaluate-run.md §6 and assembly.md §1.11."""

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from paths import SPEC_7_8_EVALUATION

from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    CueResolution,
    PassageFailed,
    PassageSearched,
    PositionAmbiguous,
    PositionErrored,
    PositionNotFound,
    PositionResolved,
    QueryErrored,
    QueryQueried,
    QuoteCheck,
    Recall,
    SectionMatched,
    SectionMismatched,
    Structural,
)
from pytest_taguru.artifact.evaluation import Distribution, Ratio, parse_evaluation, to_jsonable
from pytest_taguru.score.case import citations_block
from pytest_taguru.score.metrics import (
    CATALOG,
    InvalidLocator,
    build_metrics,
    definitions,
    distribution,
    ratio,
    run_summary,
)

GOLDEN = SPEC_7_8_EVALUATION


# --- §6.1 value shapes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("samples", "p50", "p90", "p99"),
    [
        ([7], 7.0, 7.0, 7.0),
        ([1, 2], 1.0, 2.0, 2.0),
        ([1, 2, 3, 4], 2.0, 4.0, 4.0),
        (list(range(1, 11)), 5.0, 9.0, 10.0),
        (list(range(1, 101)), 50.0, 90.0, 99.0),
    ],
)
def test_nearest_rank_checks(samples: list[int], p50: float, p90: float, p99: float) -> None:
    value = distribution(samples)
    assert (value.p50, value.p90, value.p99) == (p50, p90, p99)


def test_distribution_writes_doubles_for_integer_samples() -> None:
    value = distribution([9, 3])
    assert to_jsonable(value) == {
        "n": 2, "min": 3.0, "p50": 3.0, "p90": 9.0, "p99": 9.0, "max": 9.0, "mean": 6.0,
        "sum": 12.0,
    }  # fmt: skip
    assert all(type(stat) is float for stat in (value.min, value.max, value.mean, value.sum))


def test_empty_distribution_is_all_nulls() -> None:
    assert to_jsonable(distribution([])) == {
        "n": 0, "min": None, "p50": None, "p90": None, "p99": None, "max": None, "mean": None,
        "sum": None,
    }  # fmt: skip


def test_distribution_drops_non_finite_samples() -> None:
    value = distribution([math.nan, 2.0, math.inf, -math.inf])
    assert (value.n, value.min, value.max, value.sum) == (1, 2.0, 2.0, 2.0)


def test_distribution_sums_the_sorted_samples() -> None:
    # Left to right as given: (1e16 - 1e16) + 1 = 1.0; sorted: (-1e16 + 1) + 1e16 = 0.0.
    value = distribution([1e16, -1e16, 1.0])
    assert value.sum == 0.0 and value.mean == 0.0


def test_distribution_sums_from_negative_zero_in_total_order() -> None:
    value = distribution([-0.0, -0.0])
    assert value.sum is not None and math.copysign(1.0, value.sum) == -1.0
    mixed = distribution([0.0, -0.0])
    assert mixed.min is not None and math.copysign(1.0, mixed.min) == -1.0


def test_ratio_shapes() -> None:
    assert to_jsonable(ratio(0, 0)) == {"value": None, "n": 0, "numerator": None}
    assert to_jsonable(ratio(1, 4)) == {"value": 0.25, "n": 4, "numerator": 1}
    assert to_jsonable(ratio(0, 2)) == {"value": 0.0, "n": 2, "numerator": 0}


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40))
def test_percentiles_are_observed_samples(samples: list[float]) -> None:
    value = distribution(samples)
    finite = [sample for sample in samples if math.isfinite(sample)]
    assert value.n == len(finite)
    if not finite:
        assert value.min is None and value.mean is None
        return
    for stat in (value.min, value.p50, value.p90, value.p99, value.max):
        assert stat in finite
    assert value.min is not None and value.max is not None and value.p50 is not None
    assert value.p90 is not None and value.p99 is not None
    assert value.min <= value.p50 <= value.p90 <= value.p99 <= value.max


# --- §6.2 / §6.3 catalog and definitions -------------------------------------------------------


def test_definitions_cover_the_catalog_in_byte_order() -> None:
    names = list(definitions())
    assert len(names) == 31 == len(CATALOG)
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


# --- §6.2 populations --------------------------------------------------------------------------


def positions(latency: int) -> dict[str, Any]:
    return {
        "subject": PositionErrored(message="down", latency_ms=latency),
        "label": PositionNotFound(latency_ms=latency),
        "object": PositionAmbiguous(tier="semantic", candidates=["a", "b"], latency_ms=latency),
    }


def probe(query: QueryQueried | QueryErrored | None, latency: int = 1) -> AssociationProbe:
    return AssociationProbe(
        subject_cue="s", label_cue="l", object_cue="o", query=query, **positions(latency)
    )


def make_case(
    *,
    failed: bool = False,
    structural: Structural | None = None,
    checks: list[CitationCheck] | None = None,
    latency: int = 1,
    **extra: Any,
) -> CaseBlock:
    passage = (
        PassageFailed(message="x", latency_ms=latency)
        if failed
        else PassageSearched(hits=[], latency_ms=latency)
    )
    return CaseBlock(
        case_id="c",
        query="q",
        passage=passage,
        structural=structural,
        citations=citations_block(checks) if checks else None,
        **extra,
    )


def resolved_check(**fields: Any) -> CheckResolved:
    return CheckResolved(source="a", paragraph=0, served=False, **fields)


def unresolved_check(code: str | None, latency: int = 1) -> CheckUnresolved:
    return CheckUnresolved(source="a", paragraph=0, served=False, code=code, latency_ms=latency)


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


# --- §8.2 summary numbers ----------------------------------------------------------------------


def test_summary_lists_three_invalid_locators_and_counts_the_rest() -> None:
    first = [unresolved_check(None) for _ in range(2)]
    second: list[CitationCheck] = [
        CheckUnresolved(source=f"s{index}", paragraph=index, served=True) for index in range(3)
    ]
    second.insert(1, resolved_check())
    summary = run_summary([make_case(checks=list(first)), make_case(checks=second)])
    assert summary.invalid_locators == (
        InvalidLocator("a", 0),
        InvalidLocator("a", 0),
        InvalidLocator("s0", 0),
    )
    assert summary.more_invalid_locators == 2
    assert summary.citation_cases == 2
    assert summary.mean_locator_validity == 0.125


def test_summary_of_an_empty_run() -> None:
    summary = run_summary([])
    assert (summary.cases, summary.recall_cases, summary.cross_tab_cases) == (0, 0, 0)
    assert summary.mean_ndcg is None
    assert summary.invalid_locators == () and summary.more_invalid_locators == 0


def test_summary_counts_association_positions_only() -> None:
    structural = Structural(
        cues=[CueResolution(cue="c", kind="concept")],
        associations=[
            AssociationProbe(
                subject_cue="s", label_cue="l", object_cue="o",
                subject=PositionAmbiguous(tier="lexical"), label=PositionNotFound(),
                object=PositionResolved(name="o", tier="lexical"),
            ),
            probe(None),
        ],
    )  # fmt: skip
    summary = run_summary([make_case(structural=structural), make_case(failed=True)])
    assert (summary.passage_ok, summary.passage_failed, summary.structural_cases) == (1, 1, 1)
    assert (summary.ambiguous_positions, summary.not_found_positions) == (2, 2)


def test_summary_means_are_plain_means_in_case_order() -> None:
    # taguru sums the per-case values in case order (not in the sorted order of a
    # distribution's sum); for these four values the two means round differently.
    values = [1.0, 1 / 3, 0.75, 2 / 3]
    cases = [
        make_case(recall=Recall(recall_at_k=v, mrr=v, ndcg=v, expected_total=1, matched=1))
        for v in values
    ]
    summary = run_summary(cases)
    assert f"{distribution(values).mean:.3f}" == "0.688"
    assert f"{summary.mean_recall_at_k:.3f}" == "0.687"
    assert summary.mean_mrr == summary.mean_ndcg == summary.mean_recall_at_k
    served = [(1, 1), (1, 3), (3, 4), (2, 3)]  # (served, declared) per case
    citations = [
        make_case(
            checks=[
                CheckResolved(source="a", paragraph=0, served=n < hit) for n in range(total)
            ]
        )
        for hit, total in served
    ]
    assert f"{run_summary(citations).mean_citation_recall:.3f}" == "0.687"


def test_summary_mean_of_unmatched_ndcgs_keeps_the_sign_of_zero() -> None:
    # Every nDCG is -0.0 (nothing matched), so taguru's mean is -0.0 and prints "-0.000".
    miss = Recall(recall_at_k=0.0, mrr=0.0, ndcg=-0.0, expected_total=1, matched=0)
    summary = run_summary([make_case(recall=miss), make_case(recall=miss)])
    assert f"{summary.mean_ndcg:.3f} {summary.mean_mrr:.3f}" == "-0.000 0.000"
