"""A session's long-lived memory. Its heap is kept out of the cycle collector's passes
(``core.bulk.SessionHeap``): frozen once the items exist, in every process that runs cases, and
given back when the next in-process session begins. Its items keep one shared key table."""

import gc
import json
from collections.abc import Iterator

import pytest
from e2e import CASE_IDS, Suite

FREEZE_CONFTEST = """
import gc
import json
import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    with open(f"frozen-before-collection-{os.getpid()}.json", "w") as out:
        json.dump(gc.get_freeze_count(), out)


def pytest_runtest_call(item):
    with open(f"frozen-{os.getpid()}-{item.name}.json", "w") as out:
        json.dump(gc.get_freeze_count(), out)
"""


@pytest.fixture(autouse=True)
def heap_given_back() -> Iterator[None]:
    """This process's heap is not left frozen for the tests that follow."""
    yield
    gc.unfreeze()


def test_every_process_runs_its_cases_with_the_heap_frozen(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    suite.pytester.makeconftest(FREEZE_CONFTEST)
    result = suite.run(*dist)

    assert result.ret == 0
    counts = {
        path.stem.rsplit("-", 1)[-1]: json.loads(path.read_text())
        for path in suite.path.glob("frozen-*-c-*.json")
    }
    assert sorted(counts) == sorted(case_id.removeprefix("c-") for case_id in CASE_IDS)
    # Not a handful: the items, their eval cases and the modules that made them.
    assert all(count > 10_000 for count in counts.values()), counts


def test_the_next_session_in_the_process_gives_the_freeze_back(suite: Suite) -> None:
    gc.unfreeze()
    assert suite.run().ret == 0
    assert gc.get_freeze_count() > 0  # the session ended with its heap still frozen

    suite.pytester.makeconftest(FREEZE_CONFTEST)
    assert suite.run().ret == 0

    (before_collection,) = suite.path.glob("frozen-before-collection-*.json")
    assert json.loads(before_collection.read_text()) == 0


ATTRIBUTES_CONFTEST = """
import json

import pytest


def pytest_collection_finish(session):
    session.config.taguru_attributes = {item.name: sorted(vars(item)) for item in session.items}


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    before = item.config.taguru_attributes[item.name]
    with open(f"attributes-{item.name}.json", "w") as out:
        json.dump({"collected": before, "ran": sorted(vars(item))}, out)
"""


def test_running_an_item_adds_no_attribute_to_it(suite: Suite) -> None:
    # Attributes first assigned after the item is made overflow the room its dict has beside
    # the key table all items share, and the item gets a dict of its own (about 460 bytes a
    # case). pytest itself adds one, the item's cached location, for which there is room.
    suite.pytester.makeconftest(ATTRIBUTES_CONFTEST)
    assert suite.run().ret == 0

    for case_id in CASE_IDS:
        attributes = json.loads((suite.path / f"attributes-{case_id}.json").read_text())
        ran = [name for name in attributes["ran"] if name != "location"]
        assert ran == attributes["collected"], case_id
        assert {"block", "calls"} <= set(attributes["collected"])
