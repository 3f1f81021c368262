"""Benchmark the client's whole-exchange deadline (prints figures; no assertions).

Two questions decide the mechanism (``run/deadline.py``):

1. What does bounding every socket operation cost per call? Figures for the same ``POST
   sources/search`` against an in-process reference server: plain httpx (the floor), httpx
   over the bounded backend, and httpx with a watchdog timer thread per call (the other way
   to bound an exchange), each with the ratio to the floor.
2. Does a header drip end at the deadline? A loopback server sends its status line and
   headers one byte every 50 ms; each client is given a 1 s budget.

Usage: ``.venv/bin/python benchmarks/bench_client_deadline.py [--calls 2000]``
"""

import argparse
import contextlib
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from pytest_taguru.run.deadline import BoundedClient, bounded
from pytest_taguru.server.runner import ReferenceServer

CORPUS = (
    '{"taguru_batch":1,"context":"bench","source":"a.md","create":{}}\n'
    '{"passage":"The alpha widget is red.\\n\\nThe beta gizmo is blue."}\n'
)
BODY = {"query": "alpha widget", "limit": 5}
DRIP_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Pad: " + b"x" * 80


def per_call_us(call: Callable[[], object], calls: int) -> float:
    for _ in range(50):
        call()
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls // 5):
            call()
        rounds.append((time.perf_counter() - started) / (calls // 5) * 1e6)
    return statistics.median(rounds)


def dripping_server() -> tuple[socket.socket, str]:
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=drip, args=(connection,), daemon=True).start()

    def drip(connection: socket.socket) -> None:
        connection.recv(65536)
        try:
            for index in range(len(DRIP_HEAD)):
                connection.sendall(DRIP_HEAD[index : index + 1])
                time.sleep(0.05)
        except OSError:
            pass
        connection.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}/health"


def drip_seconds(call: Callable[[], object]) -> float:
    started = time.monotonic()
    with contextlib.suppress(httpx.HTTPError):
        call()
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    calls = parser.parse_args().calls
    corpus = Path(tempfile.mkdtemp()) / "corpus.ndjson"
    corpus.write_text(CORPUS, encoding="utf-8")
    with ReferenceServer.from_import_files([corpus]) as server:
        url = server.url + "/contexts/bench/sources/search"
        plain = httpx.Client(timeout=35.0)
        bounded_client = BoundedClient()

        def floor() -> object:
            return plain.post(url, json=BODY).content

        def with_deadline() -> object:
            with bounded(35.0):
                return bounded_client.post(url, json=BODY, timeout=35.0).content

        def with_watchdog() -> object:
            timer = threading.Timer(35.0, lambda: None)
            timer.start()
            try:
                return plain.post(url, json=BODY).content
            finally:
                timer.cancel()

        base = per_call_us(floor, calls)
        print(f"per call, {calls} calls (median of 5 rounds):")
        print(f"  plain httpx (floor)        {base:8.1f} µs")
        for name, call in (("bounded backend", with_deadline), ("watchdog thread", with_watchdog)):
            figure = per_call_us(call, calls)
            print(f"  {name:<26} {figure:8.1f} µs   ratio {figure / base:.3f}")
    listener, drip_url = dripping_server()
    head = len(DRIP_HEAD) * 0.05
    print(f"header drip ({len(DRIP_HEAD)} bytes at 50 ms, {head:.1f} s in all), budget 1 s:")
    plain_drip = drip_seconds(lambda: httpx.get(drip_url, timeout=1.0))
    bounded_client = BoundedClient()

    def bounded_get() -> object:
        with bounded(1.0):
            return bounded_client.get(drip_url, timeout=1.0)

    print(f"  plain httpx, timeout=1     ended after {plain_drip:5.2f} s")
    print(f"  bounded backend            ended after {drip_seconds(bounded_get):5.2f} s")
    listener.close()


if __name__ == "__main__":
    main()
