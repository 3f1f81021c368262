"""Top-k selection of the BM25 lane: the sampled k-th largest and lane order by stable sorts,
held to a plain full sort."""

import random
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.server.index import topk
from pytest_taguru.server.index.topk import best_slots, kth_largest

# Few distinct values, so ties are everywhere (as with BM25 scores of one shape).
_SCORES = st.sampled_from([0.0, 0.5, 1.25, 1.2500001, 3.0, 7.75, 1e-30, 2e30])
_VALUES = st.lists(_SCORES | st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=300)


@settings(max_examples=300)
@given(_VALUES, st.data())
def test_kth_largest_equals_the_full_sort(values: list[float], data: st.DataObject) -> None:
    k = data.draw(st.integers(1, len(values)))
    # A tiny "small" bound sends these lists through the sampling path and its fallback.
    with patch.object(topk, "_SMALL", 4):
        assert kth_largest(list(values), k) == sorted(values, reverse=True)[k - 1]
    assert kth_largest(list(values), k) == sorted(values, reverse=True)[k - 1]


@pytest.mark.parametrize("shape", ["distinct", "few values", "ascending", "descending"])
@pytest.mark.parametrize("k", [1, 50, 1000, 4000, 7999])
def test_kth_largest_on_lists_large_enough_to_sample(shape: str, k: int) -> None:
    rng = random.Random(k)
    values = [rng.random() * 30 for _ in range(30_000)]
    if shape == "few values":
        values = [round(value) / 4 for value in values]
    elif shape == "ascending":
        values.sort()
    elif shape == "descending":
        values.sort(reverse=True)
    assert kth_largest(values, k) == sorted(values, reverse=True)[k - 1]


@pytest.mark.parametrize("k", [0, 4])
def test_kth_largest_refuses_a_rank_outside_the_list(k: int) -> None:
    with pytest.raises(ValueError, match=r"not within 1\.\.3"):
        kth_largest([1.0, 2.0, 3.0], k)


_SOURCES = st.sampled_from(["a.md", "b.md", "B.md", "é.md", "z.md", "ab.md"])


@settings(max_examples=300)
@given(
    st.dictionaries(st.integers(0, 10_000), st.tuples(_SCORES, _SOURCES), max_size=120),
    st.integers(0, 130),
)
def test_best_slots_is_the_full_sort_cut(
    entries: dict[int, tuple[float, str]], count: int
) -> None:
    scores = {slot: score for slot, (score, _) in entries.items()}
    source_of = {slot: source for slot, (_, source) in entries.items()}
    expected = sorted(scores, key=lambda slot: (-scores[slot], source_of[slot], slot))[:count]
    assert best_slots(scores, count, source_of.__getitem__) == expected
    with patch.object(topk, "_SMALL", 4):
        assert best_slots(scores, count, source_of.__getitem__) == expected


def test_best_slots_reads_sources_from_a_sequence() -> None:
    source_of = ["b.md", "a.md", "a.md", "c.md"]
    assert best_slots({0: 1.0, 1: 1.0, 2: 1.0, 3: 2.0}, 3, source_of) == [3, 1, 2]
    assert best_slots({}, 3, source_of) == []
    assert best_slots({0: 1.0}, 0, source_of) == []
