"""recording/store.py: the recording directory as a recorder writes it and a player reads it,
from any process and case by case."""

import json
from pathlib import Path

import httpx
import pytest

from pytest_taguru.core.wire import Revision
from pytest_taguru.errors import UsageError
from pytest_taguru.run.client import TaguruClient
from pytest_taguru.run.dataset import load_eval_set
from pytest_taguru.run.eval_models import EvalSet
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.preflight import ContextFacts, PreflightFacts
from pytest_taguru.run.recording.files import AFTER_RUN_FILE, PREFLIGHT_FILE, case_file
from pytest_taguru.run.recording.store import Player, Recorder, Recording, recording_for
from pytest_taguru.run.recording.tapes import RecordingTape, ReplayTape, ReplayTransport, Tape
from pytest_taguru.run.settings import Settings

URL = "http://127.0.0.1:8248"


def eval_set(tmp_path: Path, name: str = "demo", cases: int = 2) -> EvalSet:
    path = tmp_path / f"{name}.jsonl"
    lines = [json.dumps({"taguru_eval": 1, "name": name})]
    lines += [json.dumps({"case_id": f"c{n}", "query": f"q{n}"}) for n in range(cases)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_eval_set(str(path))


def settings(directory: Path, *, replay: bool = False, context: str = "sake") -> Settings:
    return Settings(
        eval_path="demo.jsonl",
        context=context,
        base_url=None if replay else f"{URL}/api",
        masked_url=None if replay else URL,
        record_dir=None if replay else str(directory),
        replay_dir=str(directory) if replay else None,
    )


def facts(passages: int = 7) -> PreflightFacts:
    context = ContextFacts(Revision(graph=1, passages=passages, config=0), last_write_epoch=5)
    return PreflightFacts(context, True, None, frozenset({"a.md"}), server_version="0.9.3")


def answered(tape: Tape | None, *paths: str) -> None:
    """Calls through a client recording on ``tape``, each answered with its own path."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"result": request.url.path})

    client = TaguruClient(f"{URL}/api", "tok", transport=httpx.MockTransport(handler))
    for path in paths:
        client.for_case(tape).get_json(path.split("/"))


def record(tmp_path: Path, directory: Path, *, passages: int = 7, cases: tuple[str, ...]) -> None:
    """A whole recording: the preflight, ``cases`` (in another process's recorder), the end."""
    recorder = Recorder(str(directory))
    run_settings = recorder.begin(settings(directory), eval_set(tmp_path))
    preflight = recorder.preflight_tape()
    answered(preflight, "health", "contexts/sake")
    recorder.seal_preflight(preflight, run_settings, eval_set(tmp_path), facts(passages))
    worker = Recorder(str(directory))  # another process: the run key comes from the file
    for case_id in cases:
        tape = worker.case_tape(case_id)
        answered(tape, f"cases/{case_id}")
        worker.close(tape)
    after = recorder.after_run_tape()
    answered(after, "contexts/sake")
    recorder.close(after)


def replay(tape: Tape | None, path: str) -> object:
    """``GET <base>/<path>`` answered from ``tape``."""
    client = TaguruClient(f"{URL}/api", transport=ReplayTransport())
    return client.for_case(tape).get_json(path.split("/"))


def test_a_recording_replays_the_preflight_the_cases_and_the_end(tmp_path: Path) -> None:
    directory = tmp_path / "rec"
    record(tmp_path, directory, cases=("c0", "c1"))
    assert (directory / "README.md").read_text(encoding="utf-8").count("corpus data") == 1

    player = Player(str(directory))
    replay_settings = player.begin(settings(directory, replay=True), eval_set(tmp_path))
    assert (replay_settings.base_url, replay_settings.masked_url) == (f"{URL}/api", URL)
    assert replay(player.preflight_tape(), "health") == "/api/health"
    assert replay(player.case_tape("c1"), "cases/c1") == "/api/cases/c1"
    assert replay(player.after_run_tape(), "contexts/sake") == "/api/contexts/sake"
    preflight = json.loads((directory / PREFLIGHT_FILE).read_text(encoding="utf-8"))
    assert preflight["eval"] == {"name": "demo", "cases": 2}
    assert preflight["run"] == {
        "server": {"url": URL, "version": "0.9.3"},
        "context": "sake",
        "revision": {"graph": 1, "passages": 7, "config": 0},
    }
    assert preflight["base_url"] == f"{URL}/api"


def test_a_recording_for_another_eval_set_or_context_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "rec"
    record(tmp_path, directory, cases=("c0", "c1"))

    with pytest.raises(UsageError) as other_set:
        Player(str(directory)).begin(settings(directory, replay=True), eval_set(tmp_path, "other"))
    assert other_set.value.message == (
        f"{directory / PREFLIGHT_FILE}: the recording was made for eval set 'demo' of 2 "
        "case(s), not for demo.jsonl's eval set 'other' of 2 case(s); record it again with "
        "--taguru-record"
    )
    with pytest.raises(UsageError, match=r"not for demo.jsonl's eval set 'demo' of 3 case"):
        Player(str(directory)).begin(settings(directory, replay=True), eval_set(tmp_path, cases=3))
    with pytest.raises(UsageError, match="made for context 'sake', not 'wine'"):
        Player(str(directory)).begin(
            settings(directory, replay=True, context="wine"), eval_set(tmp_path)
        )


def test_a_missing_or_unfinished_recording_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "rec"
    with pytest.raises(UsageError) as missing:
        Player(str(directory)).begin(settings(directory, replay=True), eval_set(tmp_path))
    assert missing.value.message.startswith(f"--taguru-replay: {directory / PREFLIGHT_FILE}: ")
    assert missing.value.hints == [f"record one first: --taguru-record {directory}"]

    record(tmp_path, directory, cases=())
    (directory / AFTER_RUN_FILE).unlink()
    with pytest.raises(UsageError, match="complete once its run has re-read the context"):
        Player(str(directory)).begin(settings(directory, replay=True), eval_set(tmp_path))


def test_an_end_left_from_another_recording_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "rec"
    record(tmp_path, directory, cases=())
    older_end = (directory / AFTER_RUN_FILE).read_bytes()
    record(tmp_path, directory, passages=8, cases=())
    (directory / AFTER_RUN_FILE).write_bytes(older_end)

    with pytest.raises(UsageError, match=r"revision 1/7/0, not .* revision 1/8/0 .* incomplete"):
        Player(str(directory)).begin(settings(directory, replay=True), eval_set(tmp_path))


def test_a_case_file_left_from_another_recording_answers_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "rec"
    record(tmp_path, directory, cases=("c0", "c1"))
    record(tmp_path, directory, passages=8, cases=("c1",))  # the corpus changed since

    player = Player(str(directory))
    player.begin(settings(directory, replay=True), eval_set(tmp_path))
    stale = player.case_tape("c0")
    with pytest.raises(CallFailed, match="left from another recording"):
        replay(stale, "cases/c0")
    assert isinstance(stale, ReplayTape)
    assert (
        "was recorded against http://127.0.0.1:8248 0.9.3, context 'sake' at revision 1/7/0"
        in (stale.misses[0])
    )
    assert replay(player.case_tape("c1"), "cases/c1") == "/api/cases/c1"


def test_a_case_missing_from_the_recording_or_unreadable_says_so(tmp_path: Path) -> None:
    directory = tmp_path / "rec"
    record(tmp_path, directory, cases=("c0",))
    player = Player(str(directory))

    with pytest.raises(CallFailed, match="the recording holds no case 'c9'"):
        replay(player.case_tape("c9"), "cases/c9")
    case_file(directory, "c0").write_text("{", encoding="utf-8")
    with pytest.raises(CallFailed, match="not JSON: EOF while parsing"):
        replay(player.case_tape("c0"), "cases/c0")
    # A file renamed to another case's name is not that case's recording.
    record(tmp_path, directory, cases=("c0",))
    case_file(directory, "c0").rename(case_file(directory, "c1"))
    with pytest.raises(CallFailed, match="records case 'c0', not 'c1'"):
        replay(Player(str(directory)).case_tape("c1"), "cases/c0")


def test_neither_flag_records_nothing(tmp_path: Path) -> None:
    live = Settings(eval_path="e", context="c", base_url=URL, masked_url=URL)
    recording = recording_for(live)
    assert type(recording) is Recording
    assert recording.case_tape("c") is None and recording.summary_line() is None
    assert isinstance(recording_for(settings(tmp_path)), Recorder)
    assert isinstance(recording_for(settings(tmp_path, replay=True)), Player)
    assert isinstance(Recorder(str(tmp_path)).case_tape("c"), RecordingTape)
