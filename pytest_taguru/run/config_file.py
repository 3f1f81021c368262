"""The config file (evaluate-run.md §1.4): the docker ``--env-file`` dialect, applied over the
environment before the server URL is resolved.

Nothing here touches ``os.environ``: the environment is passed in and the file's effect is
returned as a merged copy, with the ``taguru: config: …`` notes to print.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_taguru.core.text import is_white_space, trim
from pytest_taguru.core.textfile import UnreadableFile, read_utf8, split_lines
from pytest_taguru.errors import ConfigFileError

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
