"""Many small objects at once: building 100,000 eval cases' pydantic models (the memory and
time a model costs beyond its values), a session's items and the reference server's store under
Python's cycle collector."""

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


class SessionHeap:
    """A pytest process's long-lived objects (the eval set, its items, the modules) kept out of
    the cycle collector's passes from collection to the end of the session.

    They live to the end anyway, and each full pass walked all of them: with 100,000 cases,
    such passes took more than half of collecting them (pytest allocates for every item it
    collects), and they kept coming while the cases ran. Frozen objects are still freed by
    reference counting; only garbage cycles among them wait.

    The freeze outlives the session: a process (pytest's console, an xdist worker) exits right
    after, and giving the heap back first cost about 3.5 s at 100,000 cases, most of what
    collecting them takes (the collector's last passes and the interpreter's exit walking every
    item). A process that runs another evaluation session in-process (``pytest.main``,
    pytester) gets the previous freeze given back when that one begins, so at most one
    session's garbage cycles wait; a later session that runs no eval cases (the plugin is
    inert there and imports nothing) leaves it frozen. When something else froze objects
    first, the freeze is left to it.
    """

    def __init__(self) -> None:
        self._frozen = False  # the permanent generation holds this heap's freeze

    def begin(self) -> None:
        """A session begins: the freeze a previous session of this process left is given back."""
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

    def freeze(self) -> None:
        """Move everything alive now out of the collector's reach (again after a first time:
        what was made since)."""
        if self._frozen or gc.get_freeze_count() == 0:
            gc.freeze()
            self._frozen = True


SESSION_HEAP = SessionHeap()
"""The process's one session heap (the collector's generations are the process's)."""


YOUNG_COLLECTION_THRESHOLD = 50_000
"""Net allocations of tracked objects between two collections of the youngest generation in
the reference server's own process (CPython's default is 700)."""


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
