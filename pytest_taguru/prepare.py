"""From pytest's options to a validated run: every input checked before any network call.

The ``--taguru-*`` options are taken as plain strings and validated here, so that a bad value
or file ends the session with taguru's exit 2 (pytest's own option errors exit 4). The order is
taguru's start-up order (``evaluate-run.md`` §1.3): flags, eval.jsonl, ``options.limit``,
thresholds file, config file and URL.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from .dataset import EvalSet, check_limits, load_eval_set
from .errors import UsageError
from .metrics import definitions
from .options import RawOptions, Settings, check_flags, resolve_settings
from .thresholds import Thresholds, load_thresholds


@dataclass(frozen=True)
class OptionSpec:
    """One ``--taguru-<name>`` flag and its ``taguru_<name>`` ini key."""

    name: str
    metavar: str | None  # None: a flag without value
    help: str
    is_path: bool = False

    @property
    def flag(self) -> str:
        return f"--taguru-{self.name}"

    @property
    def dest(self) -> str:
        return "taguru_" + self.name.replace("-", "_")

    @property
    def ini(self) -> str:
        return self.dest


OPTION_SPECS = (
    OptionSpec("eval", "FILE", "eval.jsonl to run: every case becomes a test item.", True),
    OptionSpec(
        "context", "NAME", "context to evaluate (default: the eval header's default_target)."
    ),
    OptionSpec("url", "URL", "taguru server URL (default: TAGURU_ADDR or 127.0.0.1:8248)."),
    OptionSpec("config", "FILE", "env-file read before the URL is resolved (TAGURU_CONFIG).", True),
    OptionSpec("out", "FILE", "where to write evaluation.json (default: evaluation.json).", True),
    OptionSpec("thresholds", "FILE", "thresholds file; a broken bound exits 3.", True),
    OptionSpec("assembly", None, "evaluate POST /evidence assembly instead of passage search."),
    OptionSpec("max-items", "N", "item budget per case (assembly, or baseline truncation)."),
    OptionSpec("max-bytes", "N", "byte budget per case (assembly, or baseline truncation)."),
    OptionSpec("max-tokens", "N", "token budget per case (assembly, or baseline truncation)."),
    OptionSpec("rerank", "MODEL", "reranker model for assembly (needs --taguru-assembly)."),
    OptionSpec(
        "serve", "IMPORT_FILE", "start the embedded reference server loaded with this file.", True
    ),
    OptionSpec(
        "regression-exit-code", "N", "exit status of a quality regression (default 3)."
    ),
)


@dataclass(frozen=True)
class PreparedRun:
    """Validated inputs of a run: settings, the eval set, the thresholds (or None)."""

    settings: Settings
    eval_set: EvalSet
    thresholds: Thresholds | None


def _ini_value(config: pytest.Config, spec: OptionSpec) -> str | None:
    value = str(config.getini(spec.ini) or "").strip()
    if not value:
        return None
    if spec.is_path and config.inipath is not None and not os.path.isabs(value):
        # Paths in an ini file are relative to that file, as pytest's own testpaths are.
        absolute = config.inipath.parent / value
        value = os.path.relpath(absolute, config.invocation_params.dir)
    return value


def raw_options(config: pytest.Config) -> RawOptions | None:
    """The raw ``--taguru-*`` values (command line over ini), or None when the plugin is inert.

    The plugin is inert when no eval file is named anywhere and no ``--taguru-*`` flag was
    typed on the command line; a typed flag without an eval file is a usage error.
    """
    values: dict[str, str | bool | None] = {}
    typed = False
    for spec in OPTION_SPECS:
        cli = config.getoption(spec.dest)
        typed = typed or cli is not None
        if spec.metavar is None:
            values[spec.dest] = bool(cli) or bool(config.getini(spec.ini))
        else:
            values[spec.dest] = cli if cli is not None else _ini_value(config, spec)
    if values["taguru_eval"] is None and not typed:
        return None

    def text(name: str) -> str | None:
        value = values[name]
        return value if isinstance(value, str) else None

    return RawOptions(
        eval_path=text("taguru_eval"),
        context=text("taguru_context"),
        url=text("taguru_url"),
        config=text("taguru_config"),
        out=text("taguru_out"),
        thresholds=text("taguru_thresholds"),
        assembly=bool(values["taguru_assembly"]),
        max_items=text("taguru_max_items"),
        max_bytes=text("taguru_max_bytes"),
        max_tokens=text("taguru_max_tokens"),
        rerank=text("taguru_rerank"),
        serve_import=text("taguru_serve"),
        regression_exit_code=text("taguru_regression_exit_code"),
    )


def prepare_run(raw: RawOptions, environ: Mapping[str, str] | None = None) -> PreparedRun:
    """Validate flags and files in taguru's start-up order; raise ``UsageError`` (exit 2)."""
    check_flags(raw, require_context=False)
    assert raw.eval_path is not None
    eval_set = load_eval_set(raw.eval_path)
    check_limits(eval_set)
    thresholds = None
    if raw.thresholds is not None:
        thresholds = load_thresholds(
            raw.thresholds,
            metric_names=definitions().keys(),
            case_ids=[case.case_id for case in eval_set.cases],
        )
    settings = resolve_settings(
        raw, os.environ if environ is None else environ, default_context=eval_set.default_context
    )
    if settings.assembly or settings.has_budget:
        raise UsageError(
            f"{raw.flag('assembly')} and {raw.flag('max-items')}/-bytes/-tokens are not "
            "supported yet by this version of pytest-taguru"
        )
    if settings.serve_import is not None and not Path(settings.serve_import).is_file():
        raise UsageError(f"cannot read {settings.serve_import}: no such file")
    return PreparedRun(settings, eval_set, thresholds)
