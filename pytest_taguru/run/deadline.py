"""The whole-exchange deadline: one instant that bounds connect, send, headers and body.

httpx's timeouts bound each socket operation, not the exchange: a server that drips its
response headers a byte a second never trips a 35 s read timeout (measured: one search call
kept alive for 108 s). Here the network backend under httpx clamps the timeout of every
operation (name resolution, connect, TLS, each write and each read) to the time left before
the deadline of the exchange running in the current thread or task, held in a context
variable; at the deadline the operation fails as httpx's own timeout. The bound lives in the
socket calls, so no watchdog thread is needed and a pooled connection obeys the deadline of
whichever exchange uses it. ``benchmarks/bench_client_deadline.py`` measures the cost.

The same backend counts the bytes an exchange received, which tells a connection reset
before any byte of the answer (safe to retry) from one in the middle of it.
"""

import ipaddress
import queue
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

TIMEOUT_TEXT = "timeout: global"
"""The transport text of a spent deadline: taguru's (ureq 3's ``Timeout::Global``)."""


@dataclass
class Exchange:
    """One bounded exchange: its deadline on the monotonic clock, the bytes it received."""

    deadline: float
    received: int = 0

    def time_left(self) -> float:
        return self.deadline - time.monotonic()


_CURRENT: ContextVar[Exchange | None] = ContextVar("pytest_taguru_exchange", default=None)


@contextmanager
def bounded(budget_s: float) -> Iterator[Exchange]:
    """Run the exchange inside the ``with`` block under a deadline ``budget_s`` from now."""
    exchange = Exchange(time.monotonic() + budget_s)
    token = _CURRENT.set(exchange)
    try:
        yield exchange
    finally:
        _CURRENT.reset(token)


def _clamped(timeout: float | None, expired: type[httpcore.TimeoutException]) -> float | None:
    """``timeout`` cut to the current exchange's time left; past its deadline, ``expired``."""
    exchange = _CURRENT.get()
    if exchange is None:
        return timeout
    left = exchange.time_left()
    if left <= 0:
        raise expired(TIMEOUT_TEXT)
    return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = self._inner.read(max_bytes, _clamped(timeout, httpcore.ReadTimeout))
        exchange = _CURRENT.get()
        if exchange is not None:
            exchange.received += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamped(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        timeout = _clamped(timeout, httpcore.ConnectTimeout)
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _addresses(host: str, port: int, timeout: float | None) -> list[str]:
    """The addresses of ``host``, resolved within ``timeout``: the system resolver has no
    timeout of its own to pass, so it runs in a daemon thread that may be left behind."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return [host]
    answers: queue.SimpleQueue[list[str] | OSError] = queue.SimpleQueue()

    def resolve() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            answers.put([str(info[4][0]) for info in infos])
        except OSError as error:
            answers.put(error)

    threading.Thread(target=resolve, name="taguru-resolve", daemon=True).start()
    try:
        answer = answers.get(timeout=timeout)
    except queue.Empty:
        raise httpcore.ConnectTimeout(TIMEOUT_TEXT) from None
    if isinstance(answer, OSError):
        raise httpcore.ConnectError(str(answer)) from answer
    return answer


class _BoundedBackend(httpcore.NetworkBackend):
    """httpcore's synchronous backend with every operation under the exchange's deadline."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        options = list(socket_options or ())
        failure: httpcore.ConnectError | None = None
        for address in _addresses(host, port, _clamped(timeout, httpcore.ConnectTimeout)):
            try:
                stream = self._inner.connect_tcp(
                    address,
                    port,
                    _clamped(timeout, httpcore.ConnectTimeout),
                    local_address,
                    options,
                )
            except httpcore.ConnectError as error:  # the next address, as create_connection
                failure = error
                continue
            return _BoundedStream(stream)
        raise failure or httpcore.ConnectError(f"{host} has no address")

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _clamped(timeout, httpcore.ConnectTimeout)
        return _BoundedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class BoundedTransport(httpx.HTTPTransport):
    """httpx's own transport, its connections made by the bounded backend."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        # httpx offers no parameter for httpcore's backend; its pool (ConnectionPool or a
        # proxy pool) reads this attribute for every new connection.
        self._pool._network_backend = _BoundedBackend()


class BoundedClient(httpx.Client):
    """An ``httpx.Client`` whose direct and proxied (``HTTP(S)_PROXY``) transports are
    :class:`BoundedTransport`; an injected transport (tests) is used as given."""

    def __init__(
        self,
        *,
        transport: httpx.BaseTransport | None = None,
        trust_env: bool = True,
        **options: Any,
    ) -> None:
        if transport is None:
            transport = BoundedTransport(trust_env=trust_env)
        super().__init__(transport=transport, trust_env=trust_env, **options)

    def _init_proxy_transport(
        self, proxy: httpx.Proxy, *args: Any, **options: Any
    ) -> httpx.BaseTransport:
        # httpx builds one transport per proxy found in the environment through this method,
        # passing everything but the proxy by keyword.
        return BoundedTransport(proxy=proxy, **options)
