"""``--taguru-concurrency``: a pipelined run is the sequential run, latencies aside.

Each scenario runs the same suite at concurrency 1 (one case at a time) and 8 (the next cases'
requests in flight while pytest runs the current item), plainly and with ``-n 2``, against a
reference server this test started (the same URL in both runs, so failure texts compare
whole), and compares exit status, artifact (volatile fields aside) and every failure text.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from e2e import BASE_ARGS, TOKEN, Suite, strip_volatile
from fault_proxy import Exchange, Fault, FaultProxy, reset, stall, status, wait_until
from synthetic_suite import write_suite

from pytest_taguru.server.runner import ReferenceServer

EXAMPLE = Path(__file__).resolve().parents[2] / "example_suite"
STRICT = {
    "taguru_evaluate_thresholds": 1,
    "cases": {"default": {"recall.mrr": {"min": 1.0}, "citations.locator_validity": {"min": 1}}},
}
"""The example suite's cases bounded tightly, so that several fail with a drill-down."""

Outcome = tuple[int, dict[str, Any] | None, dict[str, tuple[str, str]]]


def failures(suite: Suite) -> dict[str, tuple[str, str]]:
    """Every failed test case of the JUnit file: its message and text (latencies aside)."""
    root = ET.parse(suite.path / "junit.xml").getroot()
    found: dict[str, tuple[str, str]] = {}
    for case in root.iter("testcase"):
        failure = case.find("failure")
        if failure is not None:
            text = re.sub(r"\b\d+ ms\b", "N ms", failure.text or "")
            name = f"{case.get('classname')}::{case.get('name')}"
            found[name] = (failure.get("message", ""), text)
    return found


def outcome(suite: Suite, *args: str, artifact: str = "evaluation.json") -> Outcome:
    result = suite.run("--junitxml", "junit.xml", *args, serve=False)
    path = suite.path / artifact
    written = strip_volatile(suite.artifact(artifact)) if path.exists() else None
    if path.exists():
        path.unlink()
    return result.ret, written, failures(suite)


def same_as_sequential(suite: Suite, *args: str, artifact: str = "evaluation.json") -> Outcome:
    """Run at concurrency 1 and 8; both outcomes must be equal. Returns the pipelined one."""
    sequential = outcome(suite, *args, "--taguru-concurrency", "1", artifact=artifact)
    pipelined = outcome(suite, *args, "--taguru-concurrency", "8", artifact=artifact)
    assert pipelined[0] == sequential[0]
    assert pipelined[1] == sequential[1]
    assert pipelined[2] == sequential[2]
    return pipelined


@pytest.fixture
def synthetic(suite: Suite) -> Iterator[tuple[Suite, ReferenceServer]]:
    """The pytester directory holding a 500-case synthetic suite, and its server."""
    write_suite(suite.path, 500)
    with ReferenceServer.from_import_files([suite.path / "corpus.ndjson"]) as server:
        yield suite, server


def recording(queries: list[str]) -> Fault:
    """Forward a search, noting its query."""

    def act(exchange: Exchange) -> bool:
        try:
            query = json.loads(exchange.body)["query"]
        except ValueError:  # cut short: its worker stopped mid-request (-x under xdist)
            return False
        queries.append(query)
        return exchange.send(*exchange.forward())

    return act


class Small:
    """A 40-case synthetic suite served through a proxy that notes every search's query."""

    def __init__(self, suite: Suite, proxy: FaultProxy) -> None:
        self.suite, self.proxy = suite, proxy
        self.searched: list[str] = []
        proxy.add(recording(self.searched), "sources/search", times=None)
        lines = (suite.path / "eval.jsonl").read_text(encoding="utf-8").splitlines()[1:]
        self.queries = {case["case_id"]: case["query"] for case in map(json.loads, lines)}
        self.args = ("--taguru-url", proxy.url, "--taguru-thresholds", "thresholds.json")

    def queries_of(self, case_ids: list[str]) -> set[str]:
        return {self.queries[case_id] for case_id in case_ids}


@pytest.fixture
def small(suite: Suite) -> Iterator[Small]:
    write_suite(suite.path, 40)
    with (
        ReferenceServer.from_import_files([suite.path / "corpus.ndjson"]) as server,
        FaultProxy(server.url) as proxy,
    ):
        yield Small(suite, proxy)


def reported(suite: Suite) -> list[str]:
    """The cases the run reported (JUnit), in report order."""
    root = ET.parse(suite.path / "junit.xml").getroot()
    names = [case.get("name", "") for case in root.iter("testcase")]
    return [name for name in names if name != "[thresholds]"]


def test_the_example_suite_pipelined_is_the_sequential_run(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    shutil.copy(EXAMPLE / "eval.jsonl", suite.path / "eval.jsonl")
    thresholds = suite.write_thresholds(STRICT)
    with ReferenceServer.from_import_files([EXAMPLE / "corpus" / "sake.ndjson"]) as server:
        status, artifact, failed = same_as_sequential(
            suite, "--taguru-url", server.url, "--taguru-thresholds", thresholds, *dist
        )
    assert status == 3 and artifact is not None and len(artifact["cases"]) == 36
    assert len(failed) >= 5  # drill-downs (with their citations calls) were compared


def test_a_500_case_synthetic_set_pipelined_is_the_sequential_run(
    synthetic: tuple[Suite, ReferenceServer], dist: tuple[str, ...]
) -> None:
    suite, server = synthetic
    status, artifact, failed = same_as_sequential(
        suite, "--taguru-url", server.url, "--taguru-thresholds", "thresholds.json", *dist
    )
    assert status == 3 and artifact is not None and len(artifact["cases"]) == 500
    assert len(failed) == 100


@pytest.mark.parametrize(
    ("selection", "ran"),
    [pytest.param(("-x",), 5, id="exitfirst"), pytest.param(("--maxfail", "2"), 10, id="maxfail")],
)
def test_cases_judged_ahead_but_never_reported_are_never_in_the_artifact(
    small: Small, dist: tuple[str, ...], selection: tuple[str, ...], ran: int
) -> None:
    suite, partial = small.suite, "evaluation.partial.json"
    if not dist:
        status, artifact, _ = same_as_sequential(suite, *small.args, *selection, artifact=partial)
        assert status == 3 and artifact is not None and len(artifact["cases"]) == ran
        return
    # With two workers, where -x stops depends on their timing, sequential or not: what the
    # artifact holds must be exactly what was reported.
    for level in ("1", "8"):
        args = (*small.args, *selection, *dist, "--junitxml", "junit.xml")
        result = suite.run(*args, "--taguru-concurrency", level, serve=False)
        assert result.ret == 3
        cases = [case["case_id"] for case in suite.artifact(partial)["cases"]]
        assert sorted(cases) == sorted(reported(suite))


def test_a_keyword_selection_pipelined_is_the_sequential_run_and_judges_nothing_else(
    small: Small, dist: tuple[str, ...]
) -> None:
    args = (*small.args, "-k", "case-0001", *dist)
    status, artifact, _ = same_as_sequential(
        small.suite, *args, artifact="evaluation.partial.json"
    )
    assert status == 3 and artifact is not None
    selected = [f"case-{number:05d}" for number in range(10, 20)]
    assert [case["case_id"] for case in artifact["cases"]] == selected
    assert set(small.searched) == small.queries_of(selected)
    assert len(small.searched) == 2 * len(selected)


def test_last_failed_pipelined_is_the_sequential_run(small: Small, dist: tuple[str, ...]) -> None:
    args = (*small.args, "-p", "cacheprovider", *dist)
    assert small.suite.run(*args, serve=False).ret == 3
    status, artifact, failed = same_as_sequential(
        small.suite, *args, "--lf", artifact="evaluation.partial.json"
    )
    assert status == 3 and artifact is not None
    assert len(artifact["cases"]) == len(failed) == 8


REVERSE_CONFTEST = """
def pytest_collection_modifyitems(items):
    items.reverse()
"""


def test_cases_are_judged_ahead_in_the_order_pytest_runs_them(small: Small) -> None:
    # A plugin reverses the collection; -x stops at the first item run, case-00039 (every
    # fifth case fails). Judging ahead in file order would search the first cases of the
    # file instead of the last ones.
    small.suite.pytester.makeconftest(REVERSE_CONFTEST)
    args = (*small.args, "-x")
    status, artifact, _ = same_as_sequential(
        small.suite, *args, artifact="evaluation.partial.json"
    )
    assert status == 3 and artifact is not None
    assert [case["case_id"] for case in artifact["cases"]] == ["case-00039"]
    window = [f"case-{number:05d}" for number in range(32, 40)]  # 39, then the 7 before it
    assert small.queries_of(["case-00039"]) <= set(small.searched)
    assert set(small.searched) <= small.queries_of(window)


class InFlight:
    """The searches a proxy fault is handling: how many now, and the most at once."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self.changed = threading.Condition()

    @contextmanager
    def one(self) -> Iterator[None]:
        with self.changed:
            self.now += 1
            self.most = max(self.most, self.now)
            self.changed.notify_all()
        try:
            yield
        finally:
            with self.changed:
                self.now -= 1


def overlapping(in_flight: InFlight) -> Fault:
    """Forward a search once another is in flight beside it (or after 5 s)."""

    def act(exchange: Exchange) -> bool:
        with in_flight.one():
            with in_flight.changed:
                in_flight.changed.wait_for(lambda: in_flight.now >= 2, timeout=5)
            return exchange.send(*exchange.forward())

    return act


def test_the_next_cases_are_in_flight_while_the_current_one_runs(
    served_corpus: ReferenceServer, suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    in_flight = InFlight()
    with FaultProxy(served_corpus.url) as proxy:
        proxy.add(overlapping(in_flight), "sources/search", times=None)
        result = suite.run("--taguru-url", proxy.url, "--taguru-concurrency", "4", serve=False)
    assert result.ret == 0
    assert in_flight.most >= 2


def slowed(in_flight: InFlight, delay_s: float) -> Fault:
    """Forward a search ``delay_s`` late, as from a distant server."""

    def act(exchange: Exchange) -> bool:
        with in_flight.one():
            time.sleep(delay_s)
            return exchange.send(*exchange.forward())

    return act


@pytest.mark.parametrize(
    ("flags", "pipelined"), [((), True), (("--taguru-concurrency", "1"), False)]
)
def test_auto_opens_the_window_once_cases_are_seen_waiting_on_the_server(
    suite: Suite, flags: tuple[str, ...], pipelined: bool
) -> None:
    # The default, auto, judges the first cases one at a time; each waits 50 ms for its
    # answer, far more than its own work, so the window opens for the rest.
    write_suite(suite.path, 40)
    in_flight = InFlight()
    with (
        ReferenceServer.from_import_files([suite.path / "corpus.ndjson"]) as server,
        FaultProxy(server.url) as proxy,
    ):
        proxy.add(slowed(in_flight, 0.05), "sources/search", times=None)
        result = suite.run("--taguru-url", proxy.url, *flags, serve=False)
    assert result.ret == 0
    assert (in_flight.most > 1) is pipelined


THREADS_SEEN_CONFTEST = """
import threading


def pytest_runtest_teardown(item):
    if any(thread.name == "taguru-case" for thread in threading.enumerate()):
        (item.config.rootpath / "judged-ahead").touch()
"""


@pytest.mark.parametrize(
    ("flags", "pipelined"), [((), False), (("--taguru-concurrency", "8"), True)]
)
def test_auto_keeps_one_case_at_a_time_in_a_replay(
    suite: Suite, flags: tuple[str, ...], pipelined: bool
) -> None:
    # A replay answers from files, without waiting: threads would only add their own cost,
    # so auto never opens the window (the probe's own rule is timed, so it is unit-tested).
    write_suite(suite.path, 40)
    with ReferenceServer.from_import_files([suite.path / "corpus.ndjson"]) as server:
        recorded = suite.run("--taguru-url", server.url, "--taguru-record", "rec", serve=False)
    assert recorded.ret == 0
    suite.pytester.makeconftest(THREADS_SEEN_CONFTEST)
    replayed = suite.run("--taguru-replay", "rec", *flags, serve=False)
    assert replayed.ret == 0
    assert (suite.path / "judged-ahead").exists() is pipelined


def failing_search(marker: bytes, fault: Fault) -> Fault:
    """``fault`` for the search whose body names ``marker``; the others are forwarded."""

    def act(exchange: Exchange) -> bool:
        if marker in exchange.body:
            return fault(exchange)
        return exchange.send(*exchange.forward())

    return act


BUSY = b'{"status":"error","code":"internal","error":"the index is busy","time":0.0}'


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(status(500, BUSY, {"Content-Type": "application/json"}), id="500"),
        pytest.param(reset(), id="reset"),
    ],
)
def test_a_server_error_in_a_prefetched_case_is_recorded_as_in_a_sequential_run(
    served_corpus: ReferenceServer,
    suite: Suite,
    dist: tuple[str, ...],
    monkeypatch: pytest.MonkeyPatch,
    fault: Fault,
) -> None:
    # c-gamma, the third case, is judged ahead while c-alpha runs; its search fails.
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    with FaultProxy(served_corpus.url) as proxy:
        proxy.add(failing_search(b"gamma tools", fault), "sources/search", times=None)
        status, artifact, _ = same_as_sequential(
            suite, "--taguru-url", proxy.url, "--taguru-retries", "0", *dist
        )
    assert status == 0 and artifact is not None
    [gamma] = [case for case in artifact["cases"] if case["case_id"] == "c-gamma"]
    assert gamma["passage"]["outcome"] == "failed"
    assert gamma["passage"]["message"].startswith(f"{proxy.url}/contexts/mini/sources/search")


@contextmanager
def sigint_not_ignored() -> Iterator[None]:
    """While a child starts: SIGINT handled here, which exec resets to the default in the child.

    A suite started from a background job (``cmd &`` in a script: bash ignores SIGINT there)
    hands the ignored SIGINT on to every child, and Python then never raises
    KeyboardInterrupt: Ctrl-C would not reach the run under test at all.
    """
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def test_an_interrupted_pipelined_run_ends_promptly_with_exit_1_and_no_artifact(
    served_corpus: ReferenceServer,
    suite: Suite,
    dist: tuple[str, ...],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # c-gamma's search never answers (its deadline is 35 s): Ctrl-C while the run waits for it
    # and while later cases are in flight.
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    with FaultProxy(served_corpus.url) as proxy:
        proxy.add(failing_search(b"gamma tools", stall()), "sources/search", times=None)
        command = [sys.executable, "-m", "pytest", *BASE_ARGS, "--taguru-url", proxy.url, *dist]
        with sigint_not_ignored():
            run = subprocess.Popen(
                [*command, "--taguru-concurrency", "8"],
                cwd=suite.path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,  # its own process group, as a terminal's foreground job
            )
        try:
            wait_until(lambda: proxy.count("sources/search") >= 4, timeout_s=60)
            time.sleep(0.5)  # the run is now waiting for c-gamma
            interrupted = time.monotonic()
            os.killpg(run.pid, signal.SIGINT)
            stdout, stderr = run.communicate(timeout=30)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
    assert time.monotonic() - interrupted < 15, "the run did not end promptly"
    assert run.returncode == 1, stdout + stderr
    assert "interrupted (Ctrl-C)" in stderr and "Traceback" not in stdout + stderr
    assert not (suite.path / "evaluation.json").exists()


@pytest.mark.parametrize("value", ["0", "65", "-1", "four"])
def test_a_bad_concurrency_is_a_usage_error(
    suite: Suite, dist: tuple[str, ...], value: str
) -> None:
    result = suite.run(f"--taguru-concurrency={value}", *dist, isolated=True)
    assert result.ret == 2
    result.stderr.fnmatch_lines(
        ["taguru: evaluate: --taguru-concurrency needs auto or a whole number 1..=64"]
    )


def test_the_concurrency_is_also_an_ini_key(suite: Suite) -> None:
    suite.write_ini("taguru_concurrency = x\n")
    result = suite.run(isolated=True)
    assert result.ret == 2
    result.stderr.fnmatch_lines(
        ["taguru: evaluate: --taguru-concurrency needs auto or a whole number 1..=64"]
    )
    suite.write_ini("taguru_concurrency = 3\n")
    assert suite.run().ret == 0
