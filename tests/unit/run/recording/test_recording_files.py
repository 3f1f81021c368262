"""recording/files.py: the recording's file shapes, names, writer and strict reader."""

import json
from pathlib import Path

import pytest

from pytest_taguru.run.recording import files
from pytest_taguru.run.recording.files import (
    CaseRecording,
    PreflightRecording,
    RecordedAnswer,
    RecordedExchange,
    RecordedFailure,
    RecordingFileError,
    RevisionKey,
    RunKey,
    ServerIdentity,
    case_file,
    read_recording,
    write_recording,
)

RUN = RunKey(
    server=ServerIdentity(url="http://127.0.0.1:8248", version="0.9.3"),
    context="sake",
    revision=RevisionKey(graph=3, passages=12, config=1),
)


def case_recording() -> CaseRecording:
    return CaseRecording(
        taguru_recording=1,
        kind="case",
        run=RUN,
        case_id="c-1",
        exchanges=[
            RecordedExchange(
                method="POST",
                target="/contexts/sake/sources/search",
                body='{"limit":10,"query":"青嶺"}',
                answers=[
                    RecordedAnswer(status=503, body="busy", retry_after="2", retries=2),
                    RecordedAnswer(status=200, body='{"result":{"hits":[]}}'),
                ],
            ),
            RecordedExchange(
                method="GET", target="/health", answers=[RecordedFailure(failure="timeout: global")]
            ),
        ],
    )


def test_a_recording_reads_back_as_written_without_default_noise(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    write_recording(path, case_recording())

    assert read_recording(path, CaseRecording) == case_recording()
    document = json.loads(path.read_text(encoding="utf-8"))
    assert list(document) == ["taguru_recording", "kind", "run", "exchanges", "case_id"]
    assert document["exchanges"][1] == {
        "method": "GET",
        "target": "/health",
        "answers": [{"failure": "timeout: global"}],
    }
    assert "青嶺" in path.read_text(encoding="utf-8")  # raw UTF-8, as served


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("[1,", "not JSON: EOF while parsing", id="not-json"),
        pytest.param("[" * 200 + "]" * 200, "not JSON: recursion limit exceeded", id="deep"),
        pytest.param('{"kind":"case"}', "not a pytest-taguru recording", id="no-stamp"),
        pytest.param('{"taguru_recording":2}', "outside the readable range 1..=1", id="future"),
        pytest.param('{"taguru_recording":true}', "not a pytest-taguru recording", id="bool"),
    ],
)
def test_a_file_that_is_no_recording_is_refused_naming_it(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordingFileError, match=reason) as refused:
        read_recording(path, CaseRecording)
    assert str(refused.value).startswith(f"{path}: ")


def test_a_recording_of_another_kind_or_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    write_recording(path, case_recording())
    with pytest.raises(RecordingFileError, match="kind"):
        read_recording(path, PreflightRecording)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["exchanges"][0]["answers"][0]["headers"] = {"authorization": "x"}
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(RecordingFileError, match="exchanges"):
        read_recording(path, CaseRecording)


def test_a_file_past_the_size_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.json"
    write_recording(path, case_recording())
    monkeypatch.setattr(files, "RECORDING_FILE_MAX_BYTES", 100)
    with pytest.raises(RecordingFileError, match="larger than 100 bytes"):
        read_recording(path, CaseRecording)


def test_a_missing_or_binary_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordingFileError, match=r"No such file or directory \(os error 2\)"):
        read_recording(tmp_path / "none.json", CaseRecording)
    (tmp_path / "b.json").write_bytes(b"\xff\xfe")
    with pytest.raises(RecordingFileError, match="not UTF-8"):
        read_recording(tmp_path / "b.json", CaseRecording)


@pytest.mark.parametrize(
    "case_id", ["c-1", "C-1", "a/b", "../../etc", ".hidden", "青嶺", "x" * 300, "", "a b\n"]
)
def test_every_case_file_lies_in_cases_under_a_name_of_its_own(case_id: str) -> None:
    path = case_file(Path("rec"), case_id)
    assert path.parent == Path("rec/cases")
    assert not path.name.startswith(".")
    assert len(path.name) < 80
    assert path.name.isascii()
    others = {"c-1", "C-1", "a/b", "a_b", "青嶺", "x" * 300, "x" * 301}
    assert all(case_file(Path("rec"), other) != path for other in others - {case_id})
