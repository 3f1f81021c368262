"""``--taguru-serve``: the reference server started in a process of its own.

The server (``server.embedded``) loads the import file and serves on a loopback port until the
run closes its stdin. In a process of its own, its request handling never competes with the
run's threads (the prefetch window's, or pytest's) for one interpreter lock, and with
``-n 2`` it has a core of its own to compete for. What the run says is as before: the import
file's refusal (exit 2), what it dropped, or the missing ``server`` extra (exit 2).
"""

import contextlib
import json
import subprocess
import sys
from typing import Any

from pytest_taguru.errors import RunError, UsageError

SERVER_MODULE = "pytest_taguru.server.embedded"
"""What ``python -m`` runs in the server process."""
STOP_TIMEOUT_S = 10.0
"""How long a stopping server may take to finish its answers before it is killed."""


class EmbeddedServer:
    """A running server process: its URL and what its import dropped (``import_notes``)."""

    def __init__(self, process: "subprocess.Popen[bytes]", url: str, notes: list[str]) -> None:
        self._process = process
        self.url = url
        self.import_notes = notes

    def stop(self) -> None:
        """End the server (closing its stdin), wait for it; kill it if it lingers."""
        _end(self._process)


def _end(process: "subprocess.Popen[bytes]") -> None:
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(OSError):  # it is gone already
            process.stdin.close()
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _first_message(process: "subprocess.Popen[bytes]", token: str | None) -> dict[str, Any]:
    """Hand the server its token, then read its one line (empty when it died first)."""
    assert process.stdin is not None and process.stdout is not None
    with contextlib.suppress(OSError):  # it died at once: its stdout says nothing, below
        process.stdin.write(json.dumps({"token": token}).encode() + b"\n")
        process.stdin.flush()
    line = process.stdout.readline()
    message: dict[str, Any] = json.loads(line) if line.strip() else {}
    return message


def start_embedded_server(import_file: str, token: str | None) -> EmbeddedServer:
    """Start the reference server loaded with ``import_file`` (``--taguru-serve``; exit 2 on a
    missing ``server`` extra or a malformed import file). Its ``import_notes`` say what the
    import dropped."""
    command = [sys.executable, "-m", SERVER_MODULE, import_file]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        message = _first_message(process, token)
    except BaseException:  # Ctrl-C while it loads
        process.kill()
        process.wait()
        raise
    if "url" in message:
        return EmbeddedServer(process, message["url"], list(message["notes"]))
    _end(process)
    if "missing" in message:
        raise UsageError(
            "--taguru-serve needs the reference server's dependencies: "
            f"pip install 'pytest-taguru[server]' ({message['missing']})"
        )
    if "error" in message:
        raise UsageError(message["error"])
    raise RunError(f"the embedded server did not start (exit status {process.returncode})")
