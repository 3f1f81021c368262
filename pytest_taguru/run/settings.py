"""Run settings: flags, config file, environment and server URL resolved into one frozen object.

evaluate-run.md §1. The pytest plugin (command line over ini) and the drop-in CLI both collect
the raw flag values into ``RawOptions`` (``flag_values``). Start-up order (§1.3), first failure
wins::

    check_flags(raw)                    # step 1 (the plugin passes require_context=False)
    eval_set = load_eval_set(path)      # step 2          (dataset.py)
    check_limits(eval_set)              # step 3          (dataset.py)
    ...                                 # step 5, thresholds file (gate/thresholds.py)
    settings = resolve_settings(raw, os.environ, default_context=eval_set.default_context)
                                        # steps 6-9: config file, URL, userinfo, parse; token
    print(*settings.config_notes, sep="\n", file=sys.stderr)

Nothing here touches ``os.environ`` or the network: the environment is passed in and the
config file's effect is returned as a merged copy.
"""

from collections.abc import Callable, Mapping
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from pytest_taguru.compare.significance import (
    DEFAULT_ALPHA,
    DEFAULT_INCONCLUSIVE,
    NO_TOLERANCE,
    InconclusivePolicy,
    Tolerances,
)
from pytest_taguru.errors import UsageError
from pytest_taguru.flags import (
    DEFAULT_MAX_CONSECUTIVE_FAILURES,
    DEFAULT_OUT,
    DEFAULT_REGRESSION_EXIT_CODE,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT_S,
    OPTIONS,
)
from pytest_taguru.run.config_file import load_config_file
from pytest_taguru.run.flag_values import (
    RawOptions,
    check_flags,
    parse_alpha_flag,
    parse_concurrency,
    parse_count,
    parse_exit_code,
    parse_inconclusive_flag,
    parse_positive_int,
    parse_retries,
    parse_seconds,
    parse_tolerance_flag,
)
from pytest_taguru.run.prefetch import AUTO_CONCURRENCY, Concurrency
from pytest_taguru.run.server_access import (
    address_hint,
    bearer_token,
    check_base_url,
    default_base_url,
    mask_url,
)

Value = TypeVar("Value")


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
    html: str | None = None
    """Where the HTML report is written (``--taguru-html``), like ``out``; None: not at all."""
    thresholds_path: str | None = None
    assembly: bool = False
    max_items: int | None = None
    max_bytes: int | None = None
    max_tokens: int | None = None
    rerank: str | None = None
    serve_import: str | None = None
    record_dir: str | None = None
    """Where the run's answers are recorded (``--taguru-record``); None: not recorded."""
    replay_dir: str | None = None
    """The recording the run is answered from (``--taguru-replay``); None: a live run."""
    token: SecretStr | None = Field(default=None, repr=False)
    config_notes: tuple[str, ...] = ()
    """``taguru: config: …`` lines for stderr, in file order (§1.4)."""
    regression_exit_code: int = DEFAULT_REGRESSION_EXIT_CODE
    address_hint: str | None = None
    """What to type instead when the server cannot be reached (``server_access.address_hint``)."""
    typed_flags: frozenset[str] = frozenset()
    """The flags typed on the command line (the partial-run policy writes to a typed path)."""
    gate_partial: bool = False
    show_text: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S
    """The whole-exchange deadline of each request (``--taguru-timeout``)."""
    retries: int = DEFAULT_RETRIES
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES
    """The dead-server limit; 0 turns the rule off."""
    baseline: str | None = None
    """The baseline artifact the run is compared with (``--taguru-baseline``)."""
    save_baseline: str | None = None
    inconclusive: InconclusivePolicy = DEFAULT_INCONCLUSIVE
    alpha: float = DEFAULT_ALPHA
    tolerances: Tolerances = NO_TOLERANCE
    concurrency: Concurrency = AUTO_CONCURRENCY
    """Cases in flight at once in each process (``run.prefetch``)."""

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


def resolve_settings(
    raw: RawOptions, environ: Mapping[str, str], *, default_context: str | None = None
) -> Settings:
    """Flags + config file + environment → Settings (§1.3 steps 1 and 6-9, §1.4, §1.5).

    ``default_context`` (the eval header's ``default_target.context``) is used when no context
    flag was given. With ``serve_import`` or ``replay_dir`` the URL is left unresolved
    (``with_base_url`` later: the embedded server's, or the recorded one).
    """
    check_flags(raw, require_context=False)
    assert raw.eval_path is not None  # check_flags guarantees it
    context = raw.context if raw.context is not None else default_context
    if context is None:
        spec = OPTIONS["context"]
        raise UsageError(
            f"{raw.flag(spec.name)} {spec.metavar} is required "
            "(or a default_target.context in the eval header)"
        )
    config_path = raw.config if raw.config is not None else environ.get("TAGURU_CONFIG")
    config = load_config_file(config_path, environ) if config_path is not None else None
    env = environ if config is None else config.environ
    base_url: str | None = None
    resolved_later = raw.serve_import is not None or raw.replay_dir is not None
    hint = None if resolved_later else address_hint(raw.flag("url"), raw.url, env)
    if not resolved_later:
        try:
            base_url = raw.url.rstrip("/") if raw.url is not None else default_base_url(env)
            check_base_url(base_url, raw.flag("url"))
        except UsageError as error:
            # The file's notes are printed before the URL error, as taguru prints them.
            error.preceding = [*error.preceding, *(() if config is None else config.notes)]
            error.hints = [] if hint is None else [hint]
            raise
    token = bearer_token(env)

    def parsed(name: str, parse: Callable[[str | None, str], Value], default: Value) -> Value:
        """A parsed flag value, or its default when the flag was not given."""
        text = raw.value(OPTIONS[name])
        return default if not isinstance(text, str) else parse(text, raw.flag(name))

    def positive(name: str) -> int | None:
        text = raw.value(OPTIONS[name])
        return None if not isinstance(text, str) else parse_positive_int(text, raw.flag(name))

    return Settings(
        eval_path=raw.eval_path,
        context=context,
        base_url=base_url,
        masked_url=None if base_url is None else mask_url(base_url),
        out=DEFAULT_OUT if raw.out is None else raw.out,
        html=raw.html,
        thresholds_path=raw.thresholds,
        assembly=raw.assembly,
        max_items=positive("max-items"),
        max_bytes=positive("max-bytes"),
        max_tokens=positive("max-tokens"),
        rerank=raw.rerank,
        serve_import=raw.serve_import,
        record_dir=raw.record_dir,
        replay_dir=raw.replay_dir,
        token=None if token is None else SecretStr(token),
        config_notes=() if config is None else config.notes,
        regression_exit_code=parsed(
            "regression-exit-code", parse_exit_code, DEFAULT_REGRESSION_EXIT_CODE
        ),
        timeout_s=parsed("timeout", parse_seconds, DEFAULT_TIMEOUT_S),
        retries=parsed("retries", parse_retries, DEFAULT_RETRIES),
        max_consecutive_failures=parsed(
            "max-consecutive-failures", parse_count, DEFAULT_MAX_CONSECUTIVE_FAILURES
        ),
        baseline=raw.baseline,
        save_baseline=raw.save_baseline,
        inconclusive=parsed("inconclusive", parse_inconclusive_flag, DEFAULT_INCONCLUSIVE),
        alpha=parsed("alpha", parse_alpha_flag, DEFAULT_ALPHA),
        tolerances=parsed("tolerance", parse_tolerance_flag, NO_TOLERANCE),
        concurrency=parsed("concurrency", parse_concurrency, AUTO_CONCURRENCY),
        address_hint=hint,
        typed_flags=raw.typed,
        gate_partial=raw.gate_partial,
        show_text=raw.show_text,
    )
