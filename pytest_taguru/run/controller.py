"""The controller's run: the embedded server, preflight, the case blocks, and the finish.

Only the controller (a plain pytest process, or the pytest-xdist controller) holds a
``RunController``. It knows nothing about pytest beyond the exit statuses it is handed: the
plugin feeds it reports and asks it for the final status.
"""

import io
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

from pytest_taguru.artifact.case import CaseBlock, load_case_block
from pytest_taguru.artifact.evaluation import (
    ARTIFACT_VERSION,
    Corpus,
    EmbeddingsRecord,
    EvalInput,
    Evaluation,
    Inputs,
    RevisionRecord,
    render,
    write_atomic,
)
from pytest_taguru.core.textfile import os_error_text
from pytest_taguru.errors import ConfigFileError, RunError, TaguruError, UsageError
from pytest_taguru.gate.thresholds import GateReport, Thresholds, evaluate_gate
from pytest_taguru.report.gate import gate_summary_lines, publish_github
from pytest_taguru.report.summary import REPORT_ONLY_NOTICE, summary_lines
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.dataset import DEFAULT_LIMIT, RESOLVE_LIMIT, EvalSet
from pytest_taguru.run.lanes.assembly import RunShape
from pytest_taguru.run.preflight import ContextFacts, PreflightFacts, reread_context, run_preflight
from pytest_taguru.run.settings import Settings
from pytest_taguru.score.metrics import build_metrics, definitions
from pytest_taguru.score.summary import run_summary

if TYPE_CHECKING:
    from pytest_taguru.server.runner import ReferenceServer

# pytest's own exit statuses (pytest.ExitCode), named here to keep this module pytest-free.
PYTEST_OK, PYTEST_FAILED, PYTEST_INTERRUPTED, PYTEST_INTERNAL, PYTEST_USAGE, PYTEST_NO_TESTS = (
    range(6)
)
COMPLETED_SESSION = (PYTEST_OK, PYTEST_FAILED, PYTEST_NO_TESTS)
"""pytest statuses of a session that ran to its end; only these finish the evaluation."""


def error_line(error: TaguruError) -> str:
    """The stderr line of an error that ends the run: ``taguru: evaluate: <message>``, or
    taguru's generic ``taguru: <message>`` for a config-file error (evaluate-run.md §1.3)."""
    if isinstance(error, ConfigFileError):
        return f"taguru: {error.message}"
    return f"taguru: evaluate: {error.message}"


def error_lines(error: TaguruError) -> list[str]:
    """The error's own line, then its hints (``taguru: evaluate: hint: …``)."""
    return [error_line(error), *(f"taguru: evaluate: hint: {hint}" for hint in error.hints)]


@dataclass(frozen=True)
class Outcome:
    """What the finish produced: the artifact, the gate verdict and the lines to print."""

    evaluation: Evaluation
    gate: GateReport | None
    lines: list[str]
    annotations: list[str]


def start_embedded_server(import_file: str, token: str | None) -> "ReferenceServer":
    """Start the reference server loaded with ``import_file`` (``--taguru-serve``; exit 2 on a
    missing ``server`` extra or a malformed import file). Its ``import_notes`` say what the
    import dropped."""
    try:
        from pytest_taguru.server.runner import ImportFileError, ReferenceServer
    except ImportError as error:
        raise UsageError(
            "--taguru-serve needs the reference server's dependencies: "
            f"pip install 'pytest-taguru[server]' ({error})"
        ) from error
    try:
        server = ReferenceServer.from_import_files([import_file], token=token)
    except ImportFileError as error:
        raise UsageError(str(error)) from error
    server.start()
    return server


@dataclass
class RunController:
    """Controller state of one evaluation run (one pytest session)."""

    settings: Settings
    eval_set: EvalSet
    thresholds: Thresholds | None
    startup_lines: tuple[str, ...] = ()
    """Assembly filter warnings and config-file notes, printed before the target line."""
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    server: "ReferenceServer | None" = None
    preflight: PreflightFacts | None = None
    blocks: dict[str, CaseBlock] = field(default_factory=dict)
    regressions: int = 0
    other_failures: int = 0
    outcome: Outcome | None = None
    error_status: int | None = None

    @property
    def started(self) -> bool:
        return self.preflight is not None

    def _client(self) -> TaguruClient:
        assert self.settings.base_url is not None
        return TaguruClient(self.settings.base_url, self.settings.token_value)

    # --- start -------------------------------------------------------------------------------

    def start(self) -> Settings:
        """Embedded server (if any), then preflight, once, before any case runs.

        Returns the settings the cases must use (the embedded server's URL filled in).
        Raises ``TaguruError``.
        """
        for line in self.startup_lines:
            print(line, file=self.stderr)
        if self.settings.serve_import is not None:
            self.server = start_embedded_server(
                self.settings.serve_import, self.settings.token_value
            )
            for note in self.server.import_notes:
                print(f"taguru: evaluate: warning: {note}", file=self.stderr)
            self.settings = self.settings.with_base_url(self.server.url)
        print(f"evaluate → {self.settings.masked_url}", file=self.stderr)
        client = self._client()
        try:
            self.preflight = run_preflight(client, self.settings, self.eval_set, stderr=self.stderr)
        finally:
            client.close()
        return self.settings

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    # --- during the run ----------------------------------------------------------------------

    def record_case(self, block_json: str) -> None:
        """Keep a case block sent by ``CaseRunner.block_json`` (from any process)."""
        block = load_case_block(block_json)
        self.blocks[block.case_id] = block

    def record_failure(self, *, regression: bool) -> None:
        if regression:
            self.regressions += 1
        else:
            self.other_failures += 1

    # --- finish ------------------------------------------------------------------------------

    def ordered_blocks(self) -> list[CaseBlock]:
        """The blocks that came back, in dataset order (workers finish in any order)."""
        return [self.blocks[c.case_id] for c in self.eval_set.cases if c.case_id in self.blocks]

    def partial_run_warning(self) -> str | None:
        """The ``warnings[]`` entry (and summary line) of a run that left dataset cases out."""
        missing = len(self.eval_set.cases) - len(self.blocks)
        if missing <= 0:
            return None
        return (
            f"{missing} of {len(self.eval_set.cases)} dataset case(s) did not run (deselected, "
            "skipped, not reached after -x/--maxfail, or lost with a crashed worker); the "
            f"artifact holds the {len(self.blocks)} that ran"
        )

    def finish(self) -> None:
        """Re-read the context, aggregate, gate and write the artifact (raises TaguruError)."""
        assert self.preflight is not None
        client = self._client()
        try:
            after = reread_context(client, self.settings.context)
        finally:
            client.close()
        evaluation = self._build_evaluation(self.preflight, after)
        gate = None
        if self.thresholds is not None:
            gate = evaluate_gate(self.thresholds, evaluation)
            evaluation = evaluation.model_copy(update={"thresholds": gate.to_block()})
        try:
            write_atomic(self.settings.out, render(evaluation))
        except OSError as error:
            raise RunError(f"writing {self.settings.out}: {os_error_text(error)}") from error
        lines = summary_lines(
            evaluation,
            run_summary(evaluation.cases),
            partial_run_warning=self.partial_run_warning(),
        )
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
        self.outcome = Outcome(evaluation, gate, lines, annotations)
        if self.settings.html is not None:
            self._write_report(evaluation, self.settings.html)
            lines.append(f"  wrote {self.settings.html} (HTML report)")

    def session_notes(self) -> tuple[str, ...]:
        """What the HTML report must say that the artifact does not: ordinary tests (or
        collection) that failed beside the cases, which make the session exit 1."""
        if not self.other_failures:
            return ()
        return (
            f"{self.other_failures} test(s) or collection error(s) other than case regressions "
            "failed in this pytest session: it exits 1, whatever the gate says.",
        )

    def _write_report(self, evaluation: Evaluation, path: str) -> None:
        """The HTML report of the finished run (after the artifact: its summary still prints
        when this fails, and the run then exits 1)."""
        from pytest_taguru.report.html.island import ReportInputs
        from pytest_taguru.report.html.page import eval_href, render_page

        inputs = ReportInputs(
            evaluation,
            self.settings.out,
            self.eval_set,
            eval_href=eval_href(self.settings.eval_path, path),
            session_notes=self.session_notes(),
        )
        try:
            write_atomic(path, render_page(inputs))
        except OSError as error:
            raise RunError(f"writing {path}: {os_error_text(error)}") from error

    def _build_evaluation(self, before: PreflightFacts, after: ContextFacts) -> Evaluation:
        assert self.settings.masked_url is not None
        cases = self.ordered_blocks()
        shape = RunShape.from_settings(self.settings)
        warnings = shape.filter_warnings(self.eval_set.cases)
        partial = self.partial_run_warning()
        if partial is not None:
            warnings.append(partial)
        return Evaluation(
            taguru_evaluation=ARTIFACT_VERSION,
            generated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            inputs=Inputs(
                eval=EvalInput(
                    path=self.settings.eval_path,
                    name=self.eval_set.name,
                    cases=len(self.eval_set.cases),
                ),
                context=self.settings.context,
                url=self.settings.masked_url,
                out=self.settings.out,
                default_limit=DEFAULT_LIMIT,
                resolve_limit=RESOLVE_LIMIT,
                mode=shape.mode,
                budget=shape.budget_input,
                rerank=shape.rerank,
            ),
            corpus=Corpus(
                revision_before=RevisionRecord(**before.context.revision.model_dump()),
                revision_after=RevisionRecord(**after.revision.model_dump()),
                stable=before.context.revision == after.revision,
                last_write_epoch_before=before.context.last_write_epoch,
                last_write_epoch_after=after.last_write_epoch,
                embeddings=(
                    EmbeddingsRecord(provider_model=before.provider_model)
                    if before.embeddings_read
                    else None
                ),
                sources_count=before.sources_count,
            ),
            definitions=definitions(),
            warnings=warnings or None,
            cases=cases,
            metrics=build_metrics(cases, rerank_requested=shape.rerank_requested),
        )

    # --- errors and exit status --------------------------------------------------------------

    def fail(self, error: TaguruError) -> int:
        """Print an error that ends the run; remember and return its exit status."""
        for line in error_lines(error):
            print(line, file=self.stderr)
        self.error_status = error.exit_code
        return error.exit_code

    def conclude(self, pytest_status: int) -> int:
        """End of the session: finish the evaluation if it started and the session ran to its
        end (an interrupted or broken session writes no artifact), then the exit status."""
        if self.started and self.error_status is None:
            if pytest_status in COMPLETED_SESSION:
                try:
                    self.finish()
                except TaguruError as error:
                    self.fail(error)
            else:
                print(
                    f"taguru: evaluate: the pytest session did not complete (status "
                    f"{pytest_status}); {self.settings.out} was not written",
                    file=self.stderr,
                )
        return self.exit_status(pytest_status)

    def exit_status(self, pytest_status: int) -> int:
        """The session's exit status, by precedence: usage or input error 2 > the run could
        not complete, or any failure other than a case regression 1 > quality regression
        (``regression_exit_code``, 3 by default) > pytest's "no tests ran" 5 > 0."""
        if self.error_status is not None:
            return self.error_status
        if pytest_status == PYTEST_USAGE:
            return 2
        if pytest_status not in COMPLETED_SESSION or self.other_failures:
            return 1
        if pytest_status == PYTEST_FAILED and not self.regressions:
            return 1  # pytest counted a failure that no report attributed to a case bound
        gate_failed = (
            self.outcome is not None
            and self.outcome.gate is not None
            and not (self.outcome.gate.passed)
        )
        if self.regressions or gate_failed:
            return self.settings.regression_exit_code
        if pytest_status == PYTEST_NO_TESTS:
            return PYTEST_NO_TESTS
        return 0

    def closing_notice(self) -> str | None:
        """The stderr line after a completed report-only run."""
        if self.outcome is None or self.thresholds is not None:
            return None
        return REPORT_ONLY_NOTICE
