"""Run the reference server in-process on a loopback port (uvicorn in a background thread).

    with ReferenceServer.from_import_files(["corpus.ndjson"], token="s3cret") as server:
        httpx.get(server.url + "/health")

``start()`` returns once the socket accepts connections; ``stop()`` shuts uvicorn down and
joins its thread: requests in progress get ``STOP_GRACE_S`` to finish, then are cancelled, so
a client that never sends the rest of its body cannot keep the server (or a test's teardown)
waiting. Automatic compaction runs as in taguru (every 5 s, dead ratio > 0.5) unless
``compaction=CompactionSettings(interval=None)`` is passed. The access log is off:
request lines would carry context names, and the log must never carry corpus text or tokens.
"""

import json
import os
import re
import socket
import threading
import time
from collections.abc import Iterable, Sequence
from os import PathLike
from types import TracebackType
from typing import Self

import uvicorn

from pytest_taguru.core.text import trim
from pytest_taguru.server.compaction import CompactionSettings, Compactor
from pytest_taguru.server.errors import ApiError
from pytest_taguru.server.http.app import create_app
from pytest_taguru.server.http.transport import DEFAULT_BODY_CAP
from pytest_taguru.server.ingest.feedback import import_notes
from pytest_taguru.server.ingest.importer import ImportBatch, apply_import, parse_import
from pytest_taguru.server.store import Store

START_TIMEOUT = 30.0
STOP_GRACE_S = 5
"""How long a stopping server lets the requests in progress finish (uvicorn's default: for
ever)."""
STOP_TIMEOUT_S = STOP_GRACE_S + 10.0
"""How long ``stop()`` waits for the server's thread in all (the grace, then 10 s for the
cancelled requests to unwind) before it says so."""


class ImportFileError(Exception):
    """A start-up import file that cannot be read or applied; names the file (and line)."""


_BATCH_PATH = re.compile(r"^batches\[(\d+)\]")


def _refusal_text(error: ApiError, batches: Sequence[ImportBatch]) -> str:
    """The server's refusal, with what to do about a context that does not exist yet."""
    found = _BATCH_PATH.match(error.issues[0].path) if error.issues else None
    if error.code != "no_context" or found is None:
        return error.message
    batch = batches[int(found.group(1))]
    header = json.dumps(
        {"taguru_batch": 1, "context": batch.context, "source": batch.source, "create": {}},
        ensure_ascii=False,
    )
    return (
        f"line {batch.line}: {error.message} — a batch naming a context that does not exist "
        f'yet needs "create" in its header, e.g. {header}'
    )


def load_import_files(store: Store, paths: Iterable[str | PathLike[str]]) -> list[str]:
    """Apply each NDJSON import file to ``store`` in order; refusals name the file.

    Returns what the import dropped (``ingest.feedback``), for the caller to show.
    """
    notes: list[str] = []
    for path in paths:
        batches: list[ImportBatch] = []
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
            batches = parse_import(raw)
            apply_import(store, batches)
        except OSError as exc:
            raise ImportFileError(f"{path}: cannot read the import file: {exc.strerror}") from exc
        except ApiError as exc:
            raise ImportFileError(f"{path}: {_refusal_text(exc, batches)}") from exc
        notes += import_notes(os.fspath(path), batches)
    return notes


class ReferenceServer:
    """One reference server on ``host``:``port`` (port 0 picks a free one)."""

    def __init__(
        self,
        store: Store | None = None,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        body_cap: int = DEFAULT_BODY_CAP,
        compaction: CompactionSettings | None = None,
    ) -> None:
        self.store = store if store is not None else Store()
        self._compactor = Compactor(self.store, compaction or CompactionSettings())
        tokens = [trim(token).encode()] if token and trim(token) else []
        # An explicit IPPROTO_TCP lets asyncio set TCP_NODELAY on accepted connections;
        # without it every response waits ~40 ms on the peer's delayed ACK.
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        config = uvicorn.Config(
            create_app(self.store, tokens, body_cap),
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            timeout_graceful_shutdown=STOP_GRACE_S,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self.import_notes: list[str] = []
        """What the start-up import files dropped (``from_import_files``), for the caller."""
        bound_host, bound_port = self._socket.getsockname()[:2]
        self.host: str = bound_host
        self.port: int = bound_port

    @classmethod
    def from_import_files(
        cls,
        paths: Iterable[str | PathLike[str]],
        token: str | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> "ReferenceServer":
        """A server whose store is populated from taguru NDJSON import files, in order."""
        store = Store()
        notes = load_import_files(store, paths)
        server = cls(store, token=token, host=host, port=port)
        server.import_notes = notes
        return server

    @property
    def address(self) -> str:
        """``HOST:PORT`` as printed on the ``listening on`` line."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:53211``."""
        return f"http://{self.address}"

    def start(self) -> None:
        """Serve in a daemon thread and wait until the socket accepts connections."""
        if self._thread is not None:
            return
        self._socket.listen(128)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the reference server did not start")
            time.sleep(0.01)
        self._compactor.start()

    def stop(self) -> None:
        """Ask uvicorn to exit, join its thread and close the socket (``RuntimeError`` when
        the thread outlives ``STOP_TIMEOUT_S``: a handler stuck where no cancellation
        reaches)."""
        self._compactor.stop()
        if self._thread is not None:
            self._server.should_exit = True
            self._thread.join(STOP_TIMEOUT_S)
            stuck = self._thread.is_alive()
            self._thread = None
            if stuck:
                raise RuntimeError("the reference server did not stop")
        self._socket.close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
