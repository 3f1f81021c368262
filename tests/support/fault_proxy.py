"""A fault-injecting HTTP proxy on loopback, in front of a server the test started.

Every request is forwarded unless a rule matches it: a rule names a path fragment (and
optionally a method), how many matching requests it applies to, and the fault. Faults answer
for the server (a status, a body), break the connection (reset, close, stall) or forward the
real answer badly (headers or body dripped a byte at a time, a body cut short). ``go_away``
closes the listening socket, so later connections are refused, as from a dead server.

Connections are kept alive as a real server keeps them; every connection has its own
thread. The proxy speaks just enough HTTP/1.1 for the plugin's client: request bodies carry
``Content-Length``, answers are sent with one.
"""

import contextlib
import http.client
import io
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self
from urllib.parse import urlsplit

Fault = Callable[["Exchange"], bool]
"""Acts on one exchange; returns whether the client connection stays usable."""


@dataclass
class Exchange:
    """One request as received, and the ways to answer it."""

    proxy: "FaultProxy"
    connection: socket.socket
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes

    def forward(self) -> tuple[int, list[tuple[str, str]], bytes]:
        """The upstream server's answer to this request."""
        upstream = http.client.HTTPConnection(self.proxy.upstream_host, self.proxy.upstream_port)
        try:
            kept = [(k, v) for k, v in self.headers if k.lower() not in ("host", "connection")]
            upstream.request(self.method, self.path, body=self.body or None, headers=dict(kept))
            response = upstream.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            upstream.close()

    def head(self, status: int, headers: list[tuple[str, str]], length: int) -> bytes:
        lines = [f"HTTP/1.1 {status} {http.client.responses.get(status, 'Status')}"]
        lines += [
            f"{k}: {v}"
            for k, v in headers
            if k.lower() not in ("content-length", "transfer-encoding", "connection", "date")
        ]
        lines.append(f"Content-Length: {length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def send(self, status: int, headers: list[tuple[str, str]], body: bytes) -> bool:
        return self.send_raw(self.head(status, headers, len(body)) + body)

    def send_raw(self, data: bytes) -> bool:
        try:
            self.connection.sendall(data)
        except OSError:
            return False
        return True

    def drip(self, data: bytes, interval_s: float) -> bool:
        """Send ``data`` a byte every ``interval_s`` until done or the client hangs up."""
        for index in range(len(data)):
            if self.proxy.closed.wait(interval_s):
                return False
            try:
                self.connection.sendall(data[index : index + 1])
            except OSError:
                return False
        return True


# --- faults ------------------------------------------------------------------------------------


def status(code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Fault:
    """Answer ``code`` with ``body`` (and headers such as ``Retry-After``) instead of the server."""
    return lambda ex: ex.send(code, list((headers or {}).items()), body)


def body(content: bytes, code: int = 200) -> Fault:
    """Answer ``code`` with ``content`` as a JSON body instead of the server."""
    return status(code, content, {"Content-Type": "application/json"})


def reset() -> Fault:
    """Close the connection with a TCP reset before any byte of an answer."""

    def act(ex: Exchange) -> bool:
        ex.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        ex.connection.close()
        return False

    return act


def hang_up() -> Fault:
    """Close the connection cleanly before any byte of an answer."""

    def act(ex: Exchange) -> bool:
        ex.connection.close()
        return False

    return act


def stall() -> Fault:
    """Never answer (until the proxy closes)."""

    def act(ex: Exchange) -> bool:
        ex.proxy.closed.wait()
        return False

    return act


def drip_headers(interval_s: float) -> Fault:
    """Forward, sending the status line and headers a byte every ``interval_s``."""

    def act(ex: Exchange) -> bool:
        code, headers, content = ex.forward()
        return ex.drip(ex.head(code, headers, len(content)), interval_s) and ex.send_raw(content)

    return act


def drip_body(interval_s: float) -> Fault:
    """Forward the headers at once, then the body a byte every ``interval_s``."""

    def act(ex: Exchange) -> bool:
        code, headers, content = ex.forward()
        ex.connection.sendall(ex.head(code, headers, len(content)))
        return ex.drip(content, interval_s)

    return act


def truncate(keep: int) -> Fault:
    """Forward, but close after ``keep`` bytes of the body (its full length announced)."""

    def act(ex: Exchange) -> bool:
        code, headers, content = ex.forward()
        ex.connection.sendall(ex.head(code, headers, len(content)) + content[:keep])
        ex.connection.close()
        return False

    return act


def redirect(location: str, code: int = 302) -> Fault:
    return status(code, b"", {"Location": location})


def die() -> Fault:
    """The server goes away in the middle of this request: nothing more is ever answered."""

    def act(ex: Exchange) -> bool:
        ex.proxy.died_at = time.monotonic()
        ex.proxy.go_away()
        ex.connection.close()
        return False

    return act


# --- the proxy ----------------------------------------------------------------------------------


@dataclass
class Rule:
    fault: Fault
    path: str
    method: str | None
    times: int | None
    """How many more matching requests the rule applies to (None: all)."""
    after: int = 0
    """Matching requests still to forward untouched before the rule applies."""


@dataclass
class FaultProxy:
    """``FaultProxy(upstream_url)``; ``url`` is what the run under test talks to."""

    upstream_url: str
    rules: list[Rule] = field(default_factory=list)
    seen: list[tuple[str, str]] = field(default_factory=list)
    """(method, path) of every request received, faulted or not."""
    closed: threading.Event = field(default_factory=threading.Event)
    died_at: float | None = None
    """When a :func:`die` fault fired (monotonic clock)."""

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream_url)
        self.upstream_host = parts.hostname or "127.0.0.1"
        self.upstream_port = parts.port or 80
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def add(
        self,
        fault: Fault,
        path: str = "",
        *,
        method: str | None = None,
        times: int | None = 1,
        after: int = 0,
    ) -> Self:
        """Apply ``fault`` to the next ``times`` requests whose path contains ``path`` (or
        is exactly ``path`` without its ``$`` when it ends with one), once ``after`` of them
        have been forwarded."""
        with self._lock:
            self.rules.append(Rule(fault, path, method, times, after))
        return self

    def go_away(self) -> None:
        """Stop listening and drop every open connection: from now on, connection refused."""
        # shutdown() first: close() alone leaves a socket blocked in accept() listening.
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.closed.set()
        self.go_away()

    def count(self, path: str) -> int:
        return sum(path in seen for _, seen in self.seen)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rule_for(self, method: str, path: str) -> Fault | None:
        with self._lock:
            self.seen.append((method, path))
            for rule in self.rules:
                exact = rule.path.endswith("$")
                hit = path == rule.path[:-1] if exact else rule.path in path
                if hit and rule.method in (None, method) and rule.times != 0:
                    if rule.after:
                        rule.after -= 1
                        return None
                    if rule.times is not None:
                        rule.times -= 1
                    return rule.fault
        return None

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        reader = connection.makefile("rb")
        assert isinstance(reader, io.BufferedReader)
        try:
            while not self.closed.is_set():
                exchange = self._read_request(connection, reader)
                if exchange is None:
                    return
                fault = self._rule_for(exchange.method, exchange.path)
                if fault is None:
                    if not exchange.send(*exchange.forward()):
                        return
                elif not fault(exchange):
                    return
        except OSError:
            return
        finally:
            reader.close()
            with contextlib.suppress(OSError):
                connection.close()

    def _read_request(
        self, connection: socket.socket, reader: io.BufferedReader
    ) -> Exchange | None:
        line = reader.readline()
        if not line:
            return None
        method, path, _ = line.decode("latin-1").split(" ", 2)
        headers: list[tuple[str, str]] = []
        while True:
            header = reader.readline().decode("latin-1").rstrip("\r\n")
            if not header:
                break
            name, _, value = header.partition(":")
            headers.append((name.strip(), value.strip()))
        length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
        return Exchange(self, connection, method, path, headers, reader.read(length))


def wait_until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Poll ``predicate`` until it holds (a fault that must have happened before a check)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)
