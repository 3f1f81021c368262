"""Building many small pydantic models at once (100,000 eval cases): the memory and time a
model costs beyond its values."""

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
