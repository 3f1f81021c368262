"""The controller's preflight before any case runs, and the context re-read after the run.

In order: the version-skew probe (a warning at most), reachability, the context entry (its
revision and last write), the embedding status (never fatal), the keyset walk of stored
sources, and the expected-source check. Problems raise ``UsageError`` (exit 2) or ``RunError``
(exit 1) with the exact message, without the ``taguru: evaluate: `` prefix the caller prints.
Specification: ``evaluate-run.md`` §3.1, §3.3; ``server-wire.md`` §2.0.
"""

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from pydantic import ValidationError

from pytest_taguru.core.limits import U64_MAX
from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.suggest import did_you_mean
from pytest_taguru.core.text import trim
from pytest_taguru.core.wire import ContextEntry, Revision
from pytest_taguru.errors import PREFIX, RunError, UnreachableError, UsageError
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.envelope import decode_error_text
from pytest_taguru.run.eval_models import EvalSet
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.waiting import waiting_notice

CLI_VERSION = "0.9.3"
"""The taguru version whose evaluator this plugin reproduces; the skew probe compares to it."""

SOURCES_PAGE_LIMIT = 1000
"""Page size of the sources keyset walk (the server's ceiling)."""



class PreflightSettings(Protocol):
    """The two settings the preflight reads."""

    @property
    def context(self) -> str: ...

    @property
    def masked_url(self) -> str | None: ...


@dataclass(frozen=True)
class ContextFacts:
    """What the run records from a context entry: its revision triple and last write."""

    revision: Revision
    last_write_epoch: int


@dataclass(frozen=True)
class PreflightFacts:
    """Everything the preflight established.

    ``embeddings_read`` is false when the embedding status could not be read (then
    ``corpus.embeddings`` is absent); ``provider_model`` is its string model or ``None``.
    """

    context: ContextFacts
    embeddings_read: bool
    provider_model: str | None
    sources: frozenset[str]
    server_version: str | None = None
    """The string ``version`` of the ``/health`` answer, if it has one."""

    @property
    def sources_count(self) -> int:
        return len(self.sources)


# --- version skew (§3.1 step 2) --------------------------------------------------------------


def _rust_u64(text: str) -> int | None:
    """Rust ``u64::from_str``: ASCII digits with an optional leading ``+``."""
    digits = text[1:] if text.startswith("+") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(digits)
    return value if value <= U64_MAX else None


def major_minor(version: str) -> tuple[int, int] | None:
    """The first two ``.``-separated fields of ``version`` as integers, if both parse."""
    parts = version.split(".")
    if len(parts) < 2:
        return None
    major, minor = _rust_u64(parts[0]), _rust_u64(parts[1])
    return None if major is None or minor is None else (major, minor)


def server_version(health_body: str) -> str | None:
    """The string ``version`` of a ``/health`` body that is a JSON object, else ``None``."""
    try:
        parsed: Any = read_json(health_body, exact_wide_integers=True)
    except SerdeError:
        return None
    version = parsed.get("version") if isinstance(parsed, dict) else None
    return version if isinstance(version, str) else None


def skew_warning(base: str, cli_version: str, health_body: str) -> str | None:
    """The version-skew warning line for a status-200 ``/health`` body, or ``None``.

    ``ok`` (after trimming) is a pre-0.5 server; a JSON object whose string ``version`` has a
    ``major.minor`` other than the CLI's warns with that version; anything else is silent.
    ``base`` is the unmasked base URL.
    """
    body = trim(health_body)
    tail = (
        " — minor versions differ, and pre-1.0 a minor may change response shapes;"
        " continuing anyway"
    )
    head = f"{PREFIX}warning: this CLI is {cli_version} but the server at {base}"
    if body == "ok":
        return f"{head} answers /health as a pre-0.5 server{tail}"
    version = server_version(body)
    if version is None:
        return None
    mine, theirs = major_minor(cli_version), major_minor(version)
    if mine is None or theirs is None or mine == theirs:
        return None
    return f"{head} runs {version}{tail}"


# --- the context entry (§3.1 step 4, §3.3) ---------------------------------------------------


def context_facts(context: str, result: Any, when: str = "") -> ContextFacts:
    """Revision and last write of a ``GET /contexts/{name}`` result.

    A result that does not decode is a run error: ``<context>: unreadable context entry<when>:
    <details>``.
    """
    try:
        entry = ContextEntry.model_validate(result)
    except ValidationError as error:
        raise RunError(
            f"{context}: unreadable context entry{when}: {decode_error_text(error)}"
        ) from error
    return ContextFacts(revision=entry.revision, last_write_epoch=entry.usage.last_write_epoch)


def read_context_entry(client: TaguruClient, context: str) -> ContextFacts:
    """The first ``GET /contexts/{name}``: a 404 is a usage error, anything else a run error."""
    try:
        result = client.get_json(["contexts", context])
    except CallFailed as failure:
        if failure.not_found:
            raise UsageError(failure.message) from failure
        raise RunError(failure.message) from failure
    return context_facts(context, result)


def reread_context(client: TaguruClient, context: str) -> ContextFacts:
    """The post-run ``GET /contexts/{name}``: every failure, 404 included, is a run error."""
    try:
        result = client.get_json(["contexts", context])
    except CallFailed as failure:
        raise RunError(
            f"{context}: could not re-read the context after the run: {failure.message}"
        ) from failure
    return context_facts(context, result, " after the run")


# --- embeddings, sources, expected sources (§3.1 steps 5–7) ----------------------------------


def read_provider_model(client: TaguruClient, context: str) -> str | None:
    """``GET /contexts/{name}/embeddings``: ``result.provider_model`` if a string, else ``None``.

    Any successful envelope counts as read; raises :class:`CallFailed` when it cannot be read.
    """
    result = client.get_json(["contexts", context, "embeddings"])
    model = result.get("provider_model") if isinstance(result, dict) else None
    return model if isinstance(model, str) else None


def list_sources(client: TaguruClient, context: str) -> frozenset[str]:
    """Keyset-walk ``GET /contexts/{name}/sources`` until an empty page (§3.1 step 6).

    A short page does not end the walk. Each non-empty page after the first must start
    strictly after the cursor (code-point order). Every problem is a :class:`RunError`.
    """
    names: set[str] = set()
    cursor: str | None = None
    while True:
        query = [("limit", str(SOURCES_PAGE_LIMIT))]
        if cursor is not None:
            query.append(("after", cursor))
        try:
            result = client.get_json(["contexts", context, "sources"], query)
        except CallFailed as failure:
            raise RunError(failure.message) from failure
        items = result.get("sources") if isinstance(result, dict) else None
        if not isinstance(items, list):
            raise RunError(f"{context}: not a taguru sources page")
        if not all(isinstance(item, str) for item in items):
            raise RunError(f"{context}: a sources entry is not a string")
        if not items:
            return frozenset(names)
        if cursor is not None and items[0] <= cursor:
            raise RunError(f"{context}: the server's sources page did not advance past '{cursor}'")
        cursor = items[-1]
        names.update(items)


def missing_source_lines(eval_set: EvalSet, context: str, sources: frozenset[str]) -> list[str]:
    """One message per (case, expected source) the context does not carry, relevance 0 too.

    Cases in file order, entries in declared order, duplicates kept.
    """
    return [
        f"case '{case.case_id}': expected_sources names '{expected.source}', "
        f"which '{context}' does not carry"
        for case in eval_set.cases
        for expected in case.expected_sources
        if expected.source not in sources
    ]


def missing_source_hints(eval_set: EvalSet, sources: frozenset[str]) -> list[str]:
    """For each line of :func:`missing_source_lines`: where it is written, and the closest
    source the context does carry (pytest-taguru's addition to taguru's message)."""
    hints = []
    for case in eval_set.cases:
        for index, expected in enumerate(case.expected_sources):
            if expected.source in sources:
                continue
            suggestion = did_you_mean(expected.source, sources) or "no stored source is close"
            hints.append(
                f"{eval_set.path}:{case.line}: case '{case.case_id}': "
                f"expected_sources[{index}].source '{expected.source}' — {suggestion}"
            )
    return hints


def _print_all_but_last(lines: Sequence[str], stderr: TextIO) -> str:
    for line in lines[:-1]:
        print(f"{PREFIX}{line}", file=stderr)
    return lines[-1]


def run_preflight(
    client: TaguruClient,
    settings: PreflightSettings,
    eval_set: EvalSet,
    *,
    stderr: TextIO,
    cli_version: str = CLI_VERSION,
) -> PreflightFacts:
    """§3.1 steps 2–7 (the caller has printed the target line).

    Warnings go to ``stderr`` as they occur. When expected sources are missing, every line but
    the last is printed here and the last is the raised ``UsageError``'s message, so the
    caller's one error line completes the list.
    """
    context = settings.context

    def step(what: str) -> AbstractContextManager[None]:
        return waiting_notice(stderr, f"{what} at {settings.masked_url}")

    with step("GET /health"):
        probe = client.skew_probe()
    if probe is not None:
        warning = skew_warning(client.base_url, cli_version, probe)
        if warning is not None:
            print(warning, file=stderr)
    try:
        with step("GET /health"):
            health = client.health()
    except CallFailed as failure:
        raise UnreachableError(
            f"server at {settings.masked_url} is not reachable: {failure.message}"
        ) from failure
    with step(f"GET /contexts/{context}"):
        facts = read_context_entry(client, context)
    embeddings_read = True
    try:
        with step(f"GET /contexts/{context}/embeddings"):
            provider_model = read_provider_model(client, context)
    except CallFailed as failure:
        print(
            f"{PREFIX}{context}: could not read embedding status (recording none): "
            f"{failure.message}",
            file=stderr,
        )
        embeddings_read, provider_model = False, None
    with step(f"GET /contexts/{context}/sources"):
        sources = list_sources(client, context)
    missing = missing_source_lines(eval_set, context, sources)
    if missing:
        refusal = UsageError(_print_all_but_last(missing, stderr))
        refusal.hints = missing_source_hints(eval_set, sources)
        raise refusal
    return PreflightFacts(
        facts, embeddings_read, provider_model, sources, server_version(health)
    )
