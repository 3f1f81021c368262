"""The case blocks the controller received, kept out of memory until the finish.

A case arrives (``CaseRunner.transport``) as two texts: its summary (``artifact.case_summary``,
lossless JSON) and its exact text in ``evaluation.json`` (``artifact.case_text``), rendered by
the process that ran it. Both go to a temporary spool file as they arrive; the controller keeps
only where each case's texts lie. The finish reads the summaries for the run-level numbers and
copies the texts into the artifact in dataset order: no case is decoded whole, and none is
kept twice (pytest keeps its reports; the hook takes the texts off them).
"""

import tempfile
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from pytest_taguru.artifact.case import CaseBlock, case_id_of, load_case_block
from pytest_taguru.artifact.writing import read_case_text


class CaseTexts(NamedTuple):
    """What travels from the process that ran a case to the controller."""

    summary: str
    """``dump_case_block(case_summary(block))``."""
    text: str
    """``case_text(block)``."""


_SPOOL_BUFFER = 1 << 20


class _Place(NamedTuple):
    offset: int
    summary_size: int
    text_size: int


class ReceivedBlocks(Mapping[str, CaseBlock]):
    """The received cases by case id; reading one gives its whole block back as the artifact
    reader reads it (:meth:`summary` and :meth:`text` give the parts the finish uses)."""

    def __init__(self) -> None:
        # Open for the whole run (closed by the controller's stop): no "with" to put it in.
        # A large buffer: each write is one case's few kilobytes, and a system call per case
        # costs as much as rendering it where system calls are slow (sandboxes, VMs).
        self._spool = tempfile.TemporaryFile(buffering=_SPOOL_BUFFER)  # noqa: SIM115
        self._places: dict[str, _Place] = {}
        self._end = 0
        """Where the next case goes: tracked here, since seeking to the end flushes."""
        self._writing = True
        """Whether the spool's position is ``_end`` (no read since the last write)."""

    def add(self, case: CaseTexts) -> None:
        """Keep one case (a case sent again replaces it)."""
        summary, text = case.summary.encode("utf-8"), case.text.encode("utf-8")
        if not self._writing:
            self._spool.seek(self._end)
            self._writing = True
        offset = self._end
        self._spool.write(summary)
        self._spool.write(text)
        self._end += len(summary) + len(text)
        self._places[case_id_of(case.summary)] = _Place(offset, len(summary), len(text))

    def _read(self, case_id: str) -> tuple[str, str]:
        place = self._places[case_id]
        self._writing = False
        self._spool.seek(place.offset)
        data = self._spool.read(place.summary_size + place.text_size)
        return (
            data[: place.summary_size].decode("utf-8"),
            data[place.summary_size :].decode("utf-8"),
        )

    def summary(self, case_id: str) -> CaseBlock:
        """The case's block without hits or plan (``artifact.case_summary``), exact."""
        return load_case_block(self._read(case_id)[0])

    def text(self, case_id: str) -> str:
        """The case's exact text in ``evaluation.json``."""
        return self._read(case_id)[1]

    def __getitem__(self, case_id: str) -> CaseBlock:
        return read_case_text(self.text(case_id))

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._places

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def close(self) -> None:
        self._spool.close()
