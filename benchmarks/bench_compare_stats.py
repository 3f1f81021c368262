"""Benchmark ``taguru-evaluate compare --stats`` at 100,000 cases (prints figures; no assertions).

Two artifacts with the profile of a large generated eval set (every case searched; one in ten
with concept, label and association coverage, one in eight with a citation; one in 997 whose
passage call failed; scores from the discrete values retrieval metrics take) are written
directly as JSON and read as ``compare`` reads them; HEAD moves one case in eight. Then, timed
apart: taguru's own comparison (the floor: what ``compare`` does without statistics, reading
excluded) and what ``--stats`` adds to it (pairing, every paired metric of the registry with
the bootstrap interval and the sign-flip test at 10,000 resamples, Holm, the verdicts and the
``statistics`` record). The target for the second is ≤ 5 s. ``--harsh`` gives every case of
HEAD its own random scores on every metric, so that nearly every row of deltas is distinct:
the statistics' worst case (their cost grows with distinct rows, not cases). Usage:

    .venv/bin/python benchmarks/bench_compare_stats.py [--cases 100000] [--harsh]
"""

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from pytest_taguru.artifact.view import read_run
from pytest_taguru.compare.classify import compare
from pytest_taguru.compare.stats_render import statistics_record
from pytest_taguru.compare.verdicts import paired_statistics
from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.score.registry import PAIRED_METRICS

TARGET_S = 5.0
RANKS = [1.0, 0.5, 1 / 3, 0.25, 0.2, 0.0]
NDCG = [1.0, 0.6309297535714575, 0.5, 0.43067655807339306, 0.38685280723454163, 0.0]


def case_block(index: int, rng: random.Random, harsh: bool) -> dict[str, Any]:
    """One case block as the plugin writes it (the keys compare and the statistics read)."""
    failed = index % 997 == 0
    block: dict[str, Any] = {
        "case_id": f"case-{index:06d}",
        "passage": {"outcome": "failed" if failed else "searched", "latency_ms": 12},
        "expectations_sha256": f"{index:064x}",
    }
    if failed:
        return block
    rank = rng.randrange(len(RANKS))
    score = (lambda: round(rng.random(), 4)) if harsh else None
    block["recall"] = {
        "recall_at_k": score() if score else float(rank < 5),
        "mrr": score() if score else RANKS[rank],
        "ndcg": score() if score else NDCG[rank],
    }
    if index % 10 == 0:
        block["coverage"] = {
            kind: {"value": score() if score else rng.choice([0.0, 0.5, 1.0])}
            for kind in ("concepts", "labels", "associations")
        }
    if index % 8 == 1:
        block["citations"] = {
            "recall": {"value": score() if score else rng.choice([0.0, 1.0])},
            "validity": {"value": score() if score else rng.choice([0.0, 1.0])},
        }
    block["diversity_sources"] = rng.randint(1, 10 if harsh else 3)
    return block


def artifact(cases: int, seed: int, *, moved: int = 0, harsh: bool = False) -> str:
    """``cases`` case blocks; with ``moved``, every ``moved``-th case gets other scores."""
    rng, other = random.Random(seed), random.Random(seed + 1)
    blocks = []
    for index in range(cases):
        block = case_block(index, rng, harsh=False)
        if harsh or (moved and index % moved == 3):
            block = case_block(index, other, harsh)
        blocks.append(block)
    document = {"taguru_evaluation": 1, "inputs": {"context": "synthetic"}, "cases": blocks}
    return json.dumps(document)


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``action`` (the machine may be shared: CPU time is what
    this process itself spent, its numpy threads included)."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--harsh", action="store_true")
    options = parser.parse_args()
    base = read_run(artifact(options.cases, seed=7), "base.json")
    head_text = artifact(options.cases, seed=7, moved=8, harsh=options.harsh)
    head = read_run(head_text, "head.json")
    classify = timed(lambda: compare(base, head))
    statistics = timed(
        lambda: dumps_compact(statistics_record(paired_statistics(base, head)))
    )
    shape = "harsh: every case's deltas distinct" if options.harsh else "one case in eight moved"
    print(f"compare, {options.cases:,} cases ({shape}), {len(PAIRED_METRICS)} paired metrics")
    print("                                             wall      CPU")
    print(f"  floor  taguru's comparison (read excluded) {classify[0]:6.2f} s {classify[1]:6.2f} s")
    print(
        f"         what --stats adds                  {statistics[0]:6.2f} s {statistics[1]:6.2f} s"
        f"   (target ≤ {TARGET_S:.0f} s)"
    )


if __name__ == "__main__":
    main()
