"""The controller's run: the embedded server, preflight, the case blocks, and the finish.

Only the controller (a plain pytest process, or the pytest-xdist controller) holds a
``RunController``. It knows nothing about pytest beyond the exit statuses it is handed: the
plugin feeds it reports, reports its gate results and asks it for the final status. What a
partial run means is ``run.partial``'s policy; the run-level verdicts are ``gate.results``.
"""

import io
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.artifact.writing import ArtifactSource
from pytest_taguru.core.atomic_file import probe_writable, write_atomic
from pytest_taguru.core.textfile import os_error_text
from pytest_taguru.errors import PREFIX, RunError, TaguruError, UnreachableError, error_lines
from pytest_taguru.gate.baseline import BaselineGate, baseline_lines
from pytest_taguru.gate.results import (
    FinishedRun,
    GateResult,
    GateSource,
    ThresholdsGate,
    not_judged,
)
from pytest_taguru.gate.thresholds import (
    CaseCheck,
    GateReport,
    Thresholds,
    check_case,
    evaluate_gate,
)
from pytest_taguru.report.gate import gate_summary_lines, publish_github
from pytest_taguru.report.summary import REPORT_ONLY_NOTICE, summary_lines
from pytest_taguru.run.client import TaguruClient, client_for
from pytest_taguru.run.dead_server import RunStop
from pytest_taguru.run.embedded_server import EmbeddedServer, start_embedded_server
from pytest_taguru.run.eval_models import EvalSet
from pytest_taguru.run.finish import (
    build_evaluation,
    partial_run_warning,
    ran_in_order,
    start_fold,
)
from pytest_taguru.run.partial import PartialRunPolicy, RunCoverage, session_failure
from pytest_taguru.run.preflight import PreflightFacts, reread_context, run_preflight
from pytest_taguru.run.received import CaseTexts, ReceivedBlocks
from pytest_taguru.run.recording.store import Recording, recording_for
from pytest_taguru.run.recording.tapes import Tape
from pytest_taguru.run.settings import Settings
from pytest_taguru.run.shard import ShardPlan
from pytest_taguru.run.slices import Slicing, judge_slices
from pytest_taguru.run.waiting import waiting_notice

if TYPE_CHECKING:
    from pytest_taguru.artifact.view import LoadedRun

# pytest's own exit statuses (pytest.ExitCode), named here to keep this module pytest-free.
PYTEST_OK, PYTEST_FAILED, PYTEST_INTERRUPTED, PYTEST_INTERNAL, PYTEST_USAGE, PYTEST_NO_TESTS = (
    range(6)
)
COMPLETED_SESSION = (PYTEST_OK, PYTEST_FAILED, PYTEST_NO_TESTS)
"""pytest statuses of a session that ran to its end; only these finish the evaluation."""


@dataclass(frozen=True)
class Outcome:
    """What the finish produced: the artifact (None when no case ran), the thresholds verdict
    and the lines to print."""

    evaluation: Evaluation | None
    gate: GateReport | None
    lines: list[str]
    annotations: list[str]


@dataclass
class RunController:
    """Controller state of one evaluation run (one pytest session)."""

    settings: Settings
    eval_set: EvalSet
    thresholds: Thresholds | None
    startup_lines: tuple[str, ...] = ()
    """Assembly filter warnings and config-file notes, printed before the target line."""
    baseline: "LoadedRun | None" = None
    """The ``--taguru-baseline`` run, read and checked at start-up."""
    shard: ShardPlan | None = None
    """``--taguru-shard``: the run's dataset is this shard's cases (``run.partial``)."""
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    server: EmbeddedServer | None = None
    preflight: PreflightFacts | None = None
    blocks: ReceivedBlocks = field(default_factory=ReceivedBlocks)
    regressions: int = 0
    other_failures: int = 0
    outcome: Outcome | None = None
    error_status: int | None = None
    gate_sources: list[GateSource] = field(default_factory=list)
    gate_results: list[GateResult] = field(default_factory=list)
    interruption: str | None = None
    """How the session was interrupted (``Ctrl-C``, ``pytest.exit``), when it was."""
    dead_server: RunStop = field(init=False)
    """The dead-server rule over every case's calls, in the order their reports arrive."""
    baseline_gate: BaselineGate | None = field(default=None, init=False)
    recording: Recording = field(init=False)
    """What ``--taguru-record`` writes or ``--taguru-replay`` answers from."""
    slicing: Slicing | None = None
    """The slices (their scorecards join the artifact) and the slice thresholds file."""

    def __post_init__(self) -> None:
        self.dead_server = RunStop(self.settings.max_consecutive_failures)
        self.recording = recording_for(self.settings)
        if self.thresholds is not None:
            self.add_gate_source(ThresholdsGate(bounded=sorted(self.thresholds.file.aggregate)))
        for source in [] if self.slicing is None else self.slicing.gate_sources():
            self.add_gate_source(source)
        if self.baseline is not None:
            self.baseline_gate = BaselineGate.for_run(self.settings, self.baseline)
            self.add_gate_source(self.baseline_gate)

    @property
    def started(self) -> bool:
        return self.preflight is not None

    @property
    def policy(self) -> PartialRunPolicy:
        settings = self.settings
        return PartialRunPolicy(settings.out, settings.typed_flags, settings.gate_partial)

    def add_gate_source(self, source: GateSource) -> None:
        """Report one more run-level verdict as a test result (call before the run starts)."""
        self.gate_sources.append(source)

    def coverage(self) -> RunCoverage:
        if self.shard is None:
            return RunCoverage(len(self.eval_set.cases), len(self.blocks))
        return RunCoverage(len(self.shard.selected), len(self.blocks), self.shard.describe())

    def output_paths(self) -> list[str]:
        """Every file the run will write (a partial run's go beside the configured ones)."""
        paths = [self.settings.out]
        paths += [path for path in (self.settings.html, self.settings.save_baseline) if path]
        return paths

    def _client(self, tape: Tape | None) -> TaguruClient:
        return client_for(self.settings, tape=tape)

    # --- start -------------------------------------------------------------------------------

    def start(self) -> Settings:
        """Output paths, recording, embedded server (if any), then preflight, once, before any
        case runs.

        Returns the settings the cases must use (the embedded server's URL filled in, or the
        recorded one). Raises ``TaguruError``; the embedded server is stopped on any failure.
        """
        for line in self.startup_lines:
            print(line, file=self.stderr)
        try:
            self._check_outputs()
            self.settings = self.recording.begin(self.settings, self.eval_set)
            if self.settings.serve_import is not None:
                starting = f"the embedded server to load {self.settings.serve_import}"
                with waiting_notice(self.stderr, starting):
                    self.server = start_embedded_server(
                        self.settings.serve_import, self.settings.token_value
                    )
                for note in self.server.import_notes:
                    print(f"{PREFIX}warning: {note}", file=self.stderr)
                self.settings = self.settings.with_base_url(self.server.url)
            replayed = self.settings.replay_dir
            suffix = "" if replayed is None else f" (replayed from {replayed})"
            print(f"evaluate → {self.settings.masked_url}{suffix}", file=self.stderr)
            tape = self.recording.preflight_tape()
            client = self._client(tape)
            try:
                self.preflight = run_preflight(
                    client, self.settings, self.eval_set, stderr=self.stderr
                )
            finally:
                client.close()
            self.recording.seal_preflight(tape, self.settings, self.eval_set, self.preflight)
        except UnreachableError as error:
            self.stop()
            if self.settings.address_hint is not None:
                error.hints.append(self.settings.address_hint)
            raise
        except KeyboardInterrupt:
            self.stop()
            raise RunError(
                "interrupted (Ctrl-C) before the first case; nothing was run or written"
            ) from None
        except BaseException:
            self.stop()
            raise
        return self.settings

    def _check_outputs(self) -> None:
        """Every output path must be writable before the first case runs (exit 1)."""
        for path in self.output_paths():
            try:
                probe_writable(path)
            except OSError as error:
                raise RunError(f"writing {path}: {os_error_text(error)}") from error

    def stop(self) -> None:
        self.blocks.close()
        if self.server is not None:
            self.server.stop()
            self.server = None

    # --- during the run ----------------------------------------------------------------------

    def record_case(self, case: CaseTexts) -> None:
        """Keep a case sent by ``CaseRunner.transport`` (from any process), as sent."""
        self.blocks.add(case)

    def record_failure(self, *, regression: bool) -> None:
        if regression:
            self.regressions += 1
        else:
            self.other_failures += 1

    # --- finish ------------------------------------------------------------------------------

    def failing_session(self, pytest_status: int) -> str | None:
        """``run.partial.session_failure`` of this session (then no artifact is written)."""
        failed = pytest_status == PYTEST_FAILED
        return session_failure(self.other_failures, self.regressions, pytest_failed=failed)

    def finish(self, pytest_status: int = PYTEST_OK) -> None:
        """Re-read the context, aggregate, gate and write the artifact where the partial-run
        policy says (nowhere when the session exits 1 anyway), then judge the gate results
        (raises TaguruError)."""
        assert self.preflight is not None
        coverage = self.coverage()
        planned = self.policy.artifact_path(coverage)
        if planned is None:
            self._finish_empty(coverage)
            return
        failing = self.failing_session(pytest_status)
        path = self.policy.artifact_path(coverage, session_failure=failing)
        tape = self.recording.after_run_tape()
        client = self._client(tape)
        try:
            with waiting_notice(self.stderr, f"GET /contexts/{self.settings.context}"):
                after = reread_context(client, self.settings.context)
        finally:
            client.close()
            self.recording.close(tape)
        ran = ran_in_order(self.eval_set, self.blocks)
        globs = None if self.slicing is None else self.slicing.definitions.globs
        fold = start_fold(self.settings, globs)
        checks: list[CaseCheck] = []
        # One case summary in memory at a time: folded for the run-level numbers, checked
        # against the thresholds' case bounds, then dropped.
        for case_id in ran:
            summary = self.blocks.summary(case_id)
            fold.add(summary)
            if self.thresholds is not None:
                check = check_case(self.thresholds.file, summary)
                if check.violations or check.skipped:  # a clean case adds nothing to the gate
                    checks.append(check)
        evaluation = build_evaluation(
            self.settings, self.eval_set, fold, self.preflight, after,
            out=planned, shard=self.shard,
        )  # fmt: skip
        gate = None
        skipped = self.policy.aggregate_skip_reason(coverage)
        if self.thresholds is not None:
            gate = evaluate_gate(
                self.thresholds, evaluation, case_checks=checks, aggregate_skipped=skipped
            )
            evaluation = evaluation.model_copy(update={"thresholds": gate.to_block()})
        evaluation, slice_lines = judge_slices(self.slicing, evaluation, aggregate_skipped=skipped)
        artifact = ArtifactSource(evaluation, lambda: (self.blocks.text(case) for case in ran))
        if path is not None:
            try:
                artifact.write(path)
            except OSError as error:
                raise RunError(f"writing {path}: {os_error_text(error)}") from error
        lines = summary_lines(
            evaluation,
            fold.summary(),
            partial_run_warning=partial_run_warning(coverage.dataset_cases, coverage.ran_cases),
            not_written=None if failing is None else f"{failing}; the session exits 1",
        )
        recorded = self.recording.summary_line()
        lines += [] if recorded is None else [recorded]
        annotations: list[str] = []
        if gate is not None and self.thresholds is not None:
            lines += gate_summary_lines(gate)
            stream = io.StringIO()
            publish_github(
                gate,
                self.thresholds.file,
                evaluation,
                eval_path=self.settings.eval_path,
                case_lines={case.case_id: case.line for case in self.eval_set.cases},
                environ=self.environ,
                out=stream,
            )
            annotations = stream.getvalue().splitlines()
        lines += slice_lines
        self.outcome = Outcome(evaluation, gate, lines, annotations)
        finished = FinishedRun(evaluation, coverage, gate, path, artifact)
        self.gate_results = [source.judge(finished) for source in self.gate_sources]
        failed = self.regressions > 0 or any(r.status == "failed" for r in self.gate_results)
        lines += baseline_lines(self.baseline_gate, self.settings.save_baseline, artifact, coverage,
                                written=path is not None, gate_failed=failed)  # fmt: skip
        html = self.policy.output_path(self.settings.html, "html", coverage)
        if html is not None:
            whole = evaluation.model_copy(update={"cases": [self.blocks[case] for case in ran]})
            self._write_report(whole, planned, html, failing)
            lines.append(f"  wrote {html} (HTML report)")

    def session_notes(self, failing: str | None) -> tuple[str, ...]:
        """What the HTML report must say that the artifact does not: the session exits 1
        whatever the gate says (:meth:`failing_session`), so the artifact was not written."""
        if failing is None:
            return ()
        return (
            f"{failing} in this pytest session: it exits 1, whatever the gate says, and "
            f"{self.settings.out} was not written.",
        )

    def _write_report(
        self, evaluation: Evaluation, artifact: str, path: str, failing: str | None
    ) -> None:
        """The HTML report of the finished run (after the artifact: its summary still prints
        when this fails, and the run then exits 1)."""
        from pytest_taguru.report.html.island import ReportInputs
        from pytest_taguru.report.html.page import eval_href, render_page

        gate = self.baseline_gate
        baseline, statistics = (None, None) if gate is None else gate.report_parts()
        inputs = ReportInputs(
            evaluation,
            artifact,
            self.eval_set,
            baseline,
            eval_href=eval_href(self.settings.eval_path, path),
            session_notes=self.session_notes(failing),
            statistics=statistics,
        )
        try:
            write_atomic(path, render_page(inputs))
        except OSError as error:
            raise RunError(f"writing {path}: {os_error_text(error)}") from error

    def _finish_empty(self, coverage: RunCoverage) -> None:
        """No dataset case ran: nothing to aggregate, judge or write (exit 5)."""
        reason = coverage.describe()
        line = f"  taguru evaluate: {reason}; nothing was written ({self.settings.out} untouched)"
        self.outcome = Outcome(None, None, [line], [])
        self.gate_results = [
            GateResult(source.name, "skipped", reason) for source in self.gate_sources
        ]

    # --- errors and exit status --------------------------------------------------------------

    def fail(self, error: TaguruError) -> int:
        """Print an error that ends the run; remember and return its exit status."""
        for line in error_lines(error):
            print(line, file=self.stderr)
        self.error_status = error.exit_code
        return error.exit_code

    def note_interruption(self, how: str) -> None:
        """The session was interrupted (``Ctrl-C`` or ``pytest.exit``); said in the finish."""
        self.interruption = how

    def conclude(self, pytest_status: int) -> int:
        """End of the session: finish the evaluation if it started and the session ran to its
        end (an interrupted or broken session writes no artifact), then the exit status."""
        if self.dead_server.verdict is not None and self.error_status is None:
            self.fail(RunError(self.dead_server.message(self.settings.out)))
        if self.started and self.error_status is None:
            if pytest_status in COMPLETED_SESSION:
                try:
                    self.finish(pytest_status)
                except TaguruError as error:
                    self.fail(error)
                    self.gate_results = [
                        not_judged(source.name, error.message) for source in self.gate_sources
                    ]
            elif self.interruption is not None:
                print(
                    f"{PREFIX}interrupted ({self.interruption}) after "
                    f"{len(self.blocks)} of {self.coverage().dataset_cases} case(s); "
                    f"{self.settings.out} was not written",
                    file=self.stderr,
                )
            else:
                print(
                    f"{PREFIX}the pytest session did not complete (status "
                    f"{pytest_status}); {self.settings.out} was not written",
                    file=self.stderr,
                )
        return self.exit_status(pytest_status)

    def exit_status(self, pytest_status: int) -> int:
        """The session's exit status, by precedence: usage or input error 2 > the run could
        not complete, or any failure other than a case regression 1 > quality regression
        (``regression_exit_code``, 3 by default: a case bound, or a failed gate result) > no
        dataset case ran, or pytest's "no tests ran" 5 > 0."""
        if self.error_status is not None:
            return self.error_status
        if pytest_status == PYTEST_USAGE:
            return 2
        if pytest_status not in COMPLETED_SESSION or self.failing_session(pytest_status):
            return 1
        gate_failed = any(result.status == "failed" for result in self.gate_results)
        if self.regressions or gate_failed:
            return self.settings.regression_exit_code
        policy_status = self.policy.exit_status(self.coverage()) if self.started else None
        if policy_status is not None:
            return policy_status
        if pytest_status == PYTEST_NO_TESTS:
            return PYTEST_NO_TESTS
        return 0

    def closing_notice(self) -> str | None:
        """The stderr line after a completed report-only run."""
        if self.outcome is None or self.outcome.evaluation is None:
            return None
        if self.thresholds is not None or self.baseline_gate is not None:
            return None
        return REPORT_ONLY_NOTICE
