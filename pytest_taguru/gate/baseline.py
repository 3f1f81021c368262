"""``--taguru-baseline``: the run judged against an earlier run, case by case — the noise-aware
gate (``compare.verdicts``) as one more run-level result, ``eval.jsonl::[baseline]``.

At start-up (``run.prepare``, before any network call) the baseline file is read as ``compare``
reads an artifact (exit 2 with ``<path>: …`` and serde's line and column when it is not one), and
checked against what this run will ask (``compare.comparability``: context, mode, budget,
limits, and enough shared cases, the eval set's expectation hashes standing for the run's):
a baseline that cannot be compared is refused with exit 2 before the first case runs.

At the finish the run's artifact is paired with the baseline and judged: a ``regressed``
verdict fails the result (exit 3, like a broken aggregate bound); an ``inconclusive`` one is a
warning, or a failure under ``--taguru-inconclusive=fail``; otherwise it passes. A partial run is
not judged (skipped) unless ``--taguru-gate-partial``, as aggregate bounds are not
(``run.partial``). The numbers (``compare.statistics``, numpy) are imported only then.

``--taguru-save-baseline FILE`` writes the run's artifact there too, but only when the run
completed and its gate passed (``baseline_lines``).
"""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_taguru.artifact.view import LoadedRun, RunReadError, read_run
from pytest_taguru.artifact.writing import ArtifactSource, render
from pytest_taguru.compare.comparability import RunQuestion, comparability_problems, question_of
from pytest_taguru.compare.significance import (
    DEFAULT_ALPHA,
    DEFAULT_INCONCLUSIVE,
    NO_TOLERANCE,
    InconclusivePolicy,
    Tolerances,
)
from pytest_taguru.core.textfile import os_error_text
from pytest_taguru.errors import RunError, UsageError, read_input_text
from pytest_taguru.gate.results import FinishedRun, GateResult, first_of
from pytest_taguru.run.eval_models import DEFAULT_LIMIT, RESOLVE_LIMIT, EvalSet
from pytest_taguru.run.expectations import expectations_sha256
from pytest_taguru.run.lanes.assembly import RunShape
from pytest_taguru.run.settings import Settings

if TYPE_CHECKING:
    from pytest_taguru.compare.classify import ChangeReport
    from pytest_taguru.compare.verdicts import StatisticsReport
    from pytest_taguru.run.partial import RunCoverage

BASELINE_RESULT = "baseline"
THIS_RUN = "this run"
"""How the run's own artifact is named in the comparison."""


def load_baseline(path: str) -> LoadedRun:
    """Read the baseline artifact (exit 2 when it cannot be read as one)."""
    text = read_input_text(path)
    try:
        return read_run(text, path)
    except RunReadError as error:
        raise UsageError(str(error)) from None


def question_of_settings(settings: Settings, eval_set: EvalSet) -> RunQuestion:
    """What this run will ask, before it runs."""
    shape = RunShape.from_settings(settings)
    budget = shape.budget_input
    return RunQuestion(
        context=settings.context,
        mode=shape.mode,
        budget=None
        if budget is None
        else (budget.max_items, budget.max_bytes, budget.max_tokens),
        default_limit=DEFAULT_LIMIT,
        resolve_limit=RESOLVE_LIMIT,
        cases={case.case_id: expectations_sha256(case) for case in eval_set.cases},
    )


def check_comparable(path: str, baseline: LoadedRun, settings: Settings, eval_set: EvalSet) -> None:
    """Refuse (exit 2) a baseline this run cannot be judged against, saying every reason."""
    problems = comparability_problems(
        question_of(baseline), question_of_settings(settings, eval_set)
    )
    if problems:
        raise UsageError(f"{path}: cannot be compared with this run: {'; '.join(problems)}")


@dataclass(frozen=True)
class BaselineComparison:
    """The finished comparison: this run as compare reads it, and the verdicts."""

    head: LoadedRun
    statistics: "StatisticsReport"


@dataclass
class BaselineGate:
    """The baseline comparison as a gate result (a ``gate.results.GateSource``); after
    ``judge`` its ``comparison`` holds the numbers for the summary and the HTML report."""

    path: str
    baseline: LoadedRun
    alpha: float = DEFAULT_ALPHA
    tolerances: Tolerances = NO_TOLERANCE
    inconclusive: InconclusivePolicy = DEFAULT_INCONCLUSIVE
    judge_partial: bool = False
    name: str = BASELINE_RESULT
    comparison: BaselineComparison | None = field(default=None, init=False)

    @classmethod
    def for_run(cls, settings: Settings, baseline: LoadedRun) -> "BaselineGate":
        """The gate of ``--taguru-baseline`` with the run's α, tolerances and policies."""
        assert settings.baseline is not None
        return cls(
            settings.baseline,
            baseline,
            alpha=settings.alpha,
            tolerances=settings.tolerances,
            inconclusive=settings.inconclusive,
            judge_partial=settings.gate_partial,
        )

    def judge(self, run: FinishedRun) -> GateResult:
        from pytest_taguru.compare.stats_render import (
            terminal_lines,
            verdict_line,
            verdict_summary,
        )
        from pytest_taguru.compare.verdicts import paired_statistics

        if not (run.coverage.complete or self.judge_partial):
            reason = f"baseline comparison not judged: {run.coverage.describe()}"
            return GateResult(self.name, "skipped", reason)
        text = run.artifact.text() if run.artifact is not None else render(run.evaluation)
        head = read_run(text, THIS_RUN)
        statistics = paired_statistics(
            self.baseline, head, alpha=self.alpha, tolerances=self.tolerances
        )
        self.comparison = BaselineComparison(head, statistics)
        regressed = [verdict_line(item) for item in statistics.with_verdict("regressed")]
        unsure = [verdict_line(item) for item in statistics.with_verdict("inconclusive")]
        details = (f"taguru baseline: against {self.path}", *terminal_lines(statistics))
        properties = tuple(
            (f"{item.metric} [{item.slice_name}]", verdict_summary(item))
            for item in statistics.verdicts
        )
        if regressed:
            return GateResult(self.name, "failed", first_of(regressed), details, properties)
        if unsure and self.inconclusive == "fail":
            headline = first_of(unsure) + " (--taguru-inconclusive=fail)"
            return GateResult(self.name, "failed", headline, details, properties)
        return GateResult(
            self.name,
            "passed",
            f"no regression against {self.path} ({statistics.counts_text()})",
            properties=properties,
            warnings=tuple(f"baseline {self.path}: {line}" for line in unsure),
        )

    def report_parts(self) -> tuple["ChangeReport | None", "StatisticsReport | None"]:
        """What the HTML report shows of the comparison: the moved cases (``compare``) and the
        paired statistics; nothing before the run was judged."""
        from pytest_taguru.compare.classify import compare

        if self.comparison is None:
            return None, None
        return compare(self.baseline, self.comparison.head), self.comparison.statistics

    def summary_lines(self) -> list[str]:
        """The summary's baseline block: the verdict line, then the statistics table."""
        from pytest_taguru.compare.stats_render import terminal_lines

        if self.comparison is None:
            return []
        statistics = self.comparison.statistics
        regressed = statistics.with_verdict("regressed")
        unsure = statistics.with_verdict("inconclusive")
        if regressed:
            verdict = f"FAIL — {len(regressed)} regressed verdict(s)"
        elif unsure and self.inconclusive == "fail":
            verdict = f"FAIL — {len(unsure)} inconclusive verdict(s) (--taguru-inconclusive=fail)"
        else:
            verdict = f"PASS ({statistics.counts_text()})"
        return [f"  baseline: {verdict} against {self.path}", *terminal_lines(statistics)]


def baseline_lines(
    gate: BaselineGate | None,
    save_to: str | None,
    artifact: ArtifactSource,
    coverage: "RunCoverage",
    *,
    written: bool,
    gate_failed: bool,
) -> list[str]:
    """The finished run's baseline lines: the comparison (``gate``), then
    ``--taguru-save-baseline`` (``save_to``): the run's ``artifact`` is written there only
    when the run completed, its artifact was written and its gate passed (no case bound broken,
    no gate result failed). A failed write is exit 1."""
    lines = [] if gate is None else gate.summary_lines()
    if save_to is None:
        return lines
    why = None
    if not coverage.complete:
        why = coverage.describe()
    elif not written:
        why = "the session exits 1"
    elif gate_failed:
        why = "the gate failed"
    if why is not None:
        return [*lines, f"  baseline not saved to {save_to}: {why}"]
    try:
        artifact.write(save_to)
    except OSError as error:
        raise RunError(f"writing {save_to}: {os_error_text(error)}") from error
    return [*lines, f"  wrote {save_to} (the new baseline)"]
