"""Benchmark of the reference server's retrieval core: BM25 build/search and resolve.

Run: ``.venv/bin/python benchmarks/bench_server_core.py [--paragraphs N] [--concepts M]``.
Prints figures next to the targets; asserts nothing about time.
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

from pytest_taguru.server.bm25 import Bm25Index
from pytest_taguru.server.resolve import EntryIndex

BUILD_TARGET_S = 30.0
SEARCH_TARGET_MS = 20.0
RESOLVE_TARGET_MS = 5.0


def _timings_ms(calls: list[Callable[[], object]]) -> list[float]:
    timings = []
    for call in calls:
        started = time.perf_counter()
        call()
        timings.append((time.perf_counter() - started) * 1000.0)
    return timings


def _summary(label: str, timings: list[float], target_ms: float) -> str:
    deciles = statistics.quantiles(timings, n=10)
    return (
        f"{label:<8} median {statistics.median(timings):7.2f} ms  p90 {deciles[8]:7.2f} ms  "
        f"max {max(timings):7.2f} ms  (target median ≤ {target_ms:.0f} ms, n={len(timings)})"
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
    print(
        f"corpus   {corpus.paragraph_count} paragraphs in {len(corpus.sources)} sources, "
        f"{sum(len(p) for ps in corpus.sources.values() for p in ps)} characters, "
        f"{len(corpus.concepts)} concepts (generated in {time.perf_counter() - started:.1f} s)"
    )

    index = Bm25Index()
    started = time.perf_counter()
    for source, paragraphs in corpus.sources.items():
        index.set_source(source, paragraphs)
    build_s = time.perf_counter() - started
    print(
        f"build    {build_s:7.2f} s   (target ≤ {BUILD_TARGET_S:.0f} s, {index.slot_count} slots)"
    )

    limit = arguments.limit
    search_ms = _timings_ms([partial(index.search, q, limit) for q in corpus.queries])
    print(_summary("search", search_ms, SEARCH_TARGET_MS))
    hits = [len(index.search(q, limit)) for q in corpus.queries[:20]]
    print(f"         lane sizes of the first queries: {hits}")
    half = set(list(corpus.sources)[::2])
    filtered_ms = _timings_ms(
        [partial(index.search, q, limit, half.__contains__) for q in corpus.queries]
    )
    print(_summary("filtered", filtered_ms, SEARCH_TARGET_MS))

    entries = EntryIndex()
    started = time.perf_counter()
    for name in corpus.concepts:
        entries.add_canonical(name)
    print(f"entries  {time.perf_counter() - started:7.2f} s to intern {len(entries)} spellings")
    resolve_ms = _timings_ms([partial(entries.resolve, c, 1000) for c in corpus.cues])
    print(_summary("resolve", resolve_ms, RESOLVE_TARGET_MS))


if __name__ == "__main__":
    main()
