"""What a metric is: :class:`Metric` and the ways its value is drawn from the case blocks
(:class:`PerCase`, :class:`Samples`, :class:`Counted`), and :class:`MetricTally`, which draws
it case by case; the 31 metrics themselves are declared in ``score/registry``."""

from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from pytest_taguru.artifact.case import (
    CaseBlock,
)
from pytest_taguru.artifact.evaluation import Definition, MetricValue
from pytest_taguru.artifact.view import CaseView
from pytest_taguru.score.populations import (
    RunCases,
)
from pytest_taguru.score.shapes import distribution, ratio

Unit = Literal["ms", "ratio", "source", "item", "byte", "token"]
Statistic = Literal["distribution", "ratio"]
Better = Literal["higher", "lower"]
HIGHER: Better = "higher"
LOWER: Better = "lower"


@dataclass(frozen=True)
class PerCase:
    """A distribution of each case's own value, read at ``path`` (absent or null: no value).

    The path is the same in a case block and in compare's case view (A.3.2, B.4); ``compared``
    says whether ``compare`` classifies cases on it.
    """

    path: tuple[str, ...]
    compared: bool = True


@dataclass(frozen=True)
class Samples:
    """A distribution of samples drawn from the whole run (several, or none, per case)."""

    draw: Callable[[RunCases], Iterable[float]]


@dataclass(frozen=True)
class Counted:
    """A ratio over a run-level population: ``count`` gives its ``(numerator, n)``."""

    count: Callable[[RunCases], tuple[int, int]]


@dataclass(frozen=True)
class Metric:
    """One metric: what it measures, where its numbers come from, and how they are drawn."""

    name: str
    unit: Unit
    drawn: PerCase | Samples | Counted
    source: str
    description: str
    caveat: str | None = None
    better: Better | None = None
    """Which way is better (``None``: neither — a count of the run's shape, such as budget
    use); what ``compare`` marks ↑ better / ↓ worse."""

    @property
    def statistic(self) -> Statistic:
        return "ratio" if isinstance(self.drawn, Counted) else "distribution"

    @property
    def scopes(self) -> list[str]:
        """``["case"]`` for a distribution, ``["run"]`` for a ratio (§6.3)."""
        return ["case"] if self.statistic == "distribution" else ["run"]

    @property
    def case_path(self) -> tuple[str, ...] | None:
        """Where a case's own value is read; ``None`` for a metric without one."""
        return self.drawn.path if isinstance(self.drawn, PerCase) else None

    @property
    def compared(self) -> bool:
        return isinstance(self.drawn, PerCase) and self.drawn.compared

    @property
    def judged_in_comparisons(self) -> bool:
        """A move the wrong way counts as a regression (``compare --fail-on-regression``):
        a metric with a better direction, timings excepted — a rerun's noise would fail every
        comparison, which is also why ``compare`` does not classify cases on latency (B.4)."""
        return self.better is not None and self.unit != "ms"

    @property
    def paired(self) -> bool:
        """Tested case by case against a baseline (``compare --stats``, ``--taguru-baseline``):
        a compared metric — one value per case, latency excluded (B.4) — with a better
        direction, which the one-sided test needs."""
        return self.compared and self.better is not None

    def definition(self) -> Definition:
        """The metric's ``definitions`` entry (§6.3)."""
        return Definition(
            unit=self.unit,
            statistic=self.statistic,
            scopes=self.scopes,
            description=self.description,
            source=self.source,
            caveat=self.caveat,
        )

    def value(self, run: RunCases) -> MetricValue:
        """The metric's value over a whole run (§6.1, §6.2)."""
        tally = MetricTally(self)
        tally.add(run)
        return tally.value()


class MetricTally:
    """One metric's numbers gathered from any number of runs' worth of cases, one part at a
    time: its samples (8 bytes each), or its ratio's two counts.

    Adding the cases one by one gives the value of the whole run: every population a metric
    is drawn from is a union of per-case parts, a ratio's counts are sums of per-case counts,
    and a distribution sorts its samples first (so the order they come in does not matter).
    """

    __slots__ = ("_drawn", "_n", "_numerator", "_samples")

    def __init__(self, metric: Metric) -> None:
        self._drawn = metric.drawn
        self._samples = array("d")
        self._numerator = self._n = 0

    def add(self, run: RunCases) -> None:
        drawn = self._drawn
        if isinstance(drawn, Counted):
            numerator, n = drawn.count(run)
            self._numerator += numerator
            self._n += n
        elif isinstance(drawn, Samples):
            self._samples.extend(drawn.draw(run))
        else:
            for case in run.blocks:
                value = read_path(case, drawn.path)
                if value is not None:
                    self._samples.append(value)

    def value(self) -> MetricValue:
        if isinstance(self._drawn, Counted):
            return ratio(self._numerator, self._n)
        return distribution(self._samples)


def read_path(case: CaseBlock | CaseView, path: tuple[str, ...]) -> float | None:
    """The number at ``path`` in a case, as a double; ``None`` when any link is absent."""
    found: object = case
    for key in path:
        found = getattr(found, key)
        if found is None:
            return None
    assert isinstance(found, int | float), f"{'.'.join(path)} is not a number"
    return float(found)
