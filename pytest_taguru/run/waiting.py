"""A notice on stderr when a start-up or finishing step takes longer than a few seconds.

A hung or slow server must not mean silence: ``with waiting_notice(stderr, "GET /health at
http://h:8248"):`` prints ``taguru: evaluate: still waiting for GET /health at http://h:8248
(3 s) …`` once the step has run for ``after`` seconds, and nothing when it ends sooner. The
step's own deadline is the client's; this only says what is being waited for.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from pytest_taguru.errors import PREFIX

NOTICE_AFTER_SECONDS = 3.0


@contextmanager
def waiting_notice(stderr: TextIO, what: str, *, after: float | None = None) -> Iterator[None]:
    """Run the body; if it is still running after ``after`` seconds (default
    ``NOTICE_AFTER_SECONDS``, read at each call), say what it waits for."""
    if after is None:
        after = NOTICE_AFTER_SECONDS

    def notice() -> None:
        line = f"{PREFIX}still waiting for {what} ({after:g} s) …"
        print(line, file=stderr, flush=True)

    timer = threading.Timer(after, notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
