"""Advice on a thresholds file, beyond taguru's own refusals: pytest-taguru's words.

taguru's messages stay exact (``thresholds-and-compare.md`` A.3); what is added here is printed
on lines of its own: a hint after a refusal (the valid names, closest first; the eval set's
case_ids), and a warning for a bound taguru accepts but that cannot mean what it says (a ratio
bound outside 0..1).
"""

from collections.abc import Collection, Iterable, Iterator

from pytest_taguru.core.jsontext import format_plain
from pytest_taguru.core.suggest import did_you_mean, ranked
from pytest_taguru.gate.file import Bound, ThresholdsFile
from pytest_taguru.score.registry import METRICS

RATIO_METRICS = frozenset(metric.name for metric in METRICS if metric.unit == "ratio")
"""Metrics whose every value lies in 0..1."""


def name_hint(name: str, valid: Iterable[str]) -> str:
    """The valid names, the closest to ``name`` first."""
    return f"'{name}': the valid names, closest first: {', '.join(ranked(name, valid))}"


def case_id_hint(case_id: str, case_ids: Collection[str]) -> str:
    suggestion = did_you_mean(case_id, case_ids)
    tail = f" — {suggestion}" if suggestion else ""
    return f"'{case_id}' is not one of the run's case_ids{tail}"


def scoped_bounds(file: ThresholdsFile) -> Iterator[tuple[str, dict[str, Bound]]]:
    """Every bound map with its scope label, in the order taguru reports problems."""
    yield "aggregate", file.aggregate
    yield "cases.default", file.cases.default
    for case_id in sorted(file.cases.overrides):
        yield f"cases.overrides.{case_id}", file.cases.overrides[case_id]


def _ratio_side(side: str, value: float) -> str | None:
    """What a ``min``/``max`` outside 0..1 does to a ratio, or None when it is inside."""
    if 0.0 <= value <= 1.0:
        return None
    never = (side == "min") == (value > 1.0)
    effect = "can never hold" if never else "always holds"
    percent = ""
    if 1.0 < value <= 100.0 and value.is_integer():
        percent = f" (a percentage? write {format_plain(value / 100)})"
    shown = format_plain(value)
    return f"{side} {shown} is outside 0..1, the range of a ratio: it {effect}{percent}"


def ratio_warnings(file: ThresholdsFile) -> list[str]:
    """One line per ``min``/``max`` on a ratio metric outside 0..1, in taguru's walk order."""
    lines = []
    for scope, bounds in scoped_bounds(file):
        for name in sorted(bounds):
            if name not in RATIO_METRICS:
                continue
            for side, value in (("min", bounds[name].min), ("max", bounds[name].max)):
                problem = None if value is None else _ratio_side(side, value)
                if problem is not None:
                    lines.append(f"{scope}: '{name}': {problem}")
    return lines
