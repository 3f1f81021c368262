"""The order this process will run its items in, from the item about to run onwards.

The prefetch window (``run.prefetch``) must judge ahead exactly the cases pytest runs next,
after everything that reorders or narrows the session (``pytest_collection_modifyitems``
plugins such as random order, ``-k``, ``--deselect``, ``--lf``/``--ff``). What pytest runs is
known in two ways:

* a plain run walks ``session.items`` in order, each item handed its successor as
  ``nextitem``;
* a pytest-xdist worker runs the indices its controller sent it, from a queue
  (``WorkerInteractor.torun``): the next one already taken off as ``nextitem``, the rest still
  queued (the controller may take some back to give another worker: the window then drops
  them at the next item).

Whenever the order found disagrees with ``nextitem`` (a plugin running its own loop), only
``nextitem`` is known.
"""

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any

import pytest

LOOKAHEAD = 512
"""Items looked at ahead of the current one, case items or not (a bound on the cost per item
of a session mixing cases with many ordinary tests)."""


def _worker_queue(session: pytest.Session) -> Any:
    """pytest-xdist's ``WorkerInteractor`` of this process (it has no registered name)."""
    for plugin in session.config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "WorkerInteractor" and hasattr(plugin, "torun"):
            return plugin
    return None


class RunOrder:
    """The upcoming items of one session, as the item about to run sees them."""

    def __init__(self, session: pytest.Session) -> None:
        self.session = session
        self._interactor = _worker_queue(session)
        self._positions: dict[int, int] | None = None

    def upcoming(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[pytest.Item]:
        """``item``, then what runs after it (at most ``LOOKAHEAD`` items)."""
        yield item
        if nextitem is None:
            return
        items: Sequence[pytest.Item] = self.session.items
        after = self._queued(items) if self._interactor is not None else self._listed(items, item)
        if after and after[0] is nextitem:
            yield from after
        else:
            yield nextitem

    def _listed(self, items: Sequence[pytest.Item], item: pytest.Item) -> Sequence[pytest.Item]:
        """The items after ``item`` in ``session.items`` (a plain run)."""
        if self._positions is None:
            self._positions = {id(listed): index for index, listed in enumerate(items)}
        index = self._positions.get(id(item))
        if index is None or index >= len(items) or items[index] is not item:
            return []
        return items[index + 1 : index + 1 + LOOKAHEAD]

    def _queued(self, items: Sequence[pytest.Item]) -> list[pytest.Item]:
        """The worker's next item, then its queue (indices into ``session.items``, ending at
        the shutdown marker, the only entry that is not an index)."""
        interactor = self._interactor
        with interactor.torun.lock() as queued:
            indices = [interactor.nextitem_index, *islice(queued, LOOKAHEAD - 1)]
        ahead: list[pytest.Item] = []
        for index in indices:
            if not isinstance(index, int) or not 0 <= index < len(items):
                break
            ahead.append(items[index])
        return ahead
