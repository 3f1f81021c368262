"""Gate results: the run-level verdicts that become pytest results.

A case-scoped bound fails its own case item; every verdict about the run as a whole (the
thresholds file's aggregate bounds and corpus-stability rule, ``gate.baseline``'s comparison)
is a :class:`GateResult`, reported by the plugin as one more test result with node id
``<eval file>::[<name>]``: failed with its violations as the failure text, passed, or skipped
(with the reason), in the terminal, the short summary and ``--junitxml`` alike.

A verdict source is a :class:`GateSource`: a ``name`` known before the run (so every session of
a suite reports the same results) and a ``judge`` called once at the finish. Adding a verdict is
one call: ``RunController.add_gate_source(source)``. Pure: no pytest, no I/O.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from pytest_taguru.gate.thresholds import GateReport, Violation

if TYPE_CHECKING:
    from pytest_taguru.artifact.evaluation import Evaluation
    from pytest_taguru.artifact.writing import ArtifactSource
    from pytest_taguru.run.partial import RunCoverage

GateStatus = Literal["passed", "failed", "skipped"]

THRESHOLDS_RESULT = "thresholds"


@dataclass(frozen=True)
class GateResult:
    """One run-level verdict."""

    name: str
    """``thresholds`` → node id ``eval.jsonl::[thresholds]``."""
    status: GateStatus
    headline: str
    """One line: the first violation of a failure (the short summary's and JUnit's message),
    the reason of a skip, the verdict of a pass."""
    details: tuple[str, ...] = ()
    """The failure text after the headline, one line each."""
    properties: tuple[tuple[str, str], ...] = ()
    """JUnit ``<properties>``: name and value (observed aggregate values, never corpus text)."""
    warnings: tuple[str, ...] = ()
    """What the result warns about without failing (an inconclusive baseline verdict): each
    becomes a pytest warning of the result."""

    @property
    def text(self) -> str:
        """The failure text: the details, or the headline alone when there are none."""
        return "\n".join(self.details) if self.details else self.headline


@dataclass(frozen=True)
class FinishedRun:
    """What a verdict source may judge: the artifact as written, the thresholds verdict (if a
    thresholds file was given) and how much of the dataset ran.

    The controller's ``evaluation`` holds no cases (it streams them into the artifact): the
    whole text is at ``artifact_path``, or built on demand by ``artifact``."""

    evaluation: "Evaluation"
    coverage: "RunCoverage"
    thresholds: GateReport | None = None
    artifact_path: str | None = None
    artifact: "ArtifactSource | None" = None
    """The whole artifact on demand, when the caller has its parts (the controller)."""


class GateSource(Protocol):
    """A run-level verdict; ``name`` must be fixed before the run starts."""

    @property
    def name(self) -> str: ...

    def judge(self, run: FinishedRun) -> GateResult: ...


def not_judged(name: str, reason: str) -> GateResult:
    """The result of a verdict that could not be reached because the run failed: a failure, so
    that a JUnit consumer does not read a broken run as green."""
    return GateResult(name, "failed", f"not judged: {reason}")


def violation_line(violation: Violation) -> str:
    """One line for a summary: ``recall.mrr 0.333333 < min 0.5`` (the thresholds file's metric
    name, the observed value and the bound, six significant digits), or the metric and the
    reason of a violation without a bound (n=0, corpus)."""
    if violation.bound is not None and violation.actual is not None:
        relation = "<" if violation.bound == "min" else ">"
        assert violation.threshold is not None
        return (
            f"{violation.metric} {violation.actual:.6g} {relation} {violation.bound} "
            f"{violation.threshold:.6g}"
        )
    return f"{violation.metric}: {violation.reason}"


def first_of(lines: Sequence[str]) -> str:
    """The first line, with ``(+N more)`` when others follow."""
    more = f" (+{len(lines) - 1} more)" if len(lines) > 1 else ""
    return lines[0] + more


@dataclass(frozen=True)
class ThresholdsGate:
    """The thresholds file's run-level verdict: aggregate bounds and corpus stability.

    Failed when any aggregate or corpus violation was found (headline: the first one); skipped
    when the aggregate bounds were not judged (a partial run) and nothing else failed; passed
    otherwise. Case-scoped violations are not repeated here: they fail their own case items.
    """

    bounded: Sequence[str] = ()
    """The aggregate metric names the file bounds; their observed values become properties."""
    name: str = THRESHOLDS_RESULT

    def judge(self, run: FinishedRun) -> GateResult:
        report = run.thresholds
        assert report is not None, "the thresholds gate needs the thresholds report"
        properties = tuple(
            (metric, "n=0" if value is None else f"{value:.6f}")
            for metric in self.bounded
            for value in [run.evaluation.headline(metric)]
        )
        violations = [v for v in report.violations or [] if v.scope != "case"]
        lines = [violation_line(v) for v in violations]
        skipped = report.aggregate_skipped
        if lines:
            details = [f"taguru thresholds: {len(lines)} run-level violation(s)"]
            details += [f"  [{v.scope}] {v.metric}: {v.reason}" for v in violations]
            if skipped is not None:
                details.append(f"  aggregate bounds not judged: {skipped}")
            cases = sum(1 for v in report.violations or [] if v.scope == "case")
            if cases:
                details.append(f"  ({cases} case-scoped violation(s) fail their own case items)")
            return GateResult(self.name, "failed", first_of(lines), tuple(details), properties)
        if skipped is not None:
            headline = f"aggregate bounds not judged: {skipped}"
            return GateResult(self.name, "skipped", headline, properties=properties)
        subset = run.coverage.subset()
        scope = "" if subset is None else f" on {subset}"
        headline = f"aggregate bounds and corpus stability held{scope}"
        return GateResult(self.name, "passed", headline, properties=properties)
