"""The two metric value shapes and how they are computed: ``distribution`` and ``ratio``.

Specification: ``evaluate-run.md`` §6.1, ``thresholds-and-compare.md`` Appendix N.4.
"""

import math
from collections.abc import Callable, Iterable
from typing import TypeVar

from pytest_taguru.artifact.evaluation import Distribution, Ratio

Member = TypeVar("Member")


def _total_order(value: float) -> tuple[float, float]:
    # IEEE total order for finite values: -0.0 sorts before 0.0.
    return value, math.copysign(1.0, value)


def distribution(samples: Iterable[float]) -> Distribution:
    """Summarize per-case samples (§6.1, Appendix N.4).

    Non-finite samples are dropped; the rest sorted ascending (``s₁ ≤ … ≤ sₙ``).
    ``sum = (((−0.0 + s₁) + s₂) + … + sₙ)``, ``mean = sum / n``, ``min = s₁``, ``max = sₙ``,
    ``pXX = s_i`` with ``i = clamp(⌈XX·n / 100⌉, 1, n)`` in integer arithmetic (nearest rank,
    never interpolated). Every statistic is a double; all are ``None`` when ``n = 0``.
    """
    ordered = sorted((float(s) for s in samples if math.isfinite(s)), key=_total_order)
    count = len(ordered)
    if count == 0:
        return Distribution(n=0)
    total = -0.0
    for sample in ordered:
        total += sample

    def nearest_rank(percent: int) -> float:
        rank = -(-percent * count // 100)
        return ordered[min(max(rank, 1), count) - 1]

    return Distribution(
        n=count,
        min=ordered[0],
        p50=nearest_rank(50),
        p90=nearest_rank(90),
        p99=nearest_rank(99),
        max=ordered[-1],
        mean=total / count,
        sum=total,
    )


def ratio(numerator: int, n: int) -> Ratio:
    """``value = numerator / n`` over a run-level population of size ``n`` (§6.1).

    With ``n = 0``: ``{value: null, n: 0, numerator: null}``.
    """
    if n == 0:
        return Ratio(value=None, n=0, numerator=None)
    return Ratio(value=numerator / n, n=n, numerator=numerator)


def share(population: Iterable[Member], counted: Callable[[Member], bool]) -> tuple[int, int]:
    """``(numerator, n)`` of a ratio: the members ``counted``, and the population's size."""
    members = list(population)
    return sum(1 for member in members if counted(member)), len(members)


def byte_order(names: Iterable[str]) -> list[str]:
    """Names sorted by their UTF-8 bytes, the writer's key order (§7.1)."""
    return sorted(names, key=lambda name: name.encode("utf-8"))
