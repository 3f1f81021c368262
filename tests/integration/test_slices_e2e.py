"""Per-slice scorecards end to end, on the example suite and its case ids: slices in the
summary, the artifact and compare's Markdown; the slice gate as ``eval.jsonl::[slices]`` (exit 3,
JUnit); ``min_cases``; partial runs; bad slice files refused (exit 2) before any case runs.
Every scenario runs plain and under pytest-xdist (``dist``)."""

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from e2e import CountingListener, Suite
from paths import EXAMPLE_SUITE

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.score.slices import slice_cards

CLI = Path(sys.executable).with_name("taguru-evaluate")
SLICES_PATTERN = "eval.jsonl::[[]slices]"
SLICE_LINES = """
taguru_slices =
    history: history-*
    drinks: products-* pairing-*
    misses: miss-*
    nothing: zzz-*
"""
GLOBS = {
    "history": ["history-*"],
    "drinks": ["products-*", "pairing-*"],
    "misses": ["miss-*"],
    "nothing": ["zzz-*"],
}
CASES = 36


@pytest.fixture
def sake(suite: Suite) -> Suite:
    """The pytester directory holding the example suite (eval set and corpus) instead."""
    shutil.copy(EXAMPLE_SUITE / "eval.jsonl", suite.path / "eval.jsonl")
    shutil.copy(EXAMPLE_SUITE / "corpus" / "sake.ndjson", suite.path / "corpus.ndjson")
    return suite


def write_json(suite: Suite, name: str, document: Any) -> str:
    (suite.path / name).write_text(json.dumps(document, indent=2), encoding="utf-8")
    return name


def slices_file(suite: Suite) -> str:
    return write_json(suite, "slices.json", {"taguru_slices": 1, "slices": GLOBS})


def slice_thresholds(suite: Suite, slices: dict[str, Any]) -> str:
    document = {"taguru_slice_thresholds": 1, "slices": slices}
    return write_json(suite, "slice-thresholds.json", document)


def junit_case(suite: Suite, name: str = "[slices]") -> ET.Element:
    root = ET.parse(suite.path / "junit.xml").getroot()
    found = [case for case in root.iter("testcase") if case.get("name") == name]
    assert len(found) == 1
    return found[0]


def test_slices_show_in_the_summary_the_artifact_and_markdown(
    sake: Suite, dist: tuple[str, ...]
) -> None:
    sake.write_ini(SLICE_LINES)
    result = sake.run(*dist)

    assert result.ret == 0
    result.assert_outcomes(passed=CASES)
    result.stdout.fnmatch_lines([
        "  slices (mean per case):",
        "    history — 4 case(s): recall.recall_at_k 1.000, recall.mrr 0.833, *",
        "    drinks — 6 case(s): recall.recall_at_k *",
        "    misses — 5 case(s): recall.recall_at_k 0.600, recall.mrr 0.500, *",
        "    nothing — 0 case(s)",
        "  wrote evaluation.json",
    ])  # fmt: skip
    assert (
        "taguru: evaluate: warning: --taguru-slices: slice 'nothing' (zzz-*) matches no case id "
        "of the eval set"
    ) in result.stderr.str()
    text = (sake.path / "evaluation.json").read_text(encoding="utf-8")
    artifact = json.loads(text)
    assert list(artifact)[-1] == "slices"
    cards = slice_cards(GLOBS, Evaluation.model_validate(artifact).cases)
    assert artifact["slices"] == json.loads(json.dumps(to_jsonable(cards)))
    assert [artifact["slices"][name]["n"] for name in GLOBS] == [4, 6, 5, 0]

    compared = subprocess.run(
        [str(CLI), "compare", "evaluation.json", "evaluation.json", "--format", "markdown"],
        cwd=sake.path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    markdown = compared.stdout
    assert "#### Slices" in markdown
    assert "| history | 4 → 4 | recall.recall_at_k | 1.000 | 1.000 | +0.000 | = |" in markdown
    assert "| | | recall.mrr | 0.833 | 0.833 | +0.000 | = |" in markdown
    assert "| nothing | 0 → 0 | | | | | |" in markdown


def test_a_run_without_slices_writes_no_slices_key(sake: Suite) -> None:
    result = sake.run("-k", "history")
    assert result.ret == 0
    artifact = sake.artifact("evaluation.partial.json")
    assert "slices" not in artifact and "slice_thresholds" not in artifact
    assert "slices (mean per case)" not in result.stdout.str()


def test_a_broken_slice_bound_exits_3_with_a_failed_junit_testcase(
    sake: Suite, dist: tuple[str, ...]
) -> None:
    gate = slice_thresholds(sake, {
        "history": {"aggregate": {"recall.mrr": {"min": 0.9}, "recall.ndcg": {"min": 0.5}}},
        "drinks": {"aggregate": {"recall.recall_at_k": {"min": 0.9}}},
    })  # fmt: skip
    args = ("--taguru-slices-file", slices_file(sake), "--taguru-slice-thresholds", gate)
    result = sake.run(*args, "--junitxml=junit.xml", *dist)

    assert result.ret == 3
    result.assert_outcomes(passed=CASES, failed=1)
    result.stdout.fnmatch_lines([
        "*_ taguru slices _*",
        "taguru slice thresholds: 1 violation(s)",
        "  [[]history] recall.mrr 0.833333 < min 0.9",
    ])  # fmt: skip
    result.stdout.fnmatch_lines([
        "  slice thresholds: FAIL — 1 violation(s) (sha256 *…)",
        "    [[]slice history] recall.mrr: 0.833333 < min 0.900000",
    ])  # fmt: skip
    result.stdout.fnmatch_lines([
        f"FAILED {SLICES_PATTERN} - [[]history] recall.mrr 0.833333 < min 0.9",
        f"*= 1 failed, {CASES} passed in *",
    ])  # fmt: skip
    testcase = junit_case(sake)
    failure = testcase.find("failure")
    assert failure is not None
    assert failure.get("message") == "[history] recall.mrr 0.833333 < min 0.9"
    properties = {p.get("name"): p.get("value") for p in testcase.iter("property")}
    assert properties["history/recall.mrr"] == "0.833333"
    assert set(properties) == {"history/recall.mrr", "history/recall.ndcg",
                               "drinks/recall.recall_at_k"}  # fmt: skip
    block = sake.artifact()["slice_thresholds"]
    assert block["passed"] is False and block["gated"] == ["history", "drinks"]
    assert [v["slice"] for v in block["violations"]] == ["history"]


def test_a_slice_below_min_cases_is_reported_not_judged(
    sake: Suite, dist: tuple[str, ...]
) -> None:
    sake.write_ini(SLICE_LINES)
    gate = slice_thresholds(sake, {
        "misses": {"min_cases": 20, "aggregate": {"recall.mrr": {"min": 0.99}}},
        "history": {"aggregate": {"recall.mrr": {"min": 0.8}}},
    })  # fmt: skip
    result = sake.run("--taguru-slice-thresholds", gate, "--junitxml=junit.xml", "-rA", *dist)

    assert result.ret == 0
    result.assert_outcomes(passed=CASES + 1)
    result.stdout.fnmatch_lines([
        "  slice thresholds: PASS (sha256 *…)",
        "  slice 'misses': 5 case(s), fewer than its min_cases 20: reported, not judged",
    ])  # fmt: skip
    result.stdout.fnmatch_lines([f"PASSED {SLICES_PATTERN}"])
    testcase = junit_case(sake)
    assert testcase.find("failure") is None and testcase.find("skipped") is None
    block = sake.artifact()["slice_thresholds"]
    assert block["passed"] is True and "violations" not in block
    assert block["not_judged"] == [{"slice": "misses", "n": 5, "min_cases": 20}]


def test_a_partial_run_judges_slices_only_with_gate_partial(
    sake: Suite, dist: tuple[str, ...]
) -> None:
    sake.write_ini(SLICE_LINES)
    gate = slice_thresholds(sake, {"history": {"aggregate": {"recall.mrr": {"min": 0.9}}}})
    args = ("-k", "history", "--taguru-slice-thresholds", gate, "--junitxml=junit.xml", "-rs")

    result = sake.run(*args, *dist)
    assert result.ret == 0
    result.assert_outcomes(passed=4, skipped=1)
    result.stdout.fnmatch_lines([
        "  slice thresholds: not judged: partial run (4 of 36 cases); --taguru-gate-partial "
        "judges them on the subset",
        "SKIPPED * slice bounds not judged: partial run (4 of 36 cases)",
    ])  # fmt: skip
    assert junit_case(sake).find("skipped") is not None
    partial = sake.artifact("evaluation.partial.json")
    assert partial["slices"]["history"]["n"] == 4 and partial["slices"]["drinks"]["n"] == 0

    judged = sake.run(*args, "--taguru-gate-partial", *dist)
    assert judged.ret == 3
    judged.assert_outcomes(passed=4, failed=1)


BAD_INPUTS = {
    "slices-file": (
        ("--taguru-slices-file", "slices.json"),
        {"slices.json": '{"taguru_slices": 1,\n "slices": {\n  "history": "history-*"}}'},
        "taguru: evaluate: slices.json:3: slices.history: expected an array of globs over case "
        'ids, got string "history-*"',
    ),
    "slice-lines": (
        ("--taguru-slices", "history: history-*\ndrinks"),
        {},
        'taguru: evaluate: --taguru-slices: line 2: expected "name: glob [glob…]", got "drinks"',
    ),
    "slice-thresholds": (
        ("--taguru-slices", "alpha: c-a*", "--taguru-slice-thresholds", "st.json"),
        {"st.json": '{"taguru_slice_thresholds": 1,\n "slices": {"alhpa": {}}}'},
        "taguru: evaluate: st.json:2: slices.alhpa: unknown slice 'alhpa'",
    ),
    "slice-thresholds-without-slices": (
        ("--taguru-slice-thresholds", "st.json"),
        {"st.json": '{"taguru_slice_thresholds": 1, "slices": {}}'},
        "taguru: evaluate: --taguru-slice-thresholds needs slices: --taguru-slices or "
        "--taguru-slices-file",
    ),
}


@pytest.mark.parametrize("bad", list(BAD_INPUTS))
def test_a_bad_slice_input_exits_2_before_any_case_or_request(
    suite: Suite, listener: CountingListener, dist: tuple[str, ...], bad: str
) -> None:
    args, files, message = BAD_INPUTS[bad]
    for name, text in files.items():
        (suite.path / name).write_text(text, encoding="utf-8")
    result = suite.run(
        "--taguru-url", listener.url, *args, *dist, serve=False, isolated=True
    )

    assert result.ret == 2
    assert message in result.stderr.str().splitlines()
    assert listener.connections == 0
    assert "passed" not in result.stdout.str()
    assert not (suite.path / "evaluation.json").exists()


def test_a_typed_definition_replaces_the_ini_files_and_both_typed_is_refused(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    document = {"taguru_slices": 1, "slices": {"from-file": ["c-*"]}}
    suite.write_ini(f"taguru_slices_file = {write_json(suite, 'slices.json', document)}\n")
    result = suite.run("--taguru-slices", "alpha: c-alpha\nrest: c-[!a]*", *dist)
    assert result.ret == 0
    assert list(suite.artifact()["slices"]) == ["alpha", "rest"]
    assert [card["n"] for card in suite.artifact()["slices"].values()] == [1, 3]
    result.stdout.fnmatch_lines(["    alpha — 1 case(s): *", "    rest — 3 case(s): *"])

    refused = suite.run(
        "--taguru-slices", "a: c-*", "--taguru-slices-file", "slices.json", *dist, isolated=True
    )
    assert refused.ret == 2
    assert (
        "taguru: evaluate: --taguru-slices-file cannot be combined with --taguru-slices"
        in refused.stderr.str()
    )
