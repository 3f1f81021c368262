"""The served text of passage hits, read from a ``--taguru-record`` recording, for a label
queue written with ``--with-text``.

Only what the recording promises is relied on: one JSON file per case under ``cases/``, each
holding ``exchanges`` (``target``, ``answers``: ``status`` and the ``body`` as served). The
``sources/search`` answers that succeeded are read as the passage lane reads them (taguru's
envelope, then ``result.hits`` by the wire model); every hit's ``text`` is kept by its
(source, paragraph). Anything else in a file is not looked at; a file that is not such a
recording is an input error naming it. Every file is read by the strict JSON reader, at most
``RECORDING_FILE_MAX_BYTES``.
"""

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_taguru.core.limits import RECORDING_FILE_MAX_BYTES
from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.textfile import os_error_text
from pytest_taguru.core.wire import SearchResult
from pytest_taguru.errors import UsageError

CASES_DIR = "cases"
_SEARCH = "/sources/search"


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    status: int | None = None
    body: str | None = None


class _Exchange(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    target: str
    answers: list[_Answer]


class _CaseFile(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    exchanges: list[_Exchange]


def _read(path: Path) -> Any:
    try:
        with path.open("rb") as handle:
            data = handle.read(RECORDING_FILE_MAX_BYTES + 1)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {os_error_text(error)}") from None
    if len(data) > RECORDING_FILE_MAX_BYTES:
        raise UsageError(f"{path}: larger than {RECORDING_FILE_MAX_BYTES} bytes")
    try:
        return read_json(data.decode("utf-8"))
    except (UnicodeDecodeError, SerdeError) as error:
        raise UsageError(f"{path}: not a recording file: {error}") from None


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
            recording = _CaseFile.model_validate(_read(path))
        except ValidationError:
            raise UsageError(f"{path}: not a recording file (no exchanges)") from None
        for exchange in recording.exchanges:
            if not exchange.target.split("?", 1)[0].endswith(_SEARCH):
                continue
            for answer in exchange.answers:
                if answer.status == 200 and answer.body is not None:
                    for source, paragraph, text in _search_hits(answer.body):
                        texts.setdefault((source, paragraph), text)
    return texts
