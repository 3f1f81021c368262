"""The HTML report end to end: ``--taguru-html`` (and ``taguru_html``) at the end of a live run,
with and without pytest-xdist, for passing, failing and partial runs, and ``taguru-evaluate
report`` writing the same page from the saved artifact."""

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e import CASE_IDS, SENTINEL, TOKEN, Suite
from paths import EXAMPLE_SUITE

CLI = Path(sys.executable).with_name("taguru-evaluate")
ISLAND = re.compile(r'<script type="application/json" id="taguru-data">(.*?)</script>', re.S)


def island(page: Path) -> dict[str, Any]:
    found = ISLAND.search(page.read_text(encoding="utf-8"))
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def notices(page: Path) -> list[str]:
    return re.findall(r'<li class="notice notice-\w+">(.*?)</li>', page.read_text("utf-8"))


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_run_writes_its_report_beside_the_artifact(suite: Suite, dist: tuple[str, ...]) -> None:
    result = suite.run("--taguru-html", "report.html", *dist)
    assert result.ret == 0
    page = suite.path / "report.html"
    data = island(page)
    assert data["cases"]["id"] == CASE_IDS
    assert data["cases"]["line"] == [2, 3, 5, 6]
    assert data["artifact"] == "evaluation.json"
    assert data["eval"] == {"path": "eval.jsonl", "href": "eval.jsonl"}
    assert notices(page) == [
        "No thresholds file given — this run is report-only: no quality bound can fail it."
    ]
    result.stdout.fnmatch_lines(["*wrote report.html (HTML report)"])


def test_the_report_carries_no_corpus_text_and_no_token(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    result = suite.run("--taguru-html", "report.html")
    assert result.ret == 0
    text = (suite.path / "report.html").read_text(encoding="utf-8")
    assert SENTINEL not in text and TOKEN not in text


def test_a_failing_gate_says_so_at_the_top(suite: Suite, dist: tuple[str, ...]) -> None:
    thresholds = suite.write_thresholds(
        {"taguru_evaluate_thresholds": 1, "cases": {"default": {"recall.recall_at_k": {"min": 1}}}}
    )
    result = suite.run("--taguru-thresholds", thresholds, "--taguru-html", "report.html", *dist)
    assert result.ret == 3
    page = suite.path / "report.html"
    assert notices(page) == ["The gate failed: 1 violation(s) of the thresholds file."]
    data = island(page)
    cases = data["cases"]
    assert cases["flags"][CASE_IDS.index("c-miss")] & cases["flag_bits"]["broke_bound"]


def test_a_partial_run_says_so_at_the_top(suite: Suite) -> None:
    result = suite.run("-k", "c-alpha or c-beta", "--taguru-html", "report.html")
    assert result.ret == 0
    page = suite.path / "report.html"
    assert notices(page)[0] == "Partial run: 2 of 4 case(s) ran; the report shows those."
    data = island(page)
    not_run = data["cases"]["flag_bits"]["not_run"]
    flagged = zip(data["cases"]["id"], data["cases"]["flags"], strict=True)
    assert [case_id for case_id, flags in flagged if flags & not_run] == ["c-gamma", "c-miss"]


def test_an_ordinary_failing_test_is_noted_in_the_report(suite: Suite) -> None:
    suite.pytester.makepyfile(test_other="def test_other():\n    assert False\n")
    result = suite.run("--taguru-html", "report.html", "test_other.py")
    assert result.ret == 1
    assert notices(suite.path / "report.html")[0].startswith(
        "1 test(s) or collection error(s) other than case regressions failed"
    )


def test_the_ini_path_is_relative_to_the_ini_file(suite: Suite) -> None:
    (suite.path / "out").mkdir()
    suite.write_ini("taguru_html = out/report.html\n")
    sub = suite.path / "sub"
    sub.mkdir()
    result = suite.pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-c", str(suite.path / "pytest.ini"),
        "--rootdir", str(suite.path), "--taguru-eval", str(suite.path / "eval.jsonl"),
        "--taguru-serve", str(suite.path / "corpus.ndjson"), str(suite.path),
    )  # fmt: skip
    assert result.ret == 0
    assert (suite.path / "out" / "report.html").is_file()


def test_a_report_path_that_cannot_be_written_exits_1_before_the_first_case(suite: Suite) -> None:
    # Every output path is checked before the run starts (run.controller.output_paths).
    result = suite.run("--taguru-html", "missing/report.html", isolated=True)
    assert result.ret == 1
    assert not (suite.path / "evaluation.json").exists()
    assert result.stderr.lines == [
        "taguru: evaluate: writing missing/report.html: No such file or directory (os error 2)"
    ]


def test_a_partial_run_writes_its_report_beside_the_configured_one(suite: Suite) -> None:
    result = suite.run("-k", "c-alpha", "-o", "taguru_html=report.html")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["  wrote report.partial.html (HTML report)"])
    assert not (suite.path / "report.html").exists()


# --- taguru-evaluate report ----------------------------------------------------------------------


def test_the_command_writes_the_sessions_report_from_the_artifact(suite: Suite) -> None:
    thresholds = suite.write_thresholds(
        {"taguru_evaluate_thresholds": 1, "cases": {"default": {"recall.recall_at_k": {"min": 1}}}}
    )
    assert suite.run("--taguru-thresholds", thresholds, "--taguru-html", "live.html").ret == 3
    result = run_cli("report", "evaluation.json", "--eval", "eval.jsonl", "--out", "saved.html",
                     cwd=suite.path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote saved.html\n"
    assert (suite.path / "saved.html").read_bytes() == (suite.path / "live.html").read_bytes()


def test_the_command_defaults_beside_the_artifact_and_compares_a_baseline(suite: Suite) -> None:
    (suite.path / "runs").mkdir()
    assert suite.run("--taguru-out", "runs/base.json").ret == 0
    assert suite.run("-k", "not c-gamma", "--taguru-out", "runs/head.json").ret == 0
    result = run_cli("report", "runs/head.json", "--baseline", "runs/base.json", cwd=suite.path)
    assert result.returncode == 0, result.stderr
    data = island(suite.path / "runs" / "report.html")
    assert data["eval"] is None and data["cases"]["line"] is None
    assert data["baseline"]["counts"]["removed"] == 1
    assert [moved[:2] for moved in data["baseline"]["moved"]] == [["removed", "c-gamma"]]
    paired = data["baseline"]["paired"]
    assert paired["alpha"] == 0.05 and paired["paired_cases"] == 3
    assert paired["excluded"] == [["missing in HEAD", 1, ["c-gamma"]]]
    metrics = [row[0] for row in paired["rows"]]
    assert metrics[:3] == ["recall.recall_at_k", "recall.mrr", "recall.ndcg"]
    assert {row[8] for row in paired["rows"]} == {"inconclusive"}  # 3 pairs: too few


def test_a_live_report_with_a_baseline_is_the_commands_report(suite: Suite) -> None:
    assert suite.run("--taguru-out", "base.json").ret == 0
    live = suite.run("--taguru-baseline", "base.json", "--taguru-alpha", "0.01",
                     "--taguru-html", "live.html")  # fmt: skip
    assert live.ret == 0
    result = run_cli("report", "evaluation.json", "--eval", "eval.jsonl", "--baseline", "base.json",
                     "--alpha", "0.01", "--out", "saved.html", cwd=suite.path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert island(suite.path / "live.html")["baseline"]["paired"]["alpha"] == 0.01
    assert (suite.path / "saved.html").read_bytes() == (suite.path / "live.html").read_bytes()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        ([], 2, "evaluate report takes exactly one positional argument, the evaluation.json "
                "(got 0) — try 'taguru-evaluate --help'"),
        (["a.json", "--out"], 2, "--out needs a file path — try 'taguru-evaluate --help'"),
        (["a.json", "--bogus"], 2, "unknown flag '--bogus' for evaluate report — try "
                                   "'taguru-evaluate --help'"),
        (["missing.json"], 2, "reading missing.json: No such file or directory (os error 2)"),
        (["eval.jsonl"], 2, "eval.jsonl: not JSON: *"),
        (["evaluation.json", "--out", "no/dir/r.html"], 1, "writing no/dir/r.html: *"),
        (["evaluation.json", "--eval", "nope.jsonl"], 2, "cannot read nope.jsonl: *"),
        (["evaluation.json", "--baseline", "nope.json"], 2, "BASE reading nope.json: *"),
    ],
)  # fmt: skip
def test_command_errors(suite: Suite, args: list[str], code: int, message: str) -> None:
    assert suite.run().ret == 0
    result = run_cli("report", *args, cwd=suite.path)
    assert result.returncode == code
    assert re.fullmatch(
        re.escape("taguru-evaluate: " + message).replace(r"\*", ".*") + "\n", result.stderr
    ), result.stderr


def test_the_command_help(suite: Suite) -> None:
    result = run_cli("report", "--help", cwd=suite.path)
    assert result.returncode == 0
    assert result.stdout.startswith("usage: taguru-evaluate report ARTIFACT [--baseline")


# --- the example suite ---------------------------------------------------------------------------


def test_the_example_suite_report_is_the_same_from_the_saved_artifact(tmp_path: Path) -> None:
    """``pytest example_suite --taguru-html`` and ``taguru-evaluate report`` on what it saved
    write the same bytes (nothing in the page is taken from anything but the artifact, the
    eval set and where the page lies)."""
    out = tmp_path / "out"
    out.mkdir()
    live = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(EXAMPLE_SUITE),
         "--taguru-out", "out/evaluation.json", "--taguru-html", "out/report.html"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert live.returncode == 0, live.stdout + live.stderr
    eval_path = json.loads((out / "evaluation.json").read_text("utf-8"))["inputs"]["eval"]["path"]
    saved = run_cli("report", "out/evaluation.json", "--eval", eval_path, "--out",
                    "out/saved.html", cwd=tmp_path)  # fmt: skip
    assert saved.returncode == 0, saved.stderr
    assert (out / "saved.html").read_bytes() == (out / "report.html").read_bytes()
    data = island(out / "report.html")
    assert len(data["cases"]["id"]) == 36
    assert notices(out / "report.html") == [
        "The gate passed: every bound of the thresholds file held."
    ]
