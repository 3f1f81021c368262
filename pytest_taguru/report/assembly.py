"""The evidence summary lines of a run (``assembly.md`` §1.12), as pure text.

Printed after the citation summary and before the unstable-corpus warning, in this order:
the budget line (when ``inputs.budget`` is present), the diversity line (when
``diversity.sources`` has a sample, in any mode) and the rerank line (when ``inputs.rerank``
is present). Numbers are read from the already computed metrics.
"""

from pytest_taguru.artifact.evaluation import Distribution, Evaluation, MetricValue, Ratio


def fixed(value: float | None, digits: int) -> str:
    """A summary number to ``digits`` decimals, or ``n/a`` when it has no samples."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def _distribution(metrics: dict[str, MetricValue], name: str) -> Distribution:
    value = metrics.get(name)
    return value if isinstance(value, Distribution) else Distribution()


def _ratio(metrics: dict[str, MetricValue], name: str) -> Ratio:
    value = metrics.get(name)
    return value if isinstance(value, Ratio) else Ratio()


def assembly_summary_lines(evaluation: Evaluation) -> list[str]:
    """The budget, diversity and rerank summary lines that apply to ``evaluation``.

    * budget: ``n`` = samples of ``budget.items_used``; the three means to one decimal,
      ``n/a`` without samples; the ``budget.omitted_rate`` value to three decimals, ``n/a``
      when its ``n`` is 0;
    * diversity: the mean of ``diversity.sources`` to one decimal;
    * rerank: attempted = ``rerank.ran``'s ``n``, ran = its numerator, degraded = the rest.
    """
    metrics = evaluation.metrics
    lines: list[str] = []
    if evaluation.inputs.budget is not None:
        items = _distribution(metrics, "budget.items_used")
        size = _distribution(metrics, "budget.bytes_used")
        tokens = _distribution(metrics, "budget.tokens_used")
        rate = _ratio(metrics, "budget.omitted_rate")
        lines.append(
            f"  budget over {items.n} case(s): mean {fixed(items.mean, 1)} item(s) / "
            f"{fixed(size.mean, 1)} byte(s) / {fixed(tokens.mean, 1)} token(s) used, "
            f"budget-omitted rate {fixed(rate.value if rate.n else None, 3)}"
        )
    diversity = _distribution(metrics, "diversity.sources")
    if diversity.n:
        lines.append(
            f"  diversity over {diversity.n} case(s): mean {fixed(diversity.mean, 1)} "
            "distinct source(s) in admitted evidence"
        )
    if evaluation.inputs.rerank is not None:
        ran = _ratio(metrics, "rerank.ran")
        done = ran.numerator or 0
        lines.append(
            f"  rerank '{evaluation.inputs.rerank}' over {ran.n} attempted case(s): "
            f"{done} ran, {ran.n - done} degraded"
        )
    return lines
