"""Evidence assembly under equal budgets, end to end (assembly.md §1): baseline with and
without ``--taguru-max-*``, assembly with and without a budget, ``--taguru-rerank`` with the
reference server's reranker on and off; each plain and under pytest-xdist."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from e2e import SENTINEL, Suite

RERANKER_ENV = "TAGURU_RERANK_MODEL"
CLI = Path(sys.executable).with_name("taguru-evaluate")


def test_plain_baseline_has_no_budget_and_no_evidence(suite: Suite, dist: tuple[str, ...]) -> None:
    result = suite.run(*dist)

    assert result.ret == 0
    inputs = suite.artifact()["inputs"]
    assert inputs["mode"] == "baseline" and "budget" not in inputs and "rerank" not in inputs
    for case in suite.artifact()["cases"]:
        assert "budget" not in case and "evidence" not in case
    assert suite.artifact()["metrics"]["budget.items_used"]["n"] == 0


def test_baseline_with_an_item_budget_truncates_the_hits(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    result = suite.run("--taguru-max-items", "1", *dist)

    assert result.ret == 0
    artifact = suite.artifact()
    assert artifact["inputs"]["mode"] == "baseline"
    assert artifact["inputs"]["budget"] == {
        "max_items": 1,
        "max_bytes": 65536,
        "max_tokens": 4000,
    }
    for case in artifact["cases"]:
        assert len(case["passage"]["hits"]) <= 1
        assert case["budget"]["items_used"] == len(case["passage"]["hits"])
        assert "evidence" not in case
    assert artifact["metrics"]["budget.items_used"]["n"] == 4
    result.stdout.fnmatch_lines(["  budget over 4 case(s): mean * item(s) / *"])


def test_assembly_calls_evidence_and_records_the_package(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    result = suite.run("--taguru-assembly", *dist)

    assert result.ret == 0
    artifact = suite.artifact()
    assert artifact["inputs"]["mode"] == "assembly"
    assert artifact["inputs"]["budget"] == {
        "max_items": 40,
        "max_bytes": 65536,
        "max_tokens": 4000,
    }
    alpha = next(case for case in artifact["cases"] if case["case_id"] == "c-alpha")
    assert alpha["evidence"]["outcome"] == "assembled"
    assert alpha["evidence"]["reranker"] == {"configured": False, "ran": False}
    assert "plan" not in alpha["passage"]
    assert all(hit["score"] == 0.0 and hit["lanes"] == {} for hit in alpha["passage"]["hits"])
    assert alpha["recall"]["matched"] == 1
    assert artifact["metrics"]["latency.evidence_ms"]["n"] == 4
    assert SENTINEL not in (suite.path / "evaluation.json").read_text(encoding="utf-8")


def test_assembly_under_a_token_budget_omits_what_does_not_fit(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    result = suite.run("--taguru-assembly", "--taguru-max-tokens", "40", *dist)

    assert result.ret == 0
    artifact = suite.artifact()
    assert artifact["inputs"]["budget"]["max_tokens"] == 40
    for case in artifact["cases"]:
        assert case["budget"]["tokens_used"] <= 40
    assert artifact["metrics"]["budget.omitted_rate"]["numerator"] >= 1


def test_rerank_with_the_reranker_on_runs(
    suite: Suite, dist: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RERANKER_ENV, "lexical-cross")
    result = suite.run("--taguru-assembly", "--taguru-rerank", "lexical-cross", *dist)

    assert result.ret == 0
    artifact = suite.artifact()
    assert artifact["inputs"]["rerank"] == "lexical-cross"
    ran = artifact["metrics"]["rerank.ran"]
    assert ran["n"] >= 1 and ran["numerator"] == ran["n"]
    result.stdout.fnmatch_lines(
        ["  rerank 'lexical-cross' over * attempted case(s): * ran, 0 degraded"]
    )


def test_rerank_with_the_reranker_off_degrades(
    suite: Suite, dist: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(RERANKER_ENV, raising=False)
    result = suite.run("--taguru-assembly", "--taguru-rerank", "lexical-cross", *dist)

    assert result.ret == 0
    artifact = suite.artifact()
    reranker = artifact["cases"][0]["evidence"]["reranker"]
    assert reranker["ran"] is False and reranker["reason"] == "not_configured"
    assert artifact["metrics"]["rerank.ran"]["numerator"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--taguru-rerank", "m"), "--taguru-rerank requires --taguru-assembly"),
        (
            ("--taguru-assembly", "--taguru-max-bytes", "0"),
            "--taguru-max-bytes needs a positive integer",
        ),
    ],
)
def test_usage_errors_exit_2(suite: Suite, args: tuple[str, ...], message: str) -> None:
    result = suite.run(*args, isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines([f"taguru: evaluate: {message}"])


def test_a_baseline_and_an_assembly_run_at_one_budget_compare_cleanly(suite: Suite) -> None:
    baseline = suite.run("--taguru-max-tokens", "60", "--taguru-out", "baseline.json")
    assembly = suite.run(
        "--taguru-max-tokens", "60", "--taguru-assembly", "--taguru-out", "assembly.json"
    )
    assert (baseline.ret, assembly.ret) == (0, 0)

    compare = subprocess.run(
        [str(CLI), "compare", "baseline.json", "assembly.json", "--out", "changes.jsonl"],
        cwd=suite.path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )

    assert compare.returncode == 0, compare.stderr
    assert "budget" not in compare.stderr  # same ceilings on both sides: no budget mismatch
    header = json.loads((suite.path / "changes.jsonl").read_text(encoding="utf-8").splitlines()[0])
    counts = header["counts"]
    assert sum(counts[k] for k in ("improved", "regressed", "unchanged", "added", "removed")) == 4
    assert counts["added"] == counts["removed"] == 0
