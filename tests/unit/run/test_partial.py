"""The partial-run policy: completeness, the artifact's path, what the gate judges, exit 5."""

import pytest

from pytest_taguru.run.partial import PartialRunPolicy, RunCoverage, partial_path


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("evaluation.json", "evaluation.partial.json"),
        ("out/run.json", "out/run.partial.json"),
        ("/abs/e.v.json", "/abs/e.v.partial.json"),
        ("artifact", "artifact.partial"),
    ],
)
def test_partial_path_is_beside_the_configured_one(out: str, expected: str) -> None:
    assert partial_path(out) == expected


def test_coverage_words() -> None:
    assert RunCoverage(36, 36).describe() == "complete run (36 cases)"
    assert RunCoverage(36, 2).describe() == "partial run (2 of 36 cases)"
    assert RunCoverage(36, 0).describe() == "no case ran (0 of 36 cases)"
    assert RunCoverage(0, 0).complete and RunCoverage(0, 0).empty


@pytest.mark.parametrize(
    ("ran", "typed", "gate_partial", "path", "aggregates", "status"),
    [
        (4, False, False, "e.json", True, None),
        (4, True, True, "e.json", True, None),
        (2, False, False, "e.partial.json", False, None),
        (2, True, False, "e.json", False, None),
        (2, False, True, "e.partial.json", True, None),
        (0, False, True, None, False, 5),
        (0, True, False, None, False, 5),
    ],
)
def test_the_policy(
    ran: int,
    typed: bool,
    gate_partial: bool,
    path: str | None,
    aggregates: bool,
    status: int | None,
) -> None:
    typed_flags = frozenset({"out"}) if typed else frozenset({"html"})
    policy = PartialRunPolicy("e.json", typed=typed_flags, gate_partial=gate_partial)
    coverage = RunCoverage(4, ran)

    assert policy.artifact_path(coverage) == path
    assert policy.judges_aggregates(coverage) is aggregates
    assert policy.judges_anything(coverage) is (ran > 0)
    assert policy.exit_status(coverage) == status


def test_every_output_follows_the_rule() -> None:
    policy = PartialRunPolicy("e.json", typed=frozenset({"html"}))
    partial = RunCoverage(4, 2)

    assert policy.output_path("report.html", "html", partial) == "report.html"  # typed
    assert PartialRunPolicy("e.json").output_path("r.html", "html", partial) == "r.partial.html"
    assert policy.output_path(None, "html", partial) is None
    assert policy.output_path("r.html", "html", RunCoverage(4, 0)) is None


SHARD = "shard 2/3 (12 of 36 cases)"


def test_a_shard_is_a_planned_subset() -> None:
    """A shard that ran its own cases is complete: its artifact goes exactly to the configured
    path, but its aggregate bounds are left to the merge."""
    policy = PartialRunPolicy("e.json")
    shard = RunCoverage(12, 12, SHARD)

    assert shard.complete and shard.describe() == f"complete run (12 cases) of {SHARD}"
    assert policy.artifact_path(shard) == "e.json"
    assert policy.aggregate_skip_reason(shard) == (
        f"{SHARD}: judged on the merged run (taguru-evaluate merge)"
    )
    assert not policy.judges_aggregates(shard)
    assert policy.judges_anything(shard)
    assert policy.exit_status(shard) is None
    assert shard.subset() == SHARD


def test_gate_partial_judges_a_shard_on_its_own_cases() -> None:
    policy = PartialRunPolicy("e.json", gate_partial=True)

    assert policy.aggregate_skip_reason(RunCoverage(12, 12, SHARD)) is None
    assert policy.aggregate_skip_reason(RunCoverage(12, 5, SHARD)) is None


def test_a_shard_that_left_its_own_cases_out_is_partial() -> None:
    policy = PartialRunPolicy("e.json")
    partial = RunCoverage(12, 5, SHARD)

    assert partial.describe() == f"partial run (5 of 12 cases) of {SHARD}"
    assert partial.subset() == f"a partial run (5 of 12 cases) of {SHARD}"
    assert policy.artifact_path(partial) == "e.partial.json"
    assert policy.aggregate_skip_reason(partial) == partial.describe()


def test_a_shard_holding_no_case_writes_nothing_and_exits_5() -> None:
    policy = PartialRunPolicy("e.json")
    empty = RunCoverage(0, 0, "shard 4/4 (0 of 3 cases)")

    assert empty.describe() == "no case ran (0 of 0 cases) of shard 4/4 (0 of 3 cases)"
    assert policy.artifact_path(empty) is None
    assert policy.exit_status(empty) == 5


def test_an_unsharded_complete_run_judges_everything() -> None:
    complete = RunCoverage(36, 36)

    assert complete.subset() is None
    assert PartialRunPolicy("e.json").aggregate_skip_reason(complete) is None
