"""Per-case scoring rules of evaluate-run.md §4.4 and §5, with the spec's worked examples."""

import math
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.artifact.assembly import BudgetBlock, EvidenceAssembled
from pytest_taguru.artifact.case import (
    AssociationProbe,
    AttributionLocator,
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    CueResolution,
    HitLocator,
    PassageFailed,
    PassageSearched,
    Position,
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
    SectionNotChecked,
    Structural,
)
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.jsontext import dumps_pretty
from pytest_taguru.run.eval_models import CaseOptions, EvalCase, ExpectedCitation, ExpectedSource
from pytest_taguru.score.case import (
    HitsBySource,
    LaneResults,
    build_case_block,
    citations_block,
    coverage,
    diversity_sources,
    is_valid,
    lane_cross,
    missed,
    satisfies,
    score_recall,
    served_locators,
)


def expect(source: str, paragraphs: Sequence[int] = (), relevance: int = 1) -> ExpectedSource:
    return ExpectedSource(source=source, paragraphs=list(paragraphs), relevance=relevance)


def citation(source: str = "a", paragraph: int = 0) -> ExpectedCitation:
    return ExpectedCitation(source=source, paragraph=paragraph)


def hits(*locators: str) -> list[HitLocator]:
    """``"a#0"`` → a hit on source ``a``, paragraph 0."""
    out = []
    for locator in locators:
        source, _, paragraph = locator.rpartition("#")
        out.append(HitLocator(source=source, paragraph=int(paragraph), score=0.5))
    return out


def searched(*locators: str) -> PassageSearched:
    return PassageSearched(hits=hits(*locators), latency_ms=1)


FAILED = PassageFailed(message="boom", latency_ms=1)


def resolved(name: str) -> PositionResolved:
    return PositionResolved(name=name, tier="lexical", latency_ms=1)


def probe(
    subject: Position | None = None,
    label: Position | None = None,
    obj: Position | None = None,
    query: QueryQueried | QueryErrored | None = None,
) -> AssociationProbe:
    return AssociationProbe(
        subject_cue="s",
        label_cue="l",
        object_cue="o",
        subject=subject or resolved("S"),
        label=label or resolved("L"),
        object=obj or resolved("O"),
        query=query,
    )


def concept(*names: str, kind: str = "concept", error: str | None = None) -> CueResolution:
    return CueResolution(
        cue="c", kind=kind, resolved_names=list(names), limit=5, latency_ms=1, error=error
    )


def check(
    *,
    served: bool = True,
    section: SectionNotChecked | SectionMatched | SectionMismatched | None = None,
    quote: bool | None = None,
    source: str = "a",
    paragraph: int = 0,
) -> CheckResolved:
    return CheckResolved(
        source=source,
        paragraph=paragraph,
        served=served,
        section=section or SectionNotChecked(),
        quote=None if quote is None else QuoteCheck(declared="q", matched=quote),
    )


def unresolved(
    *, served: bool = False, code: str | None = "no_source", source: str = "a", paragraph: int = 0
) -> CheckUnresolved:
    return CheckUnresolved(
        source=source, paragraph=paragraph, served=served, code=code, message="m"
    )


# --- §5.1 source matching ----------------------------------------------------------------------


def test_satisfies_empty_paragraphs_means_any_paragraph() -> None:
    assert satisfies(hits("a#7")[0], expect("a"))


def test_satisfies_needs_one_of_the_listed_paragraphs() -> None:
    assert satisfies(hits("a#7")[0], expect("a", [3, 7]))
    assert not satisfies(hits("a#2")[0], expect("a", [3, 7]))


def test_satisfies_compares_sources_exactly() -> None:
    assert not satisfies(hits("A#0")[0], expect("a"))
    assert not satisfies(hits("a#0")[0], expect(" a"))
    assert not satisfies(hits("ａ#0")[0], expect("a"))


# --- §5.2 recall@k, MRR, nDCG ------------------------------------------------------------------

WORKED = {
    "A": ([expect("a", [], 3), expect("b", [], 1)], hits("a#0", "a#1", "b#4")),
    "B": (
        [expect("brewery", [0], 3), expect("history", [], 1)],
        hits("history#2", "brewery#0", "products#1"),
    ),
    "C": ([expect("pairing", [], 2), expect("menu", [], 1)], hits("brewery#1", "pairing#2")),
    "D": ([expect("a", [], 3), expect("a", [], 2)], hits("a#0")),
    "E": ([expect("a", [2], 1)], hits("a#0")),
    "F": ([expect("a", [3, 7], 2)], hits("b#0", "a#7", "a#3")),
}


@pytest.mark.parametrize(
    ("example", "recall_at_k", "mrr", "ndcg", "matched"),
    [
        ("A", 1.0, 1.0, 0.9639404, 2),
        ("B", 1.0, 1.0, 0.7967076, 2),
        ("C", 0.5, 0.5, 0.4796249, 1),
        ("D", 1.0, 1.0, 1.0, 2),
        ("E", 0.0, 0.0, 0.0, 0),
        ("F", 1.0, 0.5, 0.6309298, 1),
    ],
)
def test_worked_examples(
    example: str, recall_at_k: float, mrr: float, ndcg: float, matched: int
) -> None:
    expected, found = WORKED[example]
    recall = score_recall(found, expected)
    assert recall is not None
    assert recall.recall_at_k == recall_at_k
    assert recall.mrr == mrr
    assert recall.ndcg == pytest.approx(ndcg, abs=5e-8)
    assert (recall.expected_total, recall.matched) == (len(expected), matched)


def test_worked_examples_b_and_c_carry_the_artifact_doubles() -> None:
    b = score_recall(WORKED["B"][1], WORKED["B"][0])
    c = score_recall(WORKED["C"][1], WORKED["C"][0])
    assert b is not None and c is not None
    assert b.ndcg == 0.7967075809905066
    assert c.ndcg == 0.4796249331362629


def test_example_a_is_dcg_over_idcg() -> None:
    recall = score_recall(WORKED["A"][1], WORKED["A"][0])
    assert recall is not None
    assert recall.ndcg == (3 / math.log2(2) + 1 / math.log2(4)) / (3 + 1 / math.log2(3))


def test_example_d_is_clamped_to_one() -> None:
    recall = score_recall(WORKED["D"][1], WORKED["D"][0])
    assert recall is not None and recall.ndcg == 1.0


def test_example_g_relevance_zero_only_has_no_recall_block() -> None:
    assert score_recall(hits("x#0"), [expect("x", [], 0)]) is None
    assert score_recall(hits("x#0"), []) is None


def test_relevance_zero_entries_do_not_count() -> None:
    recall = score_recall(hits("b#0"), [expect("x", [], 0), expect("b")])
    assert recall == Recall(recall_at_k=1.0, mrr=1.0, ndcg=1.0, expected_total=1, matched=1)


def test_no_hits_scores_zero() -> None:
    recall = score_recall([], [expect("a")])
    assert recall == Recall(recall_at_k=0.0, mrr=0.0, ndcg=0.0, expected_total=1, matched=0)


@pytest.mark.parametrize("example", ["E", "no hits"])
def test_an_unmatched_ndcg_is_negative_zero_as_rust_sums_it(example: str) -> None:
    # taguru sums DCG with Iterator::sum, whose float identity is -0.0 (Rust ≥ 1.83): with no
    # expectation matched, DCG is -0.0 and so is nDCG, written "-0.0" in evaluation.json.
    expected, found = WORKED["E"] if example == "E" else ([expect("a")], [])
    recall = score_recall(found, expected)
    assert recall is not None
    assert recall.ndcg == 0.0 and math.copysign(1.0, recall.ndcg) == -1.0
    assert math.copysign(1.0, recall.mrr) == math.copysign(1.0, recall.recall_at_k) == 1.0
    assert '"ndcg": -0.0' in dumps_pretty(to_jsonable(recall))


expectations = st.lists(
    st.builds(
        expect,
        st.sampled_from("abc"),
        st.lists(st.integers(0, 3), max_size=2),
        st.integers(0, 3),
    ),
    max_size=5,
)
hit_lists = st.lists(
    st.builds(HitLocator, source=st.sampled_from("abcd"), paragraph=st.integers(0, 3),
              score=st.just(0.0)),
    max_size=6,
)  # fmt: skip


@given(expectations, hit_lists)
def test_scores_stay_within_zero_and_one(
    expected: list[ExpectedSource], found: list[HitLocator]
) -> None:
    recall = score_recall(found, expected)
    if recall is None:
        assert all(entry.relevance == 0 for entry in expected)
        return
    for value in (recall.recall_at_k, recall.mrr, recall.ndcg):
        assert 0.0 <= value <= 1.0
    assert 0 <= recall.matched <= recall.expected_total


@given(expectations, hit_lists)
def test_hits_by_source_finds_exactly_the_hits_that_satisfy_an_entry(
    expected: list[ExpectedSource], found: list[HitLocator]
) -> None:
    by_source = HitsBySource(found)
    for entry in expected:
        scanned = [rank for rank, hit in enumerate(found) if satisfies(hit, entry)]
        assert by_source.ranks(entry) == scanned
        assert by_source.first_rank(entry) == (scanned[0] if scanned else None)


@given(st.lists(st.integers(1, 3), min_size=1, max_size=8))
def test_a_perfect_ranking_scores_one(relevances: list[int]) -> None:
    ordered = sorted(relevances, reverse=True)
    expected = [expect(f"s{index}", [], rel) for index, rel in enumerate(ordered)]
    recall = score_recall(hits(*(f"s{index}#0" for index in range(len(ordered)))), expected)
    assert recall is not None
    assert (recall.recall_at_k, recall.mrr, recall.ndcg) == (1.0, 1.0, 1.0)


# --- §5.3 coverage, §5.4 lane cross-tab -------------------------------------------------------


def test_coverage_example_folds_katakana() -> None:
    structural = Structural(cues=[concept("りんご")])
    block = coverage(structural, ["リンゴ", "存在しない"], [])
    assert block is not None and block.concepts is not None
    assert (block.concepts.expected, block.concepts.matched, block.concepts.value) == (2, 1, 0.5)
    assert block.labels is None and block.associations is None


def test_coverage_trims_and_keeps_kinds_apart() -> None:
    structural = Structural(cues=[concept(" Apple "), concept("合う", kind="label")])
    block = coverage(structural, ["ａｐｐｌｅ", "合う"], ["合う", "合う"])
    assert block is not None and block.concepts is not None and block.labels is not None
    assert (block.concepts.matched, block.concepts.expected) == (1, 2)
    assert (block.labels.matched, block.labels.expected) == (2, 2)


def test_coverage_of_associations_needs_a_query_total_of_one() -> None:
    structural = Structural(
        associations=[
            probe(query=QueryQueried(total=2, matches=1)),
            probe(query=QueryQueried(total=0, matches=0)),
            probe(query=QueryErrored(message="x")),
            probe(subject=PositionNotFound()),
        ]
    )
    block = coverage(structural, [], [])
    assert block is not None and block.associations is not None
    assert (block.associations.expected, block.associations.matched) == (4, 1)
    assert block.associations.value == 0.25


def test_lane_cross_needs_both_blocks() -> None:
    structural = Structural(cues=[concept("x")])
    block = coverage(structural, ["x"], [])
    recall = score_recall(hits("a#0"), [expect("b")])
    assert lane_cross(block, None) is None
    assert lane_cross(None, recall) is None
    cross = lane_cross(block, recall)
    assert cross is not None
    assert (cross.structural_hit, cross.passage_hit) == (True, False)


# --- §4.4 served set, §5.5 citations ---------------------------------------------------------


def test_served_locators_pool_hits_and_paragraph_attributions() -> None:
    structural = Structural(
        associations=[
            probe(
                query=QueryQueried(
                    total=0,
                    matches=0,
                    attributions=[
                        AttributionLocator(source="q", paragraph=4),
                        AttributionLocator(source="q", paragraph=None),
                    ],
                )
            ),
            probe(query=QueryErrored(message="x")),
        ]
    )
    assert served_locators(searched("a#1", "a#1", "b#0"), structural) == {
        ("a", 1),
        ("b", 0),
        ("q", 4),
    }
    assert served_locators(FAILED, structural) == {("q", 4)}
    assert served_locators(FAILED, None) == set()


@pytest.mark.parametrize(
    ("the_check", "valid"),
    [
        (check(), True),
        (check(section=SectionMatched(expected="s"), quote=True), True),
        (check(section=SectionMismatched(expected=None), quote=True), False),
        (check(section=SectionMismatched(expected="s")), False),
        (check(quote=False), False),
        (check(section=SectionMatched(expected=None), quote=False), False),
        (unresolved(), False),
    ],
)
def test_validity_table(the_check: CitationCheck, valid: bool) -> None:
    assert is_valid(the_check) is valid


def test_citations_block_keeps_recall_and_validity_apart() -> None:
    checks: list[CitationCheck] = [
        check(served=False),
        check(served=True, quote=False),
        unresolved(served=True),
        check(served=False, quote=True),
    ]
    block = citations_block(checks)
    assert (block.recall.expected_total, block.recall.matched, block.recall.value) == (4, 2, 0.5)
    assert (block.validity.expected_total, block.validity.valid) == (4, 2)
    assert block.validity.value == 0.5
    assert block.checks == checks


def test_citations_block_refuses_no_checks() -> None:
    with pytest.raises(ValueError):
        citations_block([])


# --- §5.7 missed, §5.8 diversity -------------------------------------------------------------


def run_missed(
    *,
    found: Sequence[HitLocator] | None = None,
    sources: Sequence[ExpectedSource] = (),
    concepts: Sequence[str] = (),
    labels: Sequence[str] = (),
    structural: Structural | None = None,
    checks: Sequence[CitationCheck] | None = None,
) -> tuple[list[str], int]:
    return missed(
        hits=found,
        expected_sources=sources,
        expected_concepts=concepts,
        expected_labels=labels,
        structural=structural,
        checks=checks,
    )


def test_missed_follows_the_category_order_and_keeps_three() -> None:
    structural = Structural(
        cues=[concept("x"), concept("y", kind="label")],
        associations=[probe(query=QueryQueried(total=0, matches=0))],
    )
    entries, truncated = run_missed(
        found=hits("a#0"),
        sources=[expect("a"), expect("m"), expect("z", [], 0)],
        concepts=["x", "c"],
        labels=["y", "l"],
        structural=structural,
        checks=[unresolved(source="p", paragraph=5)],
    )
    assert entries == [
        "expected_sources: 'm' not found among passage hits",
        "expected_concepts: 'c' not resolved",
        "expected_labels: 'l' not resolved",
    ]
    # Dropped: the association, then the citation twice (not served, not valid).
    assert truncated == 3


def test_missed_lists_everything_up_to_three() -> None:
    entries, truncated = run_missed(
        checks=[unresolved(source="p", paragraph=5), check(served=True)],
    )
    assert entries == [
        "expected_citations: (p, 5) not found among served results",
        "expected_citations: (p, 5) failed locator validity",
    ]
    assert truncated == 0


def test_missed_skips_sources_when_the_passage_lane_failed() -> None:
    assert run_missed(found=None, sources=[expect("a")]) == ([], 0)
    assert run_missed(found=[], sources=[expect("a")]) == (
        ["expected_sources: 'a' not found among passage hits"],
        0,
    )


def test_missed_association_wordings() -> None:
    structural = Structural(
        associations=[
            probe(query=QueryQueried(total=1, matches=1)),
            probe(query=QueryQueried(total=0, matches=0)),
            probe(query=QueryErrored(message="x")),
            probe(subject=PositionAmbiguous(tier="lexical", candidates=["a", "b"])),
        ]
    )
    entries, truncated = run_missed(structural=structural)
    prefix = "expected_associations: (s, l, o) "
    assert entries == [
        prefix + "query returned no association",
        prefix + "query errored",
        prefix + "query never ran (a position did not pin)",
    ]
    assert truncated == 0


def test_missed_transport_error_lists_only_errored_positions_in_order() -> None:
    structural = Structural(
        associations=[
            probe(
                subject=PositionErrored(message="subject down"),
                label=PositionNotFound(),
                obj=PositionErrored(message="object down…"),
            )
        ]
    )
    entries, _ = run_missed(structural=structural)
    assert entries == [
        "expected_associations: (s, l, o) a position could not be resolved due to a transport "
        "error: subject: subject down; object: object down…"
    ]


def test_diversity_counts_distinct_sources_of_a_searched_passage() -> None:
    assert diversity_sources(searched("a#0", "a#1", "b#0")) == 2
    assert diversity_sources(searched()) == 0
    assert diversity_sources(FAILED) is None


# --- the case block ----------------------------------------------------------------------------


def test_case_block_of_a_failed_passage() -> None:
    case = EvalCase(
        case_id="c1",
        query="q",
        expected_sources=[expect("a")],
        expected_concepts=["x"],
        expected_citations=[citation()],
    )
    structural = Structural(cues=[concept("x")])
    lanes = LaneResults(passage=FAILED, structural=structural, checks=[check(served=False)])
    block = build_case_block(case, lanes, budget=BudgetBlock(items_used=1))
    assert block.cues is None
    assert block.limit == 10
    assert block.recall is None and block.lane_cross is None and block.diversity_sources is None
    assert block.coverage is not None and block.coverage.concepts is not None
    assert block.citations is not None and block.citations.recall.matched == 0
    assert block.missed == ["expected_citations: (a, 0) not found among served results"]
    assert block.budget == BudgetBlock(items_used=1) and block.evidence is None


def test_case_block_of_a_passage_only_case() -> None:
    case = EvalCase(
        case_id="c1",
        query="q",
        cues=["k"],
        expected_sources=[expect("a")],
        options=CaseOptions(limit=3),
    )
    lanes = LaneResults(passage=searched("a#0"), structural=None, checks=None)
    block = build_case_block(case, lanes, evidence=EvidenceAssembled())
    assert block.cues == ["k"] and block.limit == 3
    assert block.recall is not None and block.recall.matched == 1
    assert block.structural is None and block.coverage is None and block.lane_cross is None
    assert block.citations is None
    assert (block.missed, block.missed_truncated, block.diversity_sources) == ([], 0, 1)
    assert block.evidence == EvidenceAssembled()


def test_case_block_refuses_checks_that_do_not_match_the_citations() -> None:
    case = EvalCase(case_id="c1", query="q", expected_citations=[citation(), citation("b")])
    lanes = LaneResults(passage=searched(), structural=None, checks=[check()])
    with pytest.raises(ValueError, match="1 citation checks for 2 expected citations"):
        build_case_block(case, lanes)
