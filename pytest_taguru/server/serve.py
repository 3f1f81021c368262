"""The reference server's command (``python -m pytest_taguru.server [--import FILE]…``): serve
until SIGINT/SIGTERM. ``__main__`` only checks the ``server`` extra is installed, then calls
:func:`main`.

Binds ``TAGURU_ADDR`` (default ``127.0.0.1:8248``; port 0 picks a free port), enables bearer
auth from ``TAGURU_API_TOKEN``/``TAGURU_API_TOKENS``, caps bodies at ``TAGURU_MAX_BODY_BYTES``
(default 8 MiB), compacts like taguru (``TAGURU_AUTO_COMPACT``, ``TAGURU_FLUSH_SECS``,
``TAGURU_AUTO_COMPACT_RATIO``), loads every ``--import`` file in order (``warning:`` lines on
stderr say what they dropped), then prints ``listening on HOST:PORT`` (flushed). A bad import
file, address or setting is reported on stderr with exit status 2 and nothing is served.
"""

import argparse
import os
import signal
import socket
import sys
from types import FrameType

import uvicorn

from pytest_taguru.core.bulk import collector_for_serving
from pytest_taguru.server.compaction import CompactionSettings, Compactor
from pytest_taguru.server.http.app import create_app
from pytest_taguru.server.http.auth import tokens_from_environment
from pytest_taguru.server.http.transport import DEFAULT_BODY_CAP
from pytest_taguru.server.runner import STOP_GRACE_S, ImportFileError, load_import_files
from pytest_taguru.server.store import Store

DEFAULT_ADDR = "127.0.0.1:8248"
USAGE_ERROR = 2


def parse_addr(value: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[V6]:PORT``; an unspecified IP binds as given."""
    host, separator, port = value.rpartition(":")
    if not separator or not port.isdigit() or int(port) > 65535 or not host:
        raise ValueError(f"TAGURU_ADDR '{value}' is not HOST:PORT")
    return host.strip("[]"), int(port)


class _Server(uvicorn.Server):
    """uvicorn that prints taguru's ready line once its socket is listening."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            server = self.servers[0]
            host, port = server.sockets[0].getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            print(f"listening on {shown}:{port}", flush=True)


def _ignore_after_shutdown(signum: int, frame: FrameType | None) -> None:
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_taguru.server")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="FILE",
        help="taguru NDJSON import stream to load before serving (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        host, port = parse_addr(os.environ.get("TAGURU_ADDR", DEFAULT_ADDR).strip())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    cap_setting = os.environ.get("TAGURU_MAX_BODY_BYTES", "").strip()
    if cap_setting and not cap_setting.isdigit():
        print(f"error: TAGURU_MAX_BODY_BYTES '{cap_setting}' is not a byte count", file=sys.stderr)
        return USAGE_ERROR
    body_cap = int(cap_setting) if cap_setting else DEFAULT_BODY_CAP
    try:
        compaction = CompactionSettings.from_environment(os.environ)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    store = Store()
    try:
        notes = load_import_files(store, args.imports)
    except ImportFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    for note in notes:  # what the files lost (markers past a passage's end, …)
        print(f"warning: {note}", file=sys.stderr)
    collector_for_serving()
    config = uvicorn.Config(
        create_app(store, tokens_from_environment(), body_cap),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=STOP_GRACE_S,
    )
    server = _Server(config)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to whatever
    # handler was installed before it; a no-op one lets the process exit 0.
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, _ignore_after_shutdown)
    compactor = Compactor(store, compaction)
    compactor.start()
    try:
        server.run()
    finally:
        compactor.stop()
    return 0 if server.started else USAGE_ERROR
