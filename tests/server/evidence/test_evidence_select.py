"""Evidence selection rules (assembly.md §3.3–§3.10) and the §4.3 / §4.6 worked examples."""

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.budget import Limits
from pytest_taguru.core.wire import Association, Attribution
from pytest_taguru.server.evidence.assemble import assemble
from pytest_taguru.server.evidence.gather import Gathered, association_candidate, lane_plan
from pytest_taguru.server.evidence.select import (
    NUL,
    Candidate,
    admission_units,
    character_pairs,
    dice,
    diversity_tiers,
    fuse,
    fused_score,
    suppress_duplicates,
    tier_width,
)


def passage(source: str, rank: int, text: str = "", paragraph: int = 0) -> Candidate:
    payload = {"source": source, "paragraph": paragraph, "text": text}
    return Candidate(
        "passage",
        f"ctx{NUL}{source}{NUL}{paragraph}",
        payload,
        text,
        source,
        {"passage_bm25": rank},
    )


def association(
    subject: str,
    label: str,
    obj: str,
    lane: str,
    rank: int,
    *sources: tuple[str, int | None, float],
) -> Candidate:
    attributions = [Attribution(source=s, weight=w, count=1, paragraph=p) for s, p, w in sources]
    found = Association(
        subject=subject, label=label, object=obj, weight=1.0, count=1, attributions=attributions
    )
    return association_candidate(found, lane, rank)


# --- identities (§3.3) ----------------------------------------------------------------------


def test_candidate_ids_and_primary_source() -> None:
    found = association(
        "a", "l", "b", "graph_activate", 1, ("z.md", 0, 0.5), ("y.md", None, -2.0), ("x.md", 3, 2.0)
    )
    assert found.candidate_id == "association\x00a\x00l\x00b"
    assert found.source == "x.md"  # |−2.0| ties 2.0; the smaller source wins
    assert found.origins == {("z.md", 0), ("x.md", 3)}
    tie = association("a", "l", "c", "graph_activate", 1, ("x.md", None, 1.0), ("x.md", 4, 1.0))
    assert tie.source == "x.md"
    assert association("a", "l", "d", "graph_query", 1).source is None
    assert passage("a.md", 1).candidate_id == "passage\x00ctx\x00a.md\x000"


# --- fusion (§3.4) --------------------------------------------------------------------------


def test_fusion_orders_by_rrf_then_kind_then_key() -> None:
    fused, dropped = fuse(
        [
            association("s", "l", "o2", "graph_activate", 2),
            association("s", "l", "o1", "graph_activate", 1),
            passage("b.md", 1),
            passage("a.md", 2),
            association("s", "l", "o2", "graph_query", 1),
        ]
    )
    # o2: 1/62 + 1/61 beats every single-lane candidate; at 1/61 the association precedes
    # the passage (kind order); at 1/62 the association would, but o2 is merged away.
    ids = [c.candidate_id for c in fused]
    assert ids == [
        "association\x00s\x00l\x00o2",
        "association\x00s\x00l\x00o1",
        "passage\x00ctx\x00b.md\x000",
        "passage\x00ctx\x00a.md\x000",
    ]
    assert [c.fused_rank for c in fused] == [1, 2, 3, 4]
    assert fused[0].lane_ranks == {"graph_activate": 2, "graph_query": 1}
    assert dropped == 1
    assert fused_score({"x": 1, "y": 2}) == pytest.approx(1 / 61 + 1 / 62)


def test_fusion_keeps_best_rank_union_of_origins_and_best_payload() -> None:
    first = association("s", "l", "o", "graph_query", 3, ("q.md", 0, 1.0))
    second = association("s", "l", "o", "graph_activate", 3, ("a.md", 1, 1.0))
    (merged,), dropped = fuse([first, second])
    assert dropped == 1
    assert merged.origins == {("q.md", 0), ("a.md", 1)}
    # Equal lane ranks: the lexicographically smaller lane name's appearance is the payload.
    assert merged.payload["attributions"][0]["source"] == "a.md"


# --- near-duplicates (§3.5) -----------------------------------------------------------------


def test_character_pairs_and_dice() -> None:
    assert character_pairs("") == frozenset()
    assert character_pairs("猫") == {"猫猫"}
    assert character_pairs("ABA") == {"ab", "ba"}
    assert character_pairs("カナ") == character_pairs("かな")  # katakana folds to hiragana
    assert dice(frozenset(), frozenset()) == 1.0
    assert dice(character_pairs("abcd"), character_pairs("abce")) == pytest.approx(4 / 6)


def test_duplicates_name_the_first_kept_passage_and_skip_non_passages() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    fused, _ = fuse(
        [
            passage("a.md", 1, text),
            passage("b.md", 2, text.upper()),
            passage("c.md", 3, "something else entirely"),
            association("s", "l", "o", "graph_activate", 4),
        ]
    )
    survivors, duplicates = suppress_duplicates(fused)
    assert [c.key.split(NUL)[1] for c in survivors if c.kind == "passage"] == ["a.md", "c.md"]
    assert len(survivors) == 3
    ((dup),) = duplicates
    assert dup.candidate.candidate_id == "passage\x00ctx\x00b.md\x000"
    assert dup.duplicate_of == "passage\x00ctx\x00a.md\x000"


def test_near_duplicate_threshold_is_inclusive_at_point_nine() -> None:
    base = "abcdefghijklmnopqrstu"  # 20 pairs
    near = base[:-1] + "X"  # 19 shared of 20 each: Dice 0.95
    far = base[:-3] + "XYZ"  # 17 shared: Dice 0.85
    fused, _ = fuse([passage("a.md", 1, base), passage("b.md", 2, near), passage("c.md", 3, far)])
    _, duplicates = suppress_duplicates(fused)
    assert [d.candidate.key.split(NUL)[1] for d in duplicates] == ["b.md"]


def test_duplicate_of_is_the_first_kept_match_in_kept_order() -> None:
    a, b = "abcdefghijklmnopqrst", "abcdefghijklmnopqrXY"  # Dice 34/38 < 0.9: both kept
    c = a + "rXY"  # Dice 38/41 with each of them
    fused, _ = fuse([passage("a.md", 1, a), passage("b.md", 2, b), passage("c.md", 3, c)])
    survivors, duplicates = suppress_duplicates(fused)
    assert len(survivors) == 2
    assert [d.duplicate_of for d in duplicates] == ["passage\x00ctx\x00a.md\x000"]


@given(st.lists(st.text(alphabet="abcカか ", max_size=12), max_size=8))
def test_indexed_duplicate_walk_equals_the_definition(texts: list[str]) -> None:
    fused, _ = fuse([passage(f"{i}.md", i + 1, text) for i, text in enumerate(texts)])
    survivors, duplicates = suppress_duplicates(fused)
    kept: list[Candidate] = []
    expected: list[tuple[str, str]] = []
    for candidate in fused:
        pairs = character_pairs(candidate.text)
        original = next((k for k in kept if dice(pairs, character_pairs(k.text)) >= 0.9), None)
        if original is None:
            kept.append(candidate)
        else:
            expected.append((candidate.candidate_id, original.candidate_id))
    assert survivors == kept
    assert [(d.candidate.candidate_id, d.duplicate_of) for d in duplicates] == expected


# --- contradiction groups (§3.7) and tiering (§3.8) -----------------------------------------


def test_contradiction_group_is_one_unit_at_its_first_member() -> None:
    first = association("猫", "is_a", "哺乳類", "graph_activate", 1)
    other = passage("p.md", 2)
    second = association("猫", "is_a", "爬虫類", "graph_activate", 3)
    alone = association("猫", "color", "黒", "graph_activate", 4)
    units = admission_units([first, other, second, alone])
    assert [[c.candidate_id for c in unit] for unit in units] == [
        [first.candidate_id, second.candidate_id],
        [other.candidate_id],
        [alone.candidate_id],
    ]


def test_tier_width() -> None:
    assert [tier_width(n) for n in (0, 1, 3, 4, 12, 40, 1000)] == [1, 1, 1, 1, 3, 10, 250]


def test_diversity_tiering_worked_example_4_6() -> None:
    sources = {"u1": "a", "u2": "a", "u3": "b", "u4": "b", "u5": None, "u6": "c", "u7": None}
    units = [
        [Candidate("passage", name, {}, "", source, {"passage_bm25": 1})]
        for name, source in sources.items()
    ]
    ordered = diversity_tiers(units, tier_width(12))
    assert [unit[0].key for unit in ordered] == ["u1", "u3", "u2", "u5", "u6", "u4", "u7"]


# --- the §4.3 package (accounting over canonical JSON, admission, omissions) ----------------

KURA0 = "青嶺酒造は雲居県霧沢町の蔵元である。"


def example_4_3() -> Gathered:
    a = Association(
        subject="青嶺酒造",
        label="杜氏",
        object="高瀬",
        weight=1.0,
        count=2,
        attributions=[
            Attribution(source="docs/kura.md", weight=1.0, count=1, paragraph=1),
            Attribution(source="docs/toji.md", weight=0.5, count=1, paragraph=0),
        ],
    )
    b = Association(
        subject="青嶺酒造",
        label="所在地",
        object="雲居県",
        weight=1.0,
        count=1,
        attributions=[Attribution(source="docs/kura.md", weight=1.0, count=1, paragraph=0)],
    )

    def hit(source: str, paragraph: int, text: str, rank: int) -> Candidate:
        from pytest_taguru.core.jsontext import Float32

        payload: dict[str, Any] = {
            "source": source,
            "paragraph": paragraph,
            "score": Float32(2.5),
            "text": text,
            "lanes": {"bm25": {"rank": rank, "score": Float32(2.5)}},
        }
        key = f"sake{NUL}{source}{NUL}{paragraph}"
        return Candidate("passage", key, payload, text, source, {"passage_bm25": rank})

    def cited(source: str, paragraph: int, text: str) -> dict[str, Any]:
        return {"text": text, "source": source, "section": None, "locator": None}

    return Gathered(
        candidates=[
            association_candidate(a, "graph_activate", 1),
            association_candidate(b, "graph_activate", 2),
            hit("docs/kura.md", 0, KURA0, 1),
            hit("docs/kura-copy.md", 0, KURA0, 2),
            hit("docs/mizu.md", 2, "仕込み水は伏流水。", 3),
        ],
        citations={
            ("docs/kura.md", 0): cited("docs/kura.md", 0, KURA0),
            ("docs/kura.md", 1): cited("docs/kura.md", 1, "杜氏は高瀬である。"),
            ("docs/toji.md", 0): cited("docs/toji.md", 0, "高瀬は南部杜氏の流れを汲む。"),
        },
        plans={
            lane: lane_plan()
            for lane in ("resolve", "query", "activate", "passages", "communities", "citations")
        },
    )


def test_worked_example_4_3_accounting() -> None:
    package = asyncio.run(
        assemble(example_4_3(), Limits.resolve(max_items=3), "青嶺酒造の杜氏", None, None)
    )
    items = package["items"]
    assert [(i["fused_rank"], i["bytes"], i["estimated_tokens"]) for i in items] == [
        (1, 715, 183),
        (2, 326, 86),
        (3, 539, 140),
    ]
    assert items[0]["citation_refs"] == [
        {"source": "docs/kura.md", "paragraph": 1},
        {"source": "docs/toji.md", "paragraph": 0},
    ]
    assert items[0]["corroboration"]["sources"] == ["docs/kura.md", "docs/toji.md"]
    assert [(c["source"], c["paragraph"]) for c in package["citations"]] == [
        ("docs/kura.md", 0),
        ("docs/kura.md", 1),
        ("docs/toji.md", 0),
    ]
    assert package["budget"] == {
        "items_used": 3,
        "bytes_used": 2059,
        "tokens_used": 539,
        "limits": {"max_items": 3, "max_bytes": 65536, "max_tokens": 4000},
    }
    assert package["omitted"] == [
        {
            "candidate_id": "passage\x00sake\x00docs/kura-copy.md\x000",
            "kind": "passage",
            "reason": "duplicate_passage",
            "duplicate_of": "passage\x00sake\x00docs/kura.md\x000",
        },
        {
            "candidate_id": "passage\x00sake\x00docs/mizu.md\x002",
            "kind": "passage",
            "reason": "budget_exceeded",
        },
    ]
    assert package["omitted_total"] == 2
    assert package["omitted_by_reason"] == {"budget_exceeded": 1, "duplicate_passage": 1}
    assert package["plan"]["selection"] == {
        "dedup_dropped": 0,
        "contradiction_groups": 0,
        "diversity_tier_width": 1,
    }
    assert list(package) == [
        "items",
        "citations",
        "budget",
        "omitted",
        "omitted_total",
        "omitted_by_reason",
        "plan",
    ]
    assert list(items[0]) == [
        "candidate_id",
        "kind",
        "fused_rank",
        "lane_ranks",
        "citation_refs",
        "corroboration",
        "bytes",
        "estimated_tokens",
        "association",
    ]


def test_zero_budget_is_an_empty_package_of_four_bytes() -> None:
    package = asyncio.run(assemble(example_4_3(), Limits.resolve(0, 0, 0), "q", None, None))
    assert package["items"] == [] and package["citations"] == []
    assert package["budget"]["bytes_used"] == 4 and package["budget"]["tokens_used"] == 1
    assert package["omitted_by_reason"] == {"budget_exceeded": 4, "duplicate_passage": 1}
    assert package["omitted_total"] == 5
