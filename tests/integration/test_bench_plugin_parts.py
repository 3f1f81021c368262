"""The plugin benchmark's own parts stay usable (``benchmarks/bench_plugin.py`` prints figures
and asserts nothing, so only a test notices when they rot): the instant fake answers a real run
of the plugin, the trivial items collect one item per case line, the loop clock writes its
seconds, the workload measures a child and the bare loop times searches."""

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from paths import REPO


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, ModuleType]]:
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import fake_taguru
    import plugin_workload

    yield {"fake": fake_taguru, "workload": plugin_workload}
    for name in ("fake_taguru", "plugin_workload", "trivial_items", "run_clock"):
        sys.modules.pop(name, None)


def _eval_file(directory: Path, count: int) -> Path:
    lines = [{"taguru_eval": 1, "name": "parts", "default_target": {"context": "bench"}}]
    lines += [
        {"case_id": f"c{n}", "query": "酒造と米", "expected_sources": [{"source": "doc/1.md"}]}
        for n in range(count)
    ]
    target = directory / "eval.jsonl"
    target.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return target


@pytest.fixture
def sources() -> dict[str, str]:
    return {f"doc/{n}.md": f"段落{n}の本文、酒造と米。" for n in range(3)}


def test_instant_fake_answers_a_run_of_the_plugin(
    bench: dict[str, ModuleType], sources: dict[str, str], pytester: pytest.Pytester
) -> None:
    answers = bench["fake"].record_answers("bench", sources, "酒造と米")
    eval_file = _eval_file(pytester.path, 3)
    with bench["fake"].InstantTaguru("bench", answers) as fake:
        run = pytester.runpytest(
            "-p", "no:randomly", "--taguru-eval", str(eval_file), "--taguru-url", fake.url
        )
        timings = bench["fake"].bare_search_seconds(fake.url, "bench", [b"{}"] * 3)
    run.assert_outcomes(passed=3)
    artifact = json.loads((pytester.path / "evaluation.json").read_text("utf-8"))
    assert [case["case_id"] for case in artifact["cases"]] == ["c0", "c1", "c2"]
    assert artifact["cases"][0]["passage"]["hits"][0]["source"] == "doc/0.md"
    assert len(timings) == 3 and all(seconds > 0 for seconds in timings)


def test_trivial_items_and_the_loop_clock_in_a_measured_child(
    bench: dict[str, ModuleType], tmp_path: Path
) -> None:
    workspace = bench["workload"].Workspace(tmp_path)
    eval_file = _eval_file(tmp_path, 4)
    finished = workspace.run(workspace.trivial(eval_file, "-vv"))  # -q is given too
    log = (tmp_path / "run1.log").read_text("utf-8")
    assert "eval.jsonl::c3 PASSED" in log and "4 passed" in log
    assert finished.status == 0 and finished.rss_mb > 1.0 and finished.wall > 0.0
    assert finished.clock is not None and 0.0 < finished.clock < finished.wall
    with pytest.raises(RuntimeError, match="exited 4"):
        workspace.run(workspace.pytest("--no-such-flag"))


def test_each_measured_child_starts_without_the_pytest_cache_left_before_it(
    bench: dict[str, ModuleType], tmp_path: Path
) -> None:
    # A cache of node ids left by the run before costs the next run time and memory: a
    # floor measured after the plugin's run would be inflated.
    workspace = bench["workload"].Workspace(tmp_path)
    workspace.run(workspace.trivial(_eval_file(tmp_path, 2)))
    assert (tmp_path / ".pytest_cache" / "v" / "cache" / "nodeids").is_file()
    sees_cache = "import os, sys; sys.exit(3 if os.path.exists('.pytest_cache') else 0)"
    assert workspace.run([sys.executable, "-c", sees_cache], expect=(0, 3)).status == 0


def test_search_body_is_the_plugins_six_keys(bench: dict[str, ModuleType]) -> None:
    body = bench["workload"].search_body({"query": "米", "options": {"limit": 1000}})
    assert body == (
        '{"query":"米","limit":1000,"semantic_floor":null,"tags":[],"since":null,"until":null}'
    ).encode()


def test_client_cpu_counts_each_clients_own_calls(
    bench: dict[str, ModuleType], sources: dict[str, str]
) -> None:
    answers = bench["fake"].record_answers("bench", sources, "酒造と米")
    body = bench["workload"].search_body({"query": "酒造と米"})
    with bench["fake"].InstantTaguru("bench", answers) as fake:
        spent = bench["fake"].client_cpu_per_call(fake.url, "bench", body, calls=50, rounds=1)
    # Both clients did real work on this thread; an answer the envelope rule refuses (the
    # plugin's client raising on it) would have ended the measurement instead.
    assert 0.0 < spent.bare < 0.05 and 0.0 < spent.plugin < 0.05


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_pytest_childs_peak_is_its_own_not_the_benchmarks(
    bench: dict[str, ModuleType], tmp_path: Path
) -> None:
    # A forked child's ru_maxrss starts from its parent's: grow this process well past what
    # a one-item pytest needs, and the child's figure must not follow it.
    ballast = bytearray(400 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])
    workspace = bench["workload"].Workspace(tmp_path)
    finished = workspace.run(workspace.trivial(_eval_file(tmp_path, 1)))
    del ballast
    assert 10.0 < finished.rss_mb < 300.0
