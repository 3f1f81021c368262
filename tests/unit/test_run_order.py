"""The order a process runs its items in: a plain run's list, a pytest-xdist worker's queue."""

import collections
import contextlib
import enum
from collections.abc import Iterator
from typing import Any

from pytest_taguru.run_order import LOOKAHEAD, RunOrder

# Items are compared by identity, as pytest's are: plain objects with a name stand for them.


class Shutdown(enum.Enum):
    """Stands for pytest-xdist's ``Marker.SHUTDOWN``, the queue's only non-index entry."""

    SHUTDOWN = 0


class Queue:
    def __init__(self, entries: list[Any]) -> None:
        self.entries = collections.deque(entries)

    @contextlib.contextmanager
    def lock(self) -> Iterator["collections.deque[Any]"]:
        yield self.entries


class WorkerInteractor:
    """The part of pytest-xdist's ``WorkerInteractor`` the order reads."""

    def __init__(self, next_index: Any, queued: list[Any]) -> None:
        self.nextitem_index = next_index
        self.torun = Queue(queued)


class PluginManager:
    def __init__(self, plugins: list[object]) -> None:
        self.plugins = plugins

    def get_plugins(self) -> list[object]:
        return self.plugins


class Item:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def make_session(items: list[Item], plugins: tuple[object, ...] = ()) -> Any:
    config = type("Config", (), {"pluginmanager": PluginManager(list(plugins))})()
    return type("Session", (), {"items": items, "config": config})()


ITEMS = [Item(f"item{number}") for number in range(10)]


def names(items: Iterator[Any]) -> list[str]:
    return [item.name for item in items]


def upcoming(session: Any, index: int, next_index: int | None) -> list[str]:
    next_item = None if next_index is None else ITEMS[next_index]
    return names(RunOrder(session).upcoming(session.items[index], next_item))


def test_a_plain_run_follows_the_session_list_from_the_current_item() -> None:
    session = make_session(ITEMS)
    assert upcoming(session, 3, 4) == names(iter(ITEMS[3:]))
    assert upcoming(session, 9, None) == ["item9"]


def test_the_plain_lookahead_is_bounded() -> None:
    items = [Item(f"i{number}") for number in range(LOOKAHEAD * 2)]
    order = RunOrder(make_session(items))
    assert len(list(order.upcoming(items[0], items[1]))) == 1 + LOOKAHEAD


def test_when_the_list_disagrees_with_nextitem_only_nextitem_is_known() -> None:
    # A plugin running its own loop: pytest hands item3 a successor that is not item4.
    session = make_session(ITEMS)
    assert upcoming(session, 3, 7) == ["item3", "item7"]
    stranger = Item("stranger")
    assert names(RunOrder(session).upcoming(stranger, ITEMS[1])) == ["stranger", "item1"]


def test_a_worker_follows_its_queue_up_to_the_shutdown_marker() -> None:
    interactor = WorkerInteractor(7, [2, 5, Shutdown.SHUTDOWN, 8])
    session = make_session(ITEMS, (object(), interactor))
    assert upcoming(session, 0, 7) == ["item0", "item7", "item2", "item5"]


def test_a_worker_whose_next_index_disagrees_with_nextitem_knows_only_nextitem() -> None:
    session = make_session(ITEMS, (WorkerInteractor(7, [2, 5]),))
    assert upcoming(session, 0, 4) == ["item0", "item4"]


def test_items_taken_back_from_the_worker_queue_are_no_longer_upcoming() -> None:
    interactor = WorkerInteractor(1, [2, 3, 4])
    session = make_session(ITEMS, (interactor,))
    assert upcoming(session, 0, 1) == ["item0", "item1", "item2", "item3", "item4"]
    interactor.torun.entries = collections.deque([4])  # the controller stole 2 and 3
    assert upcoming(session, 0, 1) == ["item0", "item1", "item4"]
