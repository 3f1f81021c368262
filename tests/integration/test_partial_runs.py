"""Partial runs: the artifact holds the cases that ran; a warning counts the ones that did not."""

import pytest
from e2e import Suite

CRASH_CONFTEST = """
import os


def pytest_runtest_call(item):
    if item.name == "c-beta" and hasattr(item.config, "workerinput"):
        os._exit(1)
"""


def not_run_warning(missing: int, ran: int) -> str:
    return (
        f"{missing} of 4 dataset case(s) did not run (deselected, skipped, not reached after "
        f"-x/--maxfail, or lost with a crashed worker); the artifact holds the {ran} that ran"
    )


def ran(suite: Suite) -> list[str]:
    return [case["case_id"] for case in suite.artifact()["cases"]]


@pytest.mark.parametrize(
    "selection",
    [
        pytest.param(("-k", "c-alpha or c-gamma"), id="keyword"),
        pytest.param(("eval.jsonl::c-alpha", "eval.jsonl::c-gamma"), id="node-ids"),
        pytest.param(
            ("--deselect", "eval.jsonl::c-beta", "--deselect", "eval.jsonl::c-miss"), id="deselect"
        ),
    ],
)
def test_selected_cases_only(suite: Suite, selection: tuple[str, ...]) -> None:
    result = suite.run(*selection)

    assert result.ret == 0
    result.assert_outcomes(passed=2)
    assert ran(suite) == ["c-alpha", "c-gamma"]
    artifact = suite.artifact()
    assert artifact["inputs"]["eval"]["cases"] == 4
    assert artifact["warnings"] == [not_run_warning(2, 2)]
    result.stdout.fnmatch_lines([f"  WARNING: {not_run_warning(2, 2)}", "  wrote evaluation.json"])


def test_a_full_run_has_no_warnings_key(suite: Suite) -> None:
    result = suite.run()

    assert result.ret == 0
    assert "warnings" not in suite.artifact()
    assert "did not run" not in result.stdout.str()


def test_exitfirst_keeps_the_cases_before_the_regression(suite: Suite) -> None:
    thresholds = suite.write_thresholds(
        {
            "taguru_evaluate_thresholds": 1,
            "cases": {"overrides": {"c-beta": {"recall.mrr": {"min": 2.0}}}},
        }
    )
    result = suite.run("--taguru-thresholds", thresholds, "-x")

    assert result.ret == 3
    result.assert_outcomes(passed=1, failed=1)
    assert ran(suite) == ["c-alpha", "c-beta"]
    assert suite.artifact()["warnings"] == [not_run_warning(2, 2)]


def test_a_crashed_worker_fails_the_session_and_keeps_the_other_cases(suite: Suite) -> None:
    suite.pytester.makeconftest(CRASH_CONFTEST)
    result = suite.run("-n", "2")

    assert result.ret == 1
    result.stdout.fnmatch_lines(["*worker 'gw*' crashed while running 'eval.jsonl::c-beta'*"])
    assert ran(suite) == ["c-alpha", "c-gamma", "c-miss"]
    assert suite.artifact()["warnings"] == [not_run_warning(1, 3)]


def test_no_selected_case_keeps_pytest_status_5(suite: Suite) -> None:
    result = suite.run("-k", "no-such-case")

    assert result.ret == 5
    assert ran(suite) == []
    assert suite.artifact()["warnings"] == [not_run_warning(4, 0)]
