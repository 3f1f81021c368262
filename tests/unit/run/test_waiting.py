"""The notice a slow start-up or finishing step prints."""

import io
import time

from pytest_taguru.run.waiting import waiting_notice


def test_a_slow_step_says_what_it_waits_for() -> None:
    stderr = io.StringIO()
    with waiting_notice(stderr, "GET /health at http://h", after=0.05):
        time.sleep(0.3)
    assert (
        stderr.getvalue()
        == "taguru: evaluate: still waiting for GET /health at http://h (0.05 s) …\n"
    )


def test_a_quick_step_prints_nothing() -> None:
    stderr = io.StringIO()
    with waiting_notice(stderr, "x", after=0.5):
        pass
    time.sleep(0.6)
    assert stderr.getvalue() == ""
