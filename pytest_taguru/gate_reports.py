"""Gate results (``gate.results``) reported as pytest test results, from the controller.

A run-level verdict is known only on the controller, after every case: no item can carry it
(under pytest-xdist it would run on a worker). So the controller reports each result itself,
at the start of ``pytest_sessionfinish`` (``tryfirst``): ``pytest_runtest_logstart``, a setup,
call and teardown report through ``pytest_runtest_logreport``, then ``pytest_runtest_logfinish``
— the sequence a real item produces. That is before junitxml writes its file and before the
terminal reporter's ``pytest_sessionfinish`` wrapper prints the short summary and the final
line, so the result is a ``<testcase>`` in ``--junitxml``, a ``FAILED eval.jsonl::[thresholds] -
recall.mrr …`` line and a ``1 failed`` in the final count, plain or under ``-n 2``.

Node id ``<eval file>::[<name>]``: stable across runs, so ``--lf`` reruns the whole dataset after
a failed aggregate bound (no item has that id, and pytest then runs everything), and a skipped
or passed result clears it. It is never collected: ``--collect-only``, ``-k`` and ``--deselect``
do not see it.
"""

import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_taguru.gate.results import GateResult
from pytest_taguru.longrepr import failure_repr


class TaguruGateWarning(pytest.PytestWarning):
    """A gate result's warning (``GateResult.warnings``): an inconclusive baseline verdict."""


GATE_REPORT_ATTRIBUTE = "taguru_gate"
"""Set on every report made here, so the controller does not count it as a case outcome."""


def gate_nodeid(eval_nodeid: str, name: str) -> str:
    return f"{eval_nodeid}::[{name}]"


def gate_reports(
    result: GateResult, *, nodeid: str, path: str, crash_path: str
) -> Iterator[pytest.TestReport]:
    """The setup, call (unless skipped) and teardown reports of one result."""
    location = (path, 0, f"taguru {result.name}")
    now = time.time()

    def report(when: str, outcome: str, longrepr: Any = None) -> pytest.TestReport:
        made = pytest.TestReport(
            nodeid,
            location,
            {f"[{result.name}]": 1, "taguru": 1},
            outcome,  # type: ignore[arg-type]
            longrepr,
            when,  # type: ignore[arg-type]
            duration=0.0,
            start=now,
            stop=now,
            user_properties=list(result.properties),
        )
        setattr(made, GATE_REPORT_ATTRIBUTE, True)
        return made

    if result.status == "skipped":
        yield report("setup", "skipped", (path, 1, result.headline))
    else:
        yield report("setup", "passed")
        longrepr = None
        if result.status == "failed":
            longrepr = failure_repr(result.text, result.headline, path=crash_path, line=1)
        yield report("call", result.status, longrepr)
    yield report("teardown", "passed")


def emit_gate_result(
    config: pytest.Config, result: GateResult, *, eval_nodeid: str, crash_path: str
) -> None:
    """Report ``result`` to every plugin as if an item had run."""
    nodeid = gate_nodeid(eval_nodeid, result.name)
    path = eval_nodeid
    location = (path, 0, f"taguru {result.name}")
    config.hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    for report in gate_reports(result, nodeid=nodeid, path=path, crash_path=crash_path):
        config.hook.pytest_runtest_logreport(report=report)
    for text in result.warnings:
        # Recorded as pytest's warnings plugin records one: the "warnings summary" shows it
        # and the final line counts it (line 0: no source line is quoted under it).
        message = warnings.WarningMessage(TaguruGateWarning(text), TaguruGateWarning, path, 0)
        recorded = {"warning_message": message, "when": "runtest", "nodeid": nodeid}
        config.hook.pytest_warning_recorded.call_historic(
            kwargs={**recorded, "location": location}
        )
    config.hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
