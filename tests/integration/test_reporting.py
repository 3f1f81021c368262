"""What a run shows: per-case scores in verbose output and JUnit XML, the report-only notice,
and never a token, URL userinfo or passage text in any output or file."""

import xml.etree.ElementTree as ET

import pytest
from e2e import CASE_IDS, SENTINEL, TOKEN, Suite


def test_scores_in_verbose_output_and_junit_properties(suite: Suite, dist: tuple[str, ...]) -> None:
    result = suite.run("-v", "--junitxml=junit.xml", *dist)

    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "taguru: pytest-taguru *.*.*, eval eval.jsonl (4 cases), context 'mini', "
            "thresholds none (report-only)"
        ]
    )
    # Plain: "<nodeid> PASSED (…) [%]"; xdist: "[gw0] [%] PASSED (…) <nodeid>".
    assert any(
        "eval.jsonl::c-miss" in line
        and "PASSED (recall.recall_at_k 0.000, recall.mrr 0.000, recall.ndcg 0.000)" in line
        for line in result.stdout.lines
    )
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: no thresholds file given — this run is report-only: "
            "no quality bound can fail it"
        ]
    )
    cases = ET.parse(suite.path / "junit.xml").getroot().iter("testcase")
    properties = {
        str(case.get("name")): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in cases
    }
    assert sorted(properties) == sorted(CASE_IDS)
    # The thresholds file's names (score.registry), in the registry's order.
    assert properties["c-alpha"] == {
        "recall.recall_at_k": "1.000000",
        "recall.mrr": "1.000000",
        "recall.ndcg": "1.000000",
        "coverage.concepts": "1.000000",
        "coverage.associations": "1.000000",
        "citations.recall": "1.000000",
        "citations.locator_validity": "1.000000",
    }
    assert properties["c-miss"]["recall.recall_at_k"] == "0.000000"


def test_no_secret_and_no_passage_text_anywhere(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    summary = suite.path / "step-summary.md"
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    thresholds = suite.write_thresholds(
        {
            "taguru_evaluate_thresholds": 1,
            "aggregate": {"recall.mrr": {"min": 0.9}},
            "cases": {"default": {"recall.recall_at_k": {"min": 1.0}}},
        }
    )
    result = suite.run(
        "-v", "-rA", "--junitxml=junit.xml", "--taguru-thresholds", thresholds, *dist
    )

    assert result.ret == 3
    assert summary.is_file()
    # The embedded server was given the token and the cases reached it (recall was scored).
    assert suite.artifact()["cases"][0]["recall"]["recall_at_k"] == 1.0
    everything = suite.every_output(result)
    assert TOKEN not in everything
    assert SENTINEL not in everything


def test_quiet_runs_keep_pytest_plain_status_lines(suite: Suite) -> None:
    name = suite.write_thresholds(
        {
            "taguru_evaluate_thresholds": 1,
            "cases": {"default": {"recall.recall_at_k": {"min": 1.0}}},
        }
    )
    result = suite.run("-q", "--taguru-thresholds", name)

    assert result.ret == 3
    result.stdout.fnmatch_lines(["FAILED eval.jsonl::c-miss*"])
    assert not any("(recall.recall_at_k" in line for line in result.stdout.lines)
