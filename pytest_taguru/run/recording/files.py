"""The recording directory's files: their models, names, writer and strict reader.

A recording (``--taguru-record DIR``) is a directory of versioned JSON files of ours,
``{"taguru_recording": 1, "kind": …}``: ``preflight.json`` (the start-up calls, the server and
eval set it was made for), ``after-run.json`` (the context re-read after the last case) and one
``cases/<case>-<hash>.json`` per case (its lanes and its drill-down). Each holds, per request
(method, target, canonical body: ``recording.key``), the final outcome of every call made with
it, in order: the status and the body exactly as served, or the failure text of a call that got
no readable answer. No header is kept, in either direction (no token, no cookie); only a
non-200 answer's ``Retry-After`` value, which its failure message quotes. Every file carries
the run key (the server's masked URL and version, the context and its revisions at the
preflight), so that a file left from another recording is never served.
"""

import hashlib
import json
import re
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_taguru.core.atomic_file import write_atomic
from pytest_taguru.core.limits import RECORDING_FILE_MAX_BYTES, U16, U64
from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.textfile import os_error_text
from pytest_taguru.run.envelope import decode_error_text

RECORDING_VERSION = 1
"""The ``taguru_recording`` stamp written, and the highest version read."""

PREFLIGHT_FILE = "preflight.json"
AFTER_RUN_FILE = "after-run.json"
CASES_DIR = "cases"
README_FILE = "README.md"

_OURS = ConfigDict(strict=True, extra="forbid", frozen=True)


class RecordedAnswer(BaseModel):
    """An HTTP answer: its status and its body as served (UTF-8 text)."""

    model_config = _OURS

    status: U16
    body: str
    retry_after: str | None = None
    """A non-200 answer's ``Retry-After`` value (its failure message quotes it)."""
    retries: U64 = 0
    """How often the call was sent again before this answer (the case block counts them)."""


class RecordedFailure(BaseModel):
    """A call that got no readable answer: its failure text after ``<url>: ``."""

    model_config = _OURS

    failure: str
    retries: U64 = 0


class RecordedExchange(BaseModel):
    """Every outcome of one request, in the order the calls were made."""

    model_config = _OURS

    method: str
    target: str
    body: str | None = None
    """The request body's canonical text (``recording.key``); absent for a bodiless request."""
    answers: list[RecordedAnswer | RecordedFailure] = Field(min_length=1)


class ServerIdentity(BaseModel):
    model_config = _OURS

    url: str
    """The masked URL (scheme, host and port only)."""
    version: str | None = None
    """What ``GET /health`` said its version is."""


class RevisionKey(BaseModel):
    model_config = _OURS

    graph: U64
    passages: U64
    config: U64


class RunKey(BaseModel):
    """What every file of one recording shares: the server and the state of the context."""

    model_config = _OURS

    server: ServerIdentity
    context: str
    revision: RevisionKey

    def describe(self) -> str:
        """``http://127.0.0.1:8248 0.9.3, context 'sake' at revision 3/12/1``."""
        version = "" if self.server.version is None else f" {self.server.version}"
        revision = self.revision
        return (
            f"{self.server.url}{version}, context '{self.context}' at revision "
            f"{revision.graph}/{revision.passages}/{revision.config}"
        )


class EvalIdentity(BaseModel):
    """The eval set a recording was made for: the artifact's ``inputs.eval`` minus its path."""

    model_config = _OURS

    name: str | None
    cases: U64

    def describe(self) -> str:
        name = "an unnamed eval set" if self.name is None else f"eval set '{self.name}'"
        return f"{name} of {self.cases} case(s)"


class ScopeRecording(BaseModel):
    """What every recording file holds; each kind adds its own."""

    model_config = _OURS

    taguru_recording: int
    kind: str
    run: RunKey
    exchanges: list[RecordedExchange]


class AfterRunRecording(ScopeRecording):
    kind: Literal["after-run"]


class PreflightRecording(ScopeRecording):
    kind: Literal["preflight"]
    base_url: str
    """The unmasked base URL (never userinfo: refused at start-up); failure messages hold it."""
    eval: EvalIdentity


class CaseRecording(ScopeRecording):
    kind: Literal["case"]
    case_id: str


Recording = TypeVar("Recording", bound=ScopeRecording)


class RecordingFileError(ValueError):
    """A recording file that cannot be used; the text names the file."""


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def case_file(directory: Path, case_id: str) -> Path:
    """``cases/<readable part>-<hash>.json``: unique per case id on any file system."""
    digest = hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:16]
    readable = _UNSAFE.sub("_", case_id)[:48].lstrip(".") or "case"
    return directory / CASES_DIR / f"{readable}-{digest}.json"


def write_recording(path: Path, recording: ScopeRecording) -> None:
    """Write ``recording`` atomically (a reader never sees half a file)."""
    document = recording.model_dump(mode="json", exclude_defaults=True)
    write_atomic(path, json.dumps(document, ensure_ascii=False, indent=1) + "\n")


def read_recording(path: Path, model: type[Recording]) -> Recording:
    """Read one recording file by the strict reader, at most ``RECORDING_FILE_MAX_BYTES``.

    Raises :class:`RecordingFileError` ``<path>: <reason>``.
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(RECORDING_FILE_MAX_BYTES + 1)
    except OSError as error:
        raise RecordingFileError(f"{path}: {os_error_text(error)}") from None
    if len(data) > RECORDING_FILE_MAX_BYTES:
        raise RecordingFileError(f"{path}: larger than {RECORDING_FILE_MAX_BYTES} bytes")
    try:
        document = read_json(data.decode("utf-8"), exact_wide_integers=True)
    except UnicodeDecodeError:
        raise RecordingFileError(f"{path}: not UTF-8") from None
    except SerdeError as error:
        raise RecordingFileError(f"{path}: not JSON: {error}") from None
    stamp = document.get("taguru_recording") if isinstance(document, dict) else None
    if not isinstance(stamp, int) or isinstance(stamp, bool):
        raise RecordingFileError(f"{path}: not a pytest-taguru recording (no taguru_recording)")
    if not 1 <= stamp <= RECORDING_VERSION:
        raise RecordingFileError(
            f"{path}: taguru_recording {stamp} is outside the readable range "
            f"1..={RECORDING_VERSION}"
        )
    try:
        return model.model_validate(document)
    except ValidationError as error:
        raise RecordingFileError(f"{path}: {decode_error_text(error)}") from None


README_TEXT = """\
# A pytest-taguru recording

Written by `pytest --taguru-record` and read by `pytest --taguru-replay` (pytest-taguru).

**This directory holds corpus data.** Every answer the server gave the run is kept as
served: passage texts, sections, labels, quotes. Keep it as private as the corpus itself:
do not publish it, attach it to a public CI artifact or commit it to a public repository
unless the corpus is public. No bearer token and no header of any request or answer is
written here.

- `preflight.json`: the start-up calls (`/health`, the context entry, embeddings, the
  sources walk), the server (masked URL, version), the context and its revisions, the base
  URL, and the eval set the recording was made for (its header name and case count);
- `after-run.json`: the context re-read after the last case;
- `cases/<case>-<hash>.json`: one file per case, its lanes' calls and its drill-down's.

Each file is `{"taguru_recording": 1, "kind": ..., "run": ..., "exchanges": [...]}`; an
exchange is one request (method, target, canonical JSON body) and the final outcome of every
call made with it, in order: `{"status": ..., "body": "<as served>"}` or `{"failure": ...}`.
A replay answers each request from these files only; a request they do not hold fails its
case. Record again (into an empty directory) when the server, the context or the eval set
changes.
"""


def write_readme(directory: Path) -> None:
    write_atomic(directory / README_FILE, README_TEXT)
