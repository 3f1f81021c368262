"""The client under faults: the whole-exchange deadline, retries, the dead-server streak.

Deadline tests talk to a fault-injecting proxy (``tests/support/fault_proxy``) in front of a
reference server started here; retry and streak tests use ``httpx.MockTransport`` and a
recorded clock instead of sleeping.
"""

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest
from e2e import CORPUS
from fault_proxy import FaultProxy, drip_body, drip_headers, hang_up, reset, stall, status, truncate

from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.dead_server import CallTally, FailureStreak, RunStop
from pytest_taguru.run.deadline import TIMEOUT_TEXT, BoundedClient, BoundedTransport
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.retry import (
    BACKOFF_BASE_S,
    BACKOFF_CAP_S,
    RETRY_AFTER_CAP_S,
    RetryPolicy,
    retry_after_s,
)
from pytest_taguru.server.runner import ReferenceServer

SEARCH = ["contexts", "mini", "sources", "search"]
BODY = {"query": "alpha widget", "limit": 3}
SLACK_S = 0.75
"""How far past its deadline a bounded call may end on a loaded machine."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceServer]:
    corpus = tmp_path_factory.mktemp("corpus") / "corpus.ndjson"
    corpus.write_text(CORPUS, encoding="utf-8")
    with ReferenceServer.from_import_files([corpus]) as started:
        yield started


@pytest.fixture
def proxy(server: ReferenceServer) -> Iterator[FaultProxy]:
    with FaultProxy(server.url) as started:
        yield started


def timed_failure(call: Callable[[], object]) -> tuple[float, CallFailed]:
    started = time.monotonic()
    with pytest.raises(CallFailed) as caught:
        call()
    return time.monotonic() - started, caught.value


# --- the whole-exchange deadline ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (stall(), f": {TIMEOUT_TEXT}"),
        (drip_headers(0.05), f": {TIMEOUT_TEXT}"),
        (drip_body(0.3), f": unreadable response: {TIMEOUT_TEXT}"),
    ],
    ids=["stall", "header-drip", "body-drip"],
)
def test_every_stall_ends_at_the_deadline(proxy: FaultProxy, fault: object, message: str) -> None:
    proxy.add(fault, "sources/search")  # type: ignore[arg-type]
    client = TaguruClient(proxy.url, timeout_s=1.0)
    elapsed, failure = timed_failure(lambda: client.post_json(SEARCH, BODY))
    assert 1.0 <= elapsed < 1.0 + SLACK_S
    assert failure.message == f"{proxy.url}/contexts/mini/sources/search{message}"
    assert failure.transport and not failure.unanswered
    # The pool is still usable: the next call is answered.
    assert client.post_json(SEARCH, BODY)["hits"]


def test_a_header_drip_is_not_bounded_by_httpx_timeouts_alone(proxy: FaultProxy) -> None:
    # The fault the deadline exists for: httpx's read timeout restarts with every byte.
    proxy.add(drip_headers(0.03), "health")
    started = time.monotonic()
    httpx.get(proxy.url + "/health", timeout=1.0)
    assert time.monotonic() - started > 1.5


def test_the_deadline_covers_every_redirect_hop(proxy: FaultProxy) -> None:
    proxy.add(status(302, headers={"Location": "/slow"}), "/health")
    proxy.add(stall(), "/slow")
    client = TaguruClient(proxy.url, timeout_s=1.0)
    elapsed, failure = timed_failure(client.health)
    assert elapsed < 1.0 + SLACK_S
    assert failure.message == f"{proxy.url}/health: {TIMEOUT_TEXT}"


def test_environment_proxies_get_the_bounded_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    client = BoundedClient()
    transports = [client._transport, *client._mounts.values()]
    assert transports and all(isinstance(t, BoundedTransport) for t in transports)


# --- retries -----------------------------------------------------------------------------------


class Script:
    """A MockTransport handler answering from a list, then with a success."""

    def __init__(self, *answers: httpx.Response | type[Exception]) -> None:
        self.answers = list(answers)
        self.calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.answers:
            answer = self.answers.pop(0)
            if isinstance(answer, type):
                raise answer("connection reset", request=request)  # type: ignore[call-arg]
            return answer
        return httpx.Response(200, json={"result": {"ok": True}, "status": "ok", "time": 0.0})


class Clock:
    """Records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def policy(self, retries: int = 2) -> RetryPolicy:
        return RetryPolicy(
            retries=retries,
            sleep=self.waits.append,
            uniform=lambda low, high: 1.0,
            now=lambda: datetime(2026, 1, 1, tzinfo=UTC),
        )


def scripted(script: Script, policy: RetryPolicy, dead_after: int = 0) -> TaguruClient:
    transport = httpx.MockTransport(script)
    return TaguruClient("http://h", transport=transport, retry=policy, dead_after=dead_after)


def busy(code: int, retry_after: str | None = None) -> httpx.Response:
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    return httpx.Response(code, json={"error": "busy", "code": "overloaded"}, headers=headers)


@pytest.mark.parametrize("code", [429, 503])
def test_429_and_503_are_sent_again_honouring_retry_after(code: int) -> None:
    clock, script = Clock(), Script(busy(code, "1"))
    case = scripted(script, clock.policy()).for_case()
    assert case.post_json(SEARCH, BODY) == {"ok": True}
    assert (script.calls, clock.waits, case.counts.retries) == (2, [1.0], 1)
    assert case.counts.tally == CallTally(answered=True)


def test_without_retry_after_the_backoff_doubles_with_jitter() -> None:
    clock, script = Clock(), Script(busy(503), busy(503))
    scripted(script, clock.policy()).post_json(SEARCH, BODY)
    assert clock.waits == [BACKOFF_BASE_S, 2 * BACKOFF_BASE_S]
    jittered = RetryPolicy(uniform=lambda low, high: high)
    assert jittered.wait_s(10, None) == BACKOFF_CAP_S * 1.5


def test_retries_are_bounded_and_the_last_answer_is_the_failure() -> None:
    clock, script = Clock(), Script(busy(503, "2"), busy(503, "2"), busy(503, "2"))
    case = scripted(script, clock.policy()).for_case()
    with pytest.raises(CallFailed) as caught:
        case.post_json(SEARCH, BODY)
    assert script.calls == 3 and clock.waits == [2.0, 2.0]
    assert caught.value.message == (
        "http://h/contexts/mini/sources/search answered 503: busy (Retry-After: 2)"
    )
    assert case.counts.retries == 2


def test_zero_retries_is_taguru_sending_each_call_once() -> None:
    clock, script = Clock(), Script(busy(503, "1"))
    with pytest.raises(CallFailed, match="answered 503"):
        scripted(script, clock.policy(retries=0)).post_json(SEARCH, BODY)
    assert script.calls == 1 and clock.waits == []


def test_a_reset_before_any_byte_is_sent_again_a_timeout_or_refusal_is_not() -> None:
    clock = Clock()
    reset_then_ok = Script(httpx.ReadError, httpx.RemoteProtocolError)
    assert scripted(reset_then_ok, clock.policy()).get_json(["x"]) == {"ok": True}
    assert reset_then_ok.calls == 3
    timed_out = Script(httpx.ReadTimeout)
    with pytest.raises(CallFailed) as caught:
        scripted(timed_out, clock.policy()).get_json(["x"])
    assert timed_out.calls == 1 and caught.value.message == f"http://h/x: {TIMEOUT_TEXT}"
    refused = Script(httpx.ConnectError)
    with pytest.raises(CallFailed, match="connection reset"):
        scripted(refused, clock.policy()).get_json(["x"])
    assert refused.calls == 1 and clock.waits == [BACKOFF_BASE_S, 2 * BACKOFF_BASE_S]


@pytest.mark.parametrize("code", [400, 404, 408, 500, 502])
def test_other_statuses_are_not_retried(code: int) -> None:
    clock, script = Clock(), Script(busy(code, "1"))
    with pytest.raises(CallFailed):
        scripted(script, clock.policy()).get_json(["x"])
    assert script.calls == 1


def test_a_reset_after_part_of_the_answer_is_not_retried(proxy: FaultProxy) -> None:
    proxy.add(truncate(5), "sources/search", times=None)
    client = TaguruClient(proxy.url, retry=RetryPolicy(retries=2, sleep=lambda s: None))
    _, failure = timed_failure(lambda: client.post_json(SEARCH, BODY))
    assert "unreadable response" in failure.message
    assert proxy.count("sources/search") == 1


@pytest.mark.parametrize("fault", [reset(), hang_up()], ids=["reset", "close"])
def test_a_cut_connection_is_retried_on_the_wire(proxy: FaultProxy, fault: object) -> None:
    proxy.add(fault, "sources/search")  # type: ignore[arg-type]
    case = TaguruClient(proxy.url, retry=RetryPolicy(sleep=lambda s: None)).for_case()
    assert case.post_json(SEARCH, BODY)["hits"]
    assert proxy.count("sources/search") == 2 and case.counts.retries == 1


def test_the_latency_starts_at_the_final_attempt() -> None:
    clock, script = Clock(), Script(busy(503, "1"))
    case = scripted(script, clock.policy()).for_case()
    before = time.monotonic_ns()
    assert case.latency_start(before) == before
    case.post_json(SEARCH, BODY)
    assert case.latency_start(before) > before


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("1", 1.0),
        (" 120 ", 120.0),
        (format_datetime(datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC), usegmt=True), 30.0),
        ("Thu, 01 Jan 2026 00:00:30 GMT", 30.0),
        ("Wed, 31 Dec 2025 23:00:00 GMT", 0.0),
        ("-1", None),
        ("soon", None),
        ("1.5", None),
        (None, None),
    ],
)
def test_retry_after_is_seconds_or_an_http_date(value: str | None, seconds: float | None) -> None:
    assert retry_after_s(value, datetime(2026, 1, 1, tzinfo=UTC)) == seconds


def test_a_long_retry_after_is_capped() -> None:
    policy = RetryPolicy(now=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    assert policy.wait_s(0, "3600") == RETRY_AFTER_CAP_S
    later = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=1)
    assert policy.wait_s(0, format_datetime(later, usegmt=True)) == RETRY_AFTER_CAP_S


# --- the dead-server streak --------------------------------------------------------------------


def test_k_consecutive_transport_failures_stop_sending() -> None:
    script = Script(*[httpx.ConnectError] * 10)
    client = scripted(script, Clock().policy(retries=0), dead_after=3)
    for _ in range(3):
        with pytest.raises(CallFailed, match="connection reset"):
            client.get_json(["x"])
    assert client.presumed_dead == (
        "the server is presumed dead after 3 consecutive transport failures "
        "(last: http://h/x: connection reset)"
    )
    with pytest.raises(CallFailed, match=r"^http://h/x: not sent: the server is presumed dead"):
        client.for_case().get_json(["x"])
    assert script.calls == 3


def test_any_answer_ends_the_streak_and_retried_attempts_count_once() -> None:
    script = Script(httpx.ReadError, httpx.ReadError, busy(500), httpx.ReadError)
    client = scripted(script, Clock().policy(retries=1), dead_after=2)
    with pytest.raises(CallFailed):
        client.get_json(["x"])  # two attempts, one failed call
    with pytest.raises(CallFailed, match="answered 500"):
        client.get_json(["x"])
    assert client.presumed_dead is None
    case = client.for_case()
    assert case.get_json(["x"]) == {"ok": True}  # a reset, then an answer
    assert case.counts.tally == CallTally(answered=True) and case.counts.retries == 1


def test_zero_turns_the_rule_off() -> None:
    client = scripted(Script(*[httpx.ConnectError] * 20), Clock().policy(retries=0))
    for _ in range(20):
        with pytest.raises(CallFailed, match="connection reset"):
            client.get_json(["x"])
    assert client.presumed_dead is None


def test_a_case_tally_folds_into_the_controllers_streak() -> None:
    streak = FailureStreak(4)
    assert not streak.add(CallTally(answered=False, failures=2, last_failure="a"))
    assert not streak.add(CallTally(answered=True, failures=1, last_failure="b"))  # 1 after
    assert streak.add(CallTally(answered=False, failures=3, last_failure="c"))
    assert streak.verdict().endswith("after 4 consecutive transport failures (last: c)")
    tally = CallTally(answered=False, failures=2, last_failure="x")
    assert CallTally.from_report(tally.to_report()) == tally


def test_the_controller_stops_on_its_own_streak_or_a_workers_verdict_once() -> None:
    folded = RunStop(2)
    assert folded.fold(CallTally(failures=1, last_failure="a").to_report(), None) is None
    verdict = folded.fold(CallTally(failures=1, last_failure="b").to_report(), None)
    assert verdict is not None
    assert verdict.endswith("after 2 consecutive transport failures (last: b)")
    assert folded.fold(CallTally(failures=1).to_report(), "later") is None  # decided once
    assert folded.message("out.json") == (
        f"{verdict}; the run was stopped and out.json was not written"
    )
    told = RunStop(5)
    assert told.fold(CallTally(answered=True).to_report(), "the worker's verdict") == (
        "the worker's verdict"
    )
    assert RunStop(0).fold(CallTally(failures=99).to_report(), None) is None


def test_the_streak_is_shared_safely_by_threads() -> None:
    streak = FailureStreak(0)

    def fail_many() -> None:
        for _ in range(1000):
            streak.add(CallTally(failures=1, last_failure="x"))

    threads = [threading.Thread(target=fail_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert "after 8000 consecutive" in streak.verdict()


def test_case_views_share_the_pool_and_only_the_owner_closes_it(tmp_path: Path) -> None:
    client = TaguruClient("http://h", transport=httpx.MockTransport(Script()))
    view = client.for_case()
    view.close()
    assert view.get_json(["x"]) == {"ok": True}
    client.close()
    with pytest.raises(RuntimeError):
        view.get_json(["x"])
