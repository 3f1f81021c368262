"""Run the example suite's cases once and print, per case, what was served and what was missed.

    python example_suite/smoke.py                      # embedded reference server + corpus
    python example_suite/smoke.py --url http://127.0.0.1:8248 --context sake
    python example_suite/smoke.py --case toji --quiet  # only cases whose id contains "toji"

Without ``--url`` the reference server is started in-process on a free loopback port and
loaded from ``corpus/sake.ndjson``; with ``--url`` the cases run against that server (a real
taguru after ``taguru import``), using ``TAGURU_API_TOKEN`` when set. Each case goes through
the plugin's own lanes and scoring (the requests of evaluate-run §4, the formulas of §5), so
the figures printed here are the ones ``pytest example_suite`` records. Corpus text is never
printed: hits show as ``source¶paragraph``.
"""

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pytest_taguru.artifact.case import (
    AssociationProbe,
    CaseBlock,
    CheckResolved,
    HitLocator,
    PassageSearched,
    PositionAmbiguous,
    PositionErrored,
    PositionNotFound,
    PositionResolved,
    QueryQueried,
)
from pytest_taguru.artifact.evaluation import Distribution, Ratio
from pytest_taguru.errors import TaguruError
from pytest_taguru.run.client import CallFailed, TaguruClient
from pytest_taguru.run.dataset import EvalCase, check_limits, load_eval_set
from pytest_taguru.run.lanes.case import run_lanes
from pytest_taguru.run.server_access import bearer_token, check_base_url
from pytest_taguru.score.case import build_case_block, satisfies
from pytest_taguru.score.metrics import build_metrics
from pytest_taguru.score.registry import COMPARISON_METRICS

SUITE = Path(__file__).resolve().parent
DEFAULT_EVAL = SUITE / "eval.jsonl"
DEFAULT_CORPUS = SUITE / "corpus" / "sake.ndjson"
SHOWN_HITS = 6
RUN_RATIOS = (
    "citations.resolved",
    "citations.section_match",
    "citations.quote_match",
    "lanes.both",
    "lanes.passage_hit",
    "lanes.structural_hit",
)
# The nine comparison metrics in record order, with the run-level ratios shown before the
# last of them (diversity.sources).
SUMMARY_METRICS = (*COMPARISON_METRICS[:-1], *RUN_RATIOS, COMPARISON_METRICS[-1])


def locator(source: str, paragraph: int) -> str:
    return f"{source}¶{paragraph}"


def hit_line(case: EvalCase, hits: Sequence[HitLocator]) -> str:
    """The first hits in rank order; ``*`` marks a hit that satisfies an expected source."""
    shown = []
    for rank, hit in enumerate(hits[:SHOWN_HITS], start=1):
        relevant = any(satisfies(hit, e) for e in case.expected_sources if e.relevance >= 1)
        shown.append(f"#{rank} {locator(hit.source, hit.paragraph)}{'*' if relevant else ''}")
    more = f" … +{len(hits) - SHOWN_HITS}" if len(hits) > SHOWN_HITS else ""
    return "  ".join(shown) + more if shown else "(no hits)"


def expected_lines(case: EvalCase, hits: Sequence[HitLocator]) -> Iterator[str]:
    for entry in case.expected_sources:
        paragraphs = entry.paragraphs or "any"
        rank = next((r for r, h in enumerate(hits, start=1) if satisfies(h, entry)), None)
        where = (
            "ignored (relevance 0)"
            if entry.relevance == 0
            else (f"rank {rank}" if rank is not None else "not served")
        )
        yield f"{entry.source} {paragraphs} rel {entry.relevance} → {where}"


def position_text(position: object) -> str:
    if isinstance(position, PositionResolved):
        return position.name
    if isinstance(position, PositionAmbiguous):
        return "AMBIGUOUS(" + " | ".join(position.candidates) + ")"
    if isinstance(position, PositionNotFound):
        return "NOT FOUND"
    if isinstance(position, PositionErrored):
        return f"ERROR({position.message})"
    return "?"


def probe_line(probe: AssociationProbe) -> str:
    declared = f"({probe.subject_cue}, {probe.label_cue}, {probe.object_cue})"
    pinned = ", ".join(position_text(p) for p in (probe.subject, probe.label, probe.object))
    query = probe.query
    if query is None:
        outcome = "query not run"
    elif isinstance(query, QueryQueried):
        cited = ", ".join(
            locator(a.source, a.paragraph) if a.paragraph is not None else f"{a.source}¶-"
            for a in query.attributions or []
        )
        outcome = f"total {query.total}" + (f" [{cited}]" if cited else "")
    else:
        outcome = f"query errored: {query.message}"
    return f"{declared} → ({pinned}) → {outcome}"


def scores_line(block: CaseBlock) -> str:
    parts = []
    if block.recall is not None:
        r = block.recall
        parts.append(f"recall {r.recall_at_k:.2f} mrr {r.mrr:.2f} ndcg {r.ndcg:.2f}")
    if block.coverage is not None:
        for name in ("concepts", "labels", "associations"):
            counts = getattr(block.coverage, name)
            if counts is not None:
                parts.append(f"{name} {counts.matched}/{counts.expected}")
    if block.citations is not None:
        c = block.citations
        parts.append(
            f"citations served {c.recall.matched}/{c.recall.expected_total}"
            f" valid {c.validity.valid}/{c.validity.expected_total}"
        )
    return "  ".join(parts) or "(nothing scored)"


def print_case(case: EvalCase, block: CaseBlock, quiet: bool) -> None:
    verdict = "miss" if block.missed else "ok  "
    print(f"[{verdict}] {case.case_id}: {scores_line(block)}")
    if quiet:
        return
    passage = block.passage
    hits = passage.hits if isinstance(passage, PassageSearched) else []
    if isinstance(passage, PassageSearched):
        print(f"    hits (limit {block.limit}): {hit_line(case, hits)}")
    else:
        print(f"    passage lane failed: {passage.message}")
    for line in expected_lines(case, hits):
        print(f"    expected {line}")
    for cue in block.structural.cues if block.structural else []:
        names = ", ".join(cue.resolved_names) or "—"
        print(
            f"    {cue.kind} cue {cue.cue!r} → {names}" + (f" ({cue.error})" if cue.error else "")
        )
    for probe in block.structural.associations if block.structural else []:
        print(f"    probe {probe_line(probe)}")
    for check in block.citations.checks if block.citations else []:
        where = locator(check.source, check.paragraph)
        served = "served" if check.served else "NOT served"
        if isinstance(check, CheckResolved):
            quote = (
                ""
                if check.quote is None
                else f", quote {'ok' if check.quote.matched else 'MISSING'}"
            )
            print(f"    citation {where}: {served}, section {check.section.check}{quote}")
        else:
            print(f"    citation {where}: {served}, unresolved ({check.code or check.message})")
    for entry in block.missed:
        print(f"    missed: {entry}")
    if block.missed_truncated:
        print(f"    missed: … and {block.missed_truncated} more")


def print_summary(blocks: Sequence[CaseBlock]) -> None:
    metrics = build_metrics(blocks)
    print(f"\n{len(blocks)} cases, {sum(1 for b in blocks if b.missed)} with a miss")
    for name in SUMMARY_METRICS:
        value = metrics[name]
        if isinstance(value, Distribution):
            shown = "n/a" if value.mean is None else f"mean {value.mean:.4f}  min {value.min:.4f}"
            print(f"  {name:28s} n={value.n:<3d} {shown}")
        elif isinstance(value, Ratio):
            shown = "n/a" if value.value is None else f"value {value.value:.4f}"
            print(f"  {name:28s} n={value.n:<3d} {shown}")


@contextmanager
def server_url(url: str | None, corpus: Path) -> Iterator[str]:
    """``url`` as given, or the URL of an embedded reference server loaded from ``corpus``."""
    if url is not None:
        yield url
        return
    from pytest_taguru.server.runner import ReferenceServer

    with ReferenceServer.from_import_files([corpus]) as server:
        yield server.url


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python example_suite/smoke.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--url", help="a running taguru server (default: embedded reference server)"
    )
    parser.add_argument(
        "--context", help="context name (default: the eval header's default_target)"
    )
    parser.add_argument("--eval", type=Path, default=DEFAULT_EVAL, help="eval.jsonl to run")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="import file to serve")
    parser.add_argument("--case", default="", help="run only cases whose case_id contains this")
    parser.add_argument("--quiet", action="store_true", help="one line per case")
    args = parser.parse_args(argv)
    try:
        eval_set = load_eval_set(str(args.eval))
        check_limits(eval_set)
        if args.url is not None:
            check_base_url(args.url)  # refuses userinfo, so no message can carry a secret
    except TaguruError as error:
        print(f"smoke: {error.message}", file=sys.stderr)
        return 2
    context = args.context or eval_set.default_context
    if context is None:
        print(
            "smoke: no --context and no default_target.context in the eval header", file=sys.stderr
        )
        return 2
    cases = [case for case in eval_set.cases if args.case in case.case_id]
    blocks: list[CaseBlock] = []
    with (
        server_url(args.url, args.corpus) as url,
        TaguruClient(url, bearer_token(os.environ)) as client,
    ):
        try:
            client.health()
            client.get_json(["contexts", context])
        except CallFailed as error:
            print(f"smoke: {error.message}", file=sys.stderr)
            return 1
        for case in cases:
            block = build_case_block(case, run_lanes(client, context, case))
            print_case(case, block, args.quiet)
            blocks.append(block)
    if blocks:
        print_summary(blocks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
