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
