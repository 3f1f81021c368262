"""The taguru HTTP client: the calls a run makes, retried and counted per case.

One :class:`TaguruClient` per process owns the connection pool, the retry policy and the
dead-server streak; :meth:`TaguruClient.for_case` gives each case a view with its own counts
(retries, the tally the dead-server rule reads, the start of a retried call's final attempt)
over the same pool, so that cases may run side by side. Each attempt is one bounded exchange
(``run.exchange``: redirects, body, the whole-exchange deadline); the answer then goes through
the envelope rule (``run.envelope``). URLs are built by ``run.urls``.

A client (or a case's view) may hold a tape (``run.recording``): each call's final outcome is
written on it, and it travels with each request, so that a replayed run's transport answers
from it through this same code path. :func:`client_for` is where the transport is chosen:
the network, or the recording.
"""

import copy
import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self

import httpx

from pytest_taguru.core.jsontext import dumps_compact
from pytest_taguru.flags import DEFAULT_TIMEOUT_S
from pytest_taguru.run.dead_server import CallTally, FailureStreak
from pytest_taguru.run.deadline import BoundedClient
from pytest_taguru.run.envelope import status_failure, unwrap, visible_header
from pytest_taguru.run.exchange import Answer, CallFailed, exchange
from pytest_taguru.run.recording.tapes import TAPE_EXTENSION, ReplayTransport, Tape
from pytest_taguru.run.retry import NO_RETRIES, RETRIED_STATUSES, RetryPolicy
from pytest_taguru.run.urls import UrlError, join_segments

SKEW_PROBE_TIMEOUT_S = 4.0
"""Budget of the best-effort version-skew ``GET /health``."""


class ClientSettings(Protocol):
    """The settings a run's clients are made from (``run.settings.Settings``)."""

    @property
    def base_url(self) -> str | None: ...

    @property
    def token_value(self) -> str | None: ...

    @property
    def timeout_s(self) -> float: ...

    @property
    def retries(self) -> int: ...

    @property
    def max_consecutive_failures(self) -> int: ...

    @property
    def replay_dir(self) -> str | None: ...


class _Cookieless(httpx.Cookies):
    """No cookie is ever stored or replayed (taguru's client keeps none): nothing is taken
    from an answer, which also spares httpx's per-answer cookie parsing."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


@dataclass
class CallCounts:
    """What a client (or a case's view of it) counted over its calls."""

    retries: int = 0
    """Attempts sent again, over every call."""
    tally: CallTally = field(default_factory=CallTally)
    resent_at_ns: int | None = None
    """When the last call's final attempt started, if that call was re-sent."""


class TaguruClient:
    """Synchronous taguru client over one base URL (unmasked) and an optional bearer token.

    ``timeout_s`` is the whole-exchange deadline of each attempt (``--taguru-timeout``),
    ``retry`` the retry policy (``--taguru-retries``), ``dead_after`` the dead-server limit
    (``--taguru-max-consecutive-failures``, 0 = off). ``transport`` replaces the network
    (a replay's, or ``httpx.MockTransport`` in tests); ``tape`` records the calls (or answers
    them, on a replay). Thread-safe across case views; one view runs one call at a time.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy = NO_RETRIES,
        dead_after: int = 0,
        tape: Tape | None = None,
    ) -> None:
        self.base_url = base_url
        self.tape = tape
        self._token = token or None
        self._timeout_s = timeout_s
        self._retry = retry
        self._streak = FailureStreak(dead_after)
        self.counts = CallCounts()
        self._owns_http = True
        # An injected transport must not be bypassed by proxy settings from the environment.
        self._http = BoundedClient(
            transport=transport, follow_redirects=False, trust_env=transport is None
        )
        # httpx offers no parameter for a cookie store that takes nothing (it copies the one
        # it is given into its own); its client reads this attribute for every answer.
        self._http._cookies = _Cookieless()

    def __repr__(self) -> str:
        # Never the token, never userinfo: only whether a token is set.
        return f"TaguruClient(bearer={'set' if self._token else 'none'})"

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def for_case(self, tape: Tape | None = None) -> "TaguruClient":
        """A view for one case: the same pool, policy and streak, counts and tape of its own."""
        view = copy.copy(self)
        view.counts = CallCounts()
        view.tape = tape
        view._owns_http = False
        return view

    @property
    def presumed_dead(self) -> str | None:
        """The dead-server verdict once this process's streak has tripped, else ``None``."""
        return self._streak.verdict() if self._streak.tripped else None

    def latency_start(self, started_ns: int) -> int:
        """Where the latency of the last call starts: its final attempt when it was re-sent
        (earlier attempts and the waits are not the server's latency), else ``started_ns``."""
        resent = self.counts.resent_at_ns
        return started_ns if resent is None else resent

    # --- public calls ---------------------------------------------------------------------

    def url_for(
        self, segments: Sequence[str], query: Sequence[tuple[str, str]] | None = None
    ) -> str:
        """The full request URL, as it appears in failure messages."""
        return _joined(self.base_url, tuple(segments), None if query is None else tuple(query))

    def health(self) -> str:
        """``GET /health`` body text (reachability): any status-200 body passes.

        Raises :class:`CallFailed` on a transport failure, an unreadable body or another status.
        """
        url = self._url_or_fail(["health"], None)
        answer = self._call("GET", url, None)
        if answer.status != 200:
            raise status_failure(url, answer)
        return answer.text

    def skew_probe(self) -> str | None:
        """The version-skew ``GET /health`` (4 s budget, or the deadline when shorter; sent
        once): the body on status 200, else ``None``. Never raises for anything the server or
        the network does."""
        budget_s = min(SKEW_PROBE_TIMEOUT_S, self._timeout_s)
        try:
            url = self.url_for(["health"])
            answer = exchange(
                self._http, self._token, "GET", url, None, budget_s, self._extensions()
            )
        except (UrlError, CallFailed):
            return None
        return answer.text if answer.status == 200 else None

    def get_json(
        self, segments: Sequence[str], query: Sequence[tuple[str, str]] | None = None
    ) -> Any:
        """``GET`` through the envelope rule; returns ``result`` or raises :class:`CallFailed`."""
        url = self._url_or_fail(segments, query)
        return unwrap(url, self._call("GET", url, None))

    def post_json(self, segments: Sequence[str], body: Any) -> Any:
        """JSON ``POST`` through the envelope rule; returns ``result`` or raises."""
        url = self._url_or_fail(segments, None)
        return unwrap(url, self._call("POST", url, dumps_compact(body).encode("utf-8")))

    # --- one call: attempts, waits, counts ---------------------------------------------------

    def _url_or_fail(self, segments: Sequence[str], query: Sequence[tuple[str, str]] | None) -> str:
        try:
            return self.url_for(segments, query)
        except UrlError as error:
            raise CallFailed(str(error)) from error

    def _call(self, method: str, url: str, content: bytes | None) -> Answer:
        """Send until an attempt is final (see ``run.retry``); count it and write it on the
        tape, then hand it back (or raise its failure)."""
        counts = self.counts
        counts.resent_at_ns = None
        retry = 0
        while True:
            verdict = self.presumed_dead
            if verdict is not None:
                raise CallFailed(f"{url}: not sent: {verdict}")
            if retry:
                counts.resent_at_ns = time.monotonic_ns()
            outcome: Answer | CallFailed
            try:
                outcome = exchange(
                    self._http,
                    self._token,
                    method,
                    url,
                    content,
                    self._timeout_s,
                    self._extensions(),
                )
            except CallFailed as failure:
                outcome = failure
            if self._resend(outcome, retry):
                retry += 1
                continue
            self._settle(retry, outcome)
            if self.tape is not None:
                self.tape.keep(method, url, content, outcome, retry)
            if isinstance(outcome, CallFailed):
                raise outcome
            return outcome

    def _resend(self, outcome: Answer | CallFailed, retry: int) -> bool:
        """Whether the attempt is sent again, after its wait: an answer with a retried status,
        or a connection cut before any answer, while retries are left."""
        if retry >= self._retry.retries:
            return False
        if isinstance(outcome, CallFailed):
            if not outcome.unanswered:
                return False
            self._retry.pause(retry, None)
        elif outcome.status in RETRIED_STATUSES:
            self._retry.pause(retry, visible_header(outcome.headers, "retry-after"))
        else:
            return False
        return True

    def _extensions(self) -> dict[str, Any] | None:
        """The request extensions that carry this client's tape to the transport."""
        return None if self.tape is None else {TAPE_EXTENSION: self.tape}

    def _settle(self, retries: int, outcome: Answer | CallFailed) -> None:
        """Count a finished call: its retries, and for the dead-server rule an answer or a
        transport failure (other failures, such as a refused redirect, tell nothing)."""
        self.counts.retries += retries
        if isinstance(outcome, CallFailed) and not outcome.transport:
            return
        call = CallTally()
        for tally in (call, self.counts.tally):
            if isinstance(outcome, CallFailed):
                tally.add_failure(outcome.message)
            else:
                tally.add_answer()
        self._streak.add(call)


@functools.lru_cache(maxsize=1024)
def _joined(
    base_url: str, segments: tuple[str, ...], query: tuple[tuple[str, str], ...] | None
) -> str:
    """``join_segments``, remembered: a run sends most of its calls to a few URLs (every
    case's search goes to the same one)."""
    return join_segments(base_url, segments, query)


def client_for(
    settings: ClientSettings, *, dead_server_rule: bool = False, tape: Tape | None = None
) -> TaguruClient:
    """The client of a run: its deadline and retries; the dead-server limit for the client
    that runs the cases (the preflight's failures end the run anyway).

    A replayed run (``--taguru-replay``) sends nothing anywhere: its transport answers from
    the tape of each call, sends no token, never retries (the recorded outcome is the final
    one; its retries are counted from the recording) and has no dead-server rule (nothing
    can die, and no deadline can pass).
    """
    assert settings.base_url is not None, "the run has no server URL yet"
    if settings.replay_dir is not None:
        return TaguruClient(settings.base_url, transport=ReplayTransport(), tape=tape)
    return TaguruClient(
        settings.base_url,
        settings.token_value,
        timeout_s=settings.timeout_s,
        retry=RetryPolicy(retries=settings.retries),
        dead_after=settings.max_consecutive_failures if dead_server_rule else 0,
        tape=tape,
    )
