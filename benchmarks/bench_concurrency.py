"""Benchmark ``--taguru-concurrency``: per-case wall time at each level, with and without ``-n 2``.

Prints figures beside two floors measured in the same run, and asserts nothing (the machine is
shared and noisy; rounds are interleaved and the best of each is shown with the median):

* the server's own time per search: a bare ``http.client`` loop sending the synthetic set's
  ``sources/search`` bodies, one at a time, to the reference server in its own process;
* pytest's own time per item: the same ``eval.jsonl`` collected as trivial items.

Each run is ``pytest --taguru-serve`` on a synthetic suite (``tests/support/synthetic_suite``:
one search per case, one in five failing a case-scoped bound) and on the example suite, and
``--taguru-url`` through a proxy that delays every answer by ``--latency-ms`` (a server across
a network; a quarter of the synthetic cases); the figure is pytest's session time (collection
and the run, not the server's start-up) per case.

    .venv/bin/python benchmarks/bench_concurrency.py [--cases 2000] [--levels auto,1,2,4,8,16]
                                 [--workers 0,2] [--rounds 3] [--latency-ms 5] [--quick]
"""

import argparse
import contextlib
import http.client
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from fault_proxy import Exchange, FaultProxy  # noqa: E402
from synthetic_suite import CONTEXT, write_suite  # noqa: E402

from pytest_taguru.core.jsontext import dumps_compact  # noqa: E402
from pytest_taguru.run.dataset import load_eval_set  # noqa: E402
from pytest_taguru.run.lanes.request_bodies import search_body  # noqa: E402

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
QUIET = ["-p", "no:hypothesispytest", "-p", "no:anyio"]
SESSION_TIME = re.compile(r" in ([0-9.]+)s")

TRIVIAL_CONFTEST = '''
import pytest


class Line(pytest.Item):
    def runtest(self):
        pass


class Lines(pytest.File):
    def collect(self):
        for number, _ in enumerate(self.path.read_text(encoding="utf-8").splitlines()[1:]):
            yield Line.from_parent(self, name=f"case-{number:05d}")


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".jsonl":
        return Lines.from_parent(parent, path=file_path)
'''


def session_seconds(args: Sequence[str], cwd: Path) -> float:
    done = subprocess.run(
        [*PYTEST, *QUIET, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    found = SESSION_TIME.findall(done.stdout.splitlines()[-1] if done.stdout else "")
    if done.returncode not in (0, 1, 3) or not found:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return float(found[-1])


@contextlib.contextmanager
def server_process(suite: Path) -> Iterator[int]:
    """The reference server on the suite's corpus, in its own process: its port."""
    env = {**os.environ, "TAGURU_ADDR": "127.0.0.1:0"}
    env.pop("TAGURU_API_TOKEN", None)
    command = [sys.executable, "-m", "pytest_taguru.server", "--import", "corpus.ndjson"]
    server = subprocess.Popen(command, cwd=suite, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        yield int(server.stdout.readline().rsplit(":", 1)[1])
    finally:
        server.terminate()
        server.wait()


def server_floor_ms(suite: Path, port: int, searches: int) -> float:
    """ms per ``sources/search`` of a bare client loop against the server in its own process."""
    bodies = [
        dumps_compact(search_body(case)).encode()
        for case in load_eval_set(str(suite / "eval.jsonl")).cases[:searches]
    ]
    connection = http.client.HTTPConnection("127.0.0.1", port)
    path = f"/contexts/{CONTEXT}/sources/search"
    headers = {"content-type": "application/json"}

    def send(batch: Sequence[bytes]) -> None:
        for body in batch:
            connection.request("POST", path, body, headers)
            connection.getresponse().read()

    send(bodies[:50])  # warm-up
    started = time.perf_counter()
    send(bodies)
    connection.close()
    return (time.perf_counter() - started) * 1000 / len(bodies)


def delayed(seconds: float) -> Callable[[Exchange], bool]:
    """A proxy rule: every answer forwarded ``seconds`` late."""

    def act(exchange: Exchange) -> bool:
        answer = exchange.forward()
        time.sleep(seconds)
        return exchange.send(*answer)

    return act


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--levels", default="auto,1,2,4,8,16")
    parser.add_argument("--workers", default="0,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=5.0)
    parser.add_argument(
        "--quick", action="store_true", help="300 cases, levels auto,1,8, one round"
    )
    args = parser.parse_args()
    if args.quick:
        args.cases, args.levels, args.rounds = 300, "auto,1,8", 1
    levels = args.levels.split(",")  # as --taguru-concurrency takes them: auto or a number
    workers = [int(count) for count in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as directory:
        suite = Path(directory) / "synthetic"
        suite.mkdir()
        write_suite(suite, args.cases)
        remote = Path(directory) / "remote"  # the first quarter of the cases, over a network
        remote.mkdir()
        shutil.copy(suite / "corpus.ndjson", remote)
        shutil.copy(suite / "thresholds.json", remote)
        lines = (suite / "eval.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        remote_cases = args.cases // 4
        (remote / "eval.jsonl").write_text("".join(lines[: 1 + remote_cases]), encoding="utf-8")
        trivial = Path(directory) / "trivial"
        trivial.mkdir()
        (trivial / "conftest.py").write_text(TRIVIAL_CONFTEST, encoding="utf-8")
        shutil.copy(suite / "eval.jsonl", trivial)
        runs: dict[tuple[str, int, str], list[float]] = {}
        floors: dict[str, list[float]] = {"server": [], "pytest": []}
        eval_set = ["--taguru-eval", "eval.jsonl", "--taguru-thresholds", "thresholds.json"]
        example_out = ["-o", f"taguru_out={Path(directory) / 'example.json'}"]
        with server_process(remote) as port, FaultProxy(f"http://127.0.0.1:{port}") as proxy:
            proxy.add(delayed(args.latency_ms / 1000), times=None)
            sets = {
                "synthetic": (suite, [*eval_set, "--taguru-serve", "corpus.ndjson"], args.cases),
                "example": (ROOT / "example_suite", example_out, 36),
                f"+{args.latency_ms:g}ms": (remote, [*eval_set, "--taguru-url", proxy.url],
                                            remote_cases),
            }  # fmt: skip
            for round_number in range(args.rounds):
                floors["server"].append(server_floor_ms(suite, port, min(args.cases, 1000)))
                seconds = session_seconds(["eval.jsonl"], trivial)
                floors["pytest"].append(seconds * 1000 / args.cases)
                for name, (cwd, base, count) in sets.items():
                    for level, worker_count in itertools.product(levels, workers):
                        dist = ["-n", str(worker_count)] if worker_count else []
                        flags = [*base, *dist, "--taguru-concurrency", level]
                        per_case = session_seconds(flags, cwd) * 1000 / count
                        runs.setdefault((name, worker_count, level), []).append(per_case)
                print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr)
    print(f"{args.cases} synthetic cases (one search each), example suite 36 cases")
    for name, values in floors.items():
        middle = statistics.median(values)
        print(f"floor {name:>7}: {min(values):6.2f} ms per case (median {middle:.2f})")
    floor = max(min(values) for values in floors.values())
    for (name, worker_count, level), values in runs.items():
        best = min(values)
        print(
            f"{name:>9} -n {worker_count} concurrency {level:>4}: {best:6.2f} ms per case "
            f"(median {statistics.median(values):6.2f}; {best / floor:4.2f}x the floor)"
        )


if __name__ == "__main__":
    main()
