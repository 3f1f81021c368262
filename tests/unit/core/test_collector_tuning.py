"""The cycle collector's settings in the reference server's own process."""

import gc
from collections.abc import Iterator

import pytest

from pytest_taguru.core.bulk import YOUNG_COLLECTION_THRESHOLD, collector_for_serving


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    yield
    gc.set_threshold(*thresholds)
    if gc.get_freeze_count() and not frozen:
        gc.unfreeze()


def test_the_server_process_serves_with_its_store_frozen() -> None:
    store = [[number] for number in range(1000)]  # a stand-in for the imported postings
    collector_for_serving()
    assert gc.get_freeze_count() >= len(store)
    assert gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD
