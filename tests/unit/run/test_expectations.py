"""``run.expectations``: the canonical form of a case's expectations and its hash."""

import hashlib
import json
from typing import Any

from pytest_taguru.run.eval_models import EvalCase
from pytest_taguru.run.expectations import canonical_expectations, expectations_sha256


def case(**fields: Any) -> EvalCase:
    line = {"case_id": "c1", "query": "where is the brewery", **fields}
    return EvalCase.model_validate_json(json.dumps(line))


SOURCES = [{"source": "docs/a.md", "paragraphs": [0], "relevance": 2}]


def test_a_known_case_has_a_pinned_hash() -> None:
    # The canonical form is a contract with every artifact already written: pin it.
    cited = [{"source": "docs/a.md", "paragraph": 0}]
    pinned = case(expected_sources=SOURCES, expected_citations=cited)
    assert canonical_expectations(pinned) == {
        "query": "where is the brewery",
        "cues": [],
        "expected_sources": [{"source": "docs/a.md", "paragraphs": [0], "relevance": 2}],
        "expected_concepts": [],
        "options": {"limit": None, "floor": None, "tags": [], "since": None, "until": None},
        "expected_labels": [],
        "expected_associations": [],
        "expected_citations": [{"source": "docs/a.md", "paragraph": 0, "quote": None}],
    }
    assert expectations_sha256(pinned) == (
        "00667273a575933fcea14d4c513ff44433caa2f45bb02ad76530725d1802c611"
    )


def test_spelling_a_default_out_changes_nothing() -> None:
    terse = case(expected_sources=[{"source": "docs/a.md"}])
    spelled = case(
        cues=[],
        expected_sources=[{"source": "docs/a.md", "paragraphs": [], "relevance": 1}],
        options={"tags": []},
        expected_labels=[],
    )
    assert expectations_sha256(terse) == expectations_sha256(spelled)


def test_the_case_id_is_not_part_of_it_but_everything_declared_is() -> None:
    reference = expectations_sha256(case(expected_sources=SOURCES))
    renamed = case(expected_sources=SOURCES).model_copy(update={"case_id": "x"})
    assert expectations_sha256(renamed) == reference
    changed = [
        case(expected_sources=SOURCES, query="where is the brewery?"),
        case(expected_sources=[{**SOURCES[0], "relevance": 3}]),
        case(expected_sources=[*SOURCES, {"source": "docs/b.md"}]),
        case(expected_sources=[{"source": "docs/b.md"}, *SOURCES]),  # order is a change
        case(expected_sources=SOURCES, options={"limit": 5}),
        case(expected_sources=SOURCES, options={"floor": 0.3}),
        case(expected_sources=SOURCES, cues=["brewery"]),
        case(expected_sources=SOURCES, expected_concepts=["Brewery"]),
    ]
    assert len({reference, *map(expectations_sha256, changed)}) == len(changed) + 1


def test_a_citation_section_is_three_valued() -> None:
    cited = {"source": "docs/a.md", "paragraph": 0}
    unchecked = case(expected_citations=[cited])
    outside = case(expected_citations=[{**cited, "section": None}])
    labelled = case(expected_citations=[{**cited, "section": "History"}])
    hashes = {expectations_sha256(c) for c in (unchecked, outside, labelled)}
    assert len(hashes) == 3
    assert "section" not in canonical_expectations(unchecked)["expected_citations"][0]
    assert canonical_expectations(outside)["expected_citations"][0]["section"] is None


def test_the_hash_is_hex_sha256_of_sorted_compact_utf8_json() -> None:
    japanese = case(query="青嶺はどこの蔵の酒か")
    text = json.dumps(
        canonical_expectations(japanese), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert "青嶺" in text
    assert expectations_sha256(japanese) == hashlib.sha256(text.encode()).hexdigest()
