"""Benchmark the reference server over loopback HTTP (prints figures; no assertions).

Generates a synthetic taguru NDJSON import of 100,000 paragraphs (10,000 sources of 10
paragraphs) and 10,000 concepts, POSTs it to an in-process server in body-cap-sized chunks,
then times ``sources/search`` and ``resolve`` calls. Usage:

    .venv/bin/python benchmarks/bench_server_http.py [--sources 10000] [--queries 200]
"""

import argparse
import json
import random
import statistics
import time
from collections.abc import Iterator

import httpx

from pytest_taguru.server.runner import ReferenceServer

KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわ"
KANJI = "酒造米水麹杜氏蔵元醸造仕込発酵精米吟醸純生原酒山田錦雄町五百万石美山"
ASCII_WORDS = ["sake", "rice", "koji", "yeast", "brew", "press", "label", "tank", "batch"]
CONTEXT = "bench"
CHUNK_BATCHES = 500


def word(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return rng.choice(ASCII_WORDS)
    return "".join(
        rng.choice(KANJI if rng.random() < 0.5 else KANA) for _ in range(rng.randint(2, 4))
    )


def paragraph(rng: random.Random) -> str:
    return "".join(word(rng) + rng.choice(["、", "。", " ", ""]) for _ in range(rng.randint(8, 20)))


def concept_names(count: int) -> list[str]:
    rng = random.Random(7)
    names: dict[str, None] = {}
    while len(names) < count:
        names[f"{word(rng)}{word(rng)}{len(names)}"] = None
    return list(names)


def batches(sources: int, concepts: list[str]) -> Iterator[str]:
    """One NDJSON batch (header, passage, 3 associations) per source."""
    rng = random.Random(11)
    for index in range(sources):
        lines = [
            {"taguru_batch": 1, "context": CONTEXT, "source": f"doc/{index:05d}.md", "create": {}},
            {"passage": "\n\n".join(paragraph(rng) for _ in range(10))},
        ]
        for _ in range(3):
            lines.append(
                {
                    "subject": rng.choice(concepts),
                    "label": rng.choice(["関連", "原料", "工程", "産地"]),
                    "object": rng.choice(concepts),
                    "weight": 1.0,
                    "paragraph": rng.randrange(10),
                }
            )
        yield "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def chunks(sources: int, concepts: list[str]) -> Iterator[bytes]:
    pending: list[str] = []
    for batch in batches(sources, concepts):
        pending.append(batch)
        if len(pending) == CHUNK_BATCHES:
            yield "".join(pending).encode()
            pending = []
    if pending:
        yield "".join(pending).encode()


def median_ms(http: httpx.Client, path: str, bodies: list[dict[str, object]]) -> float:
    timings = []
    for body in bodies:
        started = time.perf_counter()
        response = http.post(path, json=body)
        timings.append(time.perf_counter() - started)
        response.raise_for_status()
    return statistics.median(timings) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", type=int, default=10_000)
    parser.add_argument("--concepts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    concepts = concept_names(args.concepts)
    payloads = list(chunks(args.sources, concepts))
    rng = random.Random(3)
    with ReferenceServer() as server, httpx.Client(base_url=server.url, timeout=600) as http:
        started = time.perf_counter()
        for payload in payloads:
            http.post("/import", content=payload).raise_for_status()
        imported = time.perf_counter() - started
        entry = http.get(f"/contexts/{CONTEXT}").json()["result"]
        searches = [{"query": paragraph(rng)[:30], "limit": 10} for _ in range(args.queries)]
        cues = [
            {"cue": rng.choice(concepts)[: rng.randint(2, 6)], "limit": 5}
            for _ in range(args.queries)
        ]
        search_ms = median_ms(http, f"/contexts/{CONTEXT}/sources/search", searches)
        resolve_ms = median_ms(http, f"/contexts/{CONTEXT}/resolve", cues)
    print(
        f"paragraphs: {args.sources * 10}  concepts: {entry['stats']['concepts']}  "
        f"associations: {entry['stats']['associations']}"
    )
    print(f"import (POST /import, {len(payloads)} chunks): {imported:.1f} s")
    print(f"sources/search median over {args.queries}: {search_ms:.2f} ms")
    print(f"resolve median over {args.queries}: {resolve_ms:.2f} ms")


if __name__ == "__main__":
    main()
