"""Tapes: the calls of one scope (the preflight, a case, the re-read after the run) as they
are recorded, or as they are replayed through the client's own code path.

A client holding a tape writes each call's final outcome on it (after its retries and
redirects: what the case used) and sends the tape along with every request as a request
extension. On a live run the network transport ignores it; on a replay the
:class:`ReplayTransport` answers from it, so the answer goes through the same exchange, body
reading and envelope rule as a live one. A request the tape holds no answer for raises
:class:`RecordingMissing`: a failed call (its lane records it) that is no transport failure
(never retried, never counted by the dead-server rule), and the tape keeps it in ``misses``
so that its case fails.
"""

import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import httpx

from pytest_taguru.run.envelope import visible_header
from pytest_taguru.run.exchange import Answer, CallFailed
from pytest_taguru.run.recording.files import RecordedAnswer, RecordedExchange, RecordedFailure
from pytest_taguru.run.recording.key import RequestKey

TAPE_EXTENSION = "taguru_tape"
"""The request extension a client's tape travels in."""

Outcome = RecordedAnswer | RecordedFailure


class Tape:
    """The calls of one scope, as a client sees them: it writes each call's final outcome on
    the tape; a replay's tape also answers them. As such, a tape keeps nothing."""

    def keep(
        self,
        method: str,
        url: str,
        content: bytes | None,
        outcome: Answer | CallFailed,
        retries: int,
    ) -> None:
        """Write down the final outcome of a call sent ``retries`` times again."""

    @property
    def recorded_retries(self) -> int:
        """The retries of the recorded calls this tape served (a live client counts its own)."""
        return 0

    @property
    def misses(self) -> list[str]:
        """The requests this tape had no recorded answer for (a live call always has one)."""
        return []


class RecordingMissing(httpx.RequestError):
    """A request the recording holds no answer for (an ``httpx.RequestError`` that is no
    transport error: the client fails the call with this text and counts nothing)."""


class ReplayedFailure(httpx.RequestError):
    """A recorded call that got no readable answer, failed again with its recorded text."""


def outcome_record(outcome: Answer | CallFailed, url: str, retries: int) -> Outcome:
    """What a recording keeps of a call's final outcome: no header but a non-200 answer's
    ``Retry-After`` (its failure message quotes it); a failure's text after ``<url>: ``."""
    if isinstance(outcome, CallFailed):
        return RecordedFailure(failure=outcome.message.removeprefix(f"{url}: "), retries=retries)
    retry_after = None if outcome.status == 200 else visible_header(outcome.headers, "retry-after")
    return RecordedAnswer(
        status=outcome.status, body=outcome.text, retry_after=retry_after, retries=retries
    )


class RecordingTape(Tape):
    """The calls of one scope as they end, in the order of their first call; thread-safe."""

    def __init__(self, path: Path, case_id: str | None = None) -> None:
        self.path = path
        self.case_id = case_id
        self._lock = threading.Lock()
        self._outcomes: dict[RequestKey, list[Outcome]] = {}

    def keep(
        self,
        method: str,
        url: str,
        content: bytes | None,
        outcome: Answer | CallFailed,
        retries: int,
    ) -> None:
        key = RequestKey.of(method, url, content)
        record = outcome_record(outcome, url, retries)
        with self._lock:
            self._outcomes.setdefault(key, []).append(record)

    def exchanges(self) -> list[RecordedExchange]:
        with self._lock:
            kept = [(key, list(outcomes)) for key, outcomes in self._outcomes.items()]
        return [
            RecordedExchange(method=key.method, target=key.target, body=key.body, answers=answers)
            for key, answers in kept
        ]


class ReplayTape(Tape):
    """Answers one scope's requests from its recording: the n-th call of a request gets its
    n-th recorded outcome (the last one again past the end); thread-safe.

    ``problem`` (an unreadable or stale file) makes every request a miss that says so.
    """

    def __init__(
        self,
        origin: Path,
        exchanges: Iterable[RecordedExchange] = (),
        *,
        problem: str | None = None,
    ) -> None:
        self.origin = origin
        self.problem = problem
        self._misses: list[str] = []
        self._answers = {
            RequestKey(exchange.method, exchange.target, exchange.body): exchange.answers
            for exchange in exchanges
        }
        self._served: Counter[RequestKey] = Counter()
        self._retries = 0
        self._lock = threading.Lock()

    @property
    def recorded_retries(self) -> int:
        return self._retries

    @property
    def misses(self) -> list[str]:
        """One line per request that had no recorded answer, in the order they were made."""
        with self._lock:
            return list(self._misses)

    def serve(self, request: httpx.Request) -> httpx.Response:
        key = RequestKey.of(request.method, request.url, request.content)
        with self._lock:
            answers = None if self.problem is not None else self._answers.get(key)
            if answers is None:
                why = self.problem or f"{self.origin} holds no answer to it"
                miss = f"no recorded answer to {key.describe()}: {why}"
                self._misses.append(miss)
                raise RecordingMissing(miss, request=request)
            outcome = answers[min(self._served[key], len(answers) - 1)]
            self._served[key] += 1
            self._retries += outcome.retries
        if isinstance(outcome, RecordedFailure):
            raise ReplayedFailure(outcome.failure, request=request)
        headers = [] if outcome.retry_after is None else [("Retry-After", outcome.retry_after)]
        return httpx.Response(
            outcome.status, headers=headers, content=outcome.body.encode("utf-8"), request=request
        )


class ReplayTransport(httpx.BaseTransport):
    """The transport of a replayed run: every answer comes from the tape the request carries;
    nothing reaches a network."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        tape = request.extensions.get(TAPE_EXTENSION)
        if not isinstance(tape, ReplayTape):
            key = RequestKey.of(request.method, request.url, request.content)
            raise RecordingMissing(
                f"no recorded answer to {key.describe()}: no recording is open for this call",
                request=request,
            )
        return tape.serve(request)
