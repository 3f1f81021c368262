"""pytest entry point of pytest-taguru (``pytest11`` entry point ``taguru``).

Without ``--taguru-eval`` (or the ``taguru_eval`` ini key) and without any typed ``--taguru-*``
flag the plugin is inert: it declares its options and imports nothing else. It is inert too when
the eval file comes from the ini file and the command line names test paths or node ids that do
not include it (``pytest tests/test_x.py::test_ok`` runs just that; ``pytest``, ``pytest -k …``
or ``pytest eval.jsonl`` still run the cases; any ``--taguru-*`` flag typed on the command line
adds the eval file to whatever else is selected).

With a run to do, in ``pytest_cmdline_main`` (before pytest's session, so a failure prints its
reason and nothing of pytest's internals): the inputs are validated (``prepare``: exit 2 on any
problem, before any network call), then, on the controller of a session that runs tests, the
output paths are checked, the embedded server started and the preflight run (exit 1 or 2).
Every eval case then becomes a pytest item, and the plugin objects of ``hooks`` join the
session: ``TaguruItems`` in every process, ``TaguruController`` on the controller only.
"""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from pytest_taguru import __version__
from pytest_taguru.flags import OPTIONS, add_options, given_flags, typed_flags

if TYPE_CHECKING:
    from pytest_taguru.run.controller import RunController
    from pytest_taguru.run.prepare import PreparedRun

PREPARED_KEY: "pytest.StashKey[PreparedRun]" = pytest.StashKey()
CONTROLLER_KEY: "pytest.StashKey[RunController]" = pytest.StashKey()
"""The started run (controller process only)."""

Selection = Literal["named", "added", "not selected"]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def runs_tests(config: pytest.Config) -> bool:
    """False for the sessions that only list things (no case runs, so no network at all)."""
    option = config.option
    return not (
        option.collectonly
        or getattr(option, "showfixtures", False)
        or getattr(option, "show_fixtures_per_test", False)
    )


def eval_selection(config: pytest.Config, eval_file: Path, typed: frozenset[str]) -> Selection:
    """Whether this session runs the eval set: ``named`` by a path or node id argument (or a
    directory holding it), ``added`` to the collection (no path arguments were typed, or a
    ``--taguru-*`` flag was), or ``not selected``."""
    for arg in config.args:
        base = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if base == eval_file or base in eval_file.parents:
            return "named"
    if config.args_source != pytest.Config.ArgsSource.ARGS or typed:
        return "added"
    return "not selected"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Validate every ``--taguru-*`` value and input file (exit 2), then start the run."""
    if config.option.help or config.option.version:
        return None
    values = given_flags(config)
    if values is None:
        return None
    typed = typed_flags(config)
    eval_path = values[OPTIONS["eval"].dest]
    if isinstance(eval_path, str):
        eval_file = (config.invocation_params.dir / eval_path).resolve()
        if eval_selection(config, eval_file, typed) == "not selected":
            return None
    # Imported only now: an inert plugin must not cost its users the run machinery's imports.
    from pytest_taguru.errors import TaguruError, error_lines
    from pytest_taguru.run import controller as run
    from pytest_taguru.run.flag_values import raw_options
    from pytest_taguru.run.prepare import prepare_run

    worker = getattr(config, "workerinput", None) is not None
    try:
        prepared = prepare_run(raw_options(values, typed), with_baseline=not worker)
    except TaguruError as error:
        print(*error.preceding, *error_lines(error), sep="\n", file=sys.stderr)
        return error.exit_code
    config.stash[PREPARED_KEY] = prepared
    if worker or not runs_tests(config):
        return None
    controller = run.RunController(
        prepared.settings,
        prepared.eval_set,
        prepared.thresholds,
        prepared.startup_lines,
        baseline=prepared.baseline,
        slicing=prepared.slicing,
        shard=prepared.shard,
    )
    config.add_cleanup(controller.stop)
    try:
        controller.start()
    except TaguruError as error:
        controller.fail(error)
        return error.exit_code
    config.stash[CONTROLLER_KEY] = controller
    return None


def pytest_configure(config: pytest.Config) -> None:
    prepared = config.stash.get(PREPARED_KEY, None)
    if prepared is not None:
        activate(config, prepared)


def pytest_report_header(config: pytest.Config) -> str | None:
    prepared = config.stash.get(PREPARED_KEY, None)
    if prepared is None:
        return None
    settings = prepared.settings
    gate = settings.thresholds_path or "none"
    if settings.baseline is not None:
        gate += f", baseline {settings.baseline}"
    elif settings.thresholds_path is None:
        gate += " (report-only)"
    cases = f"{len(prepared.eval_set.cases)} cases"
    if prepared.shard is not None:
        cases += f"; shard {prepared.shard.spec}: {len(prepared.shard.selected)} of them"
    return (
        f"taguru: pytest-taguru {__version__}, eval {settings.eval_path} "
        f"({cases}), context '{settings.context}', thresholds {gate}"
    )


def activate(config: pytest.Config, prepared: "PreparedRun") -> None:
    """Register the run's plugin objects: collection everywhere, the controller's run once."""
    from pytest_taguru.hooks import TaguruController, TaguruItems
    from pytest_taguru.run import controller as run
    from pytest_taguru.run.case_runner import RUNNER_KEY, CaseRunner

    settings = prepared.settings
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    controller = config.stash.get(CONTROLLER_KEY, None)
    if workerinput is not None and workerinput.get("taguru_url"):
        settings = settings.with_base_url(workerinput["taguru_url"])
    elif controller is not None:
        settings = controller.settings  # the embedded server's URL filled in
    config.stash[RUNNER_KEY] = CaseRunner(settings, prepared.run_set, prepared.thresholds)
    eval_file = Path(settings.eval_path).resolve()
    if eval_selection(config, eval_file, typed_flags(config)) != "named":
        # The eval file joins the collection even when it lies outside the given paths or
        # testpaths; when a path argument names it, pytest finds it by itself.
        config.args.append(str(eval_file))
    config.pluginmanager.register(TaguruItems(eval_file), "taguru-items")
    if workerinput is None:
        if controller is None:  # a session that only lists things: nothing was started
            controller = run.RunController(
                settings,
                prepared.eval_set,
                prepared.thresholds,
                prepared.startup_lines,
                slicing=prepared.slicing,
                shard=prepared.shard,
            )
        config.pluginmanager.register(TaguruController(config, controller), "taguru-controller")
