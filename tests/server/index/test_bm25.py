"""BM25 lane of the reference server (server-wire.md §3.9, §2.12, fixtures)."""

import math
import random
import struct
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.server.index import bm25
from pytest_taguru.server.index.bm25 import Bm25Index, LaneHit
from pytest_taguru.server.index.bm25_score import f32, idf
from pytest_taguru.server.index.text import document_terms, query_terms


def shortest_f32_text(value: float) -> str:
    """Shortest decimal that reads back as the same float32 (what taguru prints)."""
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
            return text
    raise AssertionError(value)


def _round(x: float) -> float:
    value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return value


def reference_score(query: str, slot: list[str], corpus: list[list[str]]) -> float:
    """§3.9 written out plainly for one slot; ``corpus`` lists every slot's texts."""
    lengths = [sum(len(document_terms(text)) for text in texts) for texts in corpus]
    n = len(corpus)
    avgdl = _round(max(sum(lengths) / n, 1.0))
    slot_terms = [term for text in slot for term in document_terms(text)]
    score = 0.0
    for term in query_terms(query):
        tf = slot_terms.count(term)
        if not tf:
            continue
        df = sum(any(term in document_terms(text) for text in texts) for texts in corpus)
        ratio = _round(_round(n - df + 0.5) / _round(df + 0.5))
        term_idf = _round(math.log(_round(ratio + 1.0)))
        k1 = _round(1.2)
        numerator = _round(term_idf * _round(tf * _round(k1 + 1.0)))
        norm = _round(k1 * _round(0.25 + _round(_round(0.75 * len(slot_terms)) / avgdl)))
        score = _round(score + _round(numerator / _round(tf + norm)))
    return score


def _index(sources: dict[str, list[str]]) -> Bm25Index:
    index = Bm25Index()
    for source, paragraphs in sources.items():
        index.set_source(source, paragraphs)
    return index


def test_f32_rounds_to_nearest_float32() -> None:
    assert f32(0.1) == 0.10000000149011612
    assert f32(2.5) == 2.5
    assert f32(1e39) == math.inf
    assert f32(-1e39) == -math.inf


def test_fixture_one_paragraph_one_matching_bigram() -> None:
    # wire-fixtures/http/sources_search.json
    index = _index({"doc.md": ["青嶺酒造は雲居県霧沢町の蔵元である。"]})
    hits = index.search("酒造", 5)
    assert hits == [LaneHit(source="doc.md", paragraph=0, score=hits[0].score, rank=1)]
    assert shortest_f32_text(hits[0].score) == "0.28768212"


def test_fixture_three_matching_bigrams() -> None:
    # wire-fixtures/http/evidence_mixed_lanes.json (passage lane of the origin 青嶺酒造)
    index = _index({"docs/kura.md": ["青嶺酒造は雲居県霧沢町の蔵元である。杜氏は高瀬である。"]})
    (hit,) = index.search("青嶺酒造", 5)
    assert shortest_f32_text(hit.score) == "0.86304635"


def test_worked_example_of_sources_search() -> None:
    # §2.12: three slots of 10, 7 and 10 terms; avgdl 9; idf 0.9808292; 2 × 1.0789121.
    index = _index(
        {
            "corpus/brewery.md": ["青嶺酒造は1907年に創業した。", "杜氏は高瀬である。"],
            "corpus/rice.md": ["原料米には山田錦を使う。"],
        }
    )
    assert shortest_f32_text(idf(3, 1)) == "0.9808292"
    hits = index.search("杜氏は誰", 10)
    assert [(h.source, h.paragraph, h.rank) for h in hits] == [("corpus/brewery.md", 1, 1)]
    assert shortest_f32_text(hits[0].score) == "2.1578243"


def test_idf_is_evaluated_in_float32_steps() -> None:
    assert shortest_f32_text(idf(1, 1)) == "0.28768212"
    assert idf(1000, 999) > 0.0
    # ln(1 + (N − df + 0.5) / (df + 0.5)) for a term in no slot at all is still finite.
    assert idf(10, 0) == _round(math.log(_round(_round(10.5 / 0.5) + 1.0)))


def test_average_length_is_at_least_one_and_counts_termless_slots() -> None:
    # Σ len = 1 over 4 slots → avgdl = max(0.25, 1.0) = 1.0.
    corpus = [["酒"], ["。"], ["、"], [""]]
    index = _index({"a.md": ["酒", "。", "、", ""]})
    assert index.slot_count == 4
    (hit,) = index.search("酒", 5)
    assert hit.score == reference_score("酒", corpus[0], corpus)
    # Term-less slots still count in N: idf(4, 1), not idf(1, 1).
    assert hit.score != _index({"a.md": ["酒"]}).search("酒", 5)[0].score


def test_scores_follow_the_reference_formula() -> None:
    corpus = {
        "a.md": ["青嶺酒造は酒造である。酒造", "sake AppState 酒造"],
        "b.md": ["酒造りの杜氏", "app state"],
        "c.md": ["無関係な段落"],
    }
    slots = [[p] for paragraphs in corpus.values() for p in paragraphs]
    index = _index(corpus)
    for query in ("酒造", "青嶺酒造の杜氏", "app sake 酒造", "AppState"):
        for hit in index.search(query, 5):
            slot = [corpus[hit.source][hit.paragraph]]
            assert hit.score == reference_score(query, slot, slots), (query, hit)


def test_doc2query_questions_add_terms_to_their_slot() -> None:
    index = Bm25Index()
    index.set_source("a.md", ["青嶺酒造", "無関係"], {1: ["杜氏は誰", "創業はいつ"], 7: ["範囲外"]})
    corpus = [["青嶺酒造"], ["無関係", "杜氏は誰", "創業はいつ"]]
    (hit,) = index.search("杜氏", 5)
    assert (hit.source, hit.paragraph) == ("a.md", 1)
    assert hit.score == reference_score("杜氏", corpus[1], corpus)
    assert index.search("範囲外", 5) == []


def test_every_slot_with_a_query_term_is_a_hit_ranked_by_score() -> None:
    corpus = {"a.md": ["酒造", "酒造 酒造 酒造", "米"], "b.md": ["酒造について長い長い長い段落"]}
    slots = [[p] for paragraphs in corpus.values() for p in paragraphs]
    hits = _index(corpus).search("酒造", 5)
    assert [(h.source, h.paragraph) for h in hits] == [("a.md", 1), ("a.md", 0), ("b.md", 0)]
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].score > hits[1].score > hits[2].score
    for hit in hits:
        assert hit.score == reference_score("酒造", [corpus[hit.source][hit.paragraph]], slots)


def test_ties_order_by_source_bytes_then_paragraph() -> None:
    same = ["酒造"] * 2
    index = _index({"b.md": same, "a.md": same, "Z.md": same, "é.md": same, "z.md": same})
    hits = index.search("酒造", 5)
    assert [(h.source, h.paragraph) for h in hits] == [
        ("Z.md", 0),
        ("Z.md", 1),
        ("a.md", 0),
        ("a.md", 1),
        ("b.md", 0),
        ("b.md", 1),
        ("z.md", 0),
        ("z.md", 1),
        ("é.md", 0),
        ("é.md", 1),
    ]
    assert len({h.score for h in hits}) == 1


@pytest.mark.parametrize(("limit", "expected"), [(1, 50), (12, 50), (13, 52), (20, 60)])
def test_pool_is_max_of_four_times_limit_and_50(limit: int, expected: int) -> None:
    # 60 slots tie on score, so the pool boundary is settled by source then paragraph.
    index = _index({f"s{number:02d}.md": ["酒造"] * 3 for number in range(20)})
    hits = index.search("酒造", limit)
    assert len(hits) == min(expected, 60)
    assert [(h.source, h.paragraph) for h in hits] == sorted((h.source, h.paragraph) for h in hits)
    assert hits[-1].rank == len(hits)


def test_limit_zero_and_termless_queries_answer_nothing() -> None:
    index = _index({"a.md": ["酒造"]})
    assert index.search("酒造", 0) == []
    assert index.search("。、！", 5) == []
    assert Bm25Index().search("酒造", 5) == []


def test_filter_serves_eligible_sources_without_narrowing_statistics() -> None:
    corpus = {"a.md": ["酒造の話", "米"], "b.md": ["酒造", "酒造と 米"], "c.md": ["水"]}
    index = _index(corpus)
    unfiltered = {(h.source, h.paragraph): h.score for h in index.search("酒造 米", 5)}
    filtered = index.search("酒造 米", 5, eligible=lambda source: source == "b.md")
    assert [(h.source, h.paragraph, h.rank) for h in filtered] == [("b.md", 1, 1), ("b.md", 0, 2)]
    for hit in filtered:
        assert hit.score == unfiltered[(hit.source, hit.paragraph)]
    assert index.search("酒造", 5, eligible=lambda source: False) == []


def test_replacing_and_removing_sources_update_statistics() -> None:
    index = _index({"a.md": ["酒造", "米"], "b.md": ["酒造の米"]})
    index.set_source("a.md", ["水", "水", "酒造"])
    assert index.slot_count == 4
    fresh = _index({"b.md": ["酒造の米"], "a.md": ["水", "水", "酒造"]})
    assert index.search("酒造 米", 5) == fresh.search("酒造 米", 5)
    index.remove_source("a.md")
    index.remove_source("unknown.md")
    assert index.slot_count == 1
    assert index.search("酒造 米", 5) == _index({"b.md": ["酒造の米"]}).search("酒造 米", 5)
    assert index.search("水", 5) == []


_PARAGRAPH = st.text(alphabet=st.sampled_from(list("酒造米水の は。ab")), max_size=8)
_OPERATION = st.tuples(
    st.sampled_from(["a.md", "b.md", "c.md"]), st.none() | st.lists(_PARAGRAPH, max_size=4)
)


@settings(max_examples=60)
@given(st.lists(_OPERATION, max_size=8), st.sampled_from(["酒造", "米 水", "a b の", "造米は"]))
def test_incremental_updates_equal_a_fresh_build(
    operations: list[tuple[str, list[str] | None]], query: str
) -> None:
    index = Bm25Index()
    final: dict[str, list[str]] = {}
    for source, paragraphs in operations:
        if paragraphs is None:
            index.remove_source(source)
            final.pop(source, None)
        else:
            index.set_source(source, paragraphs)
            final[source] = paragraphs
    fresh = _index(final)
    assert index.slot_count == fresh.slot_count
    assert index.search(query, 3) == fresh.search(query, 3)
    corpus = [[p] for paragraphs in final.values() for p in paragraphs]
    wanted = set(query_terms(query))
    expected = sorted(
        (-reference_score(query, [text], corpus), source, number)
        for source, paragraphs in final.items()
        for number, text in enumerate(paragraphs)
        if wanted & set(document_terms(text))
    )[:50]
    assert [(-h.score, h.source, h.paragraph) for h in index.search(query, 3)] == expected


_WORDS = ["酒造", "酒造", "酒造", "の", "米", "水の", "青嶺", "杜氏は", "ab", "cd", "ab ab"]
_SKEWED_PARAGRAPH = st.lists(st.sampled_from(_WORDS), max_size=6).map("".join)


@settings(max_examples=120)
@given(
    st.lists(st.lists(_SKEWED_PARAGRAPH, min_size=1, max_size=8), min_size=1, max_size=6),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5).map(" ".join),
    st.integers(min_value=1, max_value=5),
    st.booleans(),
)
def test_pruned_lane_equals_the_exhaustive_ranking(
    sources: list[list[str]], query: str, pool: int, filtered: bool
) -> None:
    # A small pool makes the MaxScore pruning kick in on these small corpora.
    corpus = {f"s{number}.md": paragraphs for number, paragraphs in enumerate(sources)}
    index = _index(corpus)
    eligible = (lambda source: source != "s0.md") if filtered else None
    with patch.object(bm25, "pool_size", lambda limit: pool):
        hits = index.search(query, 1, eligible)
    slots = [[p] for paragraphs in corpus.values() for p in paragraphs]
    wanted = set(query_terms(query))
    expected = sorted(
        (-reference_score(query, [text], slots), source, number)
        for source, paragraphs in corpus.items()
        if eligible is None or eligible(source)
        for number, text in enumerate(paragraphs)
        if wanted & set(document_terms(text))
    )[:pool]
    assert [(-h.score, h.source, h.paragraph) for h in hits] == expected


def _reference_lane(
    query: str, corpus: dict[str, list[str]], pool: int
) -> list[tuple[float, str, int]]:
    """Every slot's §3.9 score computed plainly (terms tokenized once), ranked and cut."""
    slots = [(s, n, document_terms(t)) for s, ps in corpus.items() for n, t in enumerate(ps)]
    avgdl = _round(max(sum(len(terms) for _, _, terms in slots) / len(slots), 1.0))
    k1 = _round(1.2)
    ranked = []
    for source, number, terms in slots:
        score, found = 0.0, False
        for term in query_terms(query):
            tf = terms.count(term)
            if tf:
                found = True
                df = sum(term in other for _, _, other in slots)
                ratio = _round(_round(len(slots) - df + 0.5) / _round(df + 0.5))
                term_idf = _round(math.log(_round(ratio + 1.0)))
                numerator = _round(term_idf * _round(tf * _round(k1 + 1.0)))
                norm = _round(k1 * _round(0.25 + _round(_round(0.75 * len(terms)) / avgdl)))
                score = _round(score + _round(numerator / _round(tf + norm)))
        if found:
            ranked.append((-score, source, number))
    return sorted(ranked)[:pool]


def test_pruned_lane_on_a_zipf_like_corpus() -> None:
    rng = random.Random(11)
    words = [
        "".join(rng.choices("酒造米水青嶺杜氏高瀬蔵元の", k=rng.randint(1, 3))) for _ in range(60)
    ]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    corpus = {
        f"doc{number:03d}.md": [
            "".join(rng.choices(words, weights, k=rng.randint(1, 12))) for _ in range(8)
        ]
        for number in range(50)
    }
    index = _index(corpus)
    for _ in range(25):
        query = "".join(rng.choices(words, weights, k=rng.randint(1, 6)))
        for pool in (3, 10):
            with patch.object(bm25, "pool_size", lambda limit, pool=pool: pool):
                hits = index.search(query, 1)
            expected = _reference_lane(query, corpus, pool)
            assert [(-h.score, h.source, h.paragraph) for h in hits] == expected, query
