"""pytest plugin for the benchmark: the seconds from the start of the run loop to the end of
the session's finish (cases run, artifact written), written to ``$BENCH_RUN_CLOCK``. Startup,
collection and the plugin's preflight stay out; on pytest-xdist only the controller writes.

At exit the process also writes its own peak RSS (``VmHWM``, KiB) to ``$BENCH_RUN_PEAK``:
a child's ``ru_maxrss`` starts from its parent's at the fork, so a small child of a large
benchmark process would read the parent's size."""

import atexit
import os
import time
from collections.abc import Generator
from pathlib import Path

import pytest

_started: list[float] = []


def _write_peak() -> None:
    target = os.environ.get("BENCH_RUN_PEAK")
    if not target or "PYTEST_XDIST_WORKER" in os.environ:  # a worker's peak is not the run's
        return
    for line in Path("/proc/self/status").read_text("ascii").splitlines():
        if line.startswith("VmHWM:"):
            Path(target).write_text(line.split()[1] + "\n", encoding="ascii")
            return


if Path("/proc/self/status").exists():
    atexit.register(_write_peak)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    _started.append(time.perf_counter())
    return (yield)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("BENCH_RUN_CLOCK")
    if target and _started and not hasattr(session.config, "workerinput"):
        with open(target, "w", encoding="utf-8") as clock:
            clock.write(f"{time.perf_counter() - _started[0]:.6f}\n")
