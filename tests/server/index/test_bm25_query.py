"""The BM25 query side in bulk: contributions a list at a time, exact scores of many slots,
and the served prefix of a lane list (``Bm25Index.best``)."""

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.server.index.bm25 import Bm25Index
from pytest_taguru.server.index.bm25_query import QueryTerm, exact_scores
from pytest_taguru.server.index.bm25_score import (
    K1,
    average_length,
    contribution,
    contributions,
    length_norm,
)
from pytest_taguru.server.index.text import query_terms


def _f32(x: float) -> float:
    value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return value


def _one_step_at_a_time(term_idf: float, tf: int, norm: float) -> float:
    """§3.9's contribution with every step rounded through ``struct`` (the reference)."""
    numerator = _f32(term_idf * _f32(tf * _f32(K1 + 1.0)))
    return _f32(numerator / _f32(tf + norm))


_IDF = st.floats(1e-6, 20.0).map(_f32)
_NORM = st.floats(0.3, 1e4).map(_f32)


@settings(max_examples=300)
@given(_IDF, st.lists(st.tuples(st.integers(1, 2**20), _NORM), min_size=1, max_size=40))
def test_contributions_round_every_step_as_struct_does(
    term_idf: float, pairs: list[tuple[int, float]]
) -> None:
    tfs, norms = [tf for tf, _ in pairs], [norm for _, norm in pairs]
    expected = [_one_step_at_a_time(term_idf, tf, norm) for tf, norm in pairs]
    assert contributions(term_idf, tfs, norms) == expected
    assert [contribution(term_idf, tf, norm) for tf, norm in pairs] == expected


_WORDS = ["酒造", "米", "水の", "青嶺", "杜氏は", "ab", "cd", "ab ab", "の"]
_CORPUS = st.lists(
    st.lists(st.lists(st.sampled_from(_WORDS), max_size=8).map("".join), min_size=1, max_size=6),
    min_size=1,
    max_size=8,
)


def _index(sources: list[list[str]]) -> Bm25Index:
    index = Bm25Index()
    for number, paragraphs in enumerate(sources):
        index.set_source(f"s{number}.md", paragraphs)
    return index


def _query_terms(index: Bm25Index, query: str) -> list[QueryTerm]:
    avgdl = average_length(index._total_length, index.slot_count)
    return [
        QueryTerm(postings, index.slot_count, avgdl, {})
        for postings in map(index._postings.get, query_terms(query))
        if postings is not None
    ]


@settings(max_examples=150)
@given(_CORPUS, st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join), st.data())
def test_bulk_contributions_and_exact_scores_match_one_slot_at_a_time(
    sources: list[list[str]], query: str, data: st.DataObject
) -> None:
    index = _index(sources)
    terms = _query_terms(index, query)
    every_slot = list(range(index.slot_count))
    # A subset of slots, short and long, so both the lookup table and the bisection run.
    slots = sorted(data.draw(st.sets(st.sampled_from(every_slot))))
    for term in terms:
        expected = [term.value_at(slot) or 0.0 for slot in slots]
        assert list(term.contributions(slots)) == expected
    expected_scores = []
    for slot in slots:
        score = 0.0
        for term in terms:
            found = term.value_at(slot)
            if found is not None:
                score = _f32(score + found)
        expected_scores.append(score)
    assert exact_scores(slots, terms) == expected_scores


@settings(max_examples=150)
@given(
    _CORPUS,
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join),
    st.integers(1, 20),
    st.booleans(),
)
def test_best_is_the_prefix_of_the_lane_list(
    sources: list[list[str]], query: str, limit: int, filtered: bool
) -> None:
    index = _index(sources)
    eligible = (lambda source: source != "s0.md") if filtered else None
    lane = index.search(query, limit, eligible)
    assert index.best(query, limit, eligible) == lane[:limit]
    assert index.best(query, 0, eligible) == []


def test_values_of_memoizes_the_norm_of_each_length_it_meets() -> None:
    index = _index([["酒造の米", "米の水", "酒造"]])
    norms: dict[int, float] = {}
    avgdl = average_length(index._total_length, index.slot_count)
    postings = index._postings["酒造"]
    term = QueryTerm(postings, index.slot_count, avgdl, norms)
    term.values_of(postings.shapes)
    lengths = {index._slot_length[slot] for slot in postings.slots}
    assert len(lengths) == 2
    assert norms == {length: length_norm(length, avgdl) for length in lengths}


def test_a_terms_extremes_follow_its_postings_through_writes() -> None:
    index = Bm25Index()
    index.set_source("a.md", ["酒造 酒造 酒造 米 米 米 水"])  # 酒造 three times in 7 terms
    index.set_source("b.md", ["酒造"])
    postings = index._postings["酒造"]
    assert postings.extremes() == (3, 1)
    index.set_source("b.md", ["酒造 米 水 水"])
    assert postings.extremes() == (3, 4)
    index.remove_source("a.md")
    assert postings.extremes() == (1, 4)
