"""``compare.pairing`` and ``artifact.extras``: which cases pair, and every exclusion counted."""

import json
from typing import Any

import numpy as np
import pytest

from pytest_taguru.artifact.extras import pairing_facts, run_shape_facts
from pytest_taguru.artifact.view import LoadedRun, read_run
from pytest_taguru.compare.pairing import pair_cases
from pytest_taguru.score.registry import PAIRED_METRICS

MRR = PAIRED_METRICS.index("recall.mrr")


def case(case_id: str, mrr: float = 1.0, digest: str | None = "h", **extra: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "case_id": case_id,
        "recall": {"recall_at_k": 1.0, "mrr": mrr, "ndcg": 1.0},
        **extra,
    }
    if digest is not None:
        block["expectations_sha256"] = digest
    return block


def run(*cases: dict[str, Any]) -> LoadedRun:
    return read_run(json.dumps({"taguru_evaluation": 1, "cases": list(cases)}), "run.json")


def test_cases_pair_by_id_and_expectations_and_the_rest_is_counted() -> None:
    base = run(
        case("a"),
        case("b"),
        case("gone"),
        case("relabelled", digest="old"),
        case("broken-base", passage={"outcome": "failed"}),
        case("broken-head"),
        case("broken-both", passage={"outcome": "failed"}),
    )
    head = run(
        case("new"),
        case("b", mrr=0.5),
        case("a"),
        case("relabelled", digest="new"),
        case("broken-base"),
        case("broken-head", passage={"outcome": "failed", "message": "timed out"}),
        case("broken-both", evidence={"outcome": "failed"}),
    )
    paired = pair_cases(base, head)
    assert paired.case_ids == ("a", "b")
    assert paired.deltas[:, MRR].tolist() == [0.0, -0.5]
    excluded = paired.exclusions
    assert excluded.missing_in_head == ("gone",)
    assert excluded.missing_in_base == ("new",)
    assert excluded.relabelled == ("relabelled",)
    assert excluded.errored_in_head == ("broken-head",)
    assert excluded.errored_in_base == ("broken-base",)
    assert excluded.errored_in_both == ("broken-both",)
    assert excluded.total == 6
    assert paired.unhashed == ()


def test_a_run_without_hashes_pairs_by_id_and_says_so() -> None:
    paired = pair_cases(run(case("a", digest=None)), run(case("a", digest="h")))
    assert paired.case_ids == ("a",)
    assert paired.unhashed == ("BASE",)


def test_a_repeated_case_id_keeps_its_last_occurrence() -> None:
    paired = pair_cases(run(case("a", mrr=0.1), case("a", mrr=0.9)), run(case("a", mrr=1.0)))
    assert paired.deltas[0, MRR] == pytest.approx(0.1)


def test_a_metric_with_a_value_on_one_side_only_has_no_pair() -> None:
    without_recall = {"case_id": "a", "expectations_sha256": "h"}
    paired = pair_cases(run(case("a")), run(without_recall))
    assert paired.case_ids == ("a",)
    assert np.isnan(paired.deltas[0, MRR])


def test_a_slice_keeps_its_own_pairs_and_exclusions() -> None:
    paired = pair_cases(run(case("a"), case("b"), case("c")), run(case("a"), case("b")))
    part = paired.within(["b", "c"])
    assert part.case_ids == ("b",)
    assert part.exclusions.missing_in_head == ("c",)
    assert part.deltas.shape == (1, len(PAIRED_METRICS))


@pytest.mark.parametrize(
    ("extra", "errored"),
    [
        ({"passage": {"outcome": "failed"}}, True),
        ({"passage": {"outcome": "searched"}}, False),
        ({"evidence": {"outcome": "failed"}}, True),
        ({"structural": {"cues": [{"cue": "x", "error": "timed out"}]}}, True),
        ({"structural": {"cues": [{"cue": "x", "error": None}]}}, False),
        ({"structural": {"associations": [{"label": {"outcome": "errored"}}]}}, True),
        ({"structural": {"associations": [{"query": {"outcome": "errored"}}]}}, True),
        ({"structural": {"associations": [{"subject": {"outcome": "not_found"}}]}}, False),
        ({"citations": {"checks": [{"outcome": "unresolved", "code": None}]}}, True),
        ({"citations": {"checks": [{"outcome": "unresolved", "code": "no_paragraph"}]}}, False),
        ({"passage": "failed", "structural": [1], "citations": {"checks": {}}}, False),
    ],
)
def test_what_counts_as_errored(extra: dict[str, Any], errored: bool) -> None:
    assert pairing_facts({"case_id": "a", **extra}).errored is errored


def test_pairing_facts_read_leniently() -> None:
    assert pairing_facts({"expectations_sha256": 7}).expectations_sha256 is None
    assert pairing_facts(["a"]).expectations_sha256 is None
    shape = run_shape_facts({"mode": "assembly", "default_limit": 10, "rerank": {"x": 1}})
    assert (shape.mode, shape.default_limit, shape.rerank) == ("assembly", 10, None)


def test_the_extras_leave_taguru_view_as_it_was() -> None:
    # A positional case (serde's array quirk) still reads, with no pairing facts.
    loaded = read_run('{"taguru_evaluation":1,"cases":[["a"]]}', "run.json")
    assert loaded.view.cases[0].case_id == "a"
    assert loaded.view.extras.cases[0].expectations_sha256 is None
    whole = read_run("[1]", "run.json")  # the whole document positionally: no extras at all
    assert whole.view.extras.cases == () and whole.view.extras.shape.mode is None
    positional = read_run('[1, "", {}, {}, null, {}, {}, [{"case_id": "a"}]]', "run.json")
    assert [case.case_id for case in positional.view.cases] == ["a"]
    assert pair_cases(positional, positional).case_ids == ("a",)
