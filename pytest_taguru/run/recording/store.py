"""A run's recording directory: written by a :class:`Recorder` (``--taguru-record``), answered
from by a :class:`Player` (``--taguru-replay``), in any process.

The controller begins the recording before the preflight (the recorder makes the directory
and its README; the player reads ``preflight.json`` and ``after-run.json`` and refuses a
recording made for another eval set or context, exit 2, before any case) and seals the
preflight. Every process opens one tape per case, by case id, and closes it when the case is
done (the recorder writes the case's file); so each pytest-xdist worker writes only its own
cases' files, in whatever order its cases run. Case files are checked against the
preflight's run key when they are read, so a file left from another recording is refused.
"""

import threading
from pathlib import Path

from pytest_taguru.core.textfile import os_error_text
from pytest_taguru.errors import RunError, UsageError
from pytest_taguru.run.eval_models import EvalSet
from pytest_taguru.run.preflight import PreflightFacts
from pytest_taguru.run.recording.files import (
    AFTER_RUN_FILE,
    CASES_DIR,
    PREFLIGHT_FILE,
    RECORDING_VERSION,
    AfterRunRecording,
    CaseRecording,
    EvalIdentity,
    PreflightRecording,
    RecordingFileError,
    RevisionKey,
    RunKey,
    ServerIdentity,
    case_file,
    read_recording,
    write_readme,
    write_recording,
)
from pytest_taguru.run.recording.tapes import RecordingTape, ReplayTape, Tape
from pytest_taguru.run.settings import Settings


def eval_identity(eval_set: EvalSet) -> EvalIdentity:
    """What a recording must have been made for: the eval header's name and the case count."""
    return EvalIdentity(name=eval_set.name, cases=len(eval_set.cases))


class Recording:
    """What the controller and the case runner ask of a recording; as such, a live run's,
    which records nothing (no tapes)."""

    def begin(self, settings: Settings, eval_set: EvalSet) -> Settings:
        """Before the preflight (controller): the settings the run goes on with."""
        return settings

    def preflight_tape(self) -> Tape | None:
        return None

    def seal_preflight(
        self, tape: Tape | None, settings: Settings, eval_set: EvalSet, facts: PreflightFacts
    ) -> None:
        """After a successful preflight (controller)."""

    def after_run_tape(self) -> Tape | None:
        return None

    def case_tape(self, case_id: str) -> Tape | None:
        return None

    def close(self, tape: Tape | None) -> None:
        """The scope of ``tape`` is done."""

    def summary_line(self) -> str | None:
        """What the run summary says about the recording."""
        return None


class Recorder(Recording):
    """Writes the recording; thread-safe (cases may end side by side)."""

    def __init__(self, directory: str) -> None:
        self.directory = Path(directory)
        self._run: RunKey | None = None
        self._lock = threading.Lock()

    def begin(self, settings: Settings, eval_set: EvalSet) -> Settings:
        """Make the directory and its README (exit 1 when it cannot be written)."""
        try:
            (self.directory / CASES_DIR).mkdir(parents=True, exist_ok=True)
            write_readme(self.directory)
        except OSError as error:
            raise RunError(f"writing {self.directory}: {os_error_text(error)}") from error
        return settings

    def preflight_tape(self) -> Tape:
        return RecordingTape(self.directory / PREFLIGHT_FILE)

    def after_run_tape(self) -> Tape:
        return RecordingTape(self.directory / AFTER_RUN_FILE)

    def case_tape(self, case_id: str) -> Tape:
        return RecordingTape(case_file(self.directory, case_id), case_id)

    def seal_preflight(
        self, tape: Tape | None, settings: Settings, eval_set: EvalSet, facts: PreflightFacts
    ) -> None:
        assert isinstance(tape, RecordingTape) and settings.masked_url and settings.base_url
        run = RunKey(
            server=ServerIdentity(url=settings.masked_url, version=facts.server_version),
            context=settings.context,
            revision=RevisionKey(**facts.context.revision.model_dump()),
        )
        with self._lock:
            self._run = run
        self._write(
            tape,
            PreflightRecording(
                taguru_recording=RECORDING_VERSION,
                kind="preflight",
                run=run,
                exchanges=tape.exchanges(),
                base_url=settings.base_url,
                eval=eval_identity(eval_set),
            ),
        )

    def close(self, tape: Tape | None) -> None:
        """Write a case's file, or the re-read's: each with the preflight's run key."""
        assert isinstance(tape, RecordingTape)
        common = {
            "taguru_recording": RECORDING_VERSION,
            "run": self._run_key(),
            "exchanges": tape.exchanges(),
        }
        if tape.case_id is None:
            self._write(tape, AfterRunRecording(kind="after-run", **common))
        else:
            self._write(tape, CaseRecording(kind="case", case_id=tape.case_id, **common))

    def summary_line(self) -> str | None:
        return (
            f"  recorded every answer in {self.directory} (corpus data: keep it as private as "
            "the corpus)"
        )

    def _run_key(self) -> RunKey:
        """The run key the controller sealed: in another process, read from its file."""
        with self._lock:
            if self._run is None:
                try:
                    preflight = read_recording(self.directory / PREFLIGHT_FILE, PreflightRecording)
                except RecordingFileError as error:
                    raise RunError(f"recording: {error}") from error
                self._run = preflight.run
            return self._run

    def _write(
        self, tape: RecordingTape, recording: PreflightRecording | CaseRecording | AfterRunRecording
    ) -> None:
        try:
            write_recording(tape.path, recording)
        except OSError as error:
            raise RunError(f"writing {tape.path}: {os_error_text(error)}") from error


class Player(Recording):
    """Answers the run from a recording; thread-safe."""

    def __init__(self, directory: str) -> None:
        self.directory = Path(directory)
        self._preflight: PreflightRecording | None = None
        self._after_run: AfterRunRecording | None = None
        self._lock = threading.Lock()

    def begin(self, settings: Settings, eval_set: EvalSet) -> Settings:
        """Read the recording and refuse one made for another eval set or context, or one
        whose run did not reach its end (exit 2); the run goes on at the recorded URL."""
        preflight = self._read_preflight()
        path = self.directory / PREFLIGHT_FILE
        wanted = eval_identity(eval_set)
        if preflight.eval != wanted:
            raise UsageError(
                f"{path}: the recording was made for {preflight.eval.describe()}, not for "
                f"{settings.eval_path}'s {wanted.describe()}; record it again with "
                "--taguru-record"
            )
        if preflight.run.context != settings.context:
            raise UsageError(
                f"{path}: the recording was made for context '{preflight.run.context}', not "
                f"'{settings.context}'"
            )
        after_path = self.directory / AFTER_RUN_FILE
        try:
            after_run = read_recording(after_path, AfterRunRecording)
        except RecordingFileError as error:
            raise UsageError(
                f"{error} (a recording is complete once its run has re-read the context after "
                "the last case)"
            ) from error
        if after_run.run != preflight.run:
            raise UsageError(
                f"{after_path}: recorded against {after_run.run.describe()}, not "
                f"{preflight.run.describe()} as {path}: the recording is incomplete"
            )
        with self._lock:
            self._after_run = after_run
        return settings.with_base_url(preflight.base_url)

    def preflight_tape(self) -> Tape:
        return ReplayTape(self.directory / PREFLIGHT_FILE, self._read_preflight().exchanges)

    def after_run_tape(self) -> Tape:
        path = self.directory / AFTER_RUN_FILE
        with self._lock:
            after_run = self._after_run
        if after_run is None:
            return ReplayTape(path, problem="the recording's end was not read")
        return ReplayTape(path, after_run.exchanges)

    def case_tape(self, case_id: str) -> Tape:
        """The case's recorded answers; a missing, unreadable or stale file makes every
        request of the case a miss that says why."""
        path = case_file(self.directory, case_id)
        if not path.is_file():
            return ReplayTape(path, problem=f"the recording holds no case '{case_id}' ({path})")
        try:
            run = self._read_preflight().run
            recorded = read_recording(path, CaseRecording)
        except (RecordingFileError, UsageError) as error:
            return ReplayTape(path, problem=str(error))
        if recorded.case_id != case_id:
            problem = f"{path} records case '{recorded.case_id}', not '{case_id}'"
            return ReplayTape(path, problem=problem)
        if recorded.run != run:
            problem = (
                f"{path} was recorded against {recorded.run.describe()}, not "
                f"{run.describe()} as {PREFLIGHT_FILE}: it is left from another recording"
            )
            return ReplayTape(path, problem=problem)
        return ReplayTape(path, recorded.exchanges)

    def _read_preflight(self) -> PreflightRecording:
        path = self.directory / PREFLIGHT_FILE
        with self._lock:
            if self._preflight is None:
                try:
                    self._preflight = read_recording(path, PreflightRecording)
                except RecordingFileError as error:
                    refusal = UsageError(f"--taguru-replay: {error}")
                    if not path.is_file():
                        refusal.hints = [f"record one first: --taguru-record {self.directory}"]
                    raise refusal from error
            return self._preflight


def recording_for(settings: Settings) -> Recording:
    """The recording a run writes or is answered from (for neither, a plain ``Recording``);
    a replay's summary line is the artifact's (``inputs.replayed``, ``report.summary``)."""
    if settings.record_dir is not None:
        return Recorder(settings.record_dir)
    if settings.replay_dir is not None:
        return Player(settings.replay_dir)
    return Recording()
