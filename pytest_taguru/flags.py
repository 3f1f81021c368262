"""The option table: every ``--taguru-*`` flag declared once, and pytest's view of it.

One :class:`OptionSpec` per flag gives its plugin flag (``--taguru-<name>``), its ini key
(``taguru_<name>``), its ``taguru-evaluate`` spelling (taguru's own ``--<name>``), metavar,
help text, the parser of its value and how it relates to other flags. pytest's option group and
ini keys (here), ``RawOptions`` and the start-up checks (``run.flag_values``), the drop-in's
scanner, its command line and usage text (``cli.run``) and the offline gate's arguments
(``cli.gate``) are all derived from :data:`OPTION_SPECS`.

This is all the plugin loads when it is inert: it imports nothing beyond the standard library
and pytest, so a session without ``--taguru-eval`` pays for the declarations and nothing else.
Parsers are named here (:data:`ParserName`) and implemented in ``run.flag_values``, imported
only when a run is requested.
"""

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the console script reads the table without importing pytest
    import pytest

FlagValues = dict[str, str | bool | None]
"""Option ``dest`` → the value as given (command line over ini); None when not given."""

PLUGIN_FLAG_PREFIX = "--taguru-"
CLI_FLAG_PREFIX = "--"
"""The drop-in's spelling: taguru's own flag names, so its messages are taguru's."""

DEFAULT_ADDR = "127.0.0.1:8248"
"""The server address when neither ``--url`` nor ``TAGURU_ADDR`` names one (§1.4)."""
DEFAULT_OUT = "evaluation.json"
DEFAULT_REGRESSION_EXIT_CODE = 3
DEFAULT_TIMEOUT_S = 35.0
"""taguru's whole-exchange budget of one request, above the server's own 30 s (§1.5)."""
DEFAULT_RETRIES = 2
DEFAULT_MAX_CONSECUTIVE_FAILURES = 5
DEFAULT_CONCURRENCY = 8
"""Cases in flight at once in each process (once ``auto`` opens its window). Measured
(``benchmarks/bench_concurrency.py``, 2 cores, ms per case at 1/2/4/8/16, ``-n 0``): the
example suite 23.9/16.7/16.9/16.1/16.1; 2,000 one-search synthetic cases on
``--taguru-serve`` 11.8/10.9/11.8/10.6/11.7; 500 of them 5 ms away 19.0/16.4/10.5/11.7/10.2.
8 is at or near the best in each; more threads cost more CPU than they hide."""

ParserName = Literal[
    "positive_int", "exit_status", "seconds", "retries", "count", "slices", "concurrency",
    "shard", "alpha", "tolerances", "inconclusive",
]
"""A value parser of ``run.flag_values`` (``PARSERS``); its message is ``<flag> needs …``."""


@dataclass(frozen=True)
class OptionSpec:
    """One flag: ``--taguru-<name>`` for pytest, ini key ``taguru_<name>``, ``--<name>`` for
    ``taguru-evaluate``."""

    name: str
    metavar: str | None
    """None: a switch (no value)."""
    help: str
    """What the flag does, for every surface; the notes below are appended per surface."""
    needs: str = ""
    """What the flag takes, in ``<flag> needs <what>`` when its value is missing (taguru's
    words), for a value that is not parsed (the parser's); a path's default is ``a file
    path``."""
    is_path: bool = False
    """An ini value is relative to the ini file; a missing value ``needs a file path``."""
    parse: ParserName | None = None
    drop_in: bool = True
    """``taguru evaluate`` has this flag (else ``taguru-evaluate`` refuses it as unknown)."""
    drop_in_value: str | None = None
    """The value the drop-in gives a flag taguru lacks, so that it behaves as taguru does."""
    required: bool = False
    """taguru refuses a run without it (``<flag> <METAVAR> is required``)."""
    fallback: str | None = None
    """What the plugin uses for a required flag that was not given (the drop-in has none)."""
    requires: str | None = None
    """The name of a switch this flag is only legal with."""
    excludes: tuple[str, ...] = ()
    """The names of the flags this one cannot be combined with."""
    field: str | None = None
    """The ``RawOptions`` attribute, when it is not the name in snake case."""

    @property
    def flag(self) -> str:
        return PLUGIN_FLAG_PREFIX + self.name

    @property
    def cli_flag(self) -> str:
        return CLI_FLAG_PREFIX + self.name

    @property
    def dest(self) -> str:
        return "taguru_" + self.name.replace("-", "_")

    @property
    def ini(self) -> str:
        return self.dest

    @property
    def attribute(self) -> str:
        return self.field or self.name.replace("-", "_")

    def synopsis(self, prefix: str) -> str:
        """``--eval FILE`` / ``--assembly``: the flag spelled with ``prefix``, then its metavar."""
        flag = prefix + self.name
        return flag if self.metavar is None else f"{flag} {self.metavar}"

    def help_text(self, prefix: str) -> str:
        """The help with the notes of the surface that spells flags with ``prefix``."""
        notes = []
        if self.required and prefix == CLI_FLAG_PREFIX:
            notes.append("required")
        if self.fallback is not None and prefix == PLUGIN_FLAG_PREFIX:
            notes.append(f"default: {self.fallback}")
        if self.requires is not None:
            notes.append(f"requires {prefix}{self.requires}")
        if self.excludes:
            notes.append("not with " + ", ".join(prefix + name for name in self.excludes))
        return f"{self.help} ({'; '.join(notes)})" if notes else self.help


_BUDGET = "budget per case, >= 1 (assembly, or baseline truncation)"

OPTION_SPECS = (
    OptionSpec(
        "eval",
        "FILE",
        "the eval.jsonl to run; every case becomes a test item",
        is_path=True,
        required=True,
        field="eval_path",
    ),
    OptionSpec(
        "context",
        "NAME",
        "the context to evaluate",
        needs="a name",
        required=True,
        fallback="the eval header's default_target",
    ),
    OptionSpec(
        "url", "URL", f"the server (default: TAGURU_ADDR, else {DEFAULT_ADDR})", needs="a value"
    ),
    OptionSpec(
        "config",
        "FILE",
        "an env file read before the URL is resolved (default: TAGURU_CONFIG)",
        is_path=True,
    ),
    OptionSpec(
        "out", "FILE", f"where to write evaluation.json (default: {DEFAULT_OUT})", is_path=True
    ),
    OptionSpec(
        "html",
        "FILE",
        "also write a self-contained HTML report of the run there (for a partial or failing "
        "run too)",
        is_path=True,
        drop_in=False,
    ),
    OptionSpec(
        "thresholds",
        "FILE",
        f"the thresholds file; a violated bound exits {DEFAULT_REGRESSION_EXIT_CODE}",
        is_path=True,
    ),
    OptionSpec(
        "assembly", None, "evaluate the assembled evidence package instead of passage search"
    ),
    OptionSpec("max-items", "N", f"item {_BUDGET}", parse="positive_int"),
    OptionSpec("max-bytes", "N", f"byte {_BUDGET}", parse="positive_int"),
    OptionSpec("max-tokens", "N", f"token {_BUDGET}", parse="positive_int"),
    OptionSpec(
        "rerank", "MODEL", "rerank model for assembly", needs="a model name", requires="assembly"
    ),
    OptionSpec(
        "serve",
        "IMPORT_FILE",
        "start the embedded reference server loaded with this file",
        is_path=True,
        drop_in=False,
        excludes=("url",),
        field="serve_import",
    ),
    OptionSpec(
        "record",
        "DIR",
        "record every answer the run receives in DIR (corpus text: keep it as private as the "
        "corpus), for --taguru-replay",
        needs="a directory path",
        is_path=True,
        drop_in=False,
        field="record_dir",
    ),
    OptionSpec(
        "replay",
        "DIR",
        "answer every request from the recording in DIR instead of a server; a request it "
        "holds no answer for fails its case",
        needs="a directory path",
        is_path=True,
        drop_in=False,
        excludes=("record", "serve", "url"),
        field="replay_dir",
    ),
    OptionSpec(
        "regression-exit-code",
        "N",
        f"exit status when the gate fails (default {DEFAULT_REGRESSION_EXIT_CODE})",
        parse="exit_status",
        drop_in=False,
    ),
    OptionSpec(
        "gate-partial",
        None,
        "judge aggregate bounds and the baseline on a partial run's subset too (default: "
        "skipped when -k, "
        "node ids, --lf, -x ... leave dataset cases out)",
        drop_in=False,
    ),
    OptionSpec(
        "shard",
        "I/N",
        "run shard I of N: only the cases whose case_id hashes to it (aggregate bounds are "
        "judged when taguru-evaluate merge joins the shards)",
        parse="shard",
        drop_in=False,
    ),
    OptionSpec(
        "show-text",
        None,
        "show served passage text in failure drill-downs (never in the artifact)",
        drop_in=False,
    ),
    OptionSpec(
        "timeout",
        "SECONDS",
        "the whole-exchange deadline of every request: connect, send, headers and body "
        f"(default {DEFAULT_TIMEOUT_S:g})",
        parse="seconds",
        drop_in=False,
        field="timeout_s",
    ),
    OptionSpec(
        "retries",
        "N",
        "times a request answered 429/503, or cut off before any answer, is sent again "
        f"(default {DEFAULT_RETRIES}; 0 = never, as taguru)",
        parse="retries",
        drop_in=False,
        drop_in_value="0",
    ),
    OptionSpec(
        "max-consecutive-failures",
        "K",
        "stop the run (exit 1, no artifact) after K transport failures in a row "
        f"(default {DEFAULT_MAX_CONSECUTIVE_FAILURES}; 0 = never)",
        parse="count",
        drop_in=False,
        drop_in_value="0",
    ),
    OptionSpec(
        "slices",
        "LINES",
        "per-slice scorecards: one 'name: glob [glob ...]' per line (an ini value may span "
        "lines), the globs matched against case ids as fnmatch does",
        parse="slices",
        drop_in=False,
    ),
    OptionSpec(
        "slices-file",
        "FILE",
        'per-slice scorecards from a slices file ({"taguru_slices": 1, "slices": {"name": '
        '["glob", ...]}})',
        is_path=True,
        drop_in=False,
        excludes=("slices",),
    ),
    OptionSpec(
        "slice-thresholds",
        "FILE",
        "gate each slice with a slice thresholds file (the slices come from --taguru-slices, "
        f"--taguru-slices-file or the artifact); a violated bound exits "
        f"{DEFAULT_REGRESSION_EXIT_CODE}",
        is_path=True,
        drop_in=False,
    ),
    OptionSpec(
        "baseline",
        "FILE",
        "compare the run with this earlier evaluation.json, case by case: paired statistics "
        f"per metric; a regressed verdict exits {DEFAULT_REGRESSION_EXIT_CODE}",
        is_path=True,
        drop_in=False,
    ),
    OptionSpec(
        "inconclusive",
        "warn|fail",
        "what an inconclusive baseline verdict does (default: warn)",
        parse="inconclusive",
        drop_in=False,
        requires="baseline",
    ),
    OptionSpec(
        "alpha",
        "A",
        "significance level of the baseline verdicts (default 0.05)",
        parse="alpha",
        drop_in=False,
        requires="baseline",
    ),
    OptionSpec(
        "tolerance",
        "SPEC",
        "tolerated drop of the baseline verdicts: 0.01, per metric recall.mrr=0.02, or both "
        "comma-separated (default 0)",
        parse="tolerances",
        drop_in=False,
        requires="baseline",
    ),
    OptionSpec(
        "save-baseline",
        "FILE",
        "also write the run there as the new baseline, when it completed and its gate passed",
        is_path=True,
        drop_in=False,
    ),
    OptionSpec(
        "concurrency",
        "auto|N",
        "cases in flight at once in each process: the next cases' requests are sent while "
        "pytest runs the current item, each case's in order, its result reported in turn. "
        "auto (the default): one case at a time until the cases are seen waiting on the "
        f"server longer than threads would cost, then up to {DEFAULT_CONCURRENCY}; N: up to "
        "N from the start; 1 = one case at a time, as taguru",
        parse="concurrency",
        drop_in=False,
        drop_in_value="1",
    ),
)

OPTIONS = {spec.name: spec for spec in OPTION_SPECS}
"""The table by name."""


def add_options(parser: "pytest.Parser") -> None:
    """Declare every flag (default None, so "typed" is detectable) and its ini key."""
    group = parser.getgroup("taguru", "taguru retrieval & citation quality gate")
    for spec in OPTION_SPECS:
        help_text = spec.help_text(PLUGIN_FLAG_PREFIX)
        if spec.metavar is None:
            group.addoption(
                spec.flag, action="store_true", default=None, dest=spec.dest, help=help_text
            )
            parser.addini(spec.ini, help_text, type="bool", default=False)
        else:
            group.addoption(
                spec.flag, default=None, dest=spec.dest, metavar=spec.metavar, help=help_text
            )
            parser.addini(spec.ini, help_text, type="string", default="")


def _ini_value(config: "pytest.Config", spec: OptionSpec) -> str | None:
    value = str(config.getini(spec.ini) or "").strip()
    if not value:
        return None
    if spec.is_path and config.inipath is not None and not os.path.isabs(value):
        # Paths in an ini file are relative to that file, as pytest's own testpaths are.
        absolute = config.inipath.parent / value
        value = os.path.relpath(absolute, config.invocation_params.dir)
    return value


def typed_flags(config: "pytest.Config") -> frozenset[str]:
    """The names of the flags typed on the command line (not taken from the ini file)."""
    return frozenset(
        spec.name for spec in OPTION_SPECS if config.getoption(spec.dest) is not None
    )


def given_flags(config: "pytest.Config") -> FlagValues | None:
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
    if values[OPTIONS["eval"].dest] is None and not typed:
        return None
    # Of two flags that exclude each other (one server target: --taguru-url, --taguru-serve or
    # --taguru-replay), the one typed on the command line replaces the other coming from the
    # ini file (``pytest example_suite --taguru-url …``).
    for spec in OPTION_SPECS:
        for excluded in spec.excludes:
            pair = (spec, OPTIONS[excluded])
            for typed_one, other in (pair, pair[::-1]):
                if (
                    config.getoption(typed_one.dest) is not None
                    and config.getoption(other.dest) is None
                ):
                    values[other.dest] = None
    return values
