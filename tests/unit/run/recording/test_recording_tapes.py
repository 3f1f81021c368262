"""recording/tapes.py with the client: what a recording keeps of each call, and a replay that
answers through the client's own code path (exchange, body, envelope rule)."""

import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.recording.files import RecordedAnswer, RecordedExchange, RecordedFailure
from pytest_taguru.run.recording.tapes import RecordingTape, ReplayTape, ReplayTransport
from pytest_taguru.run.retry import NO_RETRIES, RetryPolicy

BASE = "http://h:1"
TOKEN = "tok-Secret-4711"
SEARCH = ["contexts", "sake", "sources", "search"]


def live(
    handler: Callable[[httpx.Request], httpx.Response], retry: RetryPolicy = NO_RETRIES
) -> TaguruClient:
    return TaguruClient(BASE, TOKEN, transport=httpx.MockTransport(handler), retry=retry)


def replayed(tape: ReplayTape) -> TaguruClient:
    return TaguruClient(BASE, transport=ReplayTransport()).for_case(tape)


def envelope(result: object) -> httpx.Response:
    return httpx.Response(200, json={"result": result, "status": "ok", "time": 0.0})


def replay_of(recording: RecordingTape) -> ReplayTape:
    return ReplayTape(Path("rec/cases/c.json"), recording.exchanges())


def test_a_recording_keeps_status_and_body_as_served_and_no_header(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            headers={"Set-Cookie": "s=1", "X-Request-Id": "abc"},
            content=b'{"result":{"hits":[]},"status":"ok"}',
        )

    tape = RecordingTape(tmp_path / "c.json")
    live(handler).for_case(tape).post_json(SEARCH, {"query": "青嶺", "limit": 10})

    [exchange] = tape.exchanges()
    assert exchange == RecordedExchange(
        method="POST",
        target="/contexts/sake/sources/search",
        body='{"limit":10,"query":"青嶺"}',
        answers=[RecordedAnswer(status=200, body='{"result":{"hits":[]},"status":"ok"}')],
    )
    text = exchange.model_dump_json()
    assert TOKEN not in text and "cookie" not in text.lower() and "abc" not in text


def test_only_the_final_attempt_of_a_retried_call_is_recorded_with_its_retry_count() -> None:
    answers = iter([httpx.Response(503, headers={"Retry-After": "0"}), envelope({"hits": []})])
    tape = RecordingTape(Path("c.json"))
    client = live(lambda r: next(answers), retry=RetryPolicy(retries=2, sleep=lambda s: None))
    client.for_case(tape).post_json(SEARCH, {"query": "q"})

    [exchange] = tape.exchanges()
    assert exchange.answers == [
        RecordedAnswer(status=200, body=exchange.answers[0].body, retries=1)
    ]


def test_a_replay_answers_as_the_server_did_and_counts_the_recorded_retries() -> None:
    answers = iter([httpx.Response(503), envelope({"hits": [1]})])
    recording = RecordingTape(Path("c.json"))
    client = live(lambda r: next(answers), retry=RetryPolicy(retries=1, sleep=lambda s: None))
    assert client.for_case(recording).post_json(SEARCH, {"query": "q"}) == {"hits": [1]}

    tape = replay_of(recording)
    view = replayed(tape)
    assert view.post_json(SEARCH, {"query": "q"}) == {"hits": [1]}
    assert (view.counts.retries, tape.recorded_retries, tape.misses) == (0, 1, [])


def test_a_failure_answer_replays_with_the_same_message_retry_after_included() -> None:
    body = '{"status":"error","code":"rate_limited","error":"slow down"}'
    recording = RecordingTape(Path("c.json"))
    client = live(lambda r: httpx.Response(429, headers={"Retry-After": "7"}, content=body))
    with pytest.raises(CallFailed) as live_failure:
        client.for_case(recording).get_json(["contexts", "sake"])

    with pytest.raises(CallFailed) as replayed_failure:
        replayed(replay_of(recording)).get_json(["contexts", "sake"])
    assert replayed_failure.value.message == live_failure.value.message
    assert live_failure.value.message.endswith("answered 429: slow down (Retry-After: 7)")
    [exchange] = recording.exchanges()
    assert exchange.answers == [RecordedAnswer(status=429, body=body, retry_after="7")]


def test_a_call_that_got_no_answer_replays_its_failure_text_but_counts_as_nothing() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    recording = RecordingTape(Path("c.json"))
    with pytest.raises(CallFailed) as live_failure:
        live(refused).for_case(recording).post_json(SEARCH, {"query": "q"})
    [exchange] = recording.exchanges()
    assert exchange.answers == [RecordedFailure(failure="[Errno 111] Connection refused")]

    view = replayed(replay_of(recording))
    with pytest.raises(CallFailed) as replayed_failure:
        view.post_json(SEARCH, {"query": "q"})
    assert replayed_failure.value.message == live_failure.value.message
    assert not replayed_failure.value.transport  # the dead-server rule counts nothing
    assert view.counts.tally.failures == 0


def test_the_n_th_call_of_a_request_gets_the_n_th_recorded_answer_then_the_last() -> None:
    answers = iter([envelope(1), envelope(2)])
    recording = RecordingTape(Path("c.json"))
    view = live(lambda r: next(answers)).for_case(recording)
    assert [view.get_json(["x"]), view.get_json(["x"])] == [1, 2]

    replay = replayed(replay_of(recording))
    assert [replay.get_json(["x"]) for _ in range(3)] == [1, 2, 2]


def test_a_request_without_a_recorded_answer_fails_loudly_and_is_remembered() -> None:
    recording = RecordingTape(Path("c.json"))
    live(lambda r: envelope({"hits": []})).for_case(recording).post_json(SEARCH, {"query": "a"})
    tape = replay_of(recording)
    view = replayed(tape)

    with pytest.raises(CallFailed) as missing:
        view.post_json(SEARCH, {"query": "b"})
    expected = (
        'no recorded answer to POST /contexts/sake/sources/search {"query":"b"}: '
        "rec/cases/c.json holds no answer to it"
    )
    assert missing.value.message == f"{BASE}/contexts/sake/sources/search: {expected}"
    assert not missing.value.transport and not missing.value.unanswered
    assert tape.misses == [expected]
    assert view.counts.tally.failures == 0 and view.counts.retries == 0


def test_a_tape_with_a_problem_answers_nothing_and_says_why() -> None:
    tape = ReplayTape(Path("rec/cases/c.json"), problem="the recording holds no case 'c'")
    with pytest.raises(CallFailed, match="the recording holds no case 'c'"):
        replayed(tape).get_json(["contexts", "sake"])
    assert tape.misses == [
        "no recorded answer to GET /contexts/sake: the recording holds no case 'c'"
    ]


def test_a_replay_transport_answers_nothing_without_a_tape() -> None:
    client = TaguruClient(BASE, transport=ReplayTransport())
    with pytest.raises(CallFailed, match="no recording is open for this call"):
        client.get_json(["health"])


def test_cases_recorded_side_by_side_keep_their_own_calls() -> None:
    client = live(lambda r: envelope(r.url.path))
    tapes = [RecordingTape(Path(f"{n}.json"), str(n)) for n in range(8)]

    def run(number: int) -> None:
        view = client.for_case(tapes[number])
        for call in range(50):
            view.get_json(["case", str(number), str(call)])

    threads = [threading.Thread(target=run, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for number, tape in enumerate(tapes):
        targets = [exchange.target for exchange in tape.exchanges()]
        assert targets == [f"/case/{number}/{call}" for call in range(50)]
