"""Partial runs (``run.partial``): aggregate bounds are not judged against a subset unless
``--taguru-gate-partial``; case-scoped bounds still fail their items; the artifact goes beside
the configured one unless ``--taguru-out`` was typed; no case at all → exit 5."""

import json
import xml.etree.ElementTree as ET

import pytest
from e2e import Suite

CRASH_CONFTEST = """
import os


def pytest_runtest_call(item):
    if item.name == "c-beta" and hasattr(item.config, "workerinput"):
        os._exit(1)
"""

PREVIOUS = '{"a complete": "baseline"}'
AGGREGATE_FAILS = {"taguru_evaluate_thresholds": 1, "aggregate": {"recall.mrr": {"min": 0.99}}}
GATE_PATTERN = "eval.jsonl::[[]thresholds]"


def not_run_warning(missing: int, ran: int) -> str:
    return (
        f"{missing} of 4 dataset case(s) did not run (deselected, skipped, not reached after "
        f"-x/--maxfail, or lost with a crashed worker); the artifact holds the {ran} that ran"
    )


def ran(suite: Suite, name: str = "evaluation.partial.json") -> list[str]:
    return [case["case_id"] for case in suite.artifact(name)["cases"]]


@pytest.fixture
def baseline(suite: Suite) -> None:
    (suite.path / "evaluation.json").write_text(PREVIOUS, encoding="utf-8")


def assert_baseline_untouched(suite: Suite) -> None:
    assert (suite.path / "evaluation.json").read_text(encoding="utf-8") == PREVIOUS


def gate_testcase(suite: Suite) -> ET.Element:
    root = ET.parse(suite.path / "junit.xml").getroot()
    found = [case for case in root.iter("testcase") if case.get("name") == "[thresholds]"]
    assert len(found) == 1
    return found[0]


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
def test_a_subset_skips_the_aggregate_bounds_and_keeps_the_baseline(
    suite: Suite, baseline: None, selection: tuple[str, ...], dist: tuple[str, ...]
) -> None:
    thresholds = suite.write_thresholds(AGGREGATE_FAILS)
    args = ("--taguru-thresholds", thresholds, "--junitxml=junit.xml", "-rs")
    result = suite.run(*selection, *args, *dist)

    assert result.ret == 0
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(
        [
            f"  WARNING: {not_run_warning(2, 2)}",
            "  wrote evaluation.partial.json",
            "  thresholds: PASS (sha256 *…)",
            "  thresholds: aggregate bounds not judged: partial run (2 of 4 cases); "
            "--taguru-gate-partial judges them on the subset",
        ]
    )
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1] eval.jsonl:1: aggregate bounds not judged: partial run (2 of 4 cases)"]
    )
    assert_baseline_untouched(suite)
    artifact = suite.artifact("evaluation.partial.json")
    assert ran(suite) == ["c-alpha", "c-gamma"]
    assert artifact["inputs"]["eval"]["cases"] == 4
    assert artifact["inputs"]["out"] == "evaluation.partial.json"
    assert artifact["warnings"] == [not_run_warning(2, 2)]
    assert artifact["thresholds"]["passed"] is True
    assert artifact["thresholds"]["aggregate_skipped"] == "partial run (2 of 4 cases)"
    skipped = gate_testcase(suite).find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "aggregate bounds not judged: partial run (2 of 4 cases)"


def test_a_case_bound_still_fails_its_item_in_a_subset(
    suite: Suite, baseline: None, dist: tuple[str, ...]
) -> None:
    thresholds = suite.write_thresholds(
        {**AGGREGATE_FAILS, "cases": {"overrides": {"c-miss": {"recall.mrr": {"min": 1.0}}}}}
    )
    result = suite.run("-k", "c-miss or c-beta", "--taguru-thresholds", thresholds, *dist)

    assert result.ret == 3
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    assert_baseline_untouched(suite)
    assert ran(suite) == ["c-beta", "c-miss"]


def test_gate_partial_judges_the_aggregates_on_the_subset(
    suite: Suite, baseline: None, dist: tuple[str, ...]
) -> None:
    thresholds = suite.write_thresholds(AGGREGATE_FAILS)
    result = suite.run(
        "-k", "c-beta or c-miss", "--taguru-thresholds", thresholds, "--taguru-gate-partial", *dist
    )

    assert result.ret == 3
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([f"FAILED {GATE_PATTERN} - recall.mrr 0.5 < min 0.99"])
    assert "aggregate_skipped" not in suite.artifact("evaluation.partial.json")["thresholds"]
    assert_baseline_untouched(suite)


def test_gate_partial_from_ini(suite: Suite, baseline: None) -> None:
    suite.write_ini("taguru_gate_partial = true\n")
    thresholds = suite.write_thresholds(AGGREGATE_FAILS)
    result = suite.run("-k", "c-miss", "--taguru-thresholds", thresholds)

    assert result.ret == 3
    result.assert_outcomes(failed=1, passed=1)


def test_an_out_typed_on_the_command_line_takes_the_partial_artifact(
    suite: Suite, baseline: None, dist: tuple[str, ...]
) -> None:
    result = suite.run("-k", "c-alpha", "--taguru-out", "evaluation.json", *dist)

    assert result.ret == 0
    assert ran(suite, "evaluation.json") == ["c-alpha"]
    assert not (suite.path / "evaluation.partial.json").exists()


def test_an_out_from_the_ini_file_gets_a_partial_sibling(suite: Suite) -> None:
    (suite.path / "out").mkdir()
    suite.write_ini("taguru_out = out/run.json\n")
    result = suite.run("-k", "c-alpha")

    assert result.ret == 0
    result.stdout.fnmatch_lines(["  wrote out/run.partial.json"])
    assert ran(suite, "out/run.partial.json") == ["c-alpha"]
    assert not (suite.path / "out" / "run.json").exists()


def test_a_full_run_has_no_warnings_key(suite: Suite, baseline: None) -> None:
    result = suite.run()

    assert result.ret == 0
    artifact = suite.artifact()
    assert "warnings" not in artifact
    assert len(artifact["cases"]) == 4
    assert "did not run" not in result.stdout.str()
    assert not (suite.path / "evaluation.partial.json").exists()


def test_exitfirst_is_a_partial_run(suite: Suite, baseline: None) -> None:
    thresholds = suite.write_thresholds(
        {
            "taguru_evaluate_thresholds": 1,
            "aggregate": {"recall.mrr": {"min": 0.99}},
            "cases": {"overrides": {"c-beta": {"recall.mrr": {"min": 2.0}}}},
        }
    )
    result = suite.run("--taguru-thresholds", thresholds, "-x")

    assert result.ret == 3
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    assert ran(suite) == ["c-alpha", "c-beta"]
    assert suite.artifact("evaluation.partial.json")["warnings"] == [not_run_warning(2, 2)]
    assert_baseline_untouched(suite)


def test_a_crashed_worker_fails_the_session_and_writes_no_artifact(
    suite: Suite, baseline: None
) -> None:
    # Exit 1 writes nothing (taguru's rule), not even beside the baseline; the summary says so.
    suite.pytester.makeconftest(CRASH_CONFTEST)
    result = suite.run("-n", "2")

    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*worker 'gw*' crashed while running 'eval.jsonl::c-beta'*",
            "  3 case(s) — passage: 3 ok, 0 failed;*",
            f"  WARNING: {not_run_warning(1, 3)}",
            "  evaluation.partial.json was not written: 1 test(s) or collection error(s) other "
            "than case regressions failed (an ordinary test, an errored case, a crashed "
            "worker); the session exits 1",
        ]
    )
    assert not (suite.path / "evaluation.partial.json").exists()
    assert_baseline_untouched(suite)


def test_no_selected_case_exits_5_whatever_the_thresholds(
    suite: Suite, baseline: None, dist: tuple[str, ...]
) -> None:
    thresholds = suite.write_thresholds(AGGREGATE_FAILS)
    args = ("--taguru-thresholds", thresholds, "--junitxml=junit.xml")
    result = suite.run("-k", "no-such-case", *args, *dist)

    assert result.ret == 5
    result.stdout.fnmatch_lines(
        ["  taguru evaluate: no case ran (0 of 4 cases); nothing was written (*)"]
    )
    assert "n=0" not in result.stdout.str()
    assert_baseline_untouched(suite)
    assert not (suite.path / "evaluation.partial.json").exists()
    skipped = gate_testcase(suite).find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "no case ran (0 of 4 cases)"


def test_the_partial_artifact_reads_back_as_taguru_json(suite: Suite) -> None:
    result = suite.run("-k", "c-alpha")

    assert result.ret == 0
    text = (suite.path / "evaluation.partial.json").read_text(encoding="utf-8")
    assert json.loads(text)["taguru_evaluation"] == 1
