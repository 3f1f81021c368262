"""Benchmark ``taguru-evaluate compare --stats`` at 100,000 cases (prints figures; no assertions).

Two runs of the tests' synthetic suite (``tests/support/synthetic_run.py``; the second with
other cases missing their source) are written as artifacts; ``compare`` runs on them without
statistics (the floor: taguru's own comparison, reading both files) and with ``--stats`` (every
paired metric of the registry: the bootstrap interval and the sign-flip test, 10,000 resamples
each). The difference is what the statistics add; the target is ≤ 5 s. ``--harsh`` also moves
every case's scores in HEAD by its own random amount on every metric, so that nearly every
case's row of deltas is distinct: the statistics' worst case (their cost grows with distinct
rows, not cases). Usage:

    .venv/bin/python benchmarks/bench_compare_stats.py [--cases 100000] [--harsh]
"""

import argparse
import contextlib
import io
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from synthetic_run import synthetic_run

from pytest_taguru.artifact.evaluation import render
from pytest_taguru.cli.compare import parse_compare_args, run_compare
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


def timed_compare(directory: Path, *flags: str) -> float:
    args = parse_compare_args(["base.json", "head.json", "--out", str(directory / "c.jsonl"), *flags])
    sink = io.StringIO()
    started = time.perf_counter()
    with contextlib.chdir(directory), contextlib.redirect_stdout(sink):
        run_compare(args)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--harsh", action="store_true")
    options = parser.parse_args()
    base = synthetic_run(options.cases).evaluation
    head = synthetic_run(options.cases, drift=3).evaluation
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        (directory / "base.json").write_text(render(base), encoding="utf-8")
        head_text = render(head)
        if options.harsh:
            head_text = harshened(head_text, seed=5)
        (directory / "head.json").write_text(head_text, encoding="utf-8")
        floor = timed_compare(directory)
        with_stats = timed_compare(directory, "--stats")
    added = with_stats - floor
    shape = "harsh: every case's deltas distinct" if options.harsh else "synthetic suite"
    print(f"compare, {options.cases:,} cases ({shape}), {len(PAIRED_METRICS)} paired metrics")
    print(f"  floor  compare without statistics   {floor:7.2f} s")
    print(f"         compare --stats              {with_stats:7.2f} s")
    print(f"         statistics add               {added:7.2f} s   (target ≤ {TARGET_S:.0f} s)")


if __name__ == "__main__":
    main()
