"""The cycle collector's settings for a run's loop (in force inside, restored after) and for
the reference server's process."""

import gc
from collections.abc import Iterator

import pytest

from pytest_taguru.core.bulk import (
    YOUNG_COLLECTION_THRESHOLD,
    collector_for_serving,
    collector_tuned,
)


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    yield
    gc.set_threshold(*thresholds)
    if gc.get_freeze_count() and not frozen:
        gc.unfreeze()


def test_the_loop_runs_with_the_heap_frozen_and_a_larger_young_generation() -> None:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with collector_tuned():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, *before[1:])
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_settings_are_restored_when_the_loop_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(KeyboardInterrupt), collector_tuned():
        raise KeyboardInterrupt
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_garbage_cycles_made_during_the_loop_are_still_collected() -> None:
    class Node:
        partner: object = None

    with collector_tuned():
        first, second = Node(), Node()
        first.partner, second.partner = second, first
        del first, second
        assert gc.collect() >= 2


def test_a_freeze_made_before_is_left_to_whoever_made_it() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    with collector_tuned():
        assert gc.get_freeze_count() == frozen  # nothing of ours added to it
    assert gc.get_freeze_count() == frozen


def test_the_server_process_serves_with_its_store_frozen() -> None:
    store = [[number] for number in range(1000)]  # a stand-in for the imported postings
    collector_for_serving()
    assert gc.get_freeze_count() >= len(store)
    assert gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD
