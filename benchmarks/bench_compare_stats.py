"""Benchmark ``taguru-evaluate compare --stats`` at 100,000 cases (prints figures; no assertions).

Two runs of the tests' synthetic suite (``tests/support/synthetic_run.py``; the second with
other cases missing their source) are read as ``compare`` reads artifacts; then, timed apart,
taguru's own comparison (the floor: what ``compare`` does without statistics, reading
excluded) and what ``--stats`` adds to it (pairing, every paired metric of the registry with
the bootstrap interval and the sign-flip test at 10,000 resamples, Holm, the verdicts and the
``statistics`` record). The target for the second is ≤ 5 s. ``--harsh`` also moves
every case's scores in HEAD by its own random amount on every metric, so that nearly every
case's row of deltas is distinct: the statistics' worst case (their cost grows with distinct
rows, not cases). Usage:

    .venv/bin/python benchmarks/bench_compare_stats.py [--cases 100000] [--harsh]
"""

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from synthetic_run import synthetic_run

from pytest_taguru.artifact.evaluation import render
from pytest_taguru.artifact.view import read_run
from pytest_taguru.compare.classify import compare
from pytest_taguru.compare.stats_render import statistics_record
from pytest_taguru.compare.verdicts import paired_statistics
from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.score.registry import PAIRED_METRICS

TARGET_S = 5.0


def harshened(text: str, seed: int) -> str:
    """The artifact with every case's ratio scores moved by a random amount each."""
    rng = random.Random(seed)
    document: dict[str, Any] = json.loads(text)
    for case in document["cases"]:
        recall = case.get("recall")
        if recall:
            for key in ("recall_at_k", "mrr", "ndcg"):
                recall[key] = round(rng.random(), 4)
        for block in (case.get("coverage") or {}).values():
            block["value"] = round(rng.random(), 3)
        citations = case.get("citations")
        if citations:
            citations["recall"]["value"] = round(rng.random(), 3)
            citations["validity"]["value"] = round(rng.random(), 3)
        if case.get("diversity_sources") is not None:
            case["diversity_sources"] = rng.randint(1, 10)
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
    base_text = render(synthetic_run(options.cases).evaluation)
    head_text = render(synthetic_run(options.cases, drift=3).evaluation)
    if options.harsh:
        head_text = harshened(head_text, seed=5)
    base, head = read_run(base_text, "base.json"), read_run(head_text, "head.json")
    classify = timed(lambda: compare(base, head))
    statistics = timed(
        lambda: dumps_compact(statistics_record(paired_statistics(base, head)))
    )
    shape = "harsh: every case's deltas distinct" if options.harsh else "synthetic suite"
    print(f"compare, {options.cases:,} cases ({shape}), {len(PAIRED_METRICS)} paired metrics")
    print("                                             wall      CPU")
    print(f"  floor  taguru's comparison (read excluded) {classify[0]:6.2f} s {classify[1]:6.2f} s")
    print(
        f"         what --stats adds                  {statistics[0]:6.2f} s {statistics[1]:6.2f} s"
        f"   (target ≤ {TARGET_S:.0f} s)"
    )


if __name__ == "__main__":
    main()
