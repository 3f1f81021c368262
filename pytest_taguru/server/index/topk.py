"""Top-k selection for the BM25 lane: the k-th largest score and the best slots in lane order.

Deep lane lists (``limit`` 1000 keeps 4,000 slots out of tens of thousands of candidates) make
``heapq.nlargest``'s per-item Python loop the bottleneck, so both helpers lean on C-level
passes: a sorted sample picks a pivot, one comprehension keeps what reaches it, and only
that remainder is sorted; lane order is three stable sorts keyed by C-level lookups.
"""

import math
from collections.abc import Callable, Mapping, Sequence

_SAMPLE = 512  # values sampled for the pivot
_SMALL = 4096  # below this many values a plain sort is as cheap as sampling


def kth_largest(items: list[float], k: int) -> float:
    """The ``k``-th largest of ``items`` (1-based, duplicates counted), exactly.

    ``1 ≤ k ≤ len(values)``; the values are not NaN.
    """
    if not 1 <= k <= len(items):
        raise ValueError(f"k={k} is not within 1..{len(items)}")
    if len(items) <= _SMALL or 4 * k >= len(items):
        return sorted(items, reverse=True)[k - 1]
    step = max(1, len(items) // _SAMPLE)
    sample = sorted(items[::step], reverse=True)
    # About `expected` sample values lie among the k largest (a Poisson count): a pivot three
    # standard deviations further down is below the k-th largest but for a rare fallback.
    expected = k * len(sample) / len(items)
    position = min(len(sample) - 1, math.ceil(expected + 3 * math.sqrt(expected)) + 2)
    pivot = sample[position]
    reaching = [value for value in items if value >= pivot]
    if len(reaching) < k:  # the sample misled us: fall back to the exact sort
        return sorted(items, reverse=True)[k - 1]
    reaching.sort(reverse=True)
    return reaching[k - 1]


def best_slots(
    scores: Mapping[int, float], count: int, source_of: Sequence[str] | Callable[[int], str]
) -> list[int]:
    """The ``count`` best slots of ``scores`` in lane order: score descending, then source
    ascending (code point order), then slot ascending.

    Slot ids grow with the paragraph number inside a source, so slot order is paragraph
    order there. Every slot reaching the ``count``-th best score takes part in the sort
    (ties at the edge are settled by source and paragraph).
    """
    if count <= 0 or not scores:
        return []
    if len(scores) > count:
        floor = kth_largest(list(scores.values()), count)
        chosen = [slot for slot, score in scores.items() if score >= floor]
    else:
        chosen = list(scores)
    source = source_of if callable(source_of) else source_of.__getitem__
    chosen.sort()
    chosen.sort(key=source)
    chosen.sort(key=scores.__getitem__, reverse=True)  # stable: reverse keeps equal keys' order
    return chosen[:count]
