"""The plugin objects of an active run, registered by ``plugin.activate``.

``TaguruItems`` joins every process (the controller and each pytest-xdist worker): collection,
the report attributes a case's result travels on, the verbose status words. ``TaguruController``
joins the controller only: preflight, the case results, the finish, the exit status. Each hook is
a few lines handing the work to ``runner.CaseRunner`` or ``session.RunController``.
"""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_taguru.errors import TaguruError
from pytest_taguru.items import CaseItem, EvalFile
from pytest_taguru.run.case_runner import RUNNER_KEY, CaseRegression, CaseRunner
from pytest_taguru.run.controller import RunController


class TaguruItems:
    """Hooks of every process: collection, the report attributes, the verbose status words."""

    def __init__(self, eval_file: Path) -> None:
        self.eval_file = eval_file

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> EvalFile | None:
        if file_path.resolve() == self.eval_file:
            return EvalFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if isinstance(item, CaseItem) and call.when == "call" and item.block is not None:
            # Plain attributes survive pytest-xdist's report serialization to the controller.
            report.taguru_case = CaseRunner.block_json(item.block)
            report.taguru_scores = CaseRunner.status_text(item.block)
            report.taguru_regression = call.excinfo is not None and isinstance(
                call.excinfo.value, CaseRegression
            )
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


def _runs_tests(config: pytest.Config) -> bool:
    """False for the sessions that only list things (no case runs, so no network at all)."""
    option = config.option
    return not (
        option.collectonly
        or getattr(option, "showfixtures", False)
        or getattr(option, "show_fixtures_per_test", False)
    )


class TaguruController:
    """Controller-only hooks: preflight, aggregation, the artifact and the exit status."""

    def __init__(self, config: pytest.Config, controller: RunController) -> None:
        self.config = config
        self.controller = controller

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # tryfirst: preflight (and the embedded server) before pytest-xdist starts workers.
        if not _runs_tests(self.config):
            return
        try:
            settings = self.controller.start()
        except TaguruError as error:
            status = self.controller.fail(error)
            pytest.exit(f"taguru: the run could not start (exit {status})", returncode=status)
        self.config.stash[RUNNER_KEY].settings = settings

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["taguru_url"] = self.controller.settings.base_url

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        block_json = getattr(report, "taguru_case", None)
        if block_json is not None:
            self.controller.record_case(block_json)
        if report.failed:
            regression = bool(getattr(report, "taguru_regression", False))
            self.controller.record_failure(regression=regression)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.controller.record_failure(regression=False)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        session.exitstatus = self.controller.conclude(int(exitstatus))
        if self.config.pluginmanager.get_plugin("terminalreporter") is None:
            # -p no:terminal (the taguru-evaluate drop-in): the summary alone, on plain stdout.
            self._print_outcome(print)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.controller.outcome is not None:
            terminalreporter.section("taguru evaluate", sep="-")
            self._print_outcome(terminalreporter.write_line)

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
