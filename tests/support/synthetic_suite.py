"""A synthetic suite of any size for the reference server: an import file and an eval set.

Deterministic from its arguments. Context ``synth``; sources of four paragraphs drawn from a
small vocabulary, so searches rank several sources. Every case searches (one
``sources/search``, the profile the issue measures); one in seven also expects a citation, one
in eleven a concept and an association. A query names its paragraph's unique marker word, so
that paragraph is served first; one case in five (every fifth) expects another paragraph of
the source instead, so that a case-scoped bound (``THRESHOLDS``: MRR 1) fails it, with a
drill-down. For the pipelining tests (500 cases) and ``benchmarks/bench_concurrency.py``
(thousands).
"""

import json
import random
from pathlib import Path
from typing import Any

CONTEXT = "synth"
WORDS = [
    "rice", "koji", "yeast", "water", "brewing", "press", "label", "tank", "batch", "season",
    "cellar", "polish", "ratio", "aroma", "acidity", "storage", "shipping", "price", "award",
    "toji", "history", "festival", "pairing", "warm", "cold", "spring", "barrel", "cedar",
]  # fmt: skip
PARAGRAPHS_PER_SOURCE = 4
THRESHOLDS = {
    "taguru_evaluate_thresholds": 1,
    "cases": {"default": {"recall.mrr": {"min": 1.0}}},
}


def _source(number: int) -> str:
    return f"docs/s{number:05d}.md"


def _paragraph(rng: random.Random, source: int, paragraph: int) -> str:
    words = rng.choices(WORDS, k=12)
    return f"{' '.join(words)} marker{source}x{paragraph}."


def corpus_lines(sources: int, seed: int = 9) -> list[dict[str, Any]]:
    """The import stream: one batch per source (passage, a section, an association)."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = []
    for number in range(sources):
        header: dict[str, Any] = {"taguru_batch": 1, "context": CONTEXT, "source": _source(number)}
        if number == 0:
            header["create"] = {"description": "synthetic suite"}
        paragraphs = [_paragraph(rng, number, p) for p in range(PARAGRAPHS_PER_SOURCE)]
        lines += [
            header,
            {"passage": "\n\n".join(paragraphs)},
            {"paragraph": 0, "section": f"Part {number}"},
            {
                "subject": f"item{number}",
                "label": "kept in",
                "object": f"cellar{number}",
                "weight": 1.0,
                "paragraph": 0,
            },
        ]
    return lines


def eval_lines(cases: int, sources: int, seed: int = 5) -> list[dict[str, Any]]:
    """The eval set: a header, then ``cases`` cases over the corpus of ``sources`` sources."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = [
        {"taguru_eval": 1, "name": "synthetic", "default_target": {"context": CONTEXT}}
    ]
    for index in range(cases):
        source, paragraph = rng.randrange(sources), rng.randrange(PARAGRAPHS_PER_SOURCE)
        asked = (paragraph + 1) % PARAGRAPHS_PER_SOURCE if index % 5 == 4 else paragraph
        case: dict[str, Any] = {
            "case_id": f"case-{index:05d}",
            "query": f"marker{source}x{paragraph} {rng.choice(WORDS)}",
            "expected_sources": [{"source": _source(source), "paragraphs": [asked]}],
        }
        if index % 7 == 3:
            case["expected_citations"] = [
                {"source": _source(source), "paragraph": 0, "section": f"Part {source}"}
            ]
        if index % 11 == 6:
            case["expected_concepts"] = [f"item{source}"]
            case["expected_associations"] = [
                {"subject": f"item{source}", "label": "kept in", "object": f"cellar{source}"}
            ]
        lines.append(case)
    return lines


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(record) + "\n" for record in records)
    path.write_text(text, encoding="utf-8")


def write_suite(directory: Path, cases: int, sources: int | None = None) -> None:
    """``corpus.ndjson``, ``eval.jsonl`` and ``thresholds.json`` in ``directory``."""
    count = sources if sources is not None else max(10, cases // 4)
    _write(directory / "corpus.ndjson", corpus_lines(count))
    _write(directory / "eval.jsonl", eval_lines(cases, count))
    (directory / "thresholds.json").write_text(json.dumps(THRESHOLDS), encoding="utf-8")
