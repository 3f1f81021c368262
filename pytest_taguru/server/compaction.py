"""Automatic compaction on a timer, as taguru's flusher does it (server-wire §3.4).

Every ``interval`` seconds (``TAGURU_FLUSH_SECS``, default 5) the context with the worst
dead-edge ratio strictly above ``ratio`` (``TAGURU_AUTO_COMPACT_RATIO``, default 0.5) is
compacted; ``TAGURU_AUTO_COMPACT=0`` turns it off.
"""

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_taguru.server.store import Store

DEFAULT_INTERVAL = 5.0
DEFAULT_RATIO = 0.5


@dataclass(frozen=True)
class CompactionSettings:
    """When automatic compaction runs; ``interval`` None means never."""

    interval: float | None = DEFAULT_INTERVAL
    ratio: float = DEFAULT_RATIO

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> "CompactionSettings":
        """Read ``TAGURU_AUTO_COMPACT``, ``TAGURU_FLUSH_SECS``, ``TAGURU_AUTO_COMPACT_RATIO``.

        Raises ValueError naming the variable whose value is not a number.
        """
        if environ.get("TAGURU_AUTO_COMPACT", "").strip() in ("0", "false", "off"):
            return cls(interval=None)
        values: dict[str, float] = {}
        for key, default in (
            ("TAGURU_FLUSH_SECS", DEFAULT_INTERVAL),
            ("TAGURU_AUTO_COMPACT_RATIO", DEFAULT_RATIO),
        ):
            raw = environ.get(key, "").strip()
            try:
                values[key] = float(raw) if raw else default
            except ValueError:
                raise ValueError(f"{key} '{raw}' is not a number") from None
        return cls(values["TAGURU_FLUSH_SECS"], values["TAGURU_AUTO_COMPACT_RATIO"])


class Compactor:
    """A daemon thread compacting ``store`` once per tick until :meth:`stop`."""

    def __init__(self, store: Store, settings: CompactionSettings) -> None:
        self.store = store
        self.settings = settings
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.settings.interval is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="taguru-compactor", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self.settings.interval is not None
        while not self._stopping.wait(self.settings.interval):
            self.store.compact_worst(self.settings.ratio)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
