"""The benchmark's workload: data files written deterministically and processes run as a user
runs them (``pytest``, ``taguru-evaluate``, the reference server), timed and measured.

Every child's wall time is taken around it; its peak RSS is what a pytest child wrote of its
own (``run_clock``: ``VmHWM``), otherwise ``os.wait4``'s ``ru_maxrss`` for that very child
(KiB), which on Linux starts from the benchmark's own size at the fork. Child output goes
to a log file in the workspace; a failing child's tail is shown. Every child starts without a
pytest cache, as a run in a clean CI checkout does: a cache left by the child before would
make the next one pay for reading it (100,000 node ids cost pytest about 30 MB and 4 s).
"""

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
CONTEXT = "bench"


@dataclass(frozen=True)
class Finished:
    """One child process: wall seconds, peak RSS in MB, exit status, and its loop clock (the
    ``run_clock`` plugin's seconds, when it wrote one)."""

    wall: float
    rss_mb: float
    status: int
    clock: float | None


class Workspace:
    """A directory of generated inputs and the logs of the children run in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        self._runs = 0

    def path(self, name: str) -> Path:
        return self.root / name

    def write_lines(self, name: str, records: Iterable[object]) -> Path:
        """One compact JSON document per line (eval sets, import streams)."""
        target = self.path(name)
        with target.open("w", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        return target

    def run(self, argv: Sequence[str], *, expect: Sequence[int] = (0,)) -> Finished:
        """Run ``argv`` in the workspace; a status outside ``expect`` raises with its log."""
        self._runs += 1
        log, clock = self.path(f"run{self._runs}.log"), self.path(f"run{self._runs}.clock")
        peak = self.path(f"run{self._runs}.peak")
        shutil.rmtree(self.path(".pytest_cache"), ignore_errors=True)
        env = {**os.environ, "BENCH_RUN_CLOCK": str(clock), "BENCH_RUN_PEAK": str(peak)}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCHMARKS), env.get("PYTHONPATH")]))
        with log.open("wb") as output:
            started = time.perf_counter()
            child = subprocess.Popen(argv, cwd=self.root, env=env, stdout=output, stderr=output)
            _, wait_status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - started
        child.returncode = status = os.waitstatus_to_exitcode(wait_status)
        if status not in expect:
            tail = log.read_text("utf-8", errors="replace")[-3000:]
            raise RuntimeError(f"{' '.join(argv[:6])} … exited {status}:\n{tail}")
        seconds = float(clock.read_text()) if clock.exists() else None
        peak_kib = int(peak.read_text()) if peak.exists() else usage.ru_maxrss
        return Finished(wall, peak_kib / 1024, status, seconds)

    def pytest(self, *args: str) -> list[str]:
        """``pytest`` in the workspace with the loop clock, its own ini and no random order
        (pytest-randomly reseeds per item; it is blocked whether installed or not)."""
        return [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(self.path("pytest.ini")),
            "--rootdir",
            str(self.root),
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "run_clock",
            *args,
        ]

    def plugin(self, eval_file: Path, url: str, out: str, *args: str) -> list[str]:
        return self.pytest(
            eval_file.name,
            "--taguru-eval",
            eval_file.name,
            "--taguru-url",
            url,
            "--taguru-out",
            out,
            *args,
        )

    def trivial(self, eval_file: Path, *args: str) -> list[str]:
        return self.pytest("-p", "trivial_items", eval_file.name, *args)

    def json_load(self, *files: Path) -> list[str]:
        """A fresh interpreter that only ``json.load``s the files (the offline commands' floor)."""
        code = "import json, sys\nfor p in sys.argv[1:]:\n    with open(p, 'rb') as f: json.load(f)"
        return [sys.executable, "-c", code, *map(str, files)]


def header(name: str) -> dict[str, object]:
    return {"taguru_eval": 1, "name": name, "default_target": {"context": CONTEXT}}


def import_stream(sources: dict[str, str]) -> Iterator[dict[str, object]]:
    """A taguru NDJSON import: one batch (header, passage) per source."""
    for source, text in sources.items():
        yield {"taguru_batch": 1, "context": CONTEXT, "source": source, "create": {}}
        yield {"passage": text}


def search_body(case: dict[str, object]) -> bytes:
    """The six-key ``sources/search`` body the plugin sends for ``case`` (evaluate-run §4.1)."""
    options = case.get("options")
    limit = options.get("limit", 10) if isinstance(options, dict) else 10
    body = {"query": case["query"], "limit": limit, "semantic_floor": None, "tags": []}
    body |= {"since": None, "until": None}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Served:
    """A running reference server: its URL, process id and seconds from start to ready."""

    url: str
    pid: int
    ready: float

    def cpu_seconds(self) -> float:
        """The server process's CPU time so far (Linux ``/proc``; 0.0 elsewhere)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def reference_server(workspace: Workspace, import_file: Path) -> Iterator[Served]:
    """``python -m pytest_taguru.server --import FILE`` on a free port."""
    env = {**os.environ, "TAGURU_ADDR": "127.0.0.1:0"}
    log = workspace.path(f"{import_file.stem}.server.log").open("wb")
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "pytest_taguru.server", "--import", str(import_file)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline().decode()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the reference server did not start: {line!r}")
        url = "http://" + line.removeprefix("listening on ").strip()
        yield Served(url, server.pid, time.perf_counter() - started)
    finally:
        server.terminate()
        server.wait()
        log.close()
