"""pytest hooks for pytest-taguru.

Without ``--taguru-eval`` (or the ``taguru_eval`` ini key) the plugin is inert: it adds its
options and returns at once. With it, every eval case becomes a pytest item and two plugin
objects join the session: ``TaguruItems`` (every process) and ``TaguruController`` (the
controller only). Hooks stay thin; the work lives in ``prepare`` (validation), ``runner``
(one case) and ``session`` (the controller's run).
"""

import sys
from pathlib import Path
from typing import Any

import pytest

from .errors import TaguruError
from .items import CaseItem, EvalFile
from .prepare import OPTION_SPECS, PreparedRun, prepare_run, raw_options
from .runner import RUNNER_KEY, CaseRegression, CaseRunner
from .session import PYTEST_USAGE, RunController

PREPARED_KEY = pytest.StashKey[PreparedRun]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("taguru", "taguru retrieval & citation quality gate")
    for spec in OPTION_SPECS:
        if spec.metavar is None:
            group.addoption(
                spec.flag, action="store_true", default=None, dest=spec.dest, help=spec.help
            )
            parser.addini(spec.ini, spec.help, type="bool", default=False)
        else:
            group.addoption(
                spec.flag, default=None, dest=spec.dest, metavar=spec.metavar, help=spec.help
            )
            parser.addini(spec.ini, spec.help, type="string", default="")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Validate every ``--taguru-*`` value and input file before the session (exit 2)."""
    if config.option.help or config.option.version:
        return None
    raw = raw_options(config)
    if raw is None:
        return None
    try:
        config.stash[PREPARED_KEY] = prepare_run(raw)
    except TaguruError as error:
        print(f"taguru: evaluate: {error.message}", file=sys.stderr)
        return error.exit_code
    return None


def pytest_configure(config: pytest.Config) -> None:
    prepared = config.stash.get(PREPARED_KEY, None)
    if prepared is None:
        return
    settings = prepared.settings
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get("taguru_url"):
        settings = settings.with_base_url(workerinput["taguru_url"])
    config.stash[RUNNER_KEY] = CaseRunner(settings, prepared.eval_set, prepared.thresholds)
    eval_file = Path(settings.eval_path).resolve()
    _add_to_collection(config, eval_file)
    config.pluginmanager.register(TaguruItems(eval_file), "taguru-items")
    if workerinput is None:
        controller = RunController(settings, prepared.eval_set, prepared.thresholds)
        config.pluginmanager.register(TaguruController(config, controller), "taguru-controller")


def _add_to_collection(config: pytest.Config, eval_file: Path) -> None:
    # The eval file joins the collection even when it lies outside the given paths or
    # testpaths; when it lies inside them, pytest finds it by itself.
    for arg in config.args:
        base = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if base == eval_file or base in eval_file.parents:
            return
    config.args.append(str(eval_file))


class TaguruItems:
    """Hooks of every process: collection, the report attributes, the verbose status words."""

    def __init__(self, eval_file: Path) -> None:
        self.eval_file = eval_file

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> EvalFile | None:
        if file_path.resolve() == self.eval_file:
            return EvalFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Any:
        report = yield
        if isinstance(item, CaseItem) and call.when == "call" and item.block is not None:
            report.taguru_case = CaseRunner.block_json(item.block)
            report.taguru_scores = CaseRunner.status_text(item.block)
            report.taguru_regression = call.excinfo is not None and isinstance(
                call.excinfo.value, CaseRegression
            )
        return report

    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        scores = getattr(report, "taguru_scores", None)
        if report.when != "call" or not scores:
            return None
        if report.passed:
            return "passed", ".", (f"PASSED ({scores})", {"green": True})
        if report.failed:
            return "failed", "F", (f"FAILED ({scores})", {"red": True})
        return None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        config.stash[RUNNER_KEY].close()


class TaguruController:
    """Controller-only hooks: preflight, aggregation, the artifact and the exit status."""

    def __init__(self, config: pytest.Config, controller: RunController) -> None:
        self.config = config
        self.controller = controller

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.config.option.collectonly:
            return
        try:
            settings = self.controller.start()
        except TaguruError as error:
            status = self.controller.fail(error)
            pytest.exit("taguru: the evaluation could not start", returncode=status)
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
        if self.controller.started and self.controller.error_status is None:
            try:
                self.controller.finish()
            except TaguruError as error:
                self.controller.fail(error)
        if self.controller.started or self.controller.error_status is not None:
            session.exitstatus = self.controller.exit_status(int(exitstatus))
        elif exitstatus == PYTEST_USAGE:
            session.exitstatus = 2

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        outcome = self.controller.outcome
        if outcome is None:
            return
        terminalreporter.section("taguru evaluate", sep="-")
        for line in outcome.lines:
            terminalreporter.write_line(line)
        for annotation in outcome.annotations:
            terminalreporter.write_line(annotation)
        notice = self.controller.closing_notice()
        if notice is not None:
            print(notice, file=sys.stderr)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.controller.stop()
