"""The served text of passage hits, read from a ``--taguru-record`` recording, for a label
queue written with ``--with-text``.

The case files under ``cases/`` are read by the recording's own reader and models
(``run.recording.files``); the ``sources/search`` answers that succeeded are read as the
passage lane reads them (taguru's envelope, then ``result.hits`` by the wire model), and every
hit's ``text`` is kept by its (source, paragraph). A file that is not a case recording is an
input error naming it.
"""

from pathlib import Path

from pydantic import ValidationError

from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.wire import SearchResult
from pytest_taguru.errors import UsageError
from pytest_taguru.run.recording.files import (
    CASES_DIR,
    CaseRecording,
    RecordedAnswer,
    RecordingFileError,
    read_recording,
)

_SEARCH = "/sources/search"


def _search_hits(body: str) -> list[tuple[str, int, str]]:
    """The (source, paragraph, text) of a successful search answer; none for any other body."""
    try:
        envelope = read_json(body)
        result = SearchResult.model_validate(envelope.get("result"))
    except (SerdeError, ValidationError, AttributeError):
        return []
    return [(hit.source, hit.paragraph, hit.text) for hit in result.hits]


def recorded_texts(directory: str) -> dict[tuple[str, int], str]:
    """(source, paragraph) → the text the server served for it, over every case file."""
    folder = Path(directory) / CASES_DIR
    if not folder.is_dir():
        raise UsageError(f"{directory}: not a recording (no {CASES_DIR}/ folder)")
    texts: dict[tuple[str, int], str] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            recording = read_recording(path, CaseRecording)
        except RecordingFileError as error:
            raise UsageError(f"not a recording file: {error}") from None
        for exchange in recording.exchanges:
            if not exchange.target.split("?", 1)[0].endswith(_SEARCH):
                continue
            for answer in exchange.answers:
                if isinstance(answer, RecordedAnswer) and answer.status == 200:
                    for source, paragraph, text in _search_hits(answer.body):
                        texts.setdefault((source, paragraph), text)
    return texts
