"""The run's ``metrics`` and ``definitions`` blocks, derived from the metric registry.

All 31 keys are always present, in byte-wise order (§7.1), with nulls when a population is
empty. Specification: ``evaluate-run.md`` §6, ``assembly.md`` §1.11.
"""

from collections.abc import Mapping, Sequence

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import Definition, ExtraMetrics, MetricValue
from pytest_taguru.score.metric_kind import MetricTally
from pytest_taguru.score.populations import RunCases
from pytest_taguru.score.registry import EXTRA_METRICS, METRICS
from pytest_taguru.score.shapes import byte_order

_BY_NAME = {metric.name: metric for metric in METRICS}
_EXTRA_BY_NAME = {metric.name: metric for metric in EXTRA_METRICS}


def definitions() -> dict[str, Definition]:
    """The ``definitions`` block: one entry per metric, keys in byte-wise order (§6.3)."""
    return {name: _BY_NAME[name].definition() for name in byte_order(_BY_NAME)}


def build_metrics(
    cases: Sequence[CaseBlock], *, rerank_requested: bool = False
) -> dict[str, MetricValue]:
    """All 31 metrics over the case blocks, keys in byte-wise order (§6.2).

    ``rerank_requested`` is whether the run was given ``--rerank``; without it ``rerank.ran``
    has no population. The hook metrics read the ``budget`` and ``evidence`` blocks as
    ``assembly.md`` §1.8 shapes them; in a baseline run those are absent and the hook metrics
    have ``n = 0``.
    """
    run = RunCases(cases, rerank_requested)
    return {name: _BY_NAME[name].value(run) for name in byte_order(_BY_NAME)}


def build_extra_metrics(cases: Sequence[CaseBlock]) -> ExtraMetrics:
    """The ``extra_metrics`` block: pytest-taguru's own metrics over the case blocks, with
    their definitions, each keyed in byte-wise order like the top-level blocks."""
    run = RunCases(cases)
    return extra_metrics_block({name: metric.value(run) for name, metric in _EXTRA_BY_NAME.items()})


def metric_tallies() -> dict[str, MetricTally]:
    """An empty tally of each of the 31 metrics, keys in byte-wise order (``build_metrics``)."""
    return {name: MetricTally(_BY_NAME[name]) for name in byte_order(_BY_NAME)}


def extra_metric_tallies() -> dict[str, MetricTally]:
    """An empty tally of each of pytest-taguru's own metrics."""
    return {name: MetricTally(metric) for name, metric in _EXTRA_BY_NAME.items()}


def extra_metrics_block(values: Mapping[str, MetricValue]) -> ExtraMetrics:
    """The ``extra_metrics`` block of these values, definitions beside them, byte-wise order."""
    names = byte_order(values)
    return ExtraMetrics(
        definitions={name: _EXTRA_BY_NAME[name].definition() for name in names},
        metrics={name: values[name] for name in names},
    )
