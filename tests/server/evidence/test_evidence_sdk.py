"""The official taguru SDK (0.9.7) decodes the reference server's evidence package."""

from collections.abc import Iterator

import pytest
from taguru import Taguru

from pytest_taguru.server.runner import ReferenceServer

TOKEN = "evidence-token"


@pytest.fixture(scope="module")
def sdk() -> Iterator[Taguru]:
    with ReferenceServer(token=TOKEN) as running, Taguru(running.url, api_key=TOKEN) as client:
        assert client.contexts.create("sake")
        context = client.context("sake")
        context.store_passages(
            {
                "docs/kura.md": "青嶺酒造は雲居県霧沢町の蔵元である。",
                "docs/kura-copy.md": "青嶺酒造は雲居県霧沢町の蔵元である。",
                "docs/toji.md": "杜氏は高瀬である。",
            },
            locators={
                "docs/toji.md": [{"paragraph": 0, "locator": {"kind": "page", "value": "3"}}]
            },
        )
        context.add_associations(
            [
                {
                    "subject": "青嶺酒造",
                    "label": "杜氏",
                    "object": "高瀬",
                    "weight": 1.0,
                    "source": "docs/toji.md",
                    "paragraph": 0,
                },
                {"subject": "青嶺酒造", "label": "杜氏", "object": "佐藤", "weight": 0.5},
            ]
        )
        yield client


@pytest.fixture(autouse=True)
def no_reranker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAGURU_RERANK_MODEL", raising=False)


def test_sdk_decodes_a_full_package(sdk: Taguru) -> None:
    package = sdk.context("sake").assemble_evidence(
        ["青嶺酒造"], text_fallback_query="青嶺酒造", budget={"max_items": 3}, rerank={}
    )
    kinds = [item.kind for item in package.items]
    assert kinds.count("association") == 2 and kinds.count("passage") == 1
    assert package.budget.items_used == 3
    assert package.budget.limits.max_items == 3
    assert package.omitted_by_reason == {"duplicate_passage": 1}
    assert package.omitted[0].duplicate_of is not None
    assert [c.source for c in package.citations] == ["docs/toji.md"]
    assert package.plan.selection.contradiction_groups == 1
    assert package.plan.reranker.reason == "not_configured"
    assert package.plan.lanes.communities.ran is False
