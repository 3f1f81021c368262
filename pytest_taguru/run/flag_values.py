"""The flag values as typed (``RawOptions``), their parsers, and start-up step 1 (§1.2).

Both surfaces collect into ``RawOptions``: the plugin from ``flags.given_flags`` (command line
over ini), the ``taguru-evaluate`` drop-in from its own scan (``cli.run``). Everything here is
derived from the option table (``flags.OPTION_SPECS``): one field per flag, one parser per kind
of value, one message per parser, one loop per kind of check.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pytest_taguru.compare.significance import (
    SpecError,
    parse_alpha,
    parse_inconclusive,
    parse_tolerances,
)
from pytest_taguru.core.limits import MAX_SHARDS, U64_MAX
from pytest_taguru.errors import UsageError
from pytest_taguru.flags import (
    OPTION_SPECS,
    OPTIONS,
    PLUGIN_FLAG_PREFIX,
    FlagValues,
    OptionSpec,
    ParserName,
)
from pytest_taguru.run.prefetch import AUTO_CONCURRENCY, Concurrency
from pytest_taguru.run.shard import ShardSpec
from pytest_taguru.run.slices import SliceLinesParser


@dataclass(frozen=True)
class RawOptions:
    """Flag values as collected (strings as typed; None = not given), one field per
    ``OptionSpec`` (``spec.attribute``), in the table's order.

    ``flag_prefix`` names the flags in messages: ``--taguru-`` for the plugin, ``--`` for the
    drop-in CLI (taguru's own names, so its messages match taguru's).
    """

    eval_path: str | None = None
    context: str | None = None
    url: str | None = None
    config: str | None = None
    out: str | None = None
    html: str | None = None
    thresholds: str | None = None
    assembly: bool = False
    max_items: str | None = None
    max_bytes: str | None = None
    max_tokens: str | None = None
    rerank: str | None = None
    serve_import: str | None = None
    record_dir: str | None = None
    replay_dir: str | None = None
    regression_exit_code: str | None = None
    gate_partial: bool = False
    shard: str | None = None
    show_text: bool = False
    timeout_s: str | None = None
    retries: str | None = None
    max_consecutive_failures: str | None = None
    slices: str | None = None
    slices_file: str | None = None
    slice_thresholds: str | None = None
    baseline: str | None = None
    inconclusive: str | None = None
    alpha: str | None = None
    tolerance: str | None = None
    save_baseline: str | None = None
    concurrency: str | None = None
    flag_prefix: str = PLUGIN_FLAG_PREFIX
    typed: frozenset[str] = frozenset()
    """The names of the flags typed on the command line (the rest came from the ini file)."""

    def flag(self, name: str) -> str:
        """The spelled-out flag, e.g. ``flag("max-items")`` → ``--taguru-max-items``."""
        return self.flag_prefix + name

    def value(self, spec: OptionSpec) -> str | bool | None:
        """The value given for ``spec``."""
        given: str | bool | None = getattr(self, spec.attribute)
        return given


def raw_options(values: FlagValues, typed: frozenset[str] = frozenset()) -> RawOptions:
    """The flag values (``flags.given_flags``) as ``RawOptions``; ``typed`` names the flags
    typed on the command line (``flags.typed_flags``)."""
    given: dict[str, Any] = {}
    for spec in OPTION_SPECS:
        value = values[spec.dest]
        given[spec.attribute] = bool(value) if spec.metavar is None else value
    return RawOptions(**given, typed=typed)


# ---------------------------------------------------------------- value parsers

_RUST_UNSIGNED = re.compile(r"\+?([0-9]+)")


@dataclass(frozen=True)
class UnsignedParser:
    """Rust's unsigned-integer parse (ASCII digits with an optional leading ``+``; no sign
    ``-``, white space or ``_``; leading zeros allowed), then a range. Any failure, a missing
    value included, is the one message ``<flag> needs <needs>``."""

    needs: str
    minimum: int
    maximum: int

    def __call__(self, text: str | None, flag: str) -> int:
        match = None if text is None else _RUST_UNSIGNED.fullmatch(text)
        if match is not None:
            digits = match.group(1).lstrip("0") or "0"
            # Length first: a longer number is out of range anyway, and int() raises past
            # 4300 digits.
            fits = len(digits) <= len(str(self.maximum))
            if fits and self.minimum <= int(digits) <= self.maximum:
                return int(digits)
        raise UsageError(f"{flag} needs {self.needs}")


_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+")


@dataclass(frozen=True)
class SecondsParser:
    """A duration in seconds: a plain decimal (``35``, ``2.5``) greater than 0 and at most
    ``maximum``; any failure, a missing value included, is ``<flag> needs <needs>``."""

    needs: str
    maximum: float

    def __call__(self, text: str | None, flag: str) -> float:
        digits = None if text is None else text.strip()
        if digits is not None and _DECIMAL.fullmatch(digits) and len(digits) <= 20:
            value = float(digits)
            if 0 < value <= self.maximum:
                return value
        raise UsageError(f"{flag} needs {self.needs}")


@dataclass(frozen=True)
class ShardParser:
    """``I/N``: two of Rust's unsigned integers around one ``/``, ``1 <= I <= N <= maximum``;
    any failure, a missing value included, is ``<flag> needs <needs>``."""

    needs: str
    maximum: int

    def __call__(self, text: str | None, flag: str) -> ShardSpec:
        index, slash, count = (text or "").partition("/")
        if slash:
            whole = UnsignedParser(self.needs, 1, self.maximum)
            shard = ShardSpec(whole(index, flag), whole(count, flag))
            if shard.index <= shard.count:
                return shard
        raise UsageError(f"{flag} needs {self.needs}")


Parsed = TypeVar("Parsed", covariant=True)


@dataclass(frozen=True)
class SpecParser(Generic[Parsed]):
    """A value with its own syntax (``compare.significance``): a missing value is
    ``<flag> needs <needs>``, a bad one ``<flag> needs <needs>: <what is wrong>``."""

    needs: str
    parse: Callable[[str], Parsed]

    def __call__(self, text: str | None, flag: str) -> Parsed:
        if text is None:
            raise UsageError(f"{flag} needs {self.needs}")
        try:
            return self.parse(text)
        except SpecError as error:
            raise UsageError(f"{flag} needs {self.needs}: {error}") from None


class FlagParser(Protocol):
    @property
    def needs(self) -> str: ...

    def __call__(self, text: str | None, flag: str) -> object: ...


MAX_RETRIES = 10
"""The most ``--taguru-retries`` accepts: retries stay bounded."""

parse_positive_int = UnsignedParser("a positive integer", 1, U64_MAX)
"""``--max-*`` (evaluate-run.md §1.2 rule 3, assembly.md §1.1): ``usize`` parsing, then ≥ 1."""
parse_exit_code = UnsignedParser("an exit status 0..=255", 0, 255)
"""``--regression-exit-code``: a process exit status."""
parse_seconds = SecondsParser("a number of seconds above 0, at most 86400", 86400.0)
"""``--taguru-timeout``."""
parse_retries = UnsignedParser(f"a whole number 0..={MAX_RETRIES}", 0, MAX_RETRIES)
"""``--taguru-retries``."""
parse_count = UnsignedParser("a whole number (0 turns the rule off)", 0, U64_MAX)
"""``--taguru-max-consecutive-failures``."""
parse_shard = ShardParser(f"a shard I/N with 1 <= I <= N <= {MAX_SHARDS}, e.g. 2/3", MAX_SHARDS)
"""``--taguru-shard``."""

MAX_CONCURRENCY = 64
"""The most ``--taguru-concurrency`` accepts: one thread per case in flight."""


@dataclass(frozen=True)
class ConcurrencyParser:
    """``auto`` (the window opens when cases wait on the server), or a fixed window read by
    ``fixed``, whose message (``<flag> needs <needs>``) names both."""

    fixed: UnsignedParser

    @property
    def needs(self) -> str:
        return self.fixed.needs

    def __call__(self, text: str | None, flag: str) -> Concurrency:
        return AUTO_CONCURRENCY if text == "auto" else Concurrency(self.fixed(text, flag))


parse_concurrency = ConcurrencyParser(
    UnsignedParser(f"auto or a whole number 1..={MAX_CONCURRENCY}", 1, MAX_CONCURRENCY)
)
"""``--taguru-concurrency``."""

parse_alpha_flag = SpecParser("a significance level between 0 and 1", parse_alpha)
"""``--taguru-alpha``."""
parse_tolerance_flag = SpecParser("a tolerance (0.01, recall.mrr=0.02, or both)", parse_tolerances)
"""``--taguru-tolerance``."""
parse_inconclusive_flag = SpecParser("warn or fail", parse_inconclusive)
"""``--taguru-inconclusive``."""

PARSERS: dict[ParserName, FlagParser] = {
    "positive_int": parse_positive_int,
    "exit_status": parse_exit_code,
    "seconds": parse_seconds,
    "retries": parse_retries,
    "count": parse_count,
    "slices": SliceLinesParser(),
    "concurrency": parse_concurrency,
    "shard": parse_shard,
    "alpha": parse_alpha_flag,
    "tolerances": parse_tolerance_flag,
    "inconclusive": parse_inconclusive_flag,
}


def needs(spec: OptionSpec) -> str:
    """What ``spec`` takes, for ``<flag> needs <what>`` (taguru's words): its parser's, else
    the table's, else ``a file path`` for a path."""
    if spec.parse is not None:
        return PARSERS[spec.parse].needs
    return "a file path" if spec.is_path and not spec.needs else spec.needs


def flag_value(spec: OptionSpec, text: str | None, flag: str) -> object:
    """The value of a flag that takes one: parsed when the table names a parser, else the text
    itself. A missing (None) value is ``<flag> needs <what>``."""
    if spec.parse is not None:
        return PARSERS[spec.parse](text, flag)
    if text is None:
        raise UsageError(f"{flag} needs {needs(spec)}")
    return text


# ---------------------------------------------------------------- step 1: flag values


def check_flags(raw: RawOptions, *, require_context: bool = True) -> None:
    """Start-up step 1 (§1.2) in taguru's order: parsed values (``--max-*``, then the exit
    status; and an empty path of a flag of ours), then required flags (``--eval``, then
    ``--context`` unless the caller falls back to the eval header: ``require_context=False``),
    then flags that need or exclude another (``--rerank`` without ``--assembly``, ``--serve``
    with ``--url``, ``--replay`` with a server or ``--record``).
    """
    for spec in OPTION_SPECS:
        value = raw.value(spec)
        if spec.parse is not None and isinstance(value, str):
            flag_value(spec, value, raw.flag(spec.name))
        elif spec.is_path and not spec.drop_in and value == "":
            # Our own paths (taguru has no word on them): an empty one would mean ".".
            raise UsageError(f"{raw.flag(spec.name)} needs {needs(spec)}")
    for spec in OPTION_SPECS:
        fallback_allowed = spec.fallback is not None and not require_context
        if spec.required and raw.value(spec) is None and not fallback_allowed:
            raise UsageError(f"{raw.flag(spec.name)} {spec.metavar} is required")
    for spec in OPTION_SPECS:
        if raw.value(spec) is None:
            continue
        if spec.requires is not None and not raw.value(OPTIONS[spec.requires]):
            raise UsageError(f"{raw.flag(spec.name)} requires {raw.flag(spec.requires)}")
        for excluded in spec.excludes:
            if raw.value(OPTIONS[excluded]) is not None:
                raise UsageError(
                    f"{raw.flag(spec.name)} cannot be combined with {raw.flag(excluded)}"
                )
