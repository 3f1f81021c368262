"""pytest plugin for the benchmark: the seconds from the start of the run loop to the end of
the session's finish (cases run, artifact written), written to ``$BENCH_RUN_CLOCK``. Startup,
collection and the plugin's preflight stay out; on pytest-xdist only the controller writes."""

import os
import time
from collections.abc import Generator

import pytest

_started: list[float] = []


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
