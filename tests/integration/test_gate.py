"""``--taguru-thresholds``: the quality gate end to end (thresholds-and-compare.md Part A).

Every scenario runs plain and under pytest-xdist (``dist``) and must give the same verdict. The
run-level verdict (aggregate bounds, corpus stability) is one more test result,
``eval.jsonl::[thresholds]``, in the terminal, the short summary and JUnit XML.
"""

import xml.etree.ElementTree as ET

import pytest
from e2e import CASE_LINES, MID_RUN_WRITE_CONFTEST, CountingListener, Suite

GATE_NODEID = "eval.jsonl::[thresholds]"
GATE_PATTERN = "eval.jsonl::[[]thresholds]"
"""The node id as an fnmatch pattern."""


def junit_cases(suite: Suite) -> dict[str, ET.Element]:
    root = ET.parse(suite.path / "junit.xml").getroot()
    return {f"{case.get('classname')}::{case.get('name')}": case for case in root.iter("testcase")}

PASSING = {
    "taguru_evaluate_thresholds": 1,
    "aggregate": {"passage.failure_rate": {"max": 0.0}, "recall.recall_at_k": {"min": 0.5}},
    "cases": {"default": {"recall.recall_at_k": {"min": 0.0}}},
}
AGGREGATE_VIOLATION = {
    "taguru_evaluate_thresholds": 1,
    "aggregate": {"recall.recall_at_k": {"min": 0.9}},
}
CASE_VIOLATION = {
    "taguru_evaluate_thresholds": 1,
    "cases": {"overrides": {"c-miss": {"recall.recall_at_k": {"min": 1.0}}}},
}


def test_passing_gate_exits_0_with_a_passing_gate_result(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    thresholds = suite.write_thresholds(PASSING)
    result = suite.run("--taguru-thresholds", thresholds, "--junitxml=junit.xml", "-rA", *dist)

    assert result.ret == 0
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["  wrote evaluation.json", "  thresholds: PASS (sha256 *…)"])
    result.stdout.fnmatch_lines([f"PASSED {GATE_PATTERN}"])
    assert "report-only" not in result.stderr.str()
    block = suite.artifact()["thresholds"]
    assert block["passed"] is True
    assert "violations" not in block
    gate = junit_cases(suite)[GATE_NODEID]
    assert gate.find("failure") is None and gate.find("skipped") is None
    properties = {p.get("name"): p.get("value") for p in gate.iter("property")}
    assert properties == {"passage.failure_rate": "0.000000", "recall.recall_at_k": "0.750000"}


def test_aggregate_violation_is_a_failed_gate_result_and_exits_3(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    thresholds = suite.write_thresholds(AGGREGATE_VIOLATION)
    result = suite.run("--taguru-thresholds", thresholds, "--junitxml=junit.xml", *dist)

    assert result.ret == 3
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ taguru thresholds _*",
            "taguru thresholds: 1 run-level violation(s)",
            "  [[]aggregate] recall.recall_at_k: 0.750000 < min 0.900000",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "  wrote evaluation.json",
            "  thresholds: FAIL — 1 violation(s) (sha256 *…)",
            "    [aggregate] recall.recall_at_k: 0.750000 < min 0.900000",
        ]
    )
    # The short summary carries the violation, and the last line reads as a failure.
    result.stdout.fnmatch_lines(
        [
            f"FAILED {GATE_PATTERN} - recall.recall_at_k 0.75 < min 0.9",
            "*= 1 failed, 4 passed in *",
        ]
    )
    junit = ET.parse(suite.path / "junit.xml").getroot()
    assert junit.find("testsuite").get("failures") == "1"  # type: ignore[union-attr]
    assert junit.find("testsuite").get("tests") == "5"  # type: ignore[union-attr]
    failure = junit_cases(suite)[GATE_NODEID].find("failure")
    assert failure is not None
    assert failure.get("message") == "recall.recall_at_k 0.75 < min 0.9"
    assert "1 run-level violation(s)" in (failure.text or "")
    artifact = suite.artifact()
    assert artifact["thresholds"]["passed"] is False
    assert [case["case_id"] for case in artifact["cases"]] == [
        "c-alpha",
        "c-beta",
        "c-gamma",
        "c-miss",
    ]


def test_case_violation_fails_that_item_with_the_drilldown(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    thresholds = suite.write_thresholds(CASE_VIOLATION)
    result = suite.run("--taguru-thresholds", thresholds, "--junitxml=junit.xml", *dist)

    assert result.ret == 3
    result.assert_outcomes(passed=4, failed=1)  # the gate result passes: no run-level violation
    result.stdout.fnmatch_lines(
        [
            "*_ taguru case c-miss _*",
            "taguru case 'c-miss' broke 1 case-scoped threshold(s) at "
            f"eval.jsonl:{CASE_LINES['c-miss']}",
            "query: alpha widget",
            "violated:",
            "  recall.recall_at_k: 0.000000 < min 1.000000 (bound from cases.overrides.c-miss)",
            "*docs/beta.md (paragraph 1, relevance 1): not in the top 1",
            "hits ranked above an expected source:",
            "  1. docs/alpha.md#* (score *)",
            "reproduce (the run's embedded server stopped with the session; *",
            "  POST /contexts/mini/sources/search *",
        ]
    )
    result.stdout.fnmatch_lines(
        ["  thresholds: FAIL — 1 violation(s) *", "    [[]case c-miss] recall.recall_at_k: *"]
    )
    # No Python traceback: the drill-down is the whole failure text.
    assert "Traceback" not in result.stdout.str()
    assert "CaseRegression" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        ["FAILED eval.jsonl::c-miss - recall.recall_at_k 0 < min 1"]
    )
    junit = (suite.path / "junit.xml").read_text(encoding="utf-8")
    assert junit.count("<failure") == 1
    assert "broke 1 case-scoped threshold(s) at eval.jsonl:6" in junit
    failure = junit_cases(suite)["eval.jsonl::c-miss"].find("failure")
    assert failure is not None
    assert failure.get("message") == "recall.recall_at_k 0 < min 1"


def test_malformed_thresholds_exit_2_before_any_request(
    suite: Suite, listener: CountingListener, dist: tuple[str, ...]
) -> None:
    (suite.path / "thresholds.json").write_text(
        '{"taguru_evaluate_thresholds":1,"aggregate":{"recall.recal_at_k":{"min":0.8}}}'
    )
    result = suite.run(
        "--taguru-thresholds",
        "thresholds.json",
        "--taguru-url",
        listener.url,
        *dist,
        serve=False,
        isolated=True,
    )

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        ["taguru: evaluate: thresholds.json: aggregate: unknown metric name 'recal*'"]
    )
    assert listener.connections == 0
    assert not (suite.path / "evaluation.json").exists()


@pytest.mark.parametrize(
    ("allow", "expected"), [pytest.param(False, 3, id="gated"), pytest.param(True, 0, id="allowed")]
)
def test_a_write_mid_run_makes_the_corpus_unstable(
    suite: Suite, dist: tuple[str, ...], allow: bool, expected: int
) -> None:
    suite.pytester.makeconftest(MID_RUN_WRITE_CONFTEST)
    thresholds = suite.write_thresholds(
        {"taguru_evaluate_thresholds": 1, "allow_unstable_corpus": allow}
    )
    result = suite.run("--taguru-thresholds", thresholds, *dist)

    assert result.ret == expected
    if allow:
        result.assert_outcomes(passed=5)
    else:
        result.assert_outcomes(passed=4, failed=1)
        result.stdout.fnmatch_lines([f"FAILED {GATE_PATTERN} - corpus.stable: the context's *"])
    result.stdout.fnmatch_lines(["  WARNING: the context's revision changed during this run*"])
    corpus = suite.artifact()["corpus"]
    assert corpus["stable"] is False
    assert corpus["revision_after"]["passages"] > corpus["revision_before"]["passages"]
    if allow:
        result.stdout.fnmatch_lines(["  thresholds: PASS *"])
    else:
        result.stdout.fnmatch_lines(
            [
                "  thresholds: FAIL — 1 violation(s) *",
                "    [[]corpus] corpus.stable: the context's revision changed during this run*",
            ]
        )


def test_regression_exit_code_replaces_3(suite: Suite, dist: tuple[str, ...]) -> None:
    thresholds = suite.write_thresholds(CASE_VIOLATION)
    result = suite.run(
        "--taguru-thresholds", thresholds, "--taguru-regression-exit-code", "7", *dist
    )

    assert result.ret == 7
    result.assert_outcomes(passed=4, failed=1)


def test_regression_exit_code_from_ini(suite: Suite) -> None:
    suite.write_ini("taguru_regression_exit_code = 0\n")
    result = suite.run("--taguru-thresholds", suite.write_thresholds(AGGREGATE_VIOLATION))

    assert result.ret == 0
    result.stdout.fnmatch_lines(["  thresholds: FAIL — 1 violation(s) *"])


def test_bad_regression_exit_code_is_a_usage_error(suite: Suite) -> None:
    result = suite.run("--taguru-regression-exit-code", "300", serve=False, isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        ["taguru: evaluate: --taguru-regression-exit-code needs an exit status 0..=255"]
    )


def test_github_actions_annotations_and_step_summary(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = suite.path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    thresholds = suite.write_thresholds(CASE_VIOLATION)
    result = suite.run("--taguru-thresholds", thresholds)

    assert result.ret == 3
    annotations = [line for line in result.stdout.lines if line.startswith("::error")]
    assert annotations == [
        "::error file=eval.jsonl,line=6,title=taguru case c-miss::"
        "recall.recall_at_k: 0.000000 < min 1.000000"
    ]
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### taguru thresholds: FAIL\n")
    assert "`eval.jsonl:6`" in text
