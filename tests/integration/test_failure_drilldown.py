"""The drill-down of a failed case end to end: what outranked the expectation, the served
section, a paragraph that does not exist, and reproductions that work: each printed request is
replayed against a reference server loaded with the run's corpus and must answer 200."""

import json
import re

import httpx
import pytest
from e2e import EVAL, SENTINEL, Suite

from pytest_taguru.server.runner import ReferenceServer

DRILL_CASE = {
    "case_id": "d-drill",
    "query": "alpha widget",
    "cues": ["alpha widget", "made in"],
    "expected_sources": [
        {"source": "docs/alpha.md", "paragraphs": [0], "relevance": 2},
        {"source": "docs/gamma.md", "paragraphs": [9]},
    ],
    "expected_concepts": ["alpha widget", "beta gizmo"],
    "expected_labels": ["sold in"],
    "expected_associations": [{"subject": "alpha widget", "label": "made in", "object": "Lima"}],
    "expected_citations": [
        {"source": "docs/alpha.md", "paragraph": 0, "section": "Pricing"},
        {"source": "docs/beta.md", "paragraph": 1},
    ],
    "options": {"limit": 1},
}
EVERY_BOUND = {
    metric: {"min": 1.0}
    for metric in (
        "recall.recall_at_k",
        "coverage.concepts",
        "coverage.labels",
        "coverage.associations",
        "citations.recall",
        "citations.locator_validity",
    )
}
REQUEST = re.compile(r"^  POST (/contexts/\S+) (\{.*\})$")


@pytest.fixture
def failing(suite: Suite) -> tuple[str, ...]:
    (suite.path / "eval.jsonl").write_text(EVAL + json.dumps(DRILL_CASE) + "\n", encoding="utf-8")
    thresholds = suite.write_thresholds(
        {"taguru_evaluate_thresholds": 1, "cases": {"overrides": {"d-drill": EVERY_BOUND}}}
    )
    return ("-k", "d-drill", "--taguru-thresholds", thresholds)


def test_the_drilldown_explains_and_every_reproduction_answers_200(
    suite: Suite, failing: tuple[str, ...], dist: tuple[str, ...]
) -> None:
    result = suite.run(*failing, *dist)

    assert result.ret == 3
    result.stdout.fnmatch_lines(
        [
            "expected sources:",
            "  docs/alpha.md (paragraph 0, relevance 2): not in the top 1",
            "  docs/gamma.md (paragraph 9, relevance 1): not in the top 1; paragraph 9 does not "
            "exist in docs/gamma.md",
            "hits ranked above an expected source:",
            "  1. docs/alpha.md#1 (score *)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "  (docs/alpha.md, 0): not served, resolved, section mismatched (expected 'Pricing', "
            "served 'Overview')",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "reproduce (the run's embedded server stopped with the session; serve the same "
            "corpus with 'python -m pytest_taguru.server --import corpus.ndjson', which listens "
            "on TAGURU_ADDR, default 127.0.0.1:8248):"
        ]
    )
    requests = [found.groups() for line in result.stdout.lines if (found := REQUEST.match(line))]
    routes = {path.split("/", 3)[3] for path, _ in requests}
    assert routes == {
        "sources/search",
        "sources/search/explain",
        "resolve",
        "resolve/explain",
        "resolve_label",
        "resolve_label/explain",
        "citations",
    }
    assert SENTINEL not in result.stdout.str()
    with ReferenceServer.from_import_files([suite.path / "corpus.ndjson"]) as server:
        for path, body in requests:
            response = httpx.post(server.url + path, json=json.loads(body))
            assert response.status_code == 200, (path, body, response.text)


@pytest.mark.parametrize(
    "budget", [(), ("--taguru-max-items", "100")], ids=["searched", "truncated"]
)
def test_show_text_prints_the_served_text_but_never_writes_it(
    suite: Suite, failing: tuple[str, ...], dist: tuple[str, ...], budget: tuple[str, ...]
) -> None:
    # A budget flag truncates the hits on the client: the kept hits show their text too.
    result = suite.run(*failing, *budget, "--taguru-show-text", "--junitxml=junit.xml", *dist)

    assert result.ret == 3
    result.stdout.fnmatch_lines(
        [
            "  1. docs/alpha.md#1 (score *)",
            f"     The alpha widget costs ten crowns and ships worldwide. {SENTINEL} 1.",
        ]
    )
    assert SENTINEL not in (suite.path / "evaluation.partial.json").read_text(encoding="utf-8")
