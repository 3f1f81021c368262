"""Run settings: flags, config file, environment and server URL resolved into one frozen object.

evaluate-run.md §1. The pytest plugin (command line over ini) and the drop-in CLI both collect
the raw flag values into ``RawOptions``. Start-up order (§1.3), first failure wins::

    check_flags(raw)                    # step 1 (the plugin passes require_context=False)
    eval_set = load_eval_set(path)      # step 2          (dataset.py)
    check_limits(eval_set)              # step 3          (dataset.py)
    ...                                 # step 5, thresholds file (thresholds.py)
    settings = resolve_settings(raw, os.environ, default_context=eval_set.default_context)
                                        # steps 6-9: config file, URL, userinfo, parse; token
    print(*settings.config_notes, sep="\n", file=sys.stderr)

Nothing here touches ``os.environ`` or the network: the environment is passed in and the
config file's effect is returned as a merged copy.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import AddressValueError, IPv6Address
from typing import Any

import ada_url
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from pytest_taguru.core.text import is_white_space, trim
from pytest_taguru.core.textfile import UnreadableFile, read_utf8, split_lines
from pytest_taguru.errors import ConfigFileError, UsageError
from pytest_taguru.run.dataset import U64_MAX

DEFAULT_OUT = "evaluation.json"
DEFAULT_ADDR = "127.0.0.1:8248"
DEFAULT_REGRESSION_EXIT_CODE = 3
PLUGIN_FLAG_PREFIX = "--taguru-"
CLI_FLAG_PREFIX = "--"
UNPARSEABLE_URL = "<unparseable-url>"

USERINFO_MESSAGE = (
    "the URL must not carry credentials (user:password@…) — set TAGURU_API_TOKEN "
    "(or TAGURU_API_TOKENS) instead"
)

KNOWN_CONFIG_KEYS = frozenset(
    # Every variable taguru reads (its src/config.rs KNOWN_KEYS); any other TAGURU_* key in a
    # config file earns the "typo?" note.
    [
        "TAGURU_ADDR",
        "TAGURU_DATA_DIR",
        "TAGURU_CACHE_BYTES",
        "TAGURU_RETRIEVAL_CACHE_BYTES",
        "TAGURU_SEMANTIC_CACHE_THRESHOLD",
        "TAGURU_FLUSH_SECS",
        "TAGURU_WAL",
        "TAGURU_WAL_MAX_BYTES",
        "TAGURU_PASSAGES_WAL_MAX_BYTES",
        "TAGURU_REPLICATE_URL",
        "TAGURU_REPLICATE_INTERVAL_MS",
        "TAGURU_TAKEOVER",
        "TAGURU_REPLICA",
        "TAGURU_WRITER_URL",
        "TAGURU_ROUTE_MAP",
        "TAGURU_API_TOKEN",
        "TAGURU_API_TOKENS",
        "TAGURU_KEY_SCOPES",
        "TAGURU_PUBLIC_URL",
        "TAGURU_MAX_BODY_BYTES",
        "TAGURU_MCP_MAX_RESULT_BYTES",
        "TAGURU_REQUEST_TIMEOUT_SECS",
        "TAGURU_RATE_LIMIT_PER_MIN",
        "TAGURU_AUTH_FAIL_LIMIT_PER_MIN",
        "TAGURU_MAX_CONCURRENT_REQUESTS",
        "TAGURU_MAX_CONCURRENT_HEAVY_OPS",
        "TAGURU_AUTO_COMPACT",
        "TAGURU_AUTO_COMPACT_RATIO",
        "TAGURU_CONTEXT_QUOTAS",
        "TAGURU_CROSS_SEARCH_CONCURRENCY",
        "TAGURU_EMBED_URL",
        "TAGURU_EMBED_MODEL",
        "TAGURU_EMBED_API_KEY",
        "TAGURU_EMBED_TIMEOUT_SECS",
        "TAGURU_EMBED_AUTO",
        "TAGURU_EMBED_PARALLEL",
        "TAGURU_EMBED_PASSAGES",
        "TAGURU_PASSAGE_VECTOR_LIMIT",
        "TAGURU_SEMANTIC_FLOOR",
        "TAGURU_RERANK_URL",
        "TAGURU_RERANK_MODEL",
        "TAGURU_RERANK_API_KEY",
        "TAGURU_RERANK_TIMEOUT_SECS",
        "TAGURU_EXTRACT_URL",
        "TAGURU_EXTRACT_MODEL",
        "TAGURU_EXTRACT_API_KEY",
        "TAGURU_EXTRACT_TIMEOUT_SECS",
        "TAGURU_EXTRACT_PARALLEL",
        "TAGURU_EXTRACT_FACT_BUDGET",
        "TAGURU_EXTRACT_MAX_ATTEMPTS",
        "TAGURU_EXTRACT_CORRECTIVE_CONTEXT_BYTES",
        "TAGURU_EXTRACT_STRUCTURED_OUTPUT",
        "TAGURU_EXTRACT_MAX_OUTPUT_TOKENS",
        "TAGURU_EXTRACT_ESCALATION_FACTOR",
        "TAGURU_EXTRACT_CHUNK_BYTES",
        "TAGURU_EXTRACT_LOSSY",
        "TAGURU_EXTRACT_CANDIDATES",
        "TAGURU_EXTRACT_VOCABULARY",
        "TAGURU_EXTRACT_COVERAGE",
        "TAGURU_EXTRACT_DIAGNOSTICS",
        "TAGURU_EXTRACT_DIAGNOSTICS_RAW_BYTES",
        "TAGURU_EXTRACT_SCHEMA",
        "TAGURU_LOG_FORMAT",
        "TAGURU_LOG_SEARCHES",
        "TAGURU_METRICS_PER_CONTEXT",
        "TAGURU_CONFIG",
    ]
)


@dataclass(frozen=True)
class RawOptions:
    """Flag values as collected (strings as typed; None = not given).

    ``flag_prefix`` names the flags in messages: ``--taguru-`` for the plugin, ``--`` for the
    drop-in CLI (taguru's own names, so its messages match taguru's).
    """

    eval_path: str | None = None
    context: str | None = None
    url: str | None = None
    config: str | None = None
    out: str | None = None
    thresholds: str | None = None
    assembly: bool = False
    max_items: str | None = None
    max_bytes: str | None = None
    max_tokens: str | None = None
    rerank: str | None = None
    serve_import: str | None = None
    regression_exit_code: str | None = None
    flag_prefix: str = PLUGIN_FLAG_PREFIX

    def flag(self, name: str) -> str:
        """The spelled-out flag, e.g. ``flag("max-items")`` → ``--taguru-max-items``."""
        return self.flag_prefix + name


class Settings(BaseModel):
    """Everything a run needs, resolved once. The token never shows in repr or dumps."""

    model_config = ConfigDict(frozen=True)

    eval_path: str
    context: str
    base_url: str | None
    """Unmasked, trailing slashes stripped; None only until the embedded server has started."""
    masked_url: str | None
    out: str = DEFAULT_OUT
    """The artifact path as given (``inputs.out``), relative to the working directory."""
    thresholds_path: str | None = None
    assembly: bool = False
    max_items: int | None = None
    max_bytes: int | None = None
    max_tokens: int | None = None
    rerank: str | None = None
    serve_import: str | None = None
    token: SecretStr | None = Field(default=None, repr=False)
    config_notes: tuple[str, ...] = ()
    """``taguru: config: …`` lines for stderr, in file order (§1.4)."""
    regression_exit_code: int = DEFAULT_REGRESSION_EXIT_CODE

    @property
    def has_budget(self) -> bool:
        """True when any ``--max-*`` flag was given."""
        return any(v is not None for v in (self.max_items, self.max_bytes, self.max_tokens))

    @property
    def token_value(self) -> str | None:
        """The token for ``Authorization: Bearer …``, or None for no header. Never log it."""
        return None if self.token is None else self.token.get_secret_value()

    def with_base_url(self, url: str) -> "Settings":
        """A copy targeting ``url`` (e.g. the embedded server), checked and masked like --url."""
        base_url = url.rstrip("/")
        check_base_url(base_url)
        return self.model_copy(update={"base_url": base_url, "masked_url": mask_url(base_url)})


# ---------------------------------------------------------------- step 1: flag values

_RUST_UNSIGNED = re.compile(r"\+?[0-9]+")


def parse_positive_int(text: str, flag: str) -> int:
    """Rust ``usize`` parsing, then ≥ 1: ASCII digits with an optional leading ``+``, no sign
    ``-``, whitespace or ``_``, at most 2⁶⁴−1. Else UsageError ``<flag> needs a positive integer``.
    """
    value = int(text) if _RUST_UNSIGNED.fullmatch(text) else 0
    if not 1 <= value <= U64_MAX:
        raise UsageError(f"{flag} needs a positive integer")
    return value


def parse_exit_code(text: str, flag: str) -> int:
    """An exit status 0..=255 written as ASCII digits (optional ``+``)."""
    if _RUST_UNSIGNED.fullmatch(text) is None or int(text) > 255:
        raise UsageError(f"{flag} needs an exit status 0..=255")
    return int(text)


def check_flags(raw: RawOptions, *, require_context: bool = True) -> None:
    """Start-up step 1 (§1.2) in taguru's order: ``--max-*`` values, then missing eval,
    missing context (unless the caller falls back to the eval header), rerank without assembly.
    """
    for name, value in (
        ("max-items", raw.max_items),
        ("max-bytes", raw.max_bytes),
        ("max-tokens", raw.max_tokens),
    ):
        if value is not None:
            parse_positive_int(value, raw.flag(name))
    if raw.regression_exit_code is not None:
        parse_exit_code(raw.regression_exit_code, raw.flag("regression-exit-code"))
    if raw.eval_path is None:
        raise UsageError(f"{raw.flag('eval')} FILE is required")
    if raw.context is None and require_context:
        raise UsageError(f"{raw.flag('context')} NAME is required")
    if raw.rerank is not None and not raw.assembly:
        raise UsageError(f"{raw.flag('rerank')} requires {raw.flag('assembly')}")
    if raw.serve_import is not None and raw.url is not None:
        raise UsageError(f"{raw.flag('serve')} cannot be combined with {raw.flag('url')}")


def resolve_settings(
    raw: RawOptions, environ: Mapping[str, str], *, default_context: str | None = None
) -> Settings:
    """Flags + config file + environment → Settings (§1.3 steps 1 and 6-9, §1.4, §1.5).

    ``default_context`` (the eval header's ``default_target.context``) is used when no context
    flag was given. With ``serve_import`` the URL is left unresolved (``with_base_url`` later).
    """
    check_flags(raw, require_context=False)
    assert raw.eval_path is not None  # check_flags guarantees it
    context = raw.context if raw.context is not None else default_context
    if context is None:
        raise UsageError(
            f"{raw.flag('context')} NAME is required "
            "(or a default_target.context in the eval header)"
        )
    config_path = raw.config if raw.config is not None else environ.get("TAGURU_CONFIG")
    config = load_config_file(config_path, environ) if config_path is not None else None
    env = environ if config is None else config.environ
    base_url: str | None = None
    if raw.serve_import is None:
        try:
            base_url = raw.url.rstrip("/") if raw.url is not None else default_base_url(env)
            check_base_url(base_url, raw.flag("url"))
        except UsageError as error:
            # The file's notes are printed before the URL error, as taguru prints them.
            error.preceding = [*error.preceding, *(() if config is None else config.notes)]
            raise
    token = bearer_token(env)

    def positive(name: str, value: str | None) -> int | None:
        return None if value is None else parse_positive_int(value, raw.flag(name))

    exit_code = raw.regression_exit_code
    return Settings(
        eval_path=raw.eval_path,
        context=context,
        base_url=base_url,
        masked_url=None if base_url is None else mask_url(base_url),
        out=DEFAULT_OUT if raw.out is None else raw.out,
        thresholds_path=raw.thresholds,
        assembly=raw.assembly,
        max_items=positive("max-items", raw.max_items),
        max_bytes=positive("max-bytes", raw.max_bytes),
        max_tokens=positive("max-tokens", raw.max_tokens),
        rerank=raw.rerank,
        serve_import=raw.serve_import,
        token=None if token is None else SecretStr(token),
        config_notes=() if config is None else config.notes,
        regression_exit_code=(
            DEFAULT_REGRESSION_EXIT_CODE
            if exit_code is None
            else parse_exit_code(exit_code, raw.flag("regression-exit-code"))
        ),
    )


# ---------------------------------------------------------------- config file (§1.4)


@dataclass(frozen=True)
class ConfigFile:
    """A config file applied over an environment: the merged copy and the notes to print."""

    environ: Mapping[str, str]
    notes: tuple[str, ...]


def parse_config_text(text: str, path: str) -> list[tuple[str, str]]:
    """The docker ``--env-file`` dialect → ``(key, value)`` pairs in file order.

    A leading BOM is dropped; each line is trimmed; blank lines and ``#`` lines are skipped;
    others split at the first ``=`` with key and value trimmed; the key must be non-empty and
    free of white space. Values are otherwise verbatim (no quotes, no expansion).
    """
    pairs: list[tuple[str, str]] = []
    for number, raw_line in enumerate(split_lines(text.removeprefix("\ufeff")), start=1):
        line = trim(raw_line)
        if not line or line.startswith("#"):
            continue
        key, separator, value = line.partition("=")
        if not separator:
            raise ConfigFileError(
                f"config {path}: line {number}: expected KEY=VALUE, got '{raw_line}'"
            )
        key = trim(key)
        if not key or any(is_white_space(ch) for ch in key):
            raise ConfigFileError(f"config {path}: line {number}: '{key}' is not a variable name")
        pairs.append((key, trim(value)))
    return pairs


def apply_config(pairs: list[tuple[str, str]], environ: Mapping[str, str]) -> ConfigFile:
    """Apply parsed pairs over ``environ`` (unchanged): the real environment wins; within the
    file the last value of a key wins. Notes, in file order, per pair: the typo note first for
    an unknown ``TAGURU_*`` key, then "set in the environment" or "appears more than once".
    """
    merged = dict(environ)
    seen: set[str] = set()
    notes: list[str] = []
    for key, value in pairs:
        if key.startswith("TAGURU_") and key not in KNOWN_CONFIG_KEYS:
            notes.append(f"taguru: config: {key} is not a variable taguru reads (typo?)")
        if key in environ:
            notes.append(f"taguru: config: {key} set in the environment; the file value is ignored")
            continue
        if key in seen:
            notes.append(
                f"taguru: config: {key} appears more than once in the file; the last value wins"
            )
        seen.add(key)
        merged[key] = value
    return ConfigFile(environ=merged, notes=tuple(notes))


def load_config_file(path: str, environ: Mapping[str, str]) -> ConfigFile:
    """Read, parse (whole file first) and apply the config file at ``path``.

    Raises ConfigFileError ``cannot read config <path>: <error>`` or
    ``config <path>: line <n>: <problem>``.
    """
    try:
        text = read_utf8(path)
    except UnreadableFile as error:
        raise ConfigFileError(f"cannot read config {path}: {error.reason}") from None
    return apply_config(parse_config_text(text, path), environ)


# ---------------------------------------------------------------- URL (§1.4, §1.6)

_UNSPECIFIED_V4 = re.compile(r"0\.0\.0\.0:([0-9]+)")
_BRACKETED_V6 = re.compile(r"\[([^\]]*)\]:([0-9]+)")
_SCOPE = re.compile(r"%([0-9]+)")


def default_base_url(environ: Mapping[str, str]) -> str:
    """``http://`` + TAGURU_ADDR (default 127.0.0.1:8248), an unspecified IP replaced by the
    loopback of its family; UsageError when the address ends with port ``:0``."""
    address = environ.get("TAGURU_ADDR", DEFAULT_ADDR)
    host_port = _loopback_of(address)
    if host_port.endswith(":0"):
        raise UsageError(
            f"TAGURU_ADDR ({address}) binds to port 0 (OS-assigned) — the actual port can't be "
            "discovered from here; pass the server's real URL explicitly: "
            "'taguru health http://host:PORT'"
        )
    return f"http://{host_port}"


def _loopback_of(address: str) -> str:
    """``address`` unchanged unless it is a socket address (Rust ``SocketAddr`` syntax) with
    the unspecified IP, which becomes ``127.0.0.1:<port>`` or ``[::1]:<port>``."""
    v4 = _UNSPECIFIED_V4.fullmatch(address)
    if v4 is not None and int(v4.group(1)) <= 0xFFFF:
        return f"127.0.0.1:{int(v4.group(1))}"
    v6 = _BRACKETED_V6.fullmatch(address)
    if v6 is None or int(v6.group(2)) > 0xFFFF:
        return address
    ip, percent, scope = v6.group(1).partition("%")
    if percent and (_SCOPE.fullmatch(percent + scope) is None or int(scope) > 0xFFFFFFFF):
        return address
    try:
        unspecified = IPv6Address(ip).is_unspecified
    except AddressValueError:
        return address
    if not unspecified:
        return address
    scope_text = f"%{int(scope)}" if percent and int(scope) else ""
    return f"[::1{scope_text}]:{int(v6.group(2))}"


def _parse_url(url: str) -> Any:
    try:
        return ada_url.URL(url)
    except ValueError:
        return None


def check_base_url(base_url: str, url_flag: str = "--url") -> None:
    """Steps 8-9: refuse userinfo (when the URL parses), then an unparsable URL (WHATWG)."""
    parsed = _parse_url(base_url)
    if parsed is None:
        raise UsageError(f"the {url_flag} value could not be parsed as a URL")
    if parsed.username or parsed.password:
        raise UsageError(USERINFO_MESSAGE)


def mask_url(url: str) -> str:
    """``<scheme>://<host>[:<port>]`` of the parsed URL (§1.6).

    The host is parser-normalized (lowercase, punycode, bracketed IPv6, canonical IPv4); a
    default port is dropped; path, query, fragment and userinfo never appear. No host gives
    ``<scheme>://``; an unparsable value gives ``<unparseable-url>``.
    """
    parsed = _parse_url(url)
    if parsed is None:
        return UNPARSEABLE_URL
    masked = f"{parsed.protocol.removesuffix(':')}://{parsed.hostname}"
    return f"{masked}:{parsed.port}" if parsed.port else masked


# ---------------------------------------------------------------- bearer token (§1.5)


def bearer_token(environ: Mapping[str, str]) -> str | None:
    """``TAGURU_API_TOKEN`` trimmed if non-empty; else the first ``name:token`` entry of the
    comma-separated ``TAGURU_API_TOKENS`` whose trimmed token (after the first ``:``) is
    non-empty; else None."""
    token = trim(environ.get("TAGURU_API_TOKEN", ""))
    if token:
        return token
    for entry in environ.get("TAGURU_API_TOKENS", "").split(","):
        _, separator, secret = trim(entry).partition(":")
        if separator and trim(secret):
            return trim(secret)
    return None
