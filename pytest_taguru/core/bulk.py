"""Many small objects at once: building 100,000 eval cases' pydantic models (the memory and
time a model costs beyond its values) and running them under Python's cycle collector."""

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the console script imports this module before any model exists
    from pydantic import BaseModel

_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


def share_fields_set(model: "BaseModel") -> None:
    """Give ``model`` the one set of given keys that every model with the same keys shares.

    pydantic makes a set per model (several hundred bytes, the most of a small case at
    100,000 cases) and changes one only by assignment, which frozen models refuse, or on a
    copy (``model_copy``), so sharing is safe for a frozen model.
    """
    given = model.__pydantic_fields_set__
    shared = _FIELDS_SETS.setdefault(frozenset(given), given)
    object.__setattr__(model, "__pydantic_fields_set__", shared)


def share_text(model: "BaseModel", name: str) -> None:
    """Make ``model``'s string field ``name`` the one copy of its value that every model shares
    (source names repeat across a dataset's cases). A field holds the very string validated,
    so the copy is replaced under the frozen model, as in :func:`share_fields_set`."""
    model.__dict__[name] = sys.intern(model.__dict__[name])


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while acyclic models are built: its passes over the
    growing heap took half the time of loading 100,000 cases."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


YOUNG_COLLECTION_THRESHOLD = 50_000
"""Net allocations of tracked objects between two collections of the youngest generation
during a run (CPython's default is 700). Measured on 100 cases at ``options.limit`` 1000: the
collector's time in the run fell from 2.75 s (default) to 0.47 s; 200,000 saved 0.3 s more
but held more garbage cycles (and their memory) between collections."""


@contextmanager
def collector_tuned() -> Iterator[None]:
    """Python's cycle collector set for a run's loop: what is alive when it starts (the items,
    the eval set, the modules) is frozen out of every later collection, and the youngest
    generation is collected every ``YOUNG_COLLECTION_THRESHOLD`` allocations.

    A case allocates thousands of short-lived tracked objects (the parsed answer, its models):
    with the defaults the collector ran dozens of times a case and passed over the session's
    whole heap every few cases: a third of the CPU of a run at ``options.limit`` 1000. Garbage
    is still found (a cycle lives a little longer). Nothing is collected before the freeze: a
    full pass over 100,000 items costs more than the little garbage it would find. Everything
    is restored afterwards; when something else froze objects before, the freeze is left to it.
    """
    thresholds = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0
    if freezing:
        gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freezing:
            gc.unfreeze()


def collector_for_serving() -> None:
    """Python's cycle collector set for the reference server's own process, once its start-up
    imports are in: the store (tens of thousands of paragraphs' postings) frozen out of every
    later collection, and the youngest generation collected every
    ``YOUNG_COLLECTION_THRESHOLD`` allocations. A deep search holds thousands of lane hits at
    once; with the defaults they set off collections that passed over the whole store: 10 ms
    of a 50 ms search at ``limit`` 1000 over 100,000 paragraphs."""
    gc.collect()  # once, before serving: nothing of the start-up's garbage stays frozen
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
