"""The ``--taguru-*`` flags and their ``taguru_*`` ini keys, read as plain values.

This is all the plugin loads when it is inert: it imports nothing beyond the standard library
and pytest, so a session without ``--taguru-eval`` pays for two dozen option declarations and
nothing else. Validation lives in ``prepare`` and is imported only when a run is requested.
"""

import os
from dataclasses import dataclass

import pytest

FlagValues = dict[str, str | bool | None]
"""Option ``dest`` → the value as given (command line over ini); None when not given."""


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
    OptionSpec("regression-exit-code", "N", "exit status of a quality regression (default 3)."),
)


def add_options(parser: pytest.Parser) -> None:
    """Declare every flag (default None, so "typed" is detectable) and its ini key."""
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


def _ini_value(config: pytest.Config, spec: OptionSpec) -> str | None:
    value = str(config.getini(spec.ini) or "").strip()
    if not value:
        return None
    if spec.is_path and config.inipath is not None and not os.path.isabs(value):
        # Paths in an ini file are relative to that file, as pytest's own testpaths are.
        absolute = config.inipath.parent / value
        value = os.path.relpath(absolute, config.invocation_params.dir)
    return value


def given_flags(config: pytest.Config) -> FlagValues | None:
    """The ``--taguru-*`` values (command line over ini), or None when the plugin is inert.

    The plugin is inert when no eval file is named anywhere and no ``--taguru-*`` flag was
    typed on the command line; a typed flag without an eval file is a usage error (``prepare``).
    """
    values: FlagValues = {}
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
    # One server target: a --taguru-url or --taguru-serve typed on the command line replaces
    # the other coming from the ini file (``pytest example_suite --taguru-url …``).
    for typed_name, other in (("taguru_url", "taguru_serve"), ("taguru_serve", "taguru_url")):
        if config.getoption(typed_name) is not None and config.getoption(other) is None:
            values[other] = None
    return values
