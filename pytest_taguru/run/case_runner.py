"""The per-process case runner: lanes, scoring and case-scoped bounds, case by case.

Every pytest process (the controller of a plain run, or each pytest-xdist worker) holds one
``CaseRunner`` in ``config.stash[RUNNER_KEY]``. It owns the process's HTTP client and its
prefetch window (``run.prefetch``: the next cases judged on threads while pytest runs the
current item) and is the only place where a case's network I/O happens; with
``--taguru-record`` or ``--taguru-replay`` each case's calls (its lanes, then its drill-down)
go on the case's own tape, closed when its item runs (``result``), so a case judged ahead but
never reported leaves no recording.
"""

import sys
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

import pytest

from pytest_taguru.artifact.case import CaseBlock, case_summary, dump_case_block
from pytest_taguru.artifact.writing import case_text
from pytest_taguru.gate.results import first_of, violation_line
from pytest_taguru.gate.thresholds import Thresholds, case_violations
from pytest_taguru.report.drilldown import DrilldownFacts, render_drilldown
from pytest_taguru.report.reproduce import ServerTarget, missed_sources
from pytest_taguru.run.client import TaguruClient, client_for
from pytest_taguru.run.dead_server import CallTally
from pytest_taguru.run.eval_models import EvalCase, EvalSet
from pytest_taguru.run.exchange import CallFailed
from pytest_taguru.run.expectations import expectations_sha256
from pytest_taguru.run.lanes.assembly import RunShape, run_case_lanes
from pytest_taguru.run.lanes.request_bodies import citation_body
from pytest_taguru.run.prefetch import LaneThreads, LatencyProbe, PrefetchWindow
from pytest_taguru.run.received import CaseTexts
from pytest_taguru.run.recording.store import Recording, recording_for
from pytest_taguru.run.recording.tapes import Tape
from pytest_taguru.run.settings import Settings
from pytest_taguru.score.case import build_case_block
from pytest_taguru.score.registry import CASE_SCORES, case_value


class CaseFailure(Exception):
    """A case item's failure told in words of its own, no traceback: ``drilldown`` is the text
    the report shows, ``headline`` its first line (the short summary's)."""

    def __init__(self, drilldown: str, headline: str) -> None:
        super().__init__(headline)
        self.drilldown = drilldown
        self.headline = headline


class CaseRegression(CaseFailure):
    """A case broke a case-scoped bound (a quality regression: exit 3)."""


class UnrecordedRequests(CaseFailure):
    """A replayed case made requests its recording holds no answer for. Its lanes recorded
    the failures; the item fails as no regression does (the session exits 1 and writes no
    artifact): the replay cannot say what the server would have answered."""

    @classmethod
    def of(cls, case: EvalCase, misses: list[str]) -> "UnrecordedRequests":
        headline = f"replay: {len(misses)} request(s) of case '{case.case_id}' not recorded"
        return cls("\n".join([f"{headline}:", *(f"  {miss}" for miss in misses)]), headline)


def scalar_scores(block: CaseBlock) -> list[tuple[str, float]]:
    """A case's per-case scores (``registry.CASE_SCORES``), for verbose output and JUnit XML
    ``<properties>``.

    Names are the thresholds file's (``recall.mrr``). A negative zero (an unmatched nDCG, as
    taguru computes it) is shown as ``0``: these are display texts, not the artifact.
    """
    return [
        (name, value + 0.0)
        for name in CASE_SCORES
        if (value := case_value(block, name)) is not None
    ]


@dataclass(frozen=True)
class CaseResult:
    """A judged case: its block, the tally of its calls (``run_case``) and its failure, if
    any (raised when its item runs)."""

    block: CaseBlock
    calls: CallTally
    failure: CaseFailure | None


class CaseKey(Hashable, Protocol):
    """What the prefetch window knows a case by: its pytest item (hashable, one per run of
    the case), which carries the case."""

    @property
    def case(self) -> EvalCase: ...


@dataclass
class CaseRunner:
    """Runs cases against the server named by ``settings`` (one client per process)."""

    settings: Settings
    eval_set: EvalSet
    """The cases this process collects: a shard's only, under ``--taguru-shard``."""
    thresholds: Thresholds | None
    _client: TaguruClient | None = field(default=None, repr=False)
    _recording: Recording = field(init=False, repr=False)
    _tapes: dict[str, Tape] = field(default_factory=dict, repr=False)
    """The tape of each case between its lanes and the end of its item."""
    _window: PrefetchWindow[CaseKey, CaseResult] | None = field(default=None, repr=False)
    _threads: LaneThreads | None = field(default=None, repr=False)
    _probe: LatencyProbe = field(default_factory=LatencyProbe, repr=False)

    def __post_init__(self) -> None:
        self._recording = recording_for(self.settings)

    @property
    def client(self) -> TaguruClient:
        if self._client is None:
            self._client = client_for(self.settings, dead_server_rule=True)
        return self._client

    def judge_case(self, case: EvalCase) -> CaseResult:
        """``run_case``, then its verdict: ``UnrecordedRequests`` when a replay could not
        answer its calls, else its case-scoped bounds (a failure's drill-down calls
        included)."""
        block, calls = self.run_case(case)
        tape = self._tapes.get(case.case_id)
        try:
            if tape is not None and tape.misses:
                raise UnrecordedRequests.of(case, tape.misses)
            self.check_case_bounds(case, block, tape)
        except CaseFailure as failure:
            return CaseResult(block, calls, failure)
        return CaseResult(block, calls, None)

    def prefetch(self, upcoming: Iterable[CaseKey]) -> None:
        """Keep the first ``--taguru-concurrency`` cases of ``upcoming`` (the one about to run
        first, then the order pytest will run them in) judged ahead; nothing once this
        process presumes the server dead, nothing at concurrency 1, and under ``auto``
        nothing until the cases judged one at a time are seen waiting on the server (never
        in a replay, which has no server to wait on)."""
        concurrency = self.settings.concurrency
        if concurrency.size == 1:
            return
        if self.presumed_dead is not None:
            self.stop_prefetch()
            return
        if self._window is None:
            replaying = self.settings.replay_dir is not None
            if concurrency.adaptive and (replaying or not self._probe.waiting):
                return
            self._threads = LaneThreads(concurrency.size)
            self._window = PrefetchWindow(
                concurrency.size, lambda key: self.judge_case(key.case), self._threads.submit
            )
        _ = self.client  # made here, not by the first threads at once
        self._window.plan(upcoming)

    def result(self, key: CaseKey) -> CaseResult:
        """The case's result, when its item runs: its prefetched judgement (waited for), else
        judged now; then its recording is written."""
        started = None if self._window is None else self._window.take(key)
        try:
            return self._judged_here(key.case) if started is None else started.result()
        finally:
            self._recording.close(self._tapes.pop(key.case.case_id, None))

    def _judged_here(self, case: EvalCase) -> CaseResult:
        """``judge_case`` in this thread, its wait (wall less CPU time) shown to the latency
        probe."""
        wall, cpu = time.perf_counter(), time.thread_time()
        judged = self.judge_case(case)
        self._probe.observe(time.perf_counter() - wall - (time.thread_time() - cpu))
        return judged

    def stop_prefetch(self) -> None:
        """Judge nothing more ahead; cancel what has not started (a started case is still
        taken when its item runs, or left to finish on its daemon thread, unread)."""
        if self._window is not None:
            self._window.close()
        if self._threads is not None:
            self._threads.shutdown()
            self._threads = None

    def run_case(self, case: EvalCase) -> tuple[CaseBlock, CallTally]:
        """Run the case's lanes in their fixed order and score them (server errors recorded);
        the block counts the case's retries, the tally is what the dead-server rule reads."""
        lane = RunShape.from_settings(self.settings).passage_lane()
        tape = self._recording.case_tape(case.case_id)
        if tape is not None:
            self._tapes[case.case_id] = tape
        calls = self.client.for_case(tape)
        lanes, outcome = run_case_lanes(calls, self.settings.context, case, lane)
        block = build_case_block(case, lanes, evidence=outcome.evidence, budget=outcome.budget)
        ours: dict[str, object] = {"expectations_sha256": expectations_sha256(case)}
        retries = calls.counts.retries + (0 if tape is None else tape.recorded_retries)
        if retries:
            ours["retries"] = retries
        return block.model_copy(update=ours), calls.counts.tally

    @property
    def presumed_dead(self) -> str | None:
        """The dead-server verdict of this process's calls, once the streak has tripped."""
        return None if self._client is None else self._client.presumed_dead

    def scalar_properties(self, block: CaseBlock) -> list[tuple[str, object]]:
        """JUnit XML ``<properties>`` of a case: its scalar scores by metric name, never corpus
        text."""
        # pytest keeps these with every item and report to the end of the session: scores
        # repeat (1.000000, 0.500000, …), so each distinct text is kept once.
        return [(name, sys.intern(f"{value:.6f}")) for name, value in scalar_scores(block)]

    @staticmethod
    def status_text(block: CaseBlock) -> str:
        """The scores shown after PASSED/FAILED in verbose output."""
        return sys.intern(", ".join(f"{name} {value:.3f}" for name, value in scalar_scores(block)))

    @staticmethod
    def transport(block: CaseBlock) -> CaseTexts:
        """The case block as it travels to the controller (``run.received``): its summary
        and its text in the artifact, rendered here, where it ran."""
        return CaseTexts(dump_case_block(case_summary(block)), case_text(block))

    def check_case_bounds(self, case: EvalCase, block: CaseBlock, tape: Tape | None = None) -> None:
        """Raise ``CaseRegression`` with the drill-down when a case-scoped bound is broken (its
        calls go on ``tape``)."""
        if self.thresholds is None:
            return
        violations = case_violations(self.thresholds, block)
        if violations:
            earlier = 0 if tape is None else len(tape.misses)
            drilldown = render_drilldown(
                case=case,
                block=block,
                violations=violations,
                context=self.settings.context,
                eval_path=self.settings.eval_path,
                facts=self.drilldown_facts(case, block, tape),
            )
            unanswered = [] if tape is None else tape.misses[earlier:]
            if unanswered:
                # Best effort, as live: a paragraph whose existence is unknown is not absent.
                drilldown += (
                    f"\nreplay: {len(unanswered)} drill-down request(s) not recorded, so "
                    "whether those expected paragraphs exist is unknown:"
                )
                drilldown += "".join(f"\n  {miss}" for miss in unanswered)
            raise CaseRegression(
                drilldown, first_of([violation_line(item.violation) for item in violations])
            )

    def drilldown_facts(
        self, case: EvalCase, block: CaseBlock, tape: Tape | None = None
    ) -> DrilldownFacts:
        """What the drill-down of a failed case needs beyond its block: where its requests
        go, and which missed expected paragraphs do not exist at all (one ``citations`` call
        each, answered ``no_paragraph``; made only for a failed case)."""
        settings = self.settings
        calls = self.client.for_case(tape)
        absent: set[tuple[str, int]] = set()
        for entry in missed_sources(case, block):
            for paragraph in entry.paragraphs:
                body = citation_body(entry.source, paragraph)
                try:
                    calls.post_json(["contexts", settings.context, "citations"], body)
                except CallFailed as failure:
                    if failure.not_found and failure.code == "no_paragraph":
                        absent.add((entry.source, paragraph))
        server = ServerTarget(
            settings.masked_url, settings.serve_import, token=settings.token is not None
        )
        return DrilldownFacts(server, frozenset(absent), show_text=settings.show_text)

    def close(self) -> None:
        self.stop_prefetch()
        if self._client is not None:
            self._client.close()
            self._client = None


RUNNER_KEY = pytest.StashKey[CaseRunner]()
