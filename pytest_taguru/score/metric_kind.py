"""What a metric is: :class:`Metric` and the ways its value is drawn from the case blocks
(:class:`PerCase`, :class:`Samples`, :class:`Counted`); the 31 metrics themselves are declared
in ``score/registry``."""

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
        drawn = self.drawn
        if isinstance(drawn, Counted):
            return ratio(*drawn.count(run))
        if isinstance(drawn, Samples):
            return distribution(drawn.draw(run))
        values = (read_path(case, drawn.path) for case in run.blocks)
        return distribution(value for value in values if value is not None)


def read_path(case: CaseBlock | CaseView, path: tuple[str, ...]) -> float | None:
    """The number at ``path`` in a case, as a double; ``None`` when any link is absent."""
    found: object = case
    for key in path:
        found = getattr(found, key)
        if found is None:
            return None
    assert isinstance(found, int | float), f"{'.'.join(path)} is not a number"
    return float(found)
