"""Two runs of the example suite, the second against a corpus with one source changed, and
``taguru-evaluate compare`` / ``gate`` on the two artifacts (thresholds-and-compare.md Part B).

BASE is a drop-in run against a reference server on loopback holding the example corpus; HEAD
is a plugin run (``--taguru-serve``) on a copy whose ``corpus/history.md`` paragraph 0 was
rewritten into unrelated text. Exactly the cases that expect that paragraph must regress.
"""

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_cli_e2e import (
    CASES,
    CORPUS,
    EVAL,
    THRESHOLDS,
    read_json,
    run_cli,
    run_pytest,
)

from pytest_taguru.server.runner import ReferenceServer

CHANGED_SOURCE = "corpus/history.md"
REWRITTEN = "この段落は改訂のため差し替えられ、蔵の由来についての記述は別の資料に移された。"
THRESHOLDS_SHA256 = hashlib.sha256(Path(THRESHOLDS).read_bytes()).hexdigest()


def changed_corpus(source: str, paragraph: int) -> str:
    """The example corpus with one paragraph of ``source``'s passage rewritten.

    The paragraph count stays, so the source's section, locator and association records
    still apply; only the text that cases quote and retrieve is gone.
    """
    records = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    current = None
    for record in records:
        current = record.get("source", current) if "taguru_batch" in record else current
        if current == source and "passage" in record:
            paragraphs = record["passage"].split("\n\n")
            paragraphs[paragraph] = REWRITTEN
            record["passage"] = "\n\n".join(paragraphs)
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def cases_expecting(source: str, paragraph: int) -> set[str]:
    """The case_ids of the eval set whose ``expected_sources`` name that paragraph."""
    lines = Path(EVAL).read_text(encoding="utf-8").splitlines()[1:]
    return {
        case["case_id"]
        for case in map(json.loads, filter(None, lines))
        if any(
            expected["source"] == source and paragraph in expected.get("paragraphs", [])
            for expected in case.get("expected_sources", [])
        )
    }


REGRESSED = sorted(cases_expecting(CHANGED_SOURCE, 0))


@dataclass(frozen=True)
class TwoRuns:
    """The directory holding ``base.json`` and ``head.json``, and how each run exited."""

    path: Path
    base_exit: int
    head_exit: int


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> TwoRuns:
    path = tmp_path_factory.mktemp("two-runs")
    with ReferenceServer.from_import_files([CORPUS]) as server:
        base = run_cli("--eval", EVAL, "--context", "sake", "--url", server.url,
                       "--out", "base.json", "--thresholds", THRESHOLDS, cwd=path)  # fmt: skip
    (path / "head.ndjson").write_text(changed_corpus(CHANGED_SOURCE, 0), encoding="utf-8")
    head = run_pytest("-c", os.devnull, "--rootdir", str(path), "--taguru-eval", EVAL,
                      "--taguru-context", "sake", "--taguru-serve", "head.ndjson",
                      "--taguru-thresholds", THRESHOLDS, "--taguru-out", "head.json",
                      cwd=path)  # fmt: skip
    assert (path / "base.json").is_file(), base.stderr
    assert (path / "head.json").is_file(), head.stdout + head.stderr
    return TwoRuns(path, base.returncode, head.returncode)


def compare(runs: TwoRuns, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("compare", *args, cwd=runs.path)


def jsonl(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    return [json.loads(line) for line in text.splitlines()]


def test_the_change_breaks_the_runs_thresholds(runs: TwoRuns) -> None:
    assert REGRESSED == ["history-founding", "history-name-origin", "miss-founder-label"]
    assert (runs.base_exit, runs.head_exit) == (0, 3)


def test_compare_reports_exactly_the_cases_of_the_changed_paragraph(runs: TwoRuns) -> None:
    result = compare(runs, "base.json", "head.json", "--out", "changes.jsonl")

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    header, *records = jsonl(runs.path / "changes.jsonl")
    counts = header["counts"]
    assert counts["regressed"] == len(REGRESSED)
    assert (counts["added"], counts["removed"]) == (0, 0)
    assert (counts["cases_base"], counts["cases_head"]) == (CASES, CASES)
    assert counts["improved"] + counts["regressed"] + counts["unchanged"] == CASES
    assert "warnings" not in header  # same context, revisions, thresholds, budget; stable
    for side, path in (("base", "base.json"), ("head", "head.json")):
        assert header[side]["path"] == path
        assert header[side]["context"] == "sake"
        assert header[side]["corpus_stable"] is True
        assert header[side]["thresholds_sha256"] == THRESHOLDS_SHA256
    assert [record["case_id"] for record in records] == sorted(r["case_id"] for r in records)
    assert sorted(r["case_id"] for r in records if r["kind"] == "regressed") == REGRESSED
    for record in records:
        if record["kind"] == "improved":  # only the evidence mix can move elsewhere
            assert {m["metric"] for m in record["metrics"]} == {"diversity.sources"}
    by_id = {record["case_id"]: record for record in records}
    assert by_id["history-name-origin"]["metrics"] == [
        {"metric": metric, "sides": {"base": 1.0, "head": 0.0}, "delta": -1.0,
         "direction": "regressed"}
        for metric in ("recall.recall_at_k", "recall.mrr", "recall.ndcg", "citations.recall",
                       "citations.locator_validity")
    ]  # fmt: skip
    founding = {m["metric"]: m for m in by_id["history-founding"]["metrics"]}
    assert founding["recall.recall_at_k"]["sides"] == {"base": 1.0, "head": 0.0}
    assert founding["recall.recall_at_k"]["direction"] == "regressed"

    summary = result.stdout.splitlines()
    assert summary[0] == (
        f"evaluate compare: {CASES} case(s) in BASE, {CASES} in HEAD — "
        f"{counts['improved']} improved, {counts['regressed']} regressed, 0 added, 0 removed, "
        f"{counts['unchanged']} unchanged"
    )
    assert "    regressed: history-name-origin (recall.recall_at_k -1.000, recall.mrr -1.000, "\
        "recall.ndcg -1.000, citations.recall -1.000, citations.locator_validity -1.000)" \
        in summary  # fmt: skip
    assert summary[-1] == "  wrote changes.jsonl"


def test_the_aggregate_diff_is_the_two_artifacts_headlines(runs: TwoRuns) -> None:
    result = compare(runs, "base.json", "head.json", "--out", "aggregates.jsonl")

    assert result.returncode == 0, result.stderr
    header = jsonl(runs.path / "aggregates.jsonl")[0]
    artifacts = {side: read_json(runs.path / f"{side}.json") for side in ("base", "head")}
    entries = {entry["metric"]: entry for entry in header["metrics"]}
    names = set(artifacts["base"]["metrics"]) | set(artifacts["head"]["metrics"])
    assert set(entries) <= names
    # A name drops out only when neither side has a value: no samples on either side (B.7).
    assert all(
        artifacts[side]["metrics"][name]["n"] == 0
        for name in names - set(entries)
        for side in artifacts
    )
    recall = entries["recall.recall_at_k"]
    assert recall["statistic"] == "distribution"
    assert recall["sides"] == {
        side: artifacts[side]["metrics"]["recall.recall_at_k"]["mean"] for side in recall["sides"]
    }
    assert recall["delta"] == recall["sides"]["head"] - recall["sides"]["base"] < 0


def test_a_run_compared_with_itself_has_no_changes(runs: TwoRuns) -> None:
    result = compare(runs, "base.json", "base.json", "--out", "same.jsonl")

    assert result.returncode == 0, result.stderr
    lines = jsonl(runs.path / "same.jsonl")
    assert len(lines) == 1
    assert lines[0]["counts"]["unchanged"] == CASES


def test_markdown_goes_to_stdout_for_a_pull_request_comment(runs: TwoRuns) -> None:
    result = compare(runs, "base.json", "head.json", "--format", "markdown")

    assert result.returncode == 0, result.stderr
    markdown = result.stdout
    assert markdown.startswith("### taguru evaluate compare\n")
    assert f"\n| {len(REGRESSED)} | " in markdown
    assert (
        "| history-name-origin | regressed | **recall.recall_at_k 1.000 → 0.000 (-1.000)**<br>"
        in markdown
    )
    recall_row = next(line for line in markdown.splitlines() if line.startswith("| recall.mrr |"))
    assert recall_row.endswith(" | ↓ worse |")
    assert "-0.000" not in markdown
    assert result.stderr.splitlines()[-1] == "  wrote stdout"  # the summary, off stdout
    assert not (runs.path / "changes.md").exists()


def test_markdown_to_a_named_file(runs: TwoRuns) -> None:
    result = compare(runs, "base.json", "head.json", "--format", "markdown", "--out", "pr.md")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "  wrote pr.md"
    assert (runs.path / "pr.md").read_text(encoding="utf-8").startswith("### taguru evaluate")


def test_out_dash_writes_changes_jsonl_to_stdout(runs: TwoRuns) -> None:
    result = compare(runs, "base.json", "head.json", "--out", "-")

    assert result.returncode == 0, result.stderr
    header, *records = [json.loads(line) for line in result.stdout.splitlines()]
    assert header["kind"] == "header"
    assert sorted(r["case_id"] for r in records if r["kind"] == "regressed") == REGRESSED
    assert result.stderr.splitlines()[0].startswith("evaluate compare: ")
    assert result.stderr.splitlines()[-1] == "  wrote stdout"
    assert not (runs.path / "-").exists()


def test_fail_on_regression_exits_3(runs: TwoRuns) -> None:
    failing = compare(runs, "base.json", "head.json", "--out", "-", "--fail-on-regression")
    same = compare(runs, "base.json", "base.json", "--out", "-", "--fail-on-regression")
    default = compare(runs, "base.json", "head.json", "--out", "-")

    assert (failing.returncode, same.returncode, default.returncode) == (3, 0, 0)
    last = failing.stderr.splitlines()[-1]
    assert last.startswith(f"taguru-evaluate: compare: {len(REGRESSED)} regressed case(s); ")
    assert "worse aggregate(s): " in last and "recall.mrr" in last
    assert last.endswith(" — exit 3 (--fail-on-regression)")


@pytest.mark.parametrize(
    ("artifact", "extra", "exit_code", "verdict"),
    [
        ("base.json", [], 0, "PASS"),
        ("head.json", [], 3, "FAIL — "),
        ("head.json", ["--regression-exit-code", "7"], 7, "FAIL — "),
    ],
)
def test_gate_regates_a_saved_artifact(
    runs: TwoRuns, artifact: str, extra: list[str], exit_code: int, verdict: str
) -> None:
    result = run_cli("gate", artifact, "--thresholds", THRESHOLDS, *extra, cwd=runs.path)

    assert result.returncode == exit_code, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"  thresholds: {verdict}")
    assert first.endswith(f"(sha256 {THRESHOLDS_SHA256[:12]}…)")
    assert result.stderr == ""


def test_gate_agrees_with_the_live_run(runs: TwoRuns) -> None:
    """The saved HEAD verdict re-gated offline is the verdict the run stored."""
    stored = read_json(runs.path / "head.json")["thresholds"]
    result = run_cli("gate", "head.json", "--thresholds", THRESHOLDS, cwd=runs.path)

    assert stored["passed"] is False
    assert f"FAIL — {len(stored['violations'])} violation(s)" in result.stdout


def test_compare_input_and_output_errors(runs: TwoRuns) -> None:
    truncated = (runs.path / "head.json").read_text(encoding="utf-8")[:100]
    (runs.path / "truncated.json").write_text(truncated, encoding="utf-8")

    missing = compare(runs, "missing.json", "head.json")
    malformed = compare(runs, "base.json", "truncated.json")
    unwritable = compare(runs, "base.json", "head.json", "--out", "no-such-dir/x.jsonl")

    assert (missing.returncode, malformed.returncode, unwritable.returncode) == (2, 2, 1)
    assert missing.stderr == (
        "taguru-evaluate: BASE reading missing.json: No such file or directory (os error 2)\n"
    )
    assert malformed.stderr.startswith(
        "taguru-evaluate: HEAD truncated.json: malformed evaluation.json: "
    )
    assert unwritable.stderr == (
        "taguru-evaluate: writing no-such-dir/x.jsonl: No such file or directory (os error 2)\n"
    )
    assert missing.stdout == malformed.stdout == unwritable.stdout == ""
