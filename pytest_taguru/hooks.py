"""The plugin objects of an active run, registered by ``plugin.activate``.

``TaguruItems`` joins every process (the controller and each pytest-xdist worker): collection,
the prefetch window's plan before each item, the report attributes a case's result travels on,
the verbose status words. ``TaguruController`` joins the controller only: the case results, the
finish, the gate results, the exit status.
Each hook is a few lines handing the work to ``run.case_runner.CaseRunner``,
``run.controller.RunController`` or ``gate_reports``.
"""

import io
import os
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_taguru.core.bulk import SESSION_HEAP
from pytest_taguru.gate_reports import GATE_REPORT_ATTRIBUTE, emit_gate_result
from pytest_taguru.items import CaseItem, EvalFile
from pytest_taguru.run.case_runner import RUNNER_KEY, CaseRegression, CaseRunner
from pytest_taguru.run.controller import PYTEST_FAILED, PYTEST_NO_TESTS, PYTEST_OK, RunController
from pytest_taguru.run.received import CaseTexts
from pytest_taguru.run_order import RunOrder

_READ_ONCE = ("taguru_calls", "taguru_dead", "taguru_regression", "taguru_file")
"""The report attributes only the controller's ``pytest_runtest_logreport`` reads."""


class TaguruItems:
    """Hooks of every process: collection, the report attributes, the verbose status words."""

    def __init__(self, eval_file: Path) -> None:
        self.eval_file = eval_file
        self.order: RunOrder | None = None
        SESSION_HEAP.begin()

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> EvalFile | None:
        if file_path.resolve() == self.eval_file:
            return EvalFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # trylast, registered before TaguruController: inside its wrapper, so the window is
        # closed before the controller concludes the run.
        self.order = RunOrder(session)
        SESSION_HEAP.freeze()  # what collection left alive (reports, the run order) lives on too
        try:
            return (yield)
        finally:
            session.config.stash[RUNNER_KEY].stop_prefetch()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        # A wrapper: it runs whichever plugin then runs the item (a rerun plugin, say).
        if isinstance(item, CaseItem) and self.order is not None:
            upcoming = self.order.upcoming(item, nextitem)
            item.config.stash[RUNNER_KEY].prefetch(i for i in upcoming if isinstance(i, CaseItem))
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if isinstance(item, CaseItem) and call.when == "call" and item.block is not None:
            # Plain attributes survive pytest-xdist's report serialization to the controller.
            report.taguru_case, report.taguru_case_text = CaseRunner.transport(item.block)
            if item.config.get_verbosity() >= 1:  # only verbose lines show them
                report.taguru_scores = CaseRunner.status_text(item.block)
            report.taguru_regression = call.excinfo is not None and isinstance(
                call.excinfo.value, CaseRegression
            )
            report.taguru_file = item.parent.nodeid if item.parent is not None else ""
            item.block = None  # its in-process extras (hit texts) are not needed any more
        if isinstance(item, CaseItem) and call.when == "call" and item.calls is not None:
            report.taguru_calls = item.calls.to_report()
            report.taguru_dead = item.config.stash[RUNNER_KEY].presumed_dead
            item.calls = None  # pytest keeps every item to the end of the session
        return report

    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        # Scores decorate verbose lines only, so quiet runs keep pytest's plain summary lines.
        scores = getattr(report, "taguru_scores", None)
        if report.when != "call" or not scores or config.get_verbosity() < 1:
            return None
        if report.passed:
            return "passed", ".", (f"PASSED ({scores})", {"green": True})
        if report.failed:
            return "failed", "F", (f"FAILED ({scores})", {"red": True})
        return None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        config.stash[RUNNER_KEY].close()


def _stopped_by_maxfail(session: pytest.Session, stop: BaseException) -> bool:
    """``-x``/``--maxfail`` ended the loop: a run that completed early (a partial run), not an
    interrupted one. pytest raises ``Session.Failed``; pytest-xdist an ``Interrupted`` saying
    ``stopping after N failures`` (its own ``Interrupted``, a ``KeyboardInterrupt``)."""
    if isinstance(stop, pytest.Session.Failed):
        return True
    return (
        isinstance(stop, KeyboardInterrupt)
        and type(stop) is not KeyboardInterrupt
        and bool(session.config.option.maxfail)
        and str(stop).startswith("stopping after ")
    )


class TaguruController:
    """Controller-only hooks: the case results, the gate results, the artifact, the exit status.

    The run itself was started in ``plugin.pytest_cmdline_main`` (preflight and the embedded
    server before the session, and before pytest-xdist starts workers).
    """

    def __init__(self, config: pytest.Config, controller: RunController) -> None:
        self.config = config
        self.controller = controller
        self.session: pytest.Session | None = None
        self.eval_nodeid: str | None = None
        self.final_status: int | None = None
        self._counted = -1

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["taguru_url"] = self.controller.settings.base_url

    def _count_gate_results(self) -> None:
        # The gate results are reported after the last case: counting them among the collected
        # tests keeps the progress percentage right. pytest sets the count after collection,
        # pytest-xdist whenever a worker finishes collecting, so it is re-checked at each start.
        session, expected = self.session, len(self.controller.gate_sources)
        if not (session is not None and expected and self.controller.started):
            return
        if session.testscollected != self._counted:
            session.testscollected += expected
            self._counted = session.testscollected

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int, str]) -> None:
        self._count_gate_results()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if getattr(report, GATE_REPORT_ATTRIBUTE, False):
            return
        summary = getattr(report, "taguru_case", None)
        if summary is not None:
            self.controller.record_case(CaseTexts(summary, report.taguru_case_text))
            # pytest keeps every report to the end (terminal summary, JUnit): the block is
            # kept once, by the controller; the other plugins have seen the report (trylast).
            del report.taguru_case, report.taguru_case_text
            self.eval_nodeid = self.eval_nodeid or getattr(report, "taguru_file", None)
        calls = getattr(report, "taguru_calls", None)
        if calls is not None:
            verdict = self.controller.dead_server.fold(calls, getattr(report, "taguru_dead", None))
            if verdict is not None:
                self._stop_session(verdict)
        if report.failed:
            regression = bool(getattr(report, "taguru_regression", False))
            self.controller.record_failure(regression=regression)
        for name in _READ_ONCE:  # read above, and by no one else: not kept with every report
            report.__dict__.pop(name, None)

    def _stop_session(self, verdict: str) -> None:
        """No further case starts: pytest-xdist's controller loop reads its own flag."""
        reason = f"taguru: {verdict}"
        dsession = self.config.pluginmanager.get_plugin("dsession")
        if dsession is not None:
            dsession.shouldstop = dsession.shouldstop or reason
        elif self.session is not None:
            self.session.shouldstop = self.session.shouldstop or reason

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.controller.record_failure(regression=False)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        if type(excinfo.value) is KeyboardInterrupt:
            self.controller.note_interruption("Ctrl-C")
        elif isinstance(excinfo.value, pytest.exit.Exception):
            self.controller.note_interruption(f"pytest.exit: {excinfo.value}")

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # trylast: the innermost wrapper, so the gate results are reported inside the terminal
        # reporter's loop wrapper (its final progress counts them) and before junitxml's and
        # the terminal's session finish.
        try:
            result = yield
        except BaseException as stop:
            if _stopped_by_maxfail(session, stop):
                self._conclude(PYTEST_FAILED)
            raise
        if session.testsfailed:
            self._conclude(PYTEST_FAILED)
        else:
            self._conclude(PYTEST_OK if session.testscollected else PYTEST_NO_TESTS)
        return result

    def _conclude(self, pytest_status: int) -> None:
        """Finish the run, then report its gate results; messages printed on the way go to
        stderr on a line of their own, never glued onto the progress line."""
        if not self.controller.started:
            return
        controller, stderr = self.controller, self.controller.stderr
        controller.stderr = io.StringIO()
        try:
            self.final_status = controller.conclude(pytest_status)
        finally:
            printed, controller.stderr = controller.stderr.getvalue(), stderr
        if printed:
            terminal = self.config.pluginmanager.get_plugin("terminalreporter")
            if terminal is not None:
                terminal.ensure_newline()
                terminal.flush()
            stderr.write(printed)
            stderr.flush()
        self._count_gate_results()
        for result in controller.gate_results:
            emit_gate_result(
                self.config,
                result,
                eval_nodeid=self.eval_nodeid or self._eval_nodeid(),
                crash_path=controller.settings.thresholds_path or controller.settings.eval_path,
            )

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.final_status is None:  # the loop did not complete (or never ran)
            self.final_status = self.controller.conclude(int(exitstatus))
        session.exitstatus = self.final_status
        if self.config.pluginmanager.get_plugin("terminalreporter") is None:
            # -p no:terminal (the taguru-evaluate drop-in): the summary alone, on plain stdout.
            self._print_outcome(print)

    def _eval_nodeid(self) -> str:
        """The eval file's node id when no case reported it (pytest's rule: relative to the
        rootdir, ``/``-separated)."""
        path = Path(self.controller.settings.eval_path).resolve()
        try:
            return path.relative_to(self.config.rootpath).as_posix()
        except ValueError:
            return Path(os.path.relpath(path, self.config.rootpath)).as_posix()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.controller.outcome is not None:
            terminalreporter.section("taguru evaluate", sep="-")
            self._print_outcome(terminalreporter.line)

    def _print_outcome(self, write_line: Callable[[str], object]) -> None:
        outcome = self.controller.outcome
        if outcome is None:
            return
        for line in [*outcome.lines, *outcome.annotations]:
            write_line(line)
        notice = self.controller.closing_notice()
        if notice is not None:
            print(notice, file=sys.stderr)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.controller.stop()
