"""The latency clock of the lanes: whole milliseconds of the monotonic clock, truncated.

Every lane takes its clock points (evaluate-run.md §4.5) from here, so tests replace one
attribute (``clock.monotonic_ns``) to make latencies exact.
"""

import time
from typing import Protocol

monotonic_ns = time.monotonic_ns
"""The latency clock (module level so tests can replace it)."""


def elapsed_ms(started_ns: int) -> int:
    """Whole milliseconds since ``started_ns`` on the latency clock, truncated."""
    return (monotonic_ns() - started_ns) // 1_000_000


class Resendable(Protocol):
    """A client that may send a call more than once (``run.client.TaguruClient``)."""

    def latency_start(self, started_ns: int) -> int: ...


def call_ms(client: Resendable, started_ns: int) -> int:
    """A call's latency in whole milliseconds from ``started_ns``, or from its final attempt
    when the client sent it again: the earlier attempts and the waits are not the server's."""
    return elapsed_ms(client.latency_start(started_ns))
