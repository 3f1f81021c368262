"""The latency clock of the lanes: whole milliseconds of the monotonic clock, truncated.

Every lane takes its clock points (evaluate-run.md §4.5) from here, so tests replace one
attribute (``clock.monotonic_ns``) to make latencies exact.
"""

import time

monotonic_ns = time.monotonic_ns
"""The latency clock (module level so tests can replace it)."""


def elapsed_ms(started_ns: int) -> int:
    """Whole milliseconds since ``started_ns`` on the latency clock, truncated."""
    return (monotonic_ns() - started_ns) // 1_000_000
