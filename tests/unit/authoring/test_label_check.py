"""``check``: each seeded labelling mistake is found with its line, field and suggestion."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from paths import EXAMPLE_SUITE

from pytest_taguru.authoring.label_check import CorpusReader, check_eval_set
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.dataset import load_eval_set
from pytest_taguru.server.runner import ReferenceServer

CORPUS: list[dict[str, Any]] = [
    {"taguru_batch": 1, "context": "bikes", "source": "docs/hours.md", "create": {}},
    {"passage": "# Hours\n\nWe open at nine.\n\nClosed on Sundays.\n\n# Holidays\n\nShut in Aug."},
    {"paragraph": 0, "section": "Hours"},
    {"paragraph": 3, "section": "Holidays"},
    {"subject": "shop", "label": "closed on", "object": "Sunday", "weight": 1.0},
    {"taguru_batch": 1, "context": "bikes", "source": "docs/repairs.md"},
    {"passage": "Flat tyres are fixed in thirty minutes.\n\nA service costs 80 euros."},
]

GOOD = {
    "case_id": "good",
    "query": "when do you open",
    "expected_sources": [{"source": "docs/hours.md", "paragraphs": [1, 2]}],
    "expected_concepts": ["Shop"],
    "expected_labels": ["closed on"],
    "expected_citations": [
        {"source": "docs/hours.md", "paragraph": 2, "section": "Hours", "quote": "closed ON"},
        {"source": "docs/repairs.md", "paragraph": 1, "section": None},
    ],
}
MISTAKES = [
    {  # line 3
        "case_id": "unknown-source",
        "query": "q",
        "expected_sources": [{"source": "hours.md"}],
    },
    {  # line 4
        "case_id": "missing-paragraph",
        "query": "q",
        "expected_sources": [{"source": "docs/repairs.md", "paragraphs": [0, 5]}],
    },
    {  # line 5
        "case_id": "absent-quote",
        "query": "q",
        "expected_citations": [
            {"source": "docs/hours.md", "paragraph": 1, "quote": "Closed on Sundays"},
            {"source": "docs/hours.md", "paragraph": 0, "quote": "thirty minutes"},
            {"source": "docs/hours.md", "paragraph": 0, "quote": "never written"},
        ],
    },
    {  # line 6
        "case_id": "wrong-section",
        "query": "q",
        "expected_citations": [
            {"source": "docs/hours.md", "paragraph": 4, "section": "Hours"},
            {"source": "docs/hours.md", "paragraph": 1, "section": "Hour"},
            {"source": "docs/hours.md", "paragraph": 1, "section": None},
        ],
    },
    {  # line 7
        "case_id": "bad-locators",
        "query": "q",
        "expected_citations": [
            {"source": "docs/repair.md", "paragraph": 0},
            {"source": "docs/repairs.md", "paragraph": 2},
        ],
    },
    {  # line 8
        "case_id": "unresolvable",
        "query": "q",
        "expected_concepts": ["shopp", "bicycle"],
        "expected_labels": ["closed"],
    },
]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceServer]:
    corpus = write_jsonl(tmp_path_factory.mktemp("corpus") / "corpus.ndjson", CORPUS)
    with ReferenceServer.from_import_files([corpus]) as running:
        yield running


def problems(server: ReferenceServer, path: Path, cases: list[dict[str, Any]]) -> list[str]:
    eval_path = write_jsonl(path / "eval.jsonl", [{"taguru_eval": 1}, *cases])
    with TaguruClient(server.url, None) as client:
        found = check_eval_set(CorpusReader(client, "bikes"), load_eval_set(eval_path))
    return [problem.text("eval.jsonl") for problem in found]


def test_a_correctly_labelled_case_has_no_problem(server: ReferenceServer, tmp_path: Path) -> None:
    assert problems(server, tmp_path, [GOOD]) == []


def test_every_seeded_mistake_is_found_with_its_line_and_a_suggestion(
    server: ReferenceServer, tmp_path: Path
) -> None:
    assert problems(server, tmp_path, [GOOD, *MISTAKES]) == [
        "eval.jsonl:3: case 'unknown-source': expected_sources[0].source: 'hours.md' is not a "
        "source of 'bikes' — did you mean 'docs/hours.md'?",
        "eval.jsonl:4: case 'missing-paragraph': expected_sources[0].paragraphs[1]: "
        "'docs/repairs.md' has 2 paragraphs (0..1), not paragraph 5",
        "eval.jsonl:5: case 'absent-quote': expected_citations[0].quote: 'Closed on Sundays' is "
        "not in 'docs/hours.md' paragraph 1 — it is in paragraph 2",
        "eval.jsonl:5: case 'absent-quote': expected_citations[1].quote: 'thirty minutes' is not "
        "in 'docs/hours.md' paragraph 0 — it is in 'docs/repairs.md' paragraph 0",
        "eval.jsonl:5: case 'absent-quote': expected_citations[2].quote: 'never written' is not "
        "in 'docs/hours.md' paragraph 0 — no paragraph of the corpus contains it",
        "eval.jsonl:6: case 'wrong-section': expected_citations[0].section: declared 'Hours', "
        "but the paragraph is in section 'Holidays' — paragraphs 0..2 are in it",
        "eval.jsonl:6: case 'wrong-section': expected_citations[1].section: declared 'Hour', "
        "but the paragraph is in section 'Hours' — did you mean 'Hours'?",
        "eval.jsonl:6: case 'wrong-section': expected_citations[2].section: declared null, but "
        "the paragraph is in section 'Hours' — the source's sections: 'Hours', 'Holidays'",
        "eval.jsonl:7: case 'bad-locators': expected_citations[0].source: 'docs/repair.md' is "
        "not a source of 'bikes' — did you mean 'docs/repairs.md'?",
        "eval.jsonl:7: case 'bad-locators': expected_citations[1].paragraph: 'docs/repairs.md' "
        "has 2 paragraphs (0..1), not paragraph 2",
        "eval.jsonl:8: case 'unresolvable': expected_concepts[0]: 'shopp' does not resolve to a "
        "concept — it resolves to 'shop'",
        "eval.jsonl:8: case 'unresolvable': expected_concepts[1]: 'bicycle' does not resolve to "
        "a concept",
        "eval.jsonl:8: case 'unresolvable': expected_labels[0]: 'closed' does not resolve to a "
        "label — it resolves to 'closed on'",
    ]


def test_skipped_cases_are_not_checked(server: ReferenceServer, tmp_path: Path) -> None:
    eval_path = write_jsonl(tmp_path / "eval.jsonl", [{"taguru_eval": 1}, *MISTAKES])
    skip = [case["case_id"] for case in MISTAKES]
    with TaguruClient(server.url, None) as client:
        assert check_eval_set(CorpusReader(client, "bikes"), load_eval_set(eval_path), skip) == []


def test_the_example_suite_is_clean_but_for_its_deliberate_stale_locators() -> None:
    corpus = EXAMPLE_SUITE / "corpus" / "sake.ndjson"
    eval_set = load_eval_set(str(EXAMPLE_SUITE / "eval.jsonl"))
    with (
        ReferenceServer.from_import_files([corpus]) as running,
        TaguruClient(running.url, None) as client,
    ):
        found = check_eval_set(CorpusReader(client, "sake"), eval_set)
    assert {problem.case_id for problem in found} == {"miss-stale-locators"}
    assert [problem.field for problem in found] == [
        "expected_citations[1].section",
        "expected_citations[1].quote",
        "expected_citations[2].source",
        "expected_citations[3].paragraph",
    ]
