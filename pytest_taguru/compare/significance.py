"""The knobs of the paired gate, declared once: the significance level α, the tolerated drop δ
per metric and what an inconclusive verdict does, with the parsers every surface uses
(``compare --alpha/--tolerance``, ``--taguru-alpha/--taguru-tolerance``, their ini keys).

Tolerance syntax: a comma-separated list whose items are ``DELTA`` (the tolerance of every
metric) or ``METRIC=DELTA`` (one metric's, which wins over the plain one), ``DELTA`` a plain
decimal ≥ 0 in the metric's own unit: ``0.01``, ``recall.mrr=0.02``,
``0.005,recall.mrr=0.02,recall.ndcg=0.01``. A metric must be one with paired statistics
(``registry.PAIRED_METRICS``). Numpy-free: the plugin parses these before any run.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pytest_taguru.core.suggest import closest
from pytest_taguru.score.registry import PAIRED_METRICS

DEFAULT_ALPHA = 0.05
DEFAULT_TOLERANCE = 0.0
InconclusivePolicy = Literal["warn", "fail"]
DEFAULT_INCONCLUSIVE: InconclusivePolicy = "warn"

_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+")
_MAX_DIGITS = 20


@dataclass(frozen=True)
class Tolerances:
    """δ per metric: ``per_metric[name]`` when given, else ``default``."""

    default: float = DEFAULT_TOLERANCE
    per_metric: Mapping[str, float] = field(default_factory=dict)

    def of(self, metric: str) -> float:
        return self.per_metric.get(metric, self.default)

    def describe(self) -> str:
        """``0``, or ``0.005 (recall.mrr 0.02)`` when some metric has its own."""
        own = ", ".join(f"{name} {value:g}" for name, value in sorted(self.per_metric.items()))
        return f"{self.default:g}" + (f" ({own})" if own else "")


NO_TOLERANCE = Tolerances()


class SpecError(ValueError):
    """What is wrong with an α or tolerance text (the caller names the flag)."""


def _decimal(text: str) -> float:
    value = text.strip()
    if not _DECIMAL.fullmatch(value) or len(value) > _MAX_DIGITS:
        raise SpecError(f"'{text}' is not a plain decimal number")
    return float(value)


def parse_alpha(text: str) -> float:
    """α: a plain decimal strictly between 0 and 1."""
    value = _decimal(text)
    if not 0.0 < value < 1.0:
        raise SpecError(f"{text.strip()} is not between 0 and 1 (exclusive)")
    return value


def parse_tolerances(text: str) -> Tolerances:
    """The tolerance syntax of the module docstring; an item given twice is an error."""
    default: float | None = None
    per_metric: dict[str, float] = {}
    for item in text.split(","):
        name, equals, number = item.rpartition("=")
        if not equals:
            if default is not None:
                raise SpecError("the plain tolerance is given twice")
            default = _decimal(number)
            continue
        metric = name.strip()
        if metric not in PAIRED_METRICS:
            near = closest(metric, PAIRED_METRICS)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise SpecError(f"'{metric}' is not a metric with paired statistics{hint}")
        if metric in per_metric:
            raise SpecError(f"{metric} is given twice")
        per_metric[metric] = _decimal(number)
    return Tolerances(DEFAULT_TOLERANCE if default is None else default, per_metric)


def parse_inconclusive(text: str) -> InconclusivePolicy:
    """What an inconclusive verdict does: ``warn`` (a warning) or ``fail`` (a failed gate)."""
    value = text.strip()
    if value == "warn":
        return "warn"
    if value == "fail":
        return "fail"
    raise SpecError(f"got '{text}'")
