"""The fault matrix end to end: a fault-injecting proxy between the run and the server.

Each test runs the pytester suite against ``--taguru-url`` of a proxy in front of the test
corpus (``served_corpus``), plainly and with ``-n 2``: deep nesting in answers and inputs,
stalls and drips against the whole-exchange deadline, transient statuses and retries, and a
server that dies or hangs mid-run against the dead-server rule.
"""

import time
from collections.abc import Iterator
from typing import Any

import pytest
from e2e import TOKEN, Suite
from fault_proxy import FaultProxy, body, die, drip_headers, stall, status

from pytest_taguru.server.runner import ReferenceServer

DEEP = b'{"result":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
CRASH_MARKS = ("INTERNALERROR", "Traceback", "RecursionError")


@pytest.fixture
def proxy(
    served_corpus: ReferenceServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FaultProxy]:
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    with FaultProxy(served_corpus.url) as started:
        yield started


def no_crash(result: Any) -> None:
    output = result.stdout.str() + result.stderr.str()
    assert not any(mark in output for mark in CRASH_MARKS), output


def run(suite: Suite, proxy: FaultProxy, dist: tuple[str, ...], *args: str) -> Any:
    """A run through the proxy; whatever the fault, nothing may end in a traceback."""
    result = suite.run("--taguru-url", proxy.url, *dist, *args, serve=False)
    no_crash(result)
    return result


def passages(suite: Suite) -> dict[str, dict[str, Any]]:
    return {case["case_id"]: case for case in suite.artifact()["cases"]}


def failed_passages(suite: Suite) -> list[dict[str, Any]]:
    return [c["passage"] for c in passages(suite).values() if c["passage"]["outcome"] == "failed"]


# --- nesting in answers and inputs -------------------------------------------------------------


def test_a_deeply_nested_context_entry_is_a_run_error(
    suite: Suite, proxy: FaultProxy, dist: tuple[str, ...]
) -> None:
    proxy.add(body(DEEP), "/contexts/mini$")
    result = run(suite, proxy, dist)
    assert result.ret == 1
    result.stderr.fnmatch_lines(
        [f"taguru: evaluate: {proxy.url}/contexts/mini: not a taguru response: {{\"result\":[[[*"]
    )
    assert not (suite.path / "evaluation.json").exists()


def test_a_deeply_nested_search_answer_is_that_cases_lane_failure(
    suite: Suite, proxy: FaultProxy, dist: tuple[str, ...]
) -> None:
    proxy.add(body(DEEP), "sources/search")
    assert run(suite, proxy, dist).ret == 0
    [failed] = failed_passages(suite)
    assert failed["message"].startswith(
        f"{proxy.url}/contexts/mini/sources/search: not a taguru response: {{\"result\":[[["
    )
    assert failed["message"].endswith("…")


def test_a_deeply_nested_eval_line_is_an_input_error(suite: Suite, dist: tuple[str, ...]) -> None:
    lines = (suite.path / "eval.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = '{"case_id":"deep","query":"q","x":' + "[" * 5000 + "]" * 5000 + "}"
    (suite.path / "eval.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = suite.run(*dist, isolated=True)
    assert result.ret == 2
    no_crash(result)
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: eval.jsonl: line 3: not JSON: recursion limit exceeded at line 1 "
            "column 161"
        ]
    )


def test_a_deeply_nested_thresholds_file_is_an_input_error(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    (suite.path / "t.json").write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    result = suite.run("--taguru-thresholds", "t.json", *dist, isolated=True)
    assert result.ret == 2
    no_crash(result)
    result.stderr.fnmatch_lines(
        ["taguru: evaluate: t.json: recursion limit exceeded at line 1 column 128"]
    )


# --- the whole-exchange deadline ---------------------------------------------------------------


def test_a_header_drip_ends_at_the_deadline(
    suite: Suite, proxy: FaultProxy, dist: tuple[str, ...]
) -> None:
    proxy.add(drip_headers(0.05), "sources/search")
    assert run(suite, proxy, dist, "--taguru-timeout", "1").ret == 0
    [passage] = failed_passages(suite)
    assert passage["message"] == f"{proxy.url}/contexts/mini/sources/search: timeout: global"
    # Within the deadline + 2 s (the issue's bound), and not before the deadline.
    assert 1000 <= passage["latency_ms"] < 3000


def test_the_timeout_is_also_an_ini_key(suite: Suite, proxy: FaultProxy) -> None:
    suite.write_ini("taguru_timeout = 1\n")
    proxy.add(stall(), "sources/search")
    started = time.monotonic()
    result = run(suite, proxy, ())
    assert result.ret == 0 and time.monotonic() - started < 20
    [stalled] = failed_passages(suite)
    assert stalled["message"].endswith(": timeout: global")


# --- retries -----------------------------------------------------------------------------------


def test_a_503_with_retry_after_is_retried_and_counted(
    suite: Suite, proxy: FaultProxy, dist: tuple[str, ...]
) -> None:
    busy = b'{"status":"error","code":"overloaded","error":"busy","time":0.0}'
    proxy.add(status(503, busy, {"Retry-After": "1"}), "sources/search")
    result = run(suite, proxy, dist)
    assert result.ret == 0
    cases = passages(suite)
    assert all(c["passage"]["outcome"] == "searched" for c in cases.values())
    retried = [c for c in cases.values() if "retries" in c]
    assert [c["retries"] for c in retried] == [1]
    assert retried[0]["passage"]["latency_ms"] < 1000  # the final attempt's, not the wait's
    note = (
        "retries: 1 request(s) of 1 case(s) were sent again (429/503 answers or connections "
        "cut off before an answer); their latencies are the final attempts'"
    )
    assert note in suite.artifact()["warnings"]
    result.stdout.fnmatch_lines([f"  {note}"])


def test_retries_0_records_a_503_as_taguru_does(
    suite: Suite, proxy: FaultProxy, dist: tuple[str, ...]
) -> None:
    proxy.add(status(429, b'{"error":"slow down"}', {"Retry-After": "1"}), "sources/search")
    result = run(suite, proxy, dist, "--taguru-retries", "0")
    assert result.ret == 0
    assert [passage["message"] for passage in failed_passages(suite)] == [
        f"{proxy.url}/contexts/mini/sources/search answered 429: slow down (Retry-After: 1)"
    ]
    assert "warnings" not in suite.artifact()
    assert all("retries" not in c for c in passages(suite).values())


# --- a dead server -----------------------------------------------------------------------------

OLD_ARTIFACT = '{"taguru_evaluation": 1, "note": "the previous run"}'


def test_a_killed_server_stops_the_run_within_k_deadlines(
    suite: Suite, proxy: FaultProxy, dist: tuple[str, ...]
) -> None:
    (suite.path / "evaluation.json").write_text(OLD_ARTIFACT, encoding="utf-8")
    # The first search is answered, then nothing ever again. One case at a time: with cases
    # judged ahead, a later case's search could be the one answered, splitting the failures
    # into runs shorter than K.
    proxy.add(die(), "sources/search", times=None, after=1)
    k, deadline_s = 3, 5.0
    result = run(
        suite,
        proxy,
        dist,
        "--taguru-timeout",
        "5",
        "--taguru-max-consecutive-failures",
        "3",
        "--taguru-concurrency",
        "1",
    )
    ended = time.monotonic()
    assert result.ret == 1
    assert proxy.died_at is not None and ended - proxy.died_at < k * deadline_s
    result.stderr.fnmatch_lines(
        [
            # K or more: the controller folds whole cases, in the order their reports arrive.
            "taguru: evaluate: the server is presumed dead after [3-9] consecutive transport "
            f"failures (last: {proxy.url}/*); the run was stopped and evaluation.json was not "
            "written"
        ]
    )
    assert (suite.path / "evaluation.json").read_text(encoding="utf-8") == OLD_ARTIFACT


def test_a_hung_server_stops_the_run_within_k_deadlines(
    suite: Suite, proxy: FaultProxy, dist: tuple[str, ...]
) -> None:
    proxy.add(stall(), "/contexts/mini/", method="POST", times=None, after=1)
    started = time.monotonic()
    result = run(
        suite, proxy, dist, "--taguru-timeout", "1", "--taguru-max-consecutive-failures", "2"
    )
    assert result.ret == 1
    # Preflight and process start-up, then at most K deadlines per worker, in parallel.
    assert time.monotonic() - started < 2 * 1.0 + 15
    result.stderr.fnmatch_lines(
        ["taguru: evaluate: the server is presumed dead after [2-9] consecutive transport fail*"]
    )
    assert not (suite.path / "evaluation.json").exists()


def test_the_dead_server_rule_can_be_turned_off(
    suite: Suite, proxy: FaultProxy, dist: tuple[str, ...]
) -> None:
    proxy.add(die(), "sources/search")
    result = run(
        suite, proxy, dist, "--taguru-max-consecutive-failures", "0", "--taguru-retries", "0"
    )
    assert result.ret == 1
    result.assert_outcomes(passed=4)  # every case ran, each recording its failed lanes
    result.stderr.fnmatch_lines(["taguru: evaluate: mini: could not re-read the context after*"])
    assert "presumed dead" not in result.stderr.str()


@pytest.mark.parametrize(
    ("flag", "value", "needs"),
    [
        ("--taguru-timeout", "0", "a number of seconds above 0, at most 86400"),
        ("--taguru-timeout", "1e3", "a number of seconds above 0, at most 86400"),
        ("--taguru-retries", "11", "a whole number 0..=10"),
        ("--taguru-max-consecutive-failures", "-1", "a whole number (0 turns the rule off)"),
    ],
)
def test_bad_fault_option_values_are_usage_errors(
    suite: Suite, dist: tuple[str, ...], flag: str, value: str, needs: str
) -> None:
    result = suite.run(f"{flag}={value}", *dist, isolated=True)
    assert result.ret == 2
    result.stderr.fnmatch_lines([f"taguru: evaluate: {flag} needs {needs}"])


KILL_CONFTEST = """
import os
import signal


def pytest_runtest_call(item):
    if item.name == "c-gamma" and hasattr(item.config, "workerinput"):
        os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_worker_leaves_the_existing_artifact_alone(suite: Suite) -> None:
    # Before: the run exited 1 but replaced the evaluation.json already there.
    suite.pytester.makeconftest(KILL_CONFTEST)
    (suite.path / "evaluation.json").write_text(OLD_ARTIFACT, encoding="utf-8")
    result = suite.run("-n", "2")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*worker 'gw*' crashed while running 'eval.jsonl::c-gamma'*"])
    assert (suite.path / "evaluation.json").read_text(encoding="utf-8") == OLD_ARTIFACT
