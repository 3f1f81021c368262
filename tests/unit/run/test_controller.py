"""The controller's run: exit-status precedence, when the artifact is written, the messages.

``RunController`` is pytest-free; these tests hand it pytest's statuses directly and run it
against an in-process reference server where the network is needed.
"""

import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_taguru.errors import ConfigFileError, RunError, UsageError, error_line
from pytest_taguru.gate.results import FinishedRun, GateResult
from pytest_taguru.gate.thresholds import load_thresholds
from pytest_taguru.run.case_runner import CaseRunner
from pytest_taguru.run.controller import (
    PYTEST_FAILED,
    PYTEST_INTERNAL,
    PYTEST_INTERRUPTED,
    PYTEST_NO_TESTS,
    PYTEST_OK,
    PYTEST_USAGE,
    RunController,
)
from pytest_taguru.run.dataset import load_eval_set
from pytest_taguru.run.server_access import mask_url
from pytest_taguru.run.settings import Settings
from pytest_taguru.run.shard import ShardPlan, ShardSpec
from pytest_taguru.score.metrics import definitions
from pytest_taguru.server.runner import ReferenceServer

CORPUS = (
    '{"taguru_batch":1,"context":"mini","source":"a.md","create":{}}\n'
    '{"passage":"Alpha widgets are red.\\n\\nAlpha widgets are cheap."}\n'
    '{"taguru_batch":1,"context":"mini","source":"b.md"}\n'
    '{"passage":"Beta gizmos are blue."}\n'
)
EVAL = (
    '{"taguru_eval":1,"default_target":{"context":"mini"}}\n'
    '{"case_id":"one","query":"alpha widgets","expected_sources":[{"source":"a.md"}]}\n'
    '{"case_id":"two","query":"beta gizmos","expected_sources":[{"source":"b.md"}]}\n'
    '{"case_id":"three","query":"gizmos","expected_sources":[{"source":"a.md"}],'
    '"options":{"limit":1}}\n'
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ReferenceServer]:
    corpus = tmp_path / "corpus.ndjson"
    corpus.write_text(CORPUS, encoding="utf-8")
    with ReferenceServer.from_import_files([corpus]) as running:
        yield running


def make_controller(
    tmp_path: Path, url: str = "http://127.0.0.1:1", thresholds: str | None = None
) -> RunController:
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_text(EVAL, encoding="utf-8")
    eval_set = load_eval_set(str(eval_path))
    gate = None
    if thresholds is not None:
        thresholds_path = tmp_path / "thresholds.json"
        thresholds_path.write_text(thresholds, encoding="utf-8")
        gate = load_thresholds(
            str(thresholds_path),
            metric_names=definitions().keys(),
            case_ids=[c.case_id for c in eval_set.cases],
        )
    settings = Settings(
        eval_path=str(eval_path),
        context="mini",
        base_url=url,
        masked_url=mask_url(url),
        out=str(tmp_path / "evaluation.json"),
    )
    return RunController(settings, eval_set, gate, stderr=io.StringIO(), environ={})


def stderr_of(controller: RunController) -> str:
    assert isinstance(controller.stderr, io.StringIO)
    return controller.stderr.getvalue()


def run_cases(controller: RunController, *case_ids: str) -> None:
    """What the plugin does per case: run it in a ``CaseRunner``, hand its block over."""
    runner = CaseRunner(controller.settings, controller.eval_set, controller.thresholds)
    try:
        for case in controller.eval_set.cases:
            if case.case_id in case_ids:
                controller.record_case(CaseRunner.transport(runner.run_case(case)[0]))
    finally:
        runner.close()


# --- exit status precedence ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pytest_status", "other_failures", "regressions", "expected"),
    [
        (PYTEST_OK, 0, 0, 0),
        (PYTEST_FAILED, 0, 1, 3),
        (PYTEST_FAILED, 1, 0, 1),
        (PYTEST_FAILED, 1, 1, 1),
        (PYTEST_FAILED, 0, 0, 1),
        (PYTEST_NO_TESTS, 0, 0, 5),
        (PYTEST_INTERRUPTED, 0, 1, 1),
        (PYTEST_INTERNAL, 0, 0, 1),
        (PYTEST_USAGE, 1, 1, 2),
    ],
)
def test_exit_status_precedence(
    tmp_path: Path, pytest_status: int, other_failures: int, regressions: int, expected: int
) -> None:
    controller = make_controller(tmp_path)
    controller.other_failures = other_failures
    controller.regressions = regressions

    assert controller.exit_status(pytest_status) == expected


def test_a_run_error_wins_over_everything_else(tmp_path: Path) -> None:
    controller = make_controller(tmp_path)
    controller.regressions = 2

    assert controller.fail(UsageError("bad")) == 2
    assert controller.exit_status(PYTEST_FAILED) == 2
    assert stderr_of(controller) == "taguru: evaluate: bad\n"


def test_the_regression_exit_code_is_configurable(tmp_path: Path) -> None:
    controller = make_controller(tmp_path)
    controller.settings = controller.settings.model_copy(update={"regression_exit_code": 9})
    controller.regressions = 1

    assert controller.exit_status(PYTEST_FAILED) == 9


def test_error_lines() -> None:
    assert error_line(RunError("x")) == "taguru: evaluate: x"
    assert (
        error_line(ConfigFileError("config c.env: line 1: …")) == "taguru: config c.env: line 1: …"
    )


# --- finishing ---------------------------------------------------------------------------------


def test_a_session_that_never_started_writes_nothing(tmp_path: Path) -> None:
    controller = make_controller(tmp_path)

    assert controller.conclude(PYTEST_OK) == 0
    assert controller.outcome is None
    assert not (tmp_path / "evaluation.json").exists()
    assert controller.closing_notice() is None


def test_partial_run_writes_the_cases_that_ran_in_file_order_beside_the_artifact(
    tmp_path: Path, server: ReferenceServer
) -> None:
    controller = make_controller(tmp_path, server.url)
    controller.start()
    run_cases(controller, "three", "one")  # arrival order differs from file order

    assert controller.conclude(PYTEST_OK) == 0

    assert not (tmp_path / "evaluation.json").exists()
    artifact = json.loads((tmp_path / "evaluation.partial.json").read_text(encoding="utf-8"))
    assert [case["case_id"] for case in artifact["cases"]] == ["one", "three"]
    warning = (
        "1 of 3 dataset case(s) did not run (deselected, skipped, not reached after "
        "-x/--maxfail, or lost with a crashed worker); the artifact holds the 2 that ran"
    )
    assert artifact["warnings"] == [warning]
    assert controller.outcome is not None
    assert f"  WARNING: {warning}" in controller.outcome.lines
    assert controller.closing_notice() is not None
    assert stderr_of(controller) == f"evaluate → {server.url}\n"


@pytest.mark.parametrize("status", [PYTEST_INTERRUPTED, PYTEST_INTERNAL, PYTEST_USAGE])
def test_an_incomplete_session_leaves_the_previous_artifact(
    tmp_path: Path, server: ReferenceServer, status: int
) -> None:
    controller = make_controller(tmp_path, server.url)
    (tmp_path / "evaluation.json").write_text("previous", encoding="utf-8")
    controller.start()
    run_cases(controller, "one", "two", "three")

    assert controller.conclude(status) == (2 if status == PYTEST_USAGE else 1)

    assert (tmp_path / "evaluation.json").read_text(encoding="utf-8") == "previous"
    assert "the pytest session did not complete" in stderr_of(controller)
    assert controller.outcome is None


def test_gate_failure_exits_with_the_regression_code_after_writing(
    tmp_path: Path, server: ReferenceServer
) -> None:
    thresholds = '{"taguru_evaluate_thresholds":1,"aggregate":{"recall.recall_at_k":{"min":0.9}}}'
    controller = make_controller(tmp_path, server.url, thresholds)
    controller.start()
    run_cases(controller, "one", "two", "three")

    assert controller.conclude(PYTEST_OK) == 3

    artifact = json.loads((tmp_path / "evaluation.json").read_text(encoding="utf-8"))
    assert artifact["thresholds"]["passed"] is False
    assert controller.outcome is not None
    assert controller.outcome.lines[-2].startswith("  thresholds: FAIL — 1 violation(s)")
    assert controller.closing_notice() is None


def test_an_unwritable_artifact_fails_the_start(tmp_path: Path, server: ReferenceServer) -> None:
    controller = make_controller(tmp_path, server.url)
    controller.settings = controller.settings.model_copy(
        update={"out": str(tmp_path / "missing" / "evaluation.json")}
    )

    with pytest.raises(RunError) as raised:
        controller.start()

    assert raised.value.message == (
        f"writing {controller.settings.out}: No such file or directory (os error 2)"
    )
    assert not controller.started
    assert stderr_of(controller) == ""  # before the target line: no request was made


def test_an_artifact_that_cannot_be_written_at_the_end_is_a_run_failure(
    tmp_path: Path, server: ReferenceServer
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    controller = make_controller(tmp_path, server.url)
    controller.settings = controller.settings.model_copy(
        update={"out": str(out / "evaluation.json")}
    )
    controller.start()
    run_cases(controller, "one", "two", "three")
    out.rmdir()

    assert controller.conclude(PYTEST_OK) == 1
    assert stderr_of(controller) == (
        f"evaluate → {server.url}\n"
        f"taguru: evaluate: writing {controller.settings.out}: "
        "No such file or directory (os error 2)\n"
    )


# --- gate results and the partial-run policy ----------------------------------------------------

AGGREGATE = '{"taguru_evaluate_thresholds":1,"aggregate":{"recall.mrr":{"min":0.9}}}'


def test_a_failed_aggregate_is_a_failed_gate_result(
    tmp_path: Path, server: ReferenceServer
) -> None:
    controller = make_controller(tmp_path, server.url, thresholds=AGGREGATE)
    controller.start()
    run_cases(controller, "one", "two", "three")

    assert controller.conclude(PYTEST_OK) == 3
    [result] = controller.gate_results
    assert (result.name, result.status) == ("thresholds", "failed")
    assert result.headline == "recall.mrr 0.666667 < min 0.9"
    assert result.details == (
        "taguru thresholds: 1 run-level violation(s)",
        "  [aggregate] recall.mrr: 0.666667 < min 0.900000",
    )
    assert result.properties == (("recall.mrr", "0.666667"),)


def test_a_partial_run_skips_the_aggregates_and_passes_otherwise(
    tmp_path: Path, server: ReferenceServer
) -> None:
    controller = make_controller(tmp_path, server.url, thresholds=AGGREGATE)
    controller.start()
    run_cases(controller, "three")

    assert controller.conclude(PYTEST_OK) == 0
    [result] = controller.gate_results
    assert result.status == "skipped"
    assert result.headline == "aggregate bounds not judged: partial run (1 of 3 cases)"
    artifact = json.loads((tmp_path / "evaluation.partial.json").read_text(encoding="utf-8"))
    assert artifact["thresholds"]["aggregate_skipped"] == "partial run (1 of 3 cases)"


def test_gate_partial_judges_a_subset(tmp_path: Path, server: ReferenceServer) -> None:
    controller = make_controller(tmp_path, server.url, thresholds=AGGREGATE)
    controller.settings = controller.settings.model_copy(update={"gate_partial": True})
    controller.start()
    run_cases(controller, "three")

    assert controller.conclude(PYTEST_OK) == 3
    assert controller.gate_results[0].headline == "recall.mrr 0 < min 0.9"


def test_an_out_typed_on_the_command_line_takes_a_partial_run(
    tmp_path: Path, server: ReferenceServer
) -> None:
    controller = make_controller(tmp_path, server.url)
    controller.settings = controller.settings.model_copy(update={"typed_flags": {"out"}})
    controller.start()
    run_cases(controller, "one")

    assert controller.conclude(PYTEST_OK) == 0
    assert (tmp_path / "evaluation.json").is_file()
    assert not (tmp_path / "evaluation.partial.json").exists()


def test_an_empty_run_exits_5_and_writes_nothing(tmp_path: Path, server: ReferenceServer) -> None:
    controller = make_controller(tmp_path, server.url, thresholds=AGGREGATE)
    controller.start()

    assert controller.conclude(PYTEST_NO_TESTS) == 5
    assert [r.status for r in controller.gate_results] == ["skipped"]
    assert controller.gate_results[0].headline == "no case ran (0 of 3 cases)"
    assert not list(tmp_path.glob("evaluation*.json"))
    assert controller.closing_notice() is None


def make_shard(tmp_path: Path, url: str, index: int) -> RunController:
    """Shard ``index``/4 of the eval set: 1/4 holds ``one``, 3/4 ``two`` and ``three``."""
    controller = make_controller(tmp_path, url, thresholds=AGGREGATE)
    eval_path = Path(controller.settings.eval_path)
    ids = [case.case_id for case in controller.eval_set.cases]
    controller.shard = ShardPlan.of(ShardSpec(index, 4), ids, eval_path.read_bytes())
    return controller


def test_a_shard_writes_the_configured_artifact_and_leaves_the_aggregates_to_the_merge(
    tmp_path: Path, server: ReferenceServer
) -> None:
    controller = make_shard(tmp_path, server.url, 3)
    controller.start()
    run_cases(controller, "two", "three")

    assert controller.conclude(PYTEST_OK) == 0
    [result] = controller.gate_results
    reason = "shard 3/4 (2 of 3 cases): judged on the merged run (taguru-evaluate merge)"
    assert (result.status, result.headline) == ("skipped", f"aggregate bounds not judged: {reason}")
    artifact = json.loads((tmp_path / "evaluation.json").read_text(encoding="utf-8"))
    assert artifact["inputs"]["shard"] == {
        "index": 3,
        "count": 4,
        "eval_sha256": hashlib.sha256(EVAL.encode()).hexdigest(),
        "case_ids": ["one", "two", "three"],
    }
    assert artifact["inputs"]["eval"]["cases"] == 3
    assert [case["case_id"] for case in artifact["cases"]] == ["two", "three"]
    assert "warnings" not in artifact
    assert artifact["thresholds"]["aggregate_skipped"] == reason


def test_gate_partial_judges_a_shard_on_its_own_cases(
    tmp_path: Path, server: ReferenceServer
) -> None:
    controller = make_shard(tmp_path, server.url, 3)
    controller.settings = controller.settings.model_copy(update={"gate_partial": True})
    controller.start()
    run_cases(controller, "two", "three")

    assert controller.conclude(PYTEST_OK) == 3
    assert controller.gate_results[0].headline == "recall.mrr 0.5 < min 0.9"


def test_a_shard_that_left_its_own_cases_out_is_a_partial_run(
    tmp_path: Path, server: ReferenceServer
) -> None:
    controller = make_shard(tmp_path, server.url, 3)
    controller.start()
    run_cases(controller, "two")

    assert controller.conclude(PYTEST_OK) == 0
    assert controller.gate_results[0].headline == (
        "aggregate bounds not judged: partial run (1 of 2 cases) of shard 3/4 (2 of 3 cases)"
    )
    artifact = json.loads((tmp_path / "evaluation.partial.json").read_text(encoding="utf-8"))
    assert artifact["warnings"][0].startswith("1 of 2 dataset case(s) did not run")


def test_a_new_verdict_source_is_one_call(tmp_path: Path, server: ReferenceServer) -> None:
    class AlwaysFails:
        name = "baseline"

        def judge(self, run: FinishedRun) -> GateResult:
            assert run.coverage.complete and run.artifact_path is not None
            return GateResult(self.name, "failed", f"{run.coverage.ran_cases} cases worse")

    controller = make_controller(tmp_path, server.url)
    controller.add_gate_source(AlwaysFails())
    controller.start()
    run_cases(controller, "one", "two", "three")

    assert controller.conclude(PYTEST_OK) == 3
    assert [(r.name, r.status, r.headline) for r in controller.gate_results] == [
        ("baseline", "failed", "3 cases worse")
    ]


def test_hints_follow_the_error_line(tmp_path: Path) -> None:
    controller = make_controller(tmp_path)
    error = RunError("server at localhost:// is not reachable: x")
    error.hints.append("--taguru-url localhost:1: did you mean http://localhost:1?")

    assert controller.fail(error) == 1
    assert stderr_of(controller) == (
        "taguru: evaluate: server at localhost:// is not reachable: x\n"
        "taguru: evaluate: hint: --taguru-url localhost:1: did you mean http://localhost:1?\n"
    )


def test_an_interrupted_session_says_so(tmp_path: Path, server: ReferenceServer) -> None:
    controller = make_controller(tmp_path, server.url)
    controller.start()
    run_cases(controller, "one")
    controller.note_interruption("Ctrl-C")

    assert controller.conclude(PYTEST_INTERRUPTED) == 1
    assert stderr_of(controller).endswith(
        f"taguru: evaluate: interrupted (Ctrl-C) after 1 of 3 case(s); "
        f"{controller.settings.out} was not written\n"
    )
