"""A synthetic suite for the baseline gate's end-to-end runs: ``cases`` cases, each looking for
its own source by two words no other source has, served by the embedded reference server.

``decoys`` names cases whose query words also fill a decoy source (each word three times in a
short paragraph), which BM25 ranks above the case's own: its MRR drops from 1 to 1/2 and its
nDCG with it, while its recall@k stays 1 — the same eval set, so every case still pairs.
"""

import json
from collections.abc import Collection
from string import ascii_lowercase
from typing import Any

CONTEXT = "paired"


def word(index: int, part: str) -> str:
    """A word of letters only, unique to case ``index`` (``part`` tells the two apart)."""
    letters = ""
    value = index
    for _ in range(3):
        value, digit = divmod(value, 26)
        letters = ascii_lowercase[digit] + letters
    return f"q{part}{letters}"


def _query(index: int) -> str:
    return f"{word(index, 'a')} {word(index, 'b')}"


def corpus(cases: int, decoys: Collection[int] = ()) -> str:
    """The import stream: one source per case, plus a decoy source per case in ``decoys``."""
    records: list[dict[str, Any]] = []
    for index in range(cases):
        batch: dict[str, Any] = {
            "taguru_batch": 1,
            "context": CONTEXT,
            "source": f"docs/c{index}.md",
        }
        if index == 0:
            batch["create"] = {"description": "paired-statistics suite"}
        records.append(batch)
        filler = "the brewery keeps its records in the cellar and ships them weekly"
        records.append({"passage": f"{_query(index)} {filler}."})
    for index in sorted(decoys):
        records.append({"taguru_batch": 1, "context": CONTEXT, "source": f"decoy/c{index}.md"})
        records.append({"passage": f"{_query(index)} {_query(index)} {_query(index)}."})
    return "".join(json.dumps(record) + "\n" for record in records)


def eval_lines(cases: int) -> str:
    """The eval set: case ``p<index>`` expects its own source."""
    lines = [
        json.dumps({"taguru_eval": 1, "name": "paired", "default_target": {"context": CONTEXT}})
    ]
    lines += [
        json.dumps(
            {
                "case_id": f"p{index:04d}",
                "query": _query(index),
                "expected_sources": [{"source": f"docs/c{index}.md"}],
            }
        )
        for index in range(cases)
    ]
    return "\n".join(lines) + "\n"
