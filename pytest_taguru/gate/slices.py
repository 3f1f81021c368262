"""The slice gate: each slice's scorecard against its bounds, and its run-level gate result.

:func:`evaluate_slice_gate` is pure and serves the live run and the offline ``taguru-evaluate
gate``; its :class:`SliceGateReport` is the artifact's ``slice_thresholds`` block (a key of
pytest-taguru's own). Bounds are the thresholds file's aggregate bounds, checked by its code
(``gate.thresholds.aggregate_violations``) on the slice's headlines (each distribution's mean).
A slice holding fewer cases than its ``min_cases`` is reported, not judged; on a partial run no
slice is judged unless ``--taguru-gate-partial`` (``run.partial``, the caller's ``skipped``).
:class:`SlicesGate` reports the verdict as ``eval.jsonl::[slices]``.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict

from pytest_taguru.artifact.evaluation import SliceCard
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.jsontext import WRITE_NULL
from pytest_taguru.gate.results import FinishedRun, GateResult, first_of, violation_line
from pytest_taguru.gate.slice_file import SliceThresholds
from pytest_taguru.gate.thresholds import Violation, aggregate_violations

SLICES_RESULT = "slices"
"""The gate result's name: node id ``eval.jsonl::[slices]``."""


class SliceViolation(BaseModel):
    """One failed slice bound, in artifact key order (a thresholds violation plus its slice)."""

    model_config = ConfigDict(frozen=True)

    slice: str
    metric: str
    bound: Literal["min", "max"] | None = None
    threshold: float | None = None
    actual: Annotated[float | None, WRITE_NULL] = None
    reason: str

    def as_violation(self) -> Violation:
        """The same check as a thresholds violation (for its one-line wording)."""
        return Violation(scope="aggregate", **self.model_dump(exclude={"slice"}))


class SliceNotJudged(BaseModel):
    """A slice with fewer cases than its ``min_cases``: reported, not judged."""

    model_config = ConfigDict(frozen=True)

    slice: str
    n: int
    min_cases: int


class SliceGateReport(BaseModel):
    """The ``slice_thresholds`` block; empty lists are ``None`` (left out)."""

    model_config = ConfigDict(frozen=True)

    sha256: str
    passed: bool
    gated: list[str]
    """The slices the file gates, in its order (judged or not)."""
    violations: list[SliceViolation] | None = None
    not_judged: list[SliceNotJudged] | None = None
    aggregate_skipped: str | None = None
    """Why no slice was judged (a partial run, ``run.partial``); left out when they were."""

    def to_block(self) -> dict[str, Any]:
        block: dict[str, Any] = to_jsonable(self)
        return block


def evaluate_slice_gate(
    thresholds: SliceThresholds,
    cards: Mapping[str, SliceCard],
    *,
    aggregate_skipped: str | None = None,
) -> SliceGateReport:
    """Every slice of the file (file order) against its bounds (name order), pure.

    ``cards`` must hold every slice the file names (``slice_file`` checked the names).
    """
    violations: list[SliceViolation] = []
    not_judged: list[SliceNotJudged] = []
    for name, gate in thresholds.file.slices.items():
        if aggregate_skipped is not None:
            break
        card = cards[name]
        if card.n < gate.min_cases:
            not_judged.append(SliceNotJudged(slice=name, n=card.n, min_cases=gate.min_cases))
            continue
        headlines = {metric: value.headline for metric, value in card.metrics.items()}
        violations += [
            SliceViolation(slice=name, **violation.model_dump(exclude={"scope", "case_id"}))
            for violation in aggregate_violations(gate.aggregate, headlines)
        ]
    return SliceGateReport(
        sha256=thresholds.sha256,
        passed=not violations,
        gated=list(thresholds.file.slices),
        violations=violations or None,
        not_judged=not_judged or None,
        aggregate_skipped=aggregate_skipped,
    )


def slice_violation_line(violation: SliceViolation) -> str:
    """``[history] recall.mrr 0.5 < min 0.8``."""
    return f"[{violation.slice}] {violation_line(violation.as_violation())}"


def not_judged_line(item: SliceNotJudged) -> str:
    return (
        f"slice '{item.slice}': {item.n} case(s), fewer than its min_cases {item.min_cases}: "
        "reported, not judged"
    )


@dataclass(frozen=True)
class SlicesGate:
    """The slice thresholds' run-level verdict, read from the artifact's ``slice_thresholds``.

    Failed when a judged slice broke a bound (headline: the first); skipped when no slice was
    judged (a partial run); passed otherwise, saying which slices were too small to judge.
    """

    slices: Sequence[str] = ()
    """The slices the file gates."""
    bounded: Sequence[tuple[str, str]] = ()
    """(slice, metric) pairs the file bounds; their observed means become properties."""
    name: str = SLICES_RESULT

    @classmethod
    def of(cls, thresholds: SliceThresholds) -> "SlicesGate":
        gates = thresholds.file.slices
        bounded = [(name, metric) for name in gates for metric in sorted(gates[name].aggregate)]
        return cls(slices=tuple(gates), bounded=tuple(bounded))

    def judge(self, run: FinishedRun) -> GateResult:
        report = SliceGateReport.model_validate(run.evaluation.slice_thresholds)
        cards = run.evaluation.slices or {}
        properties = tuple(
            (f"{name}/{metric}", "n=0" if mean is None else f"{mean:.6f}")
            for name, metric in self.bounded
            for mean in [cards[name].metrics[metric].mean if name in cards else None]
        )
        small = [not_judged_line(item) for item in report.not_judged or []]
        lines = [slice_violation_line(v) for v in report.violations or []]
        if lines:
            details = [f"taguru slice thresholds: {len(lines)} violation(s)"]
            details += [f"  {line}" for line in lines]
            details += [f"  {line}" for line in small]
            return GateResult(self.name, "failed", first_of(lines), tuple(details), properties)
        if report.aggregate_skipped is not None:
            headline = f"slice bounds not judged: {report.aggregate_skipped}"
            return GateResult(self.name, "skipped", headline, properties=properties)
        headline = f"slice bounds held ({len(self.slices) - len(small)} slice(s) judged"
        headline += f"; {len(small)} too small to judge)" if small else ")"
        return GateResult(self.name, "passed", headline, properties=properties)
