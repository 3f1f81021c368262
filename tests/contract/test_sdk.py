"""The official taguru Python SDK (0.9.7) drives the reference server; every call decodes."""

import json
from collections.abc import Iterator
from typing import Any

import pytest
from paths import DATA
from taguru import Taguru
from taguru._errors import NotFoundError, TaguruError

from pytest_taguru.server.runner import ReferenceServer

TOKEN = "contract-token"
SAKE_EXAMPLE: dict[str, Any] = json.loads(
    (DATA / "sake_worked_example.json").read_text("utf-8")
)


@pytest.fixture(scope="module")
def sdk_server() -> Iterator[ReferenceServer]:
    with ReferenceServer(token=TOKEN) as running:
        yield running


@pytest.fixture
def sake(sdk_server: ReferenceServer) -> Iterator[Taguru]:
    """The server-wire §3.11 worked example, populated through the SDK."""
    sdk_server.store.clear()
    with Taguru(sdk_server.url, api_key=TOKEN, retries=0) as client:
        assert client.contexts.create("sake", description=SAKE_EXAMPLE["description"])
        context = client.context("sake")
        sources = SAKE_EXAMPLE["sources"]
        stored = context.store_passages(
            sources["passages"], sections=sources["sections"], locators=sources["locators"]
        )
        assert (stored.stored, stored.sections_stored, stored.locators_stored) == (2, 1, 1)
        applied = context.add_associations(SAKE_EXAMPLE["associations"])
        assert applied.applied == 3
        assert context.add_aliases(**SAKE_EXAMPLE["aliases"]) == 1
        yield client


def test_context_entry_decodes(sake: Taguru) -> None:
    entry = sake.contexts.get("sake")
    assert entry.name == "sake"
    assert entry.revision is not None
    assert (entry.revision.graph, entry.revision.passages, entry.revision.config) == (4, 2, 0)
    assert entry.usage.writes == 3
    assert entry.stats.concepts == 4
    assert [c.name for c in sake.contexts.list().contexts] == ["sake"]


def test_resolve_and_resolve_label_decode(sake: Taguru) -> None:
    context = sake.context("sake")
    fuzzy = context.resolve("青嶺酒蔵", limit=5)
    assert [(c.name, c.tier, c.kind) for c in fuzzy] == [("青嶺酒造", "lexical", "fuzzy")]
    assert fuzzy[0].score == pytest.approx(2 / 3)
    assert fuzzy[0].gloss == "青嶺酒造。杜氏は高瀬。創業年は1907年。"
    assert context.resolve("ＡＯＭＩＮＥ brewery")[0].kind == "alias"
    label = context.resolve_label("杜氏")
    assert [(c.name, c.kind, c.gloss) for c in label] == [
        ("杜氏", "exact", "杜氏。青嶺酒造の杜氏は高瀬。")
    ]


def test_query_decodes(sake: Taguru) -> None:
    page = sake.context("sake").query(subject="青嶺酒造", label="杜氏", object="高瀬", limit=1)
    assert page.total == 1
    match = page.matches[0]
    assert (match.weight, match.count) == (2.0, 1)
    attribution = match.attributions[0]
    assert (attribution.paragraph, attribution.section) == (1, "沿革")
    assert attribution.locator is not None and attribution.locator.value == "2"


def test_search_decodes_with_the_no_provider_plan(sake: Taguru) -> None:
    page = sake.context("sake").search_passages("杜氏は誰", limit=10)
    assert [(h.source, h.paragraph, h.text) for h in page.hits] == [
        ("corpus/brewery.md", 1, "杜氏は高瀬である。")
    ]
    assert page.hits[0].score == pytest.approx(2.1578243, rel=1e-6)
    assert page.plan is not None
    [plan] = page.plan.contexts
    assert plan.context == "sake"
    assert plan.lanes.bm25.ran and not plan.lanes.vector.ran
    assert plan.lanes.vector.reason == "no embedding provider is configured"
    assert plan.filter is None
    filtered = sake.context("sake").search_passages("杜氏", tags=["none"])
    assert filtered.hits == []
    assert filtered.plan is not None and filtered.plan.contexts[0].filter is not None
    assert filtered.plan.contexts[0].filter.total_sources == 2


def test_sources_citations_and_embeddings_decode(sake: Taguru) -> None:
    context = sake.context("sake")
    assert context.list_sources(limit=1).sources == ["corpus/brewery.md"]
    assert list(context.iter_sources(limit=1)) == ["corpus/brewery.md", "corpus/rice.md"]
    citation = context.cite_passage("corpus/brewery.md", 0)
    assert (citation.text, citation.section, citation.locator) == (
        "青嶺酒造は1907年に創業した。",
        "沿革",
        None,
    )
    assert context.embeddings_status().provider_model is None


def test_not_found_codes_reach_the_sdk(sake: Taguru) -> None:
    context = sake.context("sake")
    with pytest.raises(NotFoundError) as missing_source:
        context.cite_passage("nope.md", 0)
    with pytest.raises(NotFoundError) as missing_paragraph:
        context.cite_passage("corpus/rice.md", 5)
    assert (missing_source.value.status, missing_source.value.code) == (404, "no_source")
    assert (missing_paragraph.value.status, missing_paragraph.value.code) == (404, "no_paragraph")


def test_wrong_token_is_refused(sdk_server: ReferenceServer) -> None:
    with (
        Taguru(sdk_server.url, api_key="wrong", retries=0) as client,
        pytest.raises(TaguruError) as refused,
    ):
        client.contexts.get("sake")
    assert (refused.value.status, refused.value.code) == (401, "unauthorized")


def test_context_lifecycle_with_an_escaped_name(sdk_server: ReferenceServer) -> None:
    """A name with `/`, `%` and non-ASCII travels as one percent-encoded segment (§1.1)."""
    sdk_server.store.clear()
    name = "酒/蔵 50%"
    with Taguru(sdk_server.url, api_key=TOKEN, retries=0) as client:
        assert client.contexts.create(name, semantic_floor=0.123456789)
        assert client.contexts.get(name).name == name
        meta = client.contexts.update(name, description="d", dice_floor=2.0)
        assert (meta.description, meta.dice_floor) == ("d", 1.0)
        assert client.contexts.get(name).revision.config == 1
        assert client.contexts.delete(name)
        assert not client.contexts.exists(name)
        with pytest.raises(NotFoundError):
            client.contexts.get(name)
