"""``taguru-evaluate`` run mode end to end: the console script as a subprocess against a
reference server started on loopback, on the example suite (evaluate-run.md §1.1, §1.2, §1.7).

The drop-in runs pytest with the plugin underneath, so its exit codes, artifact and refusals
must be the plugin's: 0 (report-only or passed), 3 (a bound broke, artifact written), 2 (usage
or input error, nothing written), 1 (the run could not complete, nothing written).
"""

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e import CountingListener, strip_volatile
from paths import EXAMPLE_SUITE

from pytest_taguru.server.runner import ReferenceServer

EXAMPLE = EXAMPLE_SUITE
EVAL = str(EXAMPLE / "eval.jsonl")
CORPUS = EXAMPLE / "corpus" / "sake.ndjson"
THRESHOLDS = str(EXAMPLE / "thresholds.json")
CASES = 36
CLI = Path(sys.executable).with_name("taguru-evaluate")
"""The installed console script (``[project.scripts]``), next to this interpreter."""
RUN_TIMEOUT = 120
HINT = " — try 'taguru-evaluate --help'"


def outer_free_environment() -> dict[str, str]:
    """This process's environment without the outer pytest's, taguru's or CI's settings."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PYTEST_", "TAGURU_", "GITHUB_"))
    }


def run_command(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` in ``cwd``, in ``outer_free_environment()``, with a timeout."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=outer_free_environment(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT,
        check=False,
    )


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``taguru-evaluate ARGS`` in ``cwd``."""
    return run_command([str(CLI), *args], cwd)


def run_pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m pytest -p no:cacheprovider ARGS`` in ``cwd``: the plugin, as users run it."""
    return run_command([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd)


def read_json(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def sake_url() -> Iterator[str]:
    """The example suite's corpus on loopback, served once for the module (runs only read)."""
    with ReferenceServer.from_import_files([CORPUS]) as server:
        yield server.url


def evaluate(url: str, cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """A drop-in run of the example suite against ``url``."""
    return run_cli("--eval", EVAL, "--context", "sake", "--url", url, *extra, cwd=cwd)


# --- runs that complete ------------------------------------------------------------------------


def test_report_only_run_writes_the_default_artifact_and_exits_0(
    sake_url: str, tmp_path: Path
) -> None:
    result = evaluate(sake_url, tmp_path)

    assert result.returncode == 0, result.stderr
    artifact = read_json(tmp_path / "evaluation.json")
    assert artifact["taguru_evaluation"] == 1
    assert artifact["inputs"]["context"] == "sake"
    assert len(artifact["cases"]) == CASES
    assert artifact["thresholds"] is None
    assert "  wrote evaluation.json" in result.stdout.splitlines()
    assert "this run is report-only" in result.stderr
    assert "PytestAssertRewriteWarning" not in result.stdout
    # Like taguru evaluate: the summary alone, no pytest banner, progress or section rule.
    assert result.stdout.splitlines()[0].startswith("taguru evaluate: http://127.0.0.1:")
    assert "test session starts" not in result.stdout and "passed" not in result.stdout


def test_the_drop_in_writes_what_the_documented_plugin_run_writes(
    sake_url: str, tmp_path: Path
) -> None:
    """``pytest example_suite`` (its pytest.ini serves the corpus itself) and the drop-in
    against a server holding the same corpus give the same artifact and exit code."""
    (tmp_path / "drop-in").mkdir()
    (tmp_path / "plugin").mkdir()
    drop_in = evaluate(sake_url, tmp_path / "drop-in", "--out", "out.json",
                       "--thresholds", THRESHOLDS)  # fmt: skip
    plugin = run_pytest(str(EXAMPLE), "--taguru-out", "out.json", cwd=tmp_path / "plugin")

    assert (drop_in.returncode, plugin.returncode) == (0, 0), drop_in.stderr + plugin.stderr
    written = [comparable(tmp_path / side) for side in ("drop-in", "plugin")]
    assert written[0] == written[1]


def comparable(cwd: Path) -> Any:
    """``cwd/out.json`` without what two equal runs may differ in: time stamps, latencies,
    the server's URL (also inside recorded error messages), the spelling of the eval path."""
    artifact = read_json(cwd / "out.json")
    text = json.dumps(artifact, ensure_ascii=False).replace(artifact["inputs"]["url"], "<url>")
    normalized = strip_volatile(json.loads(text))
    eval_path = Path(normalized["inputs"]["eval"].pop("path"))
    assert (cwd / eval_path).resolve() == Path(EVAL)
    return normalized


@pytest.mark.parametrize(
    ("bounds", "exit_code"),
    [
        pytest.param(None, 0, id="example-thresholds-pass"),
        pytest.param({"recall.recall_at_k": {"min": 0.99}}, 3, id="aggregate-bound-broken"),
    ],
)
def test_thresholds_gate_the_exit_code_and_the_artifact_is_written_either_way(
    sake_url: str, tmp_path: Path, bounds: dict[str, Any] | None, exit_code: int
) -> None:
    if bounds is None:
        thresholds = THRESHOLDS
    else:
        thresholds = str(tmp_path / "strict.json")
        Path(thresholds).write_text(
            json.dumps({"taguru_evaluate_thresholds": 1, "aggregate": bounds}), encoding="utf-8"
        )

    result = evaluate(sake_url, tmp_path, "--out", "run.json", "--thresholds", thresholds)

    assert result.returncode == exit_code, result.stderr
    block = read_json(tmp_path / "run.json")["thresholds"]
    assert block["sha256"] == hashlib.sha256(Path(thresholds).read_bytes()).hexdigest()
    assert block["passed"] is (exit_code == 0)
    if exit_code == 0:
        assert f"  thresholds: PASS (sha256 {block['sha256'][:12]}…)" in result.stdout
    else:
        assert "  thresholds: FAIL — 1 violation(s)" in result.stdout
        assert "    [aggregate] recall.recall_at_k: 0.916667 < min 0.990000" in result.stdout
    assert "report-only" not in result.stderr


# --- runs that cannot start or complete: no artifact, an existing file left alone ------------


def test_an_unknown_context_exits_2_and_leaves_the_out_file_alone(
    sake_url: str, tmp_path: Path
) -> None:
    out = tmp_path / "kept.json"
    out.write_text("earlier", encoding="utf-8")

    result = run_cli("--eval", EVAL, "--context", "nosuch", "--url", sake_url, "--out", str(out),
                     cwd=tmp_path)  # fmt: skip

    assert result.returncode == 2
    assert "context 'nosuch' not found" in result.stderr
    assert out.read_text(encoding="utf-8") == "earlier"


def test_an_unreachable_server_exits_1_and_writes_nothing(
    listener: CountingListener, tmp_path: Path
) -> None:
    result = evaluate(listener.url, tmp_path)

    assert result.returncode == 1
    assert "is not reachable" in result.stderr
    assert listener.connections >= 1
    assert not (tmp_path / "evaluation.json").exists()


def test_an_unwritable_out_exits_1_after_the_run(sake_url: str, tmp_path: Path) -> None:
    result = evaluate(sake_url, tmp_path, "--out", "no-such-dir/run.json")

    assert result.returncode == 1
    assert "taguru: evaluate: writing no-such-dir/run.json: " in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_out_is_worded_as_taguru_words_it(sake_url: str, tmp_path: Path) -> None:
    result = evaluate(sake_url, tmp_path, "--out", "no-such-dir/run.json")

    assert (
        "taguru: evaluate: writing no-such-dir/run.json: No such file or directory (os error 2)\n"
        in result.stderr
    )


@pytest.mark.parametrize(
    ("flag", "name", "content", "message"),
    [
        ("--eval", "missing.jsonl", None,
         "cannot read missing.jsonl: No such file or directory (os error 2)"),
        ("--thresholds", "missing.json", None,
         "cannot read missing.json: No such file or directory (os error 2)"),
        ("--thresholds", "broken.json", "{", "broken.json: "),
        ("--config", "broken.env", "oops\n", "line 1: expected KEY=VALUE, got 'oops'"),
    ],
)  # fmt: skip
def test_an_unreadable_input_exits_2_before_any_request(
    listener: CountingListener,
    tmp_path: Path,
    flag: str,
    name: str,
    content: str | None,
    message: str,
) -> None:
    if content is not None:
        (tmp_path / name).write_text(content, encoding="utf-8")
    args = {"--eval": EVAL, "--context": "sake", "--url": listener.url, flag: name}

    result = run_cli(*[item for pair in args.items() for item in pair], cwd=tmp_path)

    assert result.returncode == 2
    assert message in result.stderr
    assert listener.connections == 0
    assert not (tmp_path / "evaluation.json").exists()


def test_the_config_file_supplies_the_server_address(sake_url: str, tmp_path: Path) -> None:
    address = sake_url.removeprefix("http://")
    (tmp_path / "taguru.env").write_text(f"# the test server\nTAGURU_ADDR={address}\n")

    result = run_cli("--eval", EVAL, "--context", "sake", "--config", "taguru.env", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert read_json(tmp_path / "evaluation.json")["inputs"]["url"] == sake_url


# --- the command line (§1.1, §1.2) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["extra"], "evaluate takes no positional arguments"),
        (["--context", "sake"], "--context given twice"),
        (["--eval", EVAL], "--eval given twice"),
        (["--assembly", "--assembly"], "--assembly given twice"),
        (["--max-items", "5", "--max-items", "abc"], "--max-items given twice"),
        (["--bogus"], "unknown flag '--bogus' for evaluate"),
        (["--taguru-eval=x"], "unknown flag '--taguru-eval=x' for evaluate"),
        (["-x"], "evaluate takes no positional arguments"),
        (["--max-items", "abc"], "--max-items needs a positive integer"),
        (["--max-bytes", "0"], "--max-bytes needs a positive integer"),
        (["--max-tokens", "-1"], "--max-tokens needs a positive integer"),
        (["--max-tokens"], "--max-tokens needs a positive integer"),
        (["--rerank", "x"], "--rerank requires --assembly"),
        (["--out"], "--out needs a file path"),
        (["--bogus", "--help"], "unknown flag '--bogus' for evaluate"),
    ],
)
def test_a_bad_run_command_line_exits_2_naming_the_problem(
    listener: CountingListener, tmp_path: Path, args: list[str], message: str
) -> None:
    result = evaluate(listener.url, tmp_path, *args)

    assert result.returncode == 2
    assert result.stderr == f"taguru-evaluate: {message}{HINT}\n"
    assert result.stdout == ""
    assert listener.connections == 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "expected --eval FILE --context NAME"),
        (["--context", "sake"], "--eval FILE is required"),
        (["--eval", EVAL], "--context NAME is required"),
        (["-x"], "unknown subcommand '-x' — the default mode is selected by a leading flag, "
                 "e.g. 'taguru-evaluate --eval FILE --context NAME', or use a subcommand: "
                 "'compare', 'gate', 'report', 'merge', 'init', 'import-dir', 'check', "
                 "'schema', 'unjudged', 'label-merge'"),
    ],
)  # fmt: skip
def test_mode_selection_and_required_flags_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = run_cli(*args, cwd=tmp_path)

    assert result.returncode == 2
    assert result.stderr == f"taguru-evaluate: {message}{HINT}\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["--help"], "usage: taguru-evaluate --eval FILE"),
        (["-h"], "usage: taguru-evaluate --eval FILE"),
        (["--eval", EVAL, "--context", "sake", "--help"], "usage: taguru-evaluate --eval FILE"),
        (["--out", "--help", "-h"], "usage: taguru-evaluate --eval FILE"),
        (["compare", "a", "b", "c", "--help"], "usage: taguru-evaluate compare"),
        (["gate", "--help"], "usage: taguru-evaluate gate"),
    ],
)
def test_help_prints_the_usage_and_exits_0(tmp_path: Path, args: list[str], usage: str) -> None:
    result = run_cli(*args, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(usage)
    assert result.stderr == ""
    assert list(tmp_path.iterdir()) == []
