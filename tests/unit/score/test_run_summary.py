"""The numbers behind the stdout summary (evaluate-run.md §8.2)."""

from case_blocks import make_case, probe, resolved_check, unresolved_check

from pytest_taguru.artifact.case import (
    AssociationProbe,
    CheckResolved,
    CheckUnresolved,
    CitationCheck,
    CueResolution,
    PositionAmbiguous,
    PositionNotFound,
    PositionResolved,
    Recall,
    Structural,
)
from pytest_taguru.score.shapes import distribution
from pytest_taguru.score.summary import InvalidLocator, run_summary


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
