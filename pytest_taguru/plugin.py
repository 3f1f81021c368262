"""pytest entry point of pytest-taguru (``pytest11`` entry point ``taguru``).

Without ``--taguru-eval`` (or the ``taguru_eval`` ini key) and without any typed ``--taguru-*``
flag the plugin is inert: it declares its options and imports nothing else. With them, the
inputs are validated before the session (``prepare``: exit 2 on any problem, before any network
call), every eval case becomes a pytest item, and the plugin objects of ``hooks`` join the
session: ``TaguruItems`` in every process, ``TaguruController`` on the controller only.
"""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_taguru.flags import add_options, given_flags

if TYPE_CHECKING:
    from pytest_taguru.run.prepare import PreparedRun

PREPARED_KEY = pytest.StashKey["PreparedRun"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Validate every ``--taguru-*`` value and input file before the session (exit 2)."""
    if config.option.help or config.option.version:
        return None
    values = given_flags(config)
    if values is None:
        return None
    # Imported only now: an inert plugin must not cost its users the run machinery's imports.
    from pytest_taguru.errors import TaguruError
    from pytest_taguru.run.controller import error_lines
    from pytest_taguru.run.flag_values import raw_options
    from pytest_taguru.run.prepare import prepare_run

    try:
        config.stash[PREPARED_KEY] = prepare_run(raw_options(values))
    except TaguruError as error:
        for line in [*error.preceding, *error_lines(error)]:
            print(line, file=sys.stderr)
        return error.exit_code
    return None


def pytest_configure(config: pytest.Config) -> None:
    prepared = config.stash.get(PREPARED_KEY, None)
    if prepared is not None:
        activate(config, prepared)


def activate(config: pytest.Config, prepared: "PreparedRun") -> None:
    """Register the run's plugin objects: collection everywhere, the controller's run once."""
    from pytest_taguru.hooks import TaguruController, TaguruItems
    from pytest_taguru.run.case_runner import RUNNER_KEY, CaseRunner
    from pytest_taguru.run.controller import RunController

    settings = prepared.settings
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get("taguru_url"):
        settings = settings.with_base_url(workerinput["taguru_url"])
    config.stash[RUNNER_KEY] = CaseRunner(settings, prepared.eval_set, prepared.thresholds)
    eval_file = Path(settings.eval_path).resolve()
    _add_to_collection(config, eval_file)
    config.pluginmanager.register(TaguruItems(eval_file), "taguru-items")
    if workerinput is None:
        controller = RunController(
            settings, prepared.eval_set, prepared.thresholds, prepared.startup_lines
        )
        config.pluginmanager.register(TaguruController(config, controller), "taguru-controller")


def _add_to_collection(config: pytest.Config, eval_file: Path) -> None:
    # The eval file joins the collection even when it lies outside the given paths or
    # testpaths; when it lies inside them, pytest finds it by itself.
    for arg in config.args:
        base = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if base == eval_file or base in eval_file.parents:
            return
    config.args.append(str(eval_file))
