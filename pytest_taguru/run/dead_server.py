"""The dead-server rule: K transport failures in a row, across cases, end the run.

A server that dies mid-run would otherwise make every remaining call wait out its own
failure, one deadline at a time. A call that ends in a transport failure (refused, reset,
broken off, deadline spent; after its retries) adds one to the streak; a call that got any
HTTP answer, whatever its status, ends it. At ``K`` (``--taguru-max-consecutive-failures``;
``0`` turns the rule off) the server is presumed dead.

The rule runs in two places with the same arithmetic. Each process's client keeps a streak
over its own calls and, once it trips, sends nothing more (its cases then end at once). Each
case's report carries a :class:`CallTally`; the controller folds the tallies, in the order
the reports arrive from every pytest-xdist worker, into its own streak and decides to stop
the run.
"""

import threading
from dataclasses import dataclass
from typing import Any


@dataclass
class CallTally:
    """What one case's calls tell the rule: whether any got an answer, and the transport
    failures after the last answer (all of them when none was answered)."""

    answered: bool = False
    failures: int = 0
    last_failure: str | None = None

    def add_answer(self) -> None:
        self.answered, self.failures = True, 0

    def add_failure(self, message: str) -> None:
        self.failures += 1
        self.last_failure = message

    def to_report(self) -> dict[str, Any]:
        """Plain data for a pytest report attribute (pytest-xdist serializes it)."""
        return {"answered": self.answered, "failures": self.failures, "last": self.last_failure}

    @classmethod
    def from_report(cls, data: dict[str, Any]) -> "CallTally":
        return cls(bool(data["answered"]), int(data["failures"]), data.get("last"))


class FailureStreak:
    """Consecutive transport failures against a limit ``K`` (0: never trips); thread-safe,
    so that cases in flight together share one streak."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._count = 0
        self._last: str | None = None
        self._lock = threading.Lock()

    @property
    def tripped(self) -> bool:
        return self.limit > 0 and self._count >= self.limit

    def add(self, tally: CallTally) -> bool:
        """Fold in a case's (or a call's) tally; whether the streak has tripped."""
        with self._lock:
            self._count = tally.failures if tally.answered else self._count + tally.failures
            if tally.failures:
                self._last = tally.last_failure
            return self.tripped

    def verdict(self) -> str:
        """``the server is presumed dead after 5 consecutive transport failures (last: …)``."""
        last = f" (last: {self._last})" if self._last else ""
        return (
            f"the server is presumed dead after {self._count} consecutive transport "
            f"failures{last}"
        )


class RunStop:
    """The controller's side of the rule: one streak over the tallies of every case report,
    in arrival order, and the verdict that stopped the run."""

    def __init__(self, limit: int) -> None:
        self.streak = FailureStreak(limit)
        self.verdict: str | None = None

    def fold(self, tally: dict[str, Any], worker_verdict: str | None) -> str | None:
        """Fold one case's tally (:meth:`CallTally.to_report`); the verdict when the run must
        stop now: this streak tripped, or the process that ran the case says its own did."""
        tripped = self.streak.add(CallTally.from_report(tally))
        if self.verdict is None and (tripped or worker_verdict is not None):
            self.verdict = self.streak.verdict() if tripped else worker_verdict
            return self.verdict
        return None

    def message(self, out: str) -> str:
        """The one line that ends a stopped run (after ``taguru: evaluate: ``)."""
        return f"{self.verdict}; the run was stopped and {out} was not written"
