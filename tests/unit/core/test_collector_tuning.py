"""The cycle collector's settings: the reference server's own process, a session's heap."""

import gc
from collections.abc import Iterator

import pytest

from pytest_taguru.core.bulk import YOUNG_COLLECTION_THRESHOLD, SessionHeap, collector_for_serving


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    """Each test starts and ends with nothing frozen (an in-process pytester session earlier in
    this suite leaves its heap frozen, as a session does) and the thresholds as found."""
    thresholds = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.set_threshold(*thresholds)
    gc.unfreeze()


def test_the_server_process_serves_with_its_store_frozen() -> None:
    store = [[number] for number in range(1000)]  # a stand-in for the imported postings
    collector_for_serving()
    assert gc.get_freeze_count() >= len(store)
    assert gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD


def test_a_session_heap_freezes_what_is_alive_and_what_came_since() -> None:
    heap = SessionHeap()
    items = [[number] for number in range(1000)]
    heap.freeze()
    first = gc.get_freeze_count()
    assert first >= len(items)
    reports = [[number] for number in range(1000)]
    heap.freeze()  # again: what was made since joins the first freeze
    # (frozen objects that die leave the count, so it is compared with a margin)
    assert gc.get_freeze_count() > first + len(reports) // 2


def test_the_next_session_gives_the_previous_freeze_back() -> None:
    heap = SessionHeap()
    heap.freeze()
    assert gc.get_freeze_count() > 0
    heap.begin()
    assert gc.get_freeze_count() == 0
    heap.begin()  # nothing frozen: nothing to give back
    heap.freeze()
    assert gc.get_freeze_count() > 0


def test_a_freeze_made_by_someone_else_is_left_to_them() -> None:
    gc.freeze()
    theirs = gc.get_freeze_count()
    heap = SessionHeap()
    items = [[number] for number in range(1000)]
    heap.freeze()
    # Frozen objects that die leave the count: it is compared with margins.
    assert gc.get_freeze_count() < theirs + len(items) // 2  # nothing of ours joined theirs
    heap.begin()
    assert gc.get_freeze_count() > theirs // 2  # and theirs is not given back by us
    del items
