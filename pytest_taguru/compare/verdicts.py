"""The noise-aware gate: paired statistics per (metric, slice), Holm's correction across them,
and a verdict for each — ``regressed``, ``inconclusive``, ``unchanged`` or ``improved``.

For each slice (the whole run is the slice ``None``, shown as ``all``; more come as plain case-id
sets) and each metric of ``registry.PAIRED_METRICS`` that some paired case has a value for,
``statistics.paired_tests`` gives the mean oriented delta ``x̄`` (positive = better), its 95 %
bootstrap interval ``[lo, hi]`` and the one-sided sign-flip p. The *family* is every (metric,
slice) with at least ``MIN_PAIRS`` pairs — exactly the tests that can fail the gate; Holm
adjusts their one-sided p together. With
significance level α and tolerated drop δ ≥ 0 (per metric, ``significance.Tolerances``), the
drop being ``d = −x̄``, the verdict is the first that applies:

1. ``inconclusive`` — fewer than ``MIN_PAIRS`` pairs;
2. ``regressed`` — Holm-adjusted p < α, and ``d ≥ δ`` and ``d > 0``;
3. ``inconclusive`` — the interval reaches below −δ (``lo < −δ``): a drop of δ or more cannot
   be ruled out (it contains −δ), or it lies wholly below −δ but the corrected test does not
   confirm it;
4. ``inconclusive`` — a case of the slice errored in HEAD (and not in BASE) and was left out:
   the run cannot pass on cases that newly failed;
5. ``improved`` — the interval lies above zero (``lo > 0``);
6. ``unchanged`` — flagged ``non_inferior`` when ``lo > −δ`` (with δ = 0 that is the same as
   improved, so a zero tolerance never shows non-inferiority short of an improvement).

An inconclusive verdict carries the *minimum detectable effect* at its n: the drop the
one-sided test would detect with 80 % power at Holm's strictest level ``α/k`` (``k`` the family
size), ``MDE = (z₁₋α/ₖ + z₀.₈) · s / √n`` with ``s`` the deltas' standard deviation (normal
approximation; ``None`` below two pairs or when every delta is equal).
"""

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from pytest_taguru.artifact.view import LoadedRun
from pytest_taguru.compare.pairing import Exclusions, PairedCases, pair_cases
from pytest_taguru.compare.significance import DEFAULT_ALPHA, NO_TOLERANCE, Tolerances
from pytest_taguru.compare.slices import slice_members
from pytest_taguru.compare.statistics import RESAMPLES, PairedTest, holm, paired_tests
from pytest_taguru.score.registry import METRICS_BY_NAME

Verdict = Literal["regressed", "inconclusive", "unchanged", "improved"]
VERDICTS: tuple[Verdict, ...] = ("regressed", "inconclusive", "unchanged", "improved")
MIN_PAIRS = 10
POWER = 0.8
WHOLE_RUN = "all"
"""How the whole run is named where a slice name is shown."""


@dataclass(frozen=True)
class MetricVerdict:
    """One (metric, slice) test and its verdict. Numbers in the metric's own direction
    (``head − base``), except ``p_*`` and ``mde`` (a drop, positive)."""

    metric: str
    slice: str | None
    test: PairedTest
    tolerance: float
    verdict: Verdict
    p_holm: float | None = None
    """The Holm-adjusted one-sided p (``None``: not in the family)."""
    non_inferior: bool = False
    reason: str | None = None
    """Why the verdict is inconclusive."""
    mde: float | None = None

    @property
    def orientation(self) -> float:
        return 1.0 if METRICS_BY_NAME[self.metric].better == "higher" else -1.0

    @property
    def n(self) -> int:
        return self.test.n

    @property
    def mean_delta(self) -> float:
        return self.test.mean * self.orientation

    @property
    def interval(self) -> tuple[float, float]:
        """The 95 % interval of ``head − base``."""
        ends = sorted((self.test.low * self.orientation, self.test.high * self.orientation))
        return ends[0], ends[1]

    @property
    def slice_name(self) -> str:
        return WHOLE_RUN if self.slice is None else self.slice


@dataclass(frozen=True)
class StatisticsReport:
    """Every verdict (slices in the given order, the whole run first; metrics in registry
    order), the whole run's exclusions, and what the numbers rest on."""

    alpha: float
    tolerances: Tolerances
    verdicts: tuple[MetricVerdict, ...]
    paired_cases: int
    exclusions: Exclusions
    family: int
    notes: tuple[str, ...] = ()
    resamples: int = RESAMPLES

    def with_verdict(self, verdict: Verdict) -> list[MetricVerdict]:
        return [item for item in self.verdicts if item.verdict == verdict]

    def counts_text(self) -> str:
        """``1 regressed, 2 unchanged``; ``nothing to test`` without verdicts."""
        counted = [(verdict, len(self.with_verdict(verdict))) for verdict in VERDICTS]
        return ", ".join(f"{n} {verdict}" for verdict, n in counted if n) or "nothing to test"


def minimum_detectable_effect(test: PairedTest, alpha: float, family: int) -> float | None:
    if test.n < 2 or test.sd == 0.0:
        return None
    normal = NormalDist()
    z = normal.inv_cdf(1.0 - alpha / max(family, 1)) + normal.inv_cdf(POWER)
    return z * test.sd / math.sqrt(test.n)


def _verdict(
    test: PairedTest,
    tolerance: float,
    p_holm: float | None,
    alpha: float,
    errored_in_head: int,
) -> tuple[Verdict, str | None, bool]:
    """The verdict, the reason of an inconclusive one, and the non-inferiority flag."""
    if test.n < MIN_PAIRS:
        return "inconclusive", f"fewer than {MIN_PAIRS} pairs", False
    drop = -test.mean
    if p_holm is not None and p_holm < alpha and drop >= tolerance and drop > 0:
        return "regressed", None, False
    if test.low < -tolerance:
        if test.high < -tolerance:
            return "inconclusive", "the drop is not confirmed after the Holm correction", False
        bound = f"−{tolerance:g}" if tolerance else "0"
        return "inconclusive", f"the interval contains {bound}", False
    if errored_in_head:
        return "inconclusive", f"{errored_in_head} case(s) errored in HEAD", test.low > -tolerance
    if test.low > 0:
        return "improved", None, True
    return "unchanged", None, test.low > -tolerance


def judge(
    paired: PairedCases,
    *,
    alpha: float = DEFAULT_ALPHA,
    tolerances: Tolerances | None = None,
    slices: Mapping[str, Collection[str]] | None = None,
) -> StatisticsReport:
    """The verdict of every (metric, slice); ``slices``: slice name → its case ids."""
    tolerances = tolerances or NO_TOLERANCE
    scopes: list[tuple[str | None, PairedCases]] = [(None, paired)]
    scopes += [(name, paired.within(members)) for name, members in (slices or {}).items()]
    tested: list[tuple[str | None, str, PairedTest, int]] = []
    for name, scope in scopes:
        results = paired_tests(
            scope.oriented(), names=scope.metrics, stream=name if name is not None else ""
        )
        errored = len(scope.exclusions.errored_in_head)
        tested += [
            (name, metric, test, errored)
            for metric, test in zip(scope.metrics, results, strict=True)
            if test is not None  # no paired case has the metric: nothing to test
        ]
    family = {
        index: test.p_worse for index, (_, _, test, _) in enumerate(tested) if test.n >= MIN_PAIRS
    }
    p_holm = dict(zip(family, holm(list(family.values())), strict=True))
    verdicts = []
    for index, (name, metric, test, errored) in enumerate(tested):
        tolerance = tolerances.of(metric)
        verdict, reason, non_inferior = _verdict(test, tolerance, p_holm.get(index), alpha, errored)
        mde = None
        if verdict == "inconclusive":
            mde = minimum_detectable_effect(test, alpha, len(family))
        verdicts.append(
            MetricVerdict(
                metric, name, test, tolerance, verdict, p_holm.get(index), non_inferior, reason, mde
            )
        )
    notes = tuple(
        f"{side} carries no expectation hashes: relabelled cases cannot be told apart and are "
        "paired by case_id"
        for side in paired.unhashed
    )
    return StatisticsReport(
        alpha,
        tolerances,
        tuple(verdicts),
        len(paired.case_ids),
        paired.exclusions,
        len(family),
        notes,
    )


def paired_statistics(
    base: LoadedRun,
    head: LoadedRun,
    *,
    alpha: float = DEFAULT_ALPHA,
    tolerances: Tolerances | None = None,
    slices: Mapping[str, Collection[str]] | None = None,
) -> StatisticsReport:
    """Pair the runs' cases (``pairing``) and judge every (metric, slice); ``slices`` default
    to those HEAD carries (``--taguru-slices``: judged on the run being gated)."""
    if slices is None:
        slices = slice_members(head)
    return judge(pair_cases(base, head), alpha=alpha, tolerances=tolerances, slices=slices)
