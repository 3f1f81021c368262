"""Label coverage: how much of a case's ranking its labels judge, and how far recall@k, MRR and
nDCG could move once the rest is labelled. pytest-taguru's own, outside taguru's 31 metrics.

Pure arithmetic over plain data: which hits are judged is decided by ``score.case`` (its one
source-matching rule, ``satisfies``), which hands over a :class:`Judgements`.

Terms, for one case whose passage lane searched (``r`` is a 0-based rank, ``D(r) = 1 /
log2(r + 2)`` the nDCG discount):

* a hit is **judged** when some ``expected_sources`` entry, of any relevance (0 included),
  is satisfied by it — its source, or one of its paragraphs when the entry names paragraphs;
  otherwise **unjudged**;
* a **labelling** gives every distinct unjudged locator a relevance 0–3 and adds it as an
  entry of its own, ``{"source": s, "paragraphs": [p], "relevance": g}`` — exactly what
  ``taguru-evaluate label-merge`` writes. Such an entry is satisfied first at the locator's
  first rank ``u``; with ``g ≥ 1`` it joins the graded set ``E``;
* a metric's **bounds** are its least (``low``) and greatest (``high``) value over every
  labelling. The official value (nothing labelled, unjudged hits counting as non-relevant,
  as taguru scores them) always lies between them.
"""

import functools
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

from pytest_taguru.artifact.case import LabelCoverage, MetricBounds, Recall

MAX_GRADE = 3
"""The highest relevance a label can give (eval.jsonl's ``0..=3``)."""

_DINKELBACH_ROUNDS = 64
"""A safety cap: each round strictly raises the ratio, and one or two reach the maximum."""


def discount(rank: int) -> float:
    """nDCG's discount of a 0-based rank: ``1 / log2(rank + 2)``."""
    return 1.0 / math.log2(rank + 2)


@functools.cache
def _prefixes(size: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``D(r)`` for ``r < size`` and ``P(t) = Σ_{j<t} D(j)`` for ``t ≤ size``; ``size`` is a
    power of two, so a run computes a handful, shared by every case (and thread)."""
    discounts = tuple(discount(rank) for rank in range(size))
    ideal = [0.0]
    for value in discounts:
        ideal.append(ideal[-1] + value)
    return discounts, tuple(ideal)


class Unjudged(NamedTuple):
    """An unjudged locator at its first rank among the hits (1-based, as the artifact has it)."""

    rank: int
    source: str
    paragraph: int


@dataclass(frozen=True)
class Judgements:
    """What the labels say about one case's searched hits.

    ``hits`` counts the hits scored (the top k), ``judged`` those some entry satisfies.
    ``unjudged`` holds each unjudged locator once, at its first rank, in rank order.
    ``graded`` is ``(relevance, first rank or None)`` of every relevance-≥1 entry, in declared
    order.
    """

    hits: int
    judged: int
    unjudged: tuple[Unjudged, ...]
    graded: tuple[tuple[int, int | None], ...]

    @property
    def judged_at_k(self) -> float | None:
        """``judged / hits``; ``None`` without hits.

        Unlike ir_measures' ``Judged@k`` (which divides by the cutoff ``k``), the share is of
        the hits served, so a case that asked for ten and got three fully labelled ones is 1.

        >>> Judgements(3, 2, (), ()).judged_at_k
        0.6666666666666666
        """
        return self.judged / self.hits if self.hits else None


# --- the ideal and the gains, as prefix sums ---------------------------------------------------


@dataclass(frozen=True)
class _Ranking:
    """nDCG of a case under a labelling, in closed form.

    With ``n₃, n₂`` the graded entries of relevance 3 and 2 and ``m = |E|``, ``P(t) = Σ_{j<t}
    D(j)`` and ``Q(t) = Σ_{i<t} D(u_i)`` over the unjudged ranks ``u₀ < u₁ < …``, a labelling
    that gives grade 3 to the first ``a`` unjudged hits, grade ≥ 2 to the first ``b`` and
    grade ≥ 1 to the first ``c`` (``a ≤ b ≤ c``) has

    ``nDCG = min(1, (A + Q(a) + Q(b) + Q(c)) / (P(n₃ + a) + P(n₃ + n₂ + b) + P(m + c)))``

    where ``A = Σ_{e matched} rel(e)·D(first(e))`` is the official DCG: grades 3, 2 and 1
    stack, so a grade-``g`` item adds its discount ``g`` times. For a given count of each
    grade the best-ranked hits taking the highest grades maximize the gain (rearrangement),
    and the worst-ranked ones minimize it.
    """

    gain: float
    threes: int
    twos_and_threes: int
    graded: int
    ideal: tuple[float, ...]
    unjudged: list[float]

    @classmethod
    def of(cls, judgements: Judgements) -> "_Ranking":
        relevances = [relevance for relevance, _ in judgements.graded]
        depth = max(len(relevances) + len(judgements.unjudged), judgements.hits)
        discounts, ideal = _prefixes(1 << depth.bit_length())
        gain = sum(
            relevance * discounts[rank] for relevance, rank in judgements.graded if rank is not None
        )
        unjudged = [0.0]
        for hit in judgements.unjudged:
            unjudged.append(unjudged[-1] + discounts[hit.rank - 1])
        threes = relevances.count(MAX_GRADE)
        return cls(
            gain=gain,
            threes=threes,
            twos_and_threes=threes + relevances.count(2),
            graded=len(relevances),
            ideal=ideal,
            unjudged=unjudged,
        )

    def ratio(self, a: int, b: int, c: int) -> float:
        """nDCG (uncapped) with grade 3 on the first ``a`` unjudged hits, ≥ 2 on the first
        ``b``, ≥ 1 on the first ``c``."""
        q, p = self.unjudged, self.ideal
        gains = self.gain + q[a] + q[b] + q[c]
        return gains / (p[self.threes + a] + p[self.twos_and_threes + b] + p[self.graded + c])

    def all_threes(self) -> tuple[list[float], list[float]]:
        """nDCG (uncapped) with grade 3 on the ``k`` best-ranked and on the ``k`` worst-ranked
        unjudged hits, the others 0, for ``k = 0 … n``."""
        q, p = self.unjudged, self.ideal
        threes, twos, graded, gain = self.threes, self.twos_and_threes, self.graded, self.gain
        n = len(q) - 1
        ideals = [p[threes + k] + p[twos + k] + p[graded + k] for k in range(n + 1)]
        best = [(gain + MAX_GRADE * q[k]) / ideals[k] for k in range(n + 1)]
        worst = [(gain + MAX_GRADE * (q[n] - q[n - k])) / ideals[k] for k in range(n + 1)]
        return best, worst

    def best_counts(self, ratio: float) -> tuple[int, int, int]:
        """The ``a ≤ b ≤ c`` maximizing ``gains − ratio · ideal``: the three terms are
        separable, so one pass keeps the best ``a`` up to ``x`` and the best ``(a, b)`` up to
        ``x`` while trying ``c = x``."""
        q, p = self.unjudged, self.ideal
        threes, twos, graded = self.threes, self.twos_and_threes, self.graded
        best_a = best_ab = best = -math.inf
        a = 0
        ab = abc = (0, 0, 0)
        for x, gained in enumerate(q):
            value = gained - ratio * p[threes + x]
            if value > best_a:
                best_a, a = value, x
            value = gained - ratio * p[twos + x] + best_a
            if value > best_ab:
                best_ab, ab = value, (a, x, x)
            value = gained - ratio * p[graded + x] + best_ab
            if value > best:
                best, abc = value, (ab[0], ab[1], x)
        return abc


# --- bounds ------------------------------------------------------------------------------------


def recall_bounds(judgements: Judgements, official: Recall) -> MetricBounds:
    """recall@k over every labelling: ``low`` = the official ``matched / m``, ``high = (matched
    + n) / (m + n)`` with ``n`` unjudged locators, all labelled relevant.

    A relevant label adds one entry that is matched, so ``(matched + x) / (m + x)`` only grows
    with the ``x`` relevant ones. Worked example: ``m = 2``, ``matched = 1``, two unjudged
    locators → low ``1/2``, high ``3/4``.
    """
    count = len(judgements.unjudged)
    high = (official.matched + count) / (official.expected_total + count)
    return MetricBounds(low=official.recall_at_k, high=max(high, official.recall_at_k))


def mrr_bounds(judgements: Judgements, official: Recall) -> MetricBounds:
    """MRR over every labelling: ``low`` = the official ``1 / (r* + 1)`` (0 without a match),
    ``high = 1 / (min(r*, u₀) + 1)`` with ``u₀`` the first unjudged rank labelled relevant.

    Labels only add candidates for the first relevant rank. Worked example: the first
    expected source at rank 2 (0-based), an unjudged hit at rank 0 → low ``1/3``, high ``1``.
    """
    if not judgements.unjudged:
        return MetricBounds(low=official.mrr, high=official.mrr)
    first_unjudged = judgements.unjudged[0].rank - 1
    matched = [rank for _, rank in judgements.graded if rank is not None]
    first = min([first_unjudged, *matched])
    return MetricBounds(low=official.mrr, high=max(1.0 / (first + 1), official.mrr))


def ndcg_bounds(judgements: Judgements, official: Recall) -> MetricBounds:
    """nDCG over every labelling (``_Ranking``'s closed form); it is not monotone in the labels:
    a relevant hit ranked low raises the ideal more than the gain.

    * ``low``: nDCG is a linear gain over a convex ideal (a maximum of linear functions of the
      grades), so its superlevel sets are convex and its least value over the box ``[0, 3]ⁿ``
      is at a corner — every unjudged hit graded 0 or 3. For ``k`` hits graded 3 the worst
      ranked ``k`` give the least gain: ``low = min over k of (A + 3·(Q(n) − Q(n − k))) /
      (P(n₃ + k) + P(n₃ + n₂ + k) + P(m + k))``, capped at 1.
    * ``high``: the greatest ``(A + Q(a) + Q(b) + Q(c)) / ideal(a, b, c)`` over ``a ≤ b ≤ c``,
      found exactly by Dinkelbach's iteration: from ``λ`` = the best "grade 3 on the top
      ``k``", take the counts maximizing ``gains − λ·ideal`` (``_Ranking.best_counts``) and
      raise ``λ`` to their ratio until none beats it; capped at 1.

    Worked example: one graded entry of relevance 3 matched at rank 0 (nDCG 1) and one
    unjudged hit at rank 5: graded 3 it gives ``(3 + 3/log2 7) / (3 + 3/log2 3) = 0.8315``,
    so low ``0.8315…``, high ``1``.
    """
    count = len(judgements.unjudged)
    if not count:
        return MetricBounds(low=official.ndcg + 0.0, high=official.ndcg + 0.0)
    ranking = _Ranking.of(judgements)
    best, worst = ranking.all_threes()
    low = min(official.ndcg, *worst[1:])
    # Start from the best "grade 3 on the top k" labelling: often the greatest already.
    ratio = max(best)
    for _ in range(_DINKELBACH_ROUNDS):
        better = ranking.ratio(*ranking.best_counts(ratio))
        if better <= ratio:
            break
        ratio = better
    high = max(official.ndcg, min(ratio, 1.0))
    return MetricBounds(low=min(low, 1.0) + 0.0, high=high + 0.0)  # + 0.0: never -0.0


# --- one label alone: the export queue's priority ----------------------------------------------


def label_swing(judgements: Judgements, official: Recall | None, index: int) -> float:
    """How far labelling the unjudged locator ``judgements.unjudged[index]`` alone (any
    relevance 0–3, the others left unjudged) can move the case's recall@k, MRR and nDCG,
    summed: ``Σ_metric (max_g − min_g)``; the export ranks its queue by it.

    Each metric's move is the gap between its value with that one label relevant and not:
    recall ``(matched+1)/(m+1) − matched/m``, MRR ``max(0, 1/(u+1) − mrr)`` (a rank discount),
    nDCG the spread of ``(A + g·D(u)) / ideal`` over ``g`` (a rank discount again). A case
    without a graded entry has no such metrics yet: one relevant label would give it recall
    1, MRR ``1/(u+1)`` and nDCG ``D(u)``, counted from 0. The run's mean moves by the swing
    over the number of scored cases.

    Worked example: one graded entry of relevance 1 matched at rank 2 (recall 1, MRR 1/3,
    nDCG 1/2), the locator at rank 0: recall moves 0, MRR ``1 − 1/3``, nDCG from 0.5 (grade 0)
    to ``(1/2 + 3) / (3 + 1/log2 3) = 0.9639`` (grade 3) → swing ``0.6667 + 0.4639 = 1.1306``.
    """
    hit = judgements.unjudged[index]
    rank = hit.rank - 1
    if official is None:
        return 1.0 + 1.0 / (rank + 1) + discount(rank)
    recall = (official.matched + 1) / (official.expected_total + 1) - official.recall_at_k
    matched = [first for _, first in judgements.graded if first is not None]
    mrr = max(0.0, 1.0 / (min([rank, *matched]) + 1) - official.mrr)
    ranking = _Ranking.of(Judgements(judgements.hits, judgements.judged, (hit,), judgements.graded))
    values = [official.ndcg]
    for grade in range(1, MAX_GRADE + 1):
        values.append(min(ranking.ratio(int(grade >= 3), int(grade >= 2), 1), 1.0))
    return abs(recall) + mrr + (max(values) - min(values))


# --- the case block's label_coverage -----------------------------------------------------------


def label_coverage_block(judgements: Judgements, official: Recall | None) -> LabelCoverage:
    """The case block's ``label_coverage``: counts, ``judged_at_k``, the unjudged locators
    (1-based ranks) and, when the case has a ``recall`` block, the three metrics' bounds.
    Validated once, from plain data (every case pays for it)."""
    block: dict[str, Any] = {
        "hits": judgements.hits,
        "judged": judgements.judged,
        "judged_at_k": judgements.judged_at_k,
        "unjudged": [
            {"rank": rank, "source": source, "paragraph": paragraph}
            for rank, source, paragraph in judgements.unjudged
        ],
    }
    if official is not None:
        block["recall_at_k"] = recall_bounds(judgements, official)
        block["mrr"] = mrr_bounds(judgements, official)
        block["ndcg"] = ndcg_bounds(judgements, official)
    return LabelCoverage.model_validate(block)
