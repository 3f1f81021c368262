"""An instant taguru for the benchmark's controller-side figures, and the bare client loop.

:class:`InstantTaguru` answers every call the plugin makes with canned bytes (an asyncio
protocol on a loopback port, in a thread of the benchmark's process): the preflight calls,
the post-run context read and one canned ``sources/search`` answer for every search. The
canned bodies are recorded from the reference server itself (:func:`record_answers`), so the
client reads exactly the shapes a real run reads. :func:`bare_search_seconds` is the floor
of a search: a plain ``http.client`` loop on one kept-alive connection;
:func:`client_cpu_per_call` is what one search costs the caller's CPU, through the plugin's
own client and through that bare client (:class:`BareSearch`).
"""

import asyncio
import http.client
import json
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from urllib.parse import quote

import httpx

from pytest_taguru.run.client import TaguruClient
from pytest_taguru.server.runner import ReferenceServer

_HEAD = (
    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n"
)


@dataclass(frozen=True)
class CannedAnswers:
    """Response bodies by route: health, entry, embeddings, sources pages, search."""

    health: bytes
    entry: bytes
    embeddings: bytes
    first_page: bytes
    last_page: bytes
    search: bytes


def record_answers(context: str, sources: dict[str, str], query: str) -> CannedAnswers:
    """What the reference server answers for a context holding ``sources`` (name → text)."""
    with ReferenceServer() as server, httpx.Client(base_url=server.url) as http:
        http.put(f"/contexts/{context}").raise_for_status()
        http.post(f"/contexts/{context}/sources", json={"passages": sources}).raise_for_status()
        base = f"/contexts/{quote(context, safe='')}"
        page = http.get(f"{base}/sources", params={"limit": 1000})
        last = sorted(sources)[-1]
        search = http.post(f"{base}/sources/search", json={"query": query, "limit": 10})
        answers = CannedAnswers(
            health=http.get("/health").content,
            entry=http.get(base).content,
            embeddings=http.get(f"{base}/embeddings").content,
            first_page=page.content,
            last_page=http.get(f"{base}/sources", params={"limit": 1000, "after": last}).content,
            search=search.content,
        )
    for body in (answers.first_page, answers.search):
        if b'"status":"ok"' not in body:
            raise RuntimeError(f"the reference server refused a recording: {body[:200]!r}")
    return answers


class _Exchange(asyncio.Protocol):
    """One connection: read each request whole (headers, then content-length bytes), answer."""

    def __init__(self, routes: dict[tuple[str, str], bytes], not_found: bytes) -> None:
        self.routes, self.not_found = routes, not_found
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            method, target = head.split(" ", 2)[:2]
            path, _, query = target.partition("?")
            kind = "after" if "after=" in query else ""
            body = self.routes.get((method, path + kind))
            status = "200 OK" if body is not None else "404 Not Found"
            body = self.not_found if body is None else body
            assert self.transport is not None
            self.transport.write(_HEAD.format(status=status, length=len(body)).encode() + body)


class InstantTaguru:
    """A loopback server answering from :class:`CannedAnswers` (context name unencoded-safe)."""

    def __init__(self, context: str, answers: CannedAnswers) -> None:
        base = f"/contexts/{quote(context, safe='')}"
        self.routes = {
            ("GET", "/health"): answers.health,
            ("GET", base): answers.entry,
            ("GET", f"{base}/embeddings"): answers.embeddings,
            ("GET", f"{base}/sources"): answers.first_page,
            ("GET", f"{base}/sourcesafter"): answers.last_page,
            ("POST", f"{base}/sources/search"): answers.search,
        }
        self.not_found = b'{"status":"error","code":"unknown_path","error":"not canned","time":0.0}'
        self.url = ""
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            self._loop.create_server(
                lambda: _Exchange(self.routes, self.not_found), "127.0.0.1", 0
            )
        )
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self._ready.set()
        self._loop.run_forever()
        server.close()

    def __enter__(self) -> "InstantTaguru":
        self._thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()


class BareSearch:
    """``sources/search`` over one kept-alive ``http.client`` connection: the floor's client."""

    def __init__(self, url: str, context: str) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        self.connection = http.client.HTTPConnection(host, int(port))
        self.path = f"/contexts/{quote(context, safe='')}/sources/search"

    def send(self, body: bytes) -> tuple[int, bytes]:
        """One call: the answer's status and its whole body."""
        self.connection.request("POST", self.path, body, {"content-type": "application/json"})
        response = self.connection.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self.connection.close()


def bare_search_seconds(url: str, context: str, bodies: Sequence[bytes]) -> list[float]:
    """Each ``sources/search`` call's wall time, sent one after another on one connection."""
    timings = []
    with closing(BareSearch(url, context)) as bare:
        for body in bodies:
            started = time.perf_counter()
            status, _ = bare.send(body)
            timings.append(time.perf_counter() - started)
            if status != 200:
                raise RuntimeError(f"sources/search answered {status}")
    return timings


@dataclass(frozen=True)
class ClientCpu:
    """CPU seconds of the calling thread per ``sources/search`` call, median of rounds."""

    plugin: float  # ``TaguruClient.post_json``: httpx, the deadline, the envelope rule
    bare: float  # ``BareSearch`` and ``json.loads``


def client_cpu_per_call(
    url: str, context: str, body: bytes, calls: int = 2_000, rounds: int = 3
) -> ClientCpu:
    """Each client's own CPU per call (``time.thread_time``: a fake serving from a thread of
    this process is not counted), the two alternated ``rounds`` times after a warm-up."""
    request = json.loads(body)
    segments = ("contexts", context, "sources", "search")
    plugin, bare_cpu = [], []
    with TaguruClient(url) as client, closing(BareSearch(url, context)) as bare:

        def through_plugin() -> None:
            client.post_json(segments, request)

        def through_bare() -> None:
            json.loads(bare.send(body)[1])

        for _ in range(rounds):
            plugin.append(_cpu_per_call(through_plugin, calls))
            bare_cpu.append(_cpu_per_call(through_bare, calls))
    return ClientCpu(statistics.median(plugin), statistics.median(bare_cpu))


def _cpu_per_call(call: Callable[[], None], calls: int) -> float:
    for _ in range(calls // 10):
        call()
    started = time.thread_time()
    for _ in range(calls):
        call()
    return (time.thread_time() - started) / calls
