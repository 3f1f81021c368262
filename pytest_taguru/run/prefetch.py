"""The prefetch window: the next cases' requests in flight while pytest runs the current item.

A run spends nearly all of its time waiting for answers, one request at a time. With
``--taguru-concurrency N`` the process keeps the current case and the next ``N - 1`` cases
(in the order pytest will run them) started on ``N`` threads; each case still sends its own
requests one after another, in the specification's order, and its result waits until pytest
runs its item. Which keys come next is the caller's business (``pipeline``); this module only
keeps the window: bounded, in order, and cancelled when the plan changes or the run stops.

The threads are daemon threads: an interrupted run abandons a request in flight instead of
waiting out its deadline at interpreter exit (every request is a read, so nothing is left
half-done on the server).

Threads are not free: each socket call hands Python's interpreter lock to another thread and
back. Against a server that answers at once, a window of 8 cost a third more CPU than one case
at a time (``benchmarks/bench_plugin.py``'s instant fake, 2 cores). So the default window,
``auto``, opens only once the cases judged one at a time are seen waiting on the server longer
than the threads would cost (:class:`LatencyProbe`).
"""

import queue
import statistics
import threading
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import Any, Generic, TypeVar

from pytest_taguru.flags import DEFAULT_CONCURRENCY

Key = TypeVar("Key", bound=Hashable)
Result = TypeVar("Result")

Submit = Callable[[Callable[[], Result]], "Future[Result]"]


@dataclass(frozen=True)
class Concurrency:
    """``--taguru-concurrency``: at most ``size`` cases in flight in each process; when
    ``adaptive`` (``auto``), none ahead until :class:`LatencyProbe` says the cases wait on
    the server."""

    size: int
    adaptive: bool = False


AUTO_CONCURRENCY = Concurrency(DEFAULT_CONCURRENCY, adaptive=True)
"""``--taguru-concurrency auto``, the default."""

PROBE_CASES = 8
"""How many of the latest cases judged one at a time the probe weighs."""
WAIT_TO_OPEN_S = 0.002
"""The median wait per case at which ``auto`` opens the window: twice what the threads
themselves cost a case (about 1 ms of CPU on 2 cores: against an instant fake, 5,000
one-search cases took 18.5 s at 8 and 12.3 s at 1). The reference server's searches
(about 4 ms) and a deep search's (about 35 ms at limit 1000) open it; a server that answers
in well under a millisecond does not."""


class LatencyProbe:
    """Whether the cases judged one at a time wait on the server: the median wait of the
    latest ``PROBE_CASES`` of them reaches ``WAIT_TO_OPEN_S``. A case's wait is its
    judging's wall time less the judging thread's CPU time. The median, so that one stall
    (a pause of the machine, of the server) does not open the window for the rest of the
    run."""

    def __init__(self) -> None:
        self._waits: deque[float] = deque(maxlen=PROBE_CASES)

    def observe(self, wait_s: float) -> None:
        self._waits.append(wait_s)

    @property
    def waiting(self) -> bool:
        full = len(self._waits) == PROBE_CASES
        return full and statistics.median(self._waits) >= WAIT_TO_OPEN_S


class LaneThreads:
    """``size`` daemon threads taking jobs in submission order (started on first use)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], Result]) -> "Future[Result]":
        future: Future[Result] = Future()
        with self._lock:
            if len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, name="taguru-case", daemon=True)
                self._threads.append(thread)
                thread.start()
        self._jobs.put((future, job))
        return future

    def _work(self) -> None:
        while (entry := self._jobs.get()) is not None:
            future, job = entry
            if not future.set_running_or_notify_cancel():
                continue  # cancelled before it started
            try:
                future.set_result(job())
            except BaseException as error:  # handed to whoever takes the result
                future.set_exception(error)

    def shutdown(self) -> None:
        """Let every thread end after its current job (never waited for)."""
        with self._lock:
            for _ in self._threads:
                self._jobs.put(None)
            self._threads.clear()


class PrefetchWindow(Generic[Key, Result]):
    """At most ``size`` keys started and not yet taken, the first of the planned order.

    ``job(key)`` computes a key's result on whatever ``submit`` runs it on (``LaneThreads``,
    or a hand-driven executor in tests). A key is started once; its result is :meth:`take`\\ n
    once. A key that drops out of the plan is cancelled (if it has not started; a started one
    is left to finish, its result unread).
    """

    def __init__(self, size: int, job: Callable[[Key], Result], submit: Submit[Result]) -> None:
        self.size = size
        self._job = job
        self._submit = submit
        self._started: dict[Key, Future[Result]] = {}
        self.closed = False

    def __len__(self) -> int:
        return len(self._started)

    def plan(self, upcoming: Iterable[Key]) -> None:
        """Make the window the first ``size`` keys of ``upcoming`` (the order they will be
        taken in): start the new ones in that order, cancel those no longer among them."""
        if self.closed:
            return
        wanted = list(islice(upcoming, self.size))
        kept = set(wanted)
        for key in [key for key in self._started if key not in kept]:
            self._started.pop(key).cancel()
        for key in wanted:
            if key not in self._started:
                self._started[key] = self._submit(partial(self._job, key))

    def take(self, key: Key) -> "Future[Result] | None":
        """The started computation of ``key`` (it leaves the window), or ``None`` when it was
        not started: the caller computes it itself."""
        return self._started.pop(key, None)

    def close(self) -> None:
        """Start nothing more; cancel what has not started (a key already started, or done,
        can still be taken: it is what happened)."""
        self.closed = True
        for key, future in list(self._started.items()):
            if future.cancel():
                del self._started[key]
