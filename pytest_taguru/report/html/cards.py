"""The metric cards and the score distributions of the data island.

A card per metric of the run, grouped by the registry's families, each with its value from
the artifact (at ``compact.FIGURE_DIGITS``) and its definition from the registry (the
artifact's own ``definitions`` entry for a metric this version does not know). The
histograms count each case's own value of the per-case scores in ten equal bins over 0..1;
the latency chart is drawn from the ``ms`` cards' percentiles.
"""

from collections.abc import Sequence
from typing import Any

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import Definition, Distribution, Evaluation, Ratio
from pytest_taguru.report.html.compact import figure
from pytest_taguru.score.metric_kind import Metric
from pytest_taguru.score.registry import (
    CITATIONS,
    COVERAGE,
    DIVERSITY,
    EVIDENCE,
    LATENCY,
    RECALL,
    RUN_RATES,
    case_value,
)

FAMILIES: tuple[tuple[str, tuple[Metric, ...]], ...] = (
    ("Ranking", RECALL),
    ("Structural coverage", COVERAGE),
    ("Citations", CITATIONS),
    ("Latency", LATENCY),
    ("Source diversity", DIVERSITY),
    ("Lanes and failures", RUN_RATES),
    ("Budgets and reranking", EVIDENCE),
)
"""Card groups, in the registry's record order."""
OTHER_FAMILY = "Other metrics in the artifact"

HISTOGRAM_METRICS = (
    "recall.recall_at_k",
    "recall.mrr",
    "recall.ndcg",
    "citations.recall",
    "citations.locator_validity",
)
HISTOGRAM_BINS = 10
"""Bin ``i`` holds values in ``[i/10, (i+1)/10)``; the last one holds 1.0 too."""


def _card(
    name: str, definition: Definition, evaluation: Evaluation, violated: bool
) -> dict[str, Any]:
    value = evaluation.metrics.get(name)
    card: dict[str, Any] = {
        "name": name,
        "unit": definition.unit,
        "statistic": definition.statistic,
        "value": None if value is None else figure(value.headline),
        "n": None if value is None else value.n,
        "description": definition.description,
        "source": definition.source,
        "caveat": definition.caveat,
        "violated": violated,
    }
    if isinstance(value, Ratio):
        card["numerator"] = value.numerator
    if isinstance(value, Distribution) and value.n:
        card["dist"] = {
            key: figure(getattr(value, key)) for key in ("min", "p50", "p90", "p99", "max", "mean")
        }
    return card


def metric_cards(evaluation: Evaluation, violated: set[str]) -> list[dict[str, Any]]:
    """``[{"family": title, "cards": [card, …]}, …]``: the registry's metrics in record order,
    then any other metric the artifact carries (by name). ``violated``: the metrics with an
    aggregate violation."""
    groups = []
    known = set()
    for title, metrics in FAMILIES:
        cards = []
        for metric in metrics:
            known.add(metric.name)
            definition = metric.definition()
            cards.append(_card(metric.name, definition, evaluation, metric.name in violated))
        groups.append({"family": title, "cards": cards})
    others = [
        _card(name, evaluation.definitions.get(name, Definition()), evaluation, name in violated)
        for name in sorted(evaluation.metrics.keys() - known)
    ]
    if others:
        groups.append({"family": OTHER_FAMILY, "cards": others})
    return groups


def histogram(values: Sequence[float]) -> list[int]:
    """Counts of ``values`` (each in 0..1) in ``HISTOGRAM_BINS`` equal bins."""
    counts = [0] * HISTOGRAM_BINS
    for value in values:
        counts[min(max(int(value * HISTOGRAM_BINS), 0), HISTOGRAM_BINS - 1)] += 1
    return counts


def histograms(cases: Sequence[CaseBlock]) -> list[dict[str, Any]]:
    """``[{"metric", "n", "counts"}, …]`` over the cases' own exact values, in
    ``HISTOGRAM_METRICS`` order."""
    out = []
    for name in HISTOGRAM_METRICS:
        values = [value for case in cases if (value := case_value(case, name)) is not None]
        out.append({"metric": name, "n": len(values), "counts": histogram(values)})
    return out
