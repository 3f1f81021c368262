"""The prefetch window (order, bound, cancellation), its daemon threads, and the latency probe
that opens it under ``auto``."""

import threading
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from typing import Any

import pytest

from pytest_taguru.run.prefetch import (
    PROBE_CASES,
    WAIT_TO_OPEN_S,
    LaneThreads,
    LatencyProbe,
    PrefetchWindow,
)


class HandDriven:
    """An executor that runs nothing until told: ``started`` lists what was submitted."""

    def __init__(self) -> None:
        self.started: list[tuple[Future[Any], Callable[[], Any]]] = []

    def submit(self, job: Callable[[], Any]) -> "Future[Any]":
        future: Future[Any] = Future()
        self.started.append((future, job))
        return future

    def run_all(self) -> None:
        for future, job in self.started:
            if not future.done() and future.set_running_or_notify_cancel():
                future.set_result(job())


def window(size: int) -> tuple[PrefetchWindow[str, str], HandDriven, list[str]]:
    executor, judged = HandDriven(), []

    def job(key: str) -> str:
        judged.append(key)
        return key.upper()

    return PrefetchWindow(size, job, executor.submit), executor, judged


def test_the_first_size_keys_start_in_the_planned_order() -> None:
    prefetch, executor, judged = window(3)
    prefetch.plan(iter("abcdef"))
    assert len(prefetch) == 3 and len(executor.started) == 3
    executor.run_all()
    assert judged == ["a", "b", "c"]


def test_the_window_slides_one_key_per_taken_key_and_starts_each_once() -> None:
    prefetch, executor, judged = window(3)
    order = "abcdefg"
    for position, key in enumerate(order):
        prefetch.plan(iter(order[position:]))
        assert len(prefetch) <= 3
        started = prefetch.take(key)
        assert started is not None
        executor.run_all()
        assert started.result() == key.upper()
    assert judged == list(order)
    assert len(executor.started) == len(order)


def test_a_key_taken_twice_or_never_planned_is_not_started() -> None:
    prefetch, _, _ = window(2)
    prefetch.plan(iter("ab"))
    assert prefetch.take("a") is not None
    assert prefetch.take("a") is None
    assert prefetch.take("z") is None


def test_keys_that_drop_out_of_the_plan_are_cancelled() -> None:
    # pytest-xdist's controller took "b" back for another worker: it is no longer upcoming.
    prefetch, executor, judged = window(3)
    prefetch.plan(iter("abc"))
    dropped = executor.started[1][0]
    prefetch.plan(iter("acd"))
    assert dropped.cancelled()
    assert prefetch.take("b") is None
    executor.run_all()
    assert judged == ["a", "c", "d"]


def test_a_started_key_that_drops_out_runs_on_unread() -> None:
    prefetch, executor, _ = window(2)
    prefetch.plan(iter("ab"))
    running = executor.started[0][0]
    assert running.set_running_or_notify_cancel()
    prefetch.plan(iter("bc"))
    assert not running.cancelled() and prefetch.take("a") is None


def test_close_cancels_what_has_not_started_and_starts_nothing_more() -> None:
    prefetch, executor, judged = window(3)
    prefetch.plan(iter("abc"))
    futures = [future for future, _ in executor.started]
    prefetch.close()
    assert all(future.cancelled() for future in futures)
    prefetch.plan(iter("def"))
    assert len(executor.started) == 3 and prefetch.take("d") is None
    executor.run_all()
    assert judged == []


def test_a_key_started_before_close_can_still_be_taken() -> None:
    # The server presumed dead: nothing more starts, but what already ran is what happened.
    prefetch, executor, _ = window(3)
    prefetch.plan(iter("abc"))
    running = executor.started[0][0]
    assert running.set_running_or_notify_cancel()
    prefetch.close()
    assert prefetch.take("a") is running
    assert prefetch.take("b") is None and executor.started[1][0].cancelled()


def test_lane_threads_run_jobs_in_submission_order_up_to_size_at_once() -> None:
    threads = LaneThreads(2)
    gate, lock = threading.Event(), threading.Lock()
    running, most, order = [0], [0], []

    def job(number: int) -> int:
        with lock:
            order.append(number)
            running[0] += 1
            most[0] = max(most[0], running[0])
        gate.wait(5)
        with lock:
            running[0] -= 1
        return number * 10

    futures = [threads.submit(lambda number=number: job(number)) for number in range(6)]
    gate.set()
    assert [future.result(5) for future in futures] == [0, 10, 20, 30, 40, 50]
    assert order[:2] == sorted(order[:2]) and sorted(order) == list(range(6))
    assert most[0] <= 2
    threads.shutdown()


def test_lane_threads_hand_a_job_failure_to_its_future_and_skip_a_cancelled_job() -> None:
    threads = LaneThreads(1)
    gate = threading.Event()
    blocker = threads.submit(lambda: gate.wait(5))
    skipped = threads.submit(lambda: pytest.fail("a cancelled job ran"))
    failing = threads.submit(lambda: 1 // 0)
    assert skipped.cancel()
    gate.set()
    assert blocker.result(5) is True
    with pytest.raises(ZeroDivisionError):
        failing.result(5)
    with pytest.raises(CancelledError):
        skipped.result(0)
    threads.shutdown()


def test_lane_threads_are_daemons_that_shutdown_never_waits_for() -> None:
    threads = LaneThreads(1)
    gate = threading.Event()
    stuck = threads.submit(lambda: gate.wait(30))
    threads.shutdown()  # returns at once although a job is still running
    workers = [t for t in threading.enumerate() if t.name == "taguru-case"]
    assert workers and all(t.daemon for t in workers)
    assert not stuck.done()
    gate.set()
    assert stuck.result(5) is True


def test_the_probe_waits_for_a_full_sample_before_it_says_anything() -> None:
    probe = LatencyProbe()
    for _ in range(PROBE_CASES - 1):
        probe.observe(wait_s=0.010)
        assert not probe.waiting
    probe.observe(wait_s=0.010)
    assert probe.waiting


@pytest.mark.parametrize(
    ("wait_s", "waiting"),
    [(-0.0001, False), (0.0, False), (0.0004, False), (WAIT_TO_OPEN_S - 0.0001, False),
     (WAIT_TO_OPEN_S, True), (0.004, True), (0.035, True)],
)  # fmt: skip
def test_the_probe_says_waiting_from_the_median_wait(wait_s: float, waiting: bool) -> None:
    probe = LatencyProbe()
    for _ in range(PROBE_CASES):
        probe.observe(wait_s=wait_s)
    assert probe.waiting is waiting


def test_the_probe_weighs_only_the_latest_cases() -> None:
    probe = LatencyProbe()
    for _ in range(PROBE_CASES):
        probe.observe(wait_s=0.010)
    assert probe.waiting
    for _ in range(PROBE_CASES):
        probe.observe(wait_s=0.0003)
    assert not probe.waiting


def test_one_stall_does_not_open_the_window_but_most_cases_waiting_does() -> None:
    probe = LatencyProbe()
    for _ in range(PROBE_CASES - 1):
        probe.observe(wait_s=0.0004)
    probe.observe(wait_s=0.5)  # the machine paused once
    assert not probe.waiting
    for _ in range(PROBE_CASES // 2):
        probe.observe(wait_s=0.004)  # the server slows down for good
    assert probe.waiting
