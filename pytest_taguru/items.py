"""pytest collection nodes: the eval file and one item per case.

An item's ``runtest`` calls the lanes through the process's ``CaseRunner`` and keeps the scored
case block; the block travels to the controller on the call report (``report.taguru_case``),
so a plain run and a pytest-xdist run aggregate the same data.
"""

from typing import Any

import pytest
from _pytest._code.code import TerminalRepr

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.core.bulk import SESSION_HEAP, collector_paused
from pytest_taguru.longrepr import failure_repr
from pytest_taguru.run.case_runner import RUNNER_KEY, CaseFailure
from pytest_taguru.run.dead_server import CallTally
from pytest_taguru.run.eval_models import EvalCase


class EvalFile(pytest.File):
    """The ``--taguru-eval`` file: yields one ``CaseItem`` per case, in file order, and
    freezes the session's heap once they exist (``core.bulk.SessionHeap``)."""

    def collect(self) -> list["CaseItem"]:
        runner = self.config.stash[RUNNER_KEY]
        # Every item lives to the end of the session, so the collector's passes over the
        # growing heap while they are made (most of collecting 100,000 cases) find nothing.
        with collector_paused():
            items = [
                CaseItem.from_parent(self, name=case.case_id, case=case)
                for case in runner.eval_set.cases
            ]
        SESSION_HEAP.freeze()
        return items


class CaseItem(pytest.Item):
    """One eval case: its lanes run in ``runtest``; case-scoped bounds decide pass or fail (and,
    on a replay, whether its recording could answer them)."""

    def __init__(self, *, case: EvalCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        # Set by ``runtest``, but made here: every item then shares one key table for its
        # attributes, where a first assignment in ``runtest`` gave each its own (≈ 460 bytes
        # per case, 46 MB at 100,000 cases).
        self.block: CaseBlock | None = None
        self.calls: CallTally | None = None

    def runtest(self) -> None:
        runner = self.config.stash[RUNNER_KEY]
        result = runner.result(self)  # judged ahead (--taguru-concurrency), or now
        self.block, self.calls = result.block, result.calls
        verdict = runner.presumed_dead
        if verdict is not None:
            # This process sends nothing more; the controller decides for the whole run.
            self.session.shouldstop = f"taguru: {verdict}"
        self.user_properties.extend(runner.scalar_properties(self.block))
        if result.failure is not None:
            raise result.failure

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseFailure):
            failure = excinfo.value
            return failure_repr(
                failure.drilldown,
                failure.headline,
                path=self.config.stash[RUNNER_KEY].settings.eval_path,
                line=self.case.line,
            )
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.path, self.case.line - 1, f"taguru case {self.case.case_id}"
