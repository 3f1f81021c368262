"""Benchmark of the reference server's retrieval core: BM25 build/search and resolve.

Run: ``.venv/bin/python benchmarks/bench_server_core.py [--paragraphs N] [--concepts M]``.
Prints wall-clock figures (and CPU time, the steadier figure when the machine's cores are
shared) next to the targets; asserts nothing about time.
"""

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_corpus import generate

from pytest_taguru.server.index.bm25 import Bm25Index
from pytest_taguru.server.index.resolve import EntryIndex

BUILD_TARGET_S = 30.0
SEARCH_TARGET_MS = 20.0
RESOLVE_TARGET_MS = 5.0


def _timings_ms(calls: list[Callable[[], object]]) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU milliseconds of each call."""
    wall, cpu = [], []
    for call in calls:
        wall_started, cpu_started = time.perf_counter(), time.process_time()
        call()
        cpu.append((time.process_time() - cpu_started) * 1000.0)
        wall.append((time.perf_counter() - wall_started) * 1000.0)
    return wall, cpu


def _summary(label: str, timings: tuple[list[float], list[float]], target_ms: float) -> str:
    wall, cpu = timings
    return (
        f"{label:<8} median {statistics.median(wall):6.2f} ms  "
        f"p90 {statistics.quantiles(wall, n=10)[8]:6.2f} ms  max {max(wall):6.2f} ms  "
        f"(cpu median {statistics.median(cpu):.2f}, p90 {statistics.quantiles(cpu, n=10)[8]:.2f})"
        f"  target median ≤ {target_ms:.0f} ms, n={len(wall)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--paragraphs", type=int, default=100_000)
    parser.add_argument("--concepts", type=int, default=10_000)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--max-sentences", type=int, default=3, help="per paragraph")
    arguments = parser.parse_args()

    print(f"load     1-minute load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    started = time.perf_counter()
    corpus = generate(
        arguments.paragraphs, arguments.concepts, max_sentences=arguments.max_sentences
    )
    characters = sum(len(p) for ps in corpus.sources.values() for p in ps)
    print(
        f"corpus   {corpus.paragraph_count} paragraphs in {len(corpus.sources)} sources, "
        f"{characters} characters ({characters / corpus.paragraph_count:.0f} per paragraph), "
        f"{len(corpus.concepts)} concepts (generated in {time.perf_counter() - started:.1f} s)"
    )

    index = Bm25Index()
    started, cpu_started = time.perf_counter(), time.process_time()
    for source, paragraphs in corpus.sources.items():
        index.set_source(source, paragraphs)
    build_s, build_cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    print(
        f"build    {build_s:6.2f} s  (cpu {build_cpu_s:.2f} s)  target ≤ {BUILD_TARGET_S:.0f} s, "
        f"{index.slot_count} slots"
    )

    limit = arguments.limit
    search_ms = _timings_ms([partial(index.search, q, limit) for q in corpus.queries])
    print(_summary("search", search_ms, SEARCH_TARGET_MS))
    half = set(list(corpus.sources)[::2])
    filtered_ms = _timings_ms(
        [partial(index.search, q, limit, half.__contains__) for q in corpus.queries]
    )
    print(_summary("filtered", filtered_ms, SEARCH_TARGET_MS) + " (every other source)")

    entries = EntryIndex()
    started = time.perf_counter()
    for name in corpus.concepts:
        entries.add_canonical(name)
    print(f"entries  {time.perf_counter() - started:6.2f} s to intern {len(entries)} spellings")
    resolve_ms = _timings_ms([partial(entries.resolve, c, 1000) for c in corpus.cues])
    print(_summary("resolve", resolve_ms, RESOLVE_TARGET_MS))


if __name__ == "__main__":
    main()
