"""Which failed attempts are sent again, and how long to wait first.

Every call of a run is a read, so sending one again is safe. Retried: an answer with status
``429`` or ``503``, and a connection reset or closed before any byte of an answer arrived.
Not retried: a refused connection (nothing listens there: the dead-server rule's business,
which a backoff would only slow down), a timeout (the deadline is the call's budget; a
stalled server would multiply it), a failure after part of an answer, and every other status.
The wait honours ``Retry-After`` (delay-seconds or an HTTP-date) up to
:data:`RETRY_AFTER_CAP_S`; without one it is a jittered exponential backoff.
"""

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from pytest_taguru.flags import DEFAULT_RETRIES

RETRIED_STATUSES = frozenset({429, 503})
"""``rate_limited`` and ``overloaded``/``maintenance`` (server-wire §1.4)."""

RETRY_AFTER_CAP_S = 10.0
"""The longest wait a ``Retry-After`` header can impose before one retry."""

BACKOFF_BASE_S = 0.5
"""The first backoff without ``Retry-After``; each further retry doubles it."""

BACKOFF_CAP_S = 4.0
"""The longest backoff (before jitter)."""

JITTER = (0.5, 1.5)
"""The backoff is multiplied by a uniform factor in this range, so workers spread out."""


def retry_after_s(value: str | None, now: datetime) -> float | None:
    """Seconds a ``Retry-After`` value asks to wait (``None`` when absent or unreadable):
    delay-seconds (``120``) or an HTTP-date in the past or future (never negative)."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    """How often a call may be re-sent (``--taguru-retries``) and the waits in between.

    ``sleep``, ``uniform`` and ``now`` are the clock and randomness (replaced in tests).
    """

    retries: int = DEFAULT_RETRIES
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    uniform: Callable[[float, float], float] = field(default=random.uniform, repr=False)
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), repr=False)

    def wait_s(self, retry: int, retry_after: str | None) -> float:
        """The wait before retry number ``retry`` (0 for the first): ``Retry-After`` up to
        its cap, else ``BACKOFF_BASE_S · 2^retry`` (at most ``BACKOFF_CAP_S``) × jitter."""
        asked = retry_after_s(retry_after, self.now())
        if asked is not None:
            return min(asked, RETRY_AFTER_CAP_S)
        return min(BACKOFF_BASE_S * 2.0**retry, BACKOFF_CAP_S) * self.uniform(*JITTER)

    def pause(self, retry: int, retry_after: str | None) -> None:
        self.sleep(self.wait_s(retry, retry_after))


NO_RETRIES = RetryPolicy(retries=0)
"""taguru's own behaviour: every call is sent once."""
