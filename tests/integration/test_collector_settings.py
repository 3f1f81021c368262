"""The run's loop runs under ``core.bulk.collector_tuned`` in every process, and the session
leaves the cycle collector as it found it."""

import gc
import json

import pytest
from e2e import Suite

from pytest_taguru.core.bulk import YOUNG_COLLECTION_THRESHOLD

RECORDING_CONFTEST = """
import gc, json, os

def pytest_runtest_call(item):
    with open(f"collector-{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps([gc.get_threshold()[0], gc.get_freeze_count() > 0]) + "\\n")
"""


@pytest.mark.parametrize("dist", [(), ("-n", "2")], ids=["n0", "xdist"])
def test_every_case_runs_with_the_tuned_collector(suite: Suite, dist: tuple[str, ...]) -> None:
    suite.pytester.makeconftest(RECORDING_CONFTEST)
    assert suite.run(*dist).ret == 0
    seen = [
        json.loads(line)
        for path in suite.path.glob("collector-*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert len(seen) == len(suite.artifact()["cases"]) > 0
    assert all(entry == [YOUNG_COLLECTION_THRESHOLD, True] for entry in seen)


def test_the_session_restores_the_collector(suite: Suite) -> None:
    before = gc.get_threshold(), gc.get_freeze_count()
    assert suite.run().ret == 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
