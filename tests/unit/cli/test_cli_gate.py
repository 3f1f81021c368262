"""``taguru-evaluate gate``: a saved artifact re-gated offline, its flags from the option table."""

import io
import json
from pathlib import Path

import pytest
from gate_examples import A2_LINES, GOLDEN

from pytest_taguru.cli.gate import run_gate


def gate(*argv: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_gate(list(argv), environ=environ or {}, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def golden(name: str) -> str:
    return str(GOLDEN / name)


def test_gate_fails_with_exit_3_and_the_same_lines() -> None:
    code, out, err = gate(golden("a2_evaluation.json"), "--thresholds", golden("a2.json"))
    assert (code, err) == (3, "")
    assert out == "\n".join(A2_LINES) + "\n"


def test_gate_passes_with_exit_0() -> None:
    code, out, _ = gate(golden("a4_evaluation.json"), "--thresholds", golden("a4.json"))
    assert (code, out) == (0, "  thresholds: PASS (sha256 5626119286ab…)\n")


def test_regression_exit_code_is_configurable() -> None:
    argv = (golden("a1_evaluation.json"), "--thresholds", golden("a1.json"))
    assert gate(*argv, "--regression-exit-code", "5")[0] == 5
    assert gate(*argv, "--regression-exit-code", "0")[0] == 0
    assert (
        gate(
            golden("a4_evaluation.json"),
            "--thresholds",
            golden("a4.json"),
            "--regression-exit-code",
            "9",
        )[0]
        == 0
    )


def test_the_exit_status_is_parsed_as_the_plugin_parses_it() -> None:
    argv = (golden("a1_evaluation.json"), "--thresholds", golden("a1.json"))
    assert gate(*argv, "--regression-exit-code", "+7")[0] == 7
    assert gate(*argv, "--regression-exit-code", "0255")[0] == 255


def test_a_bad_exit_status_is_found_where_it_is_met() -> None:
    code, _, err = gate("x.json", "--thresholds", "a", "--regression-exit-code", "-1", "--bogus")
    assert code == 2
    assert err.startswith("taguru-evaluate: gate: --regression-exit-code needs an exit status")


def test_overrides_are_checked_against_the_artifact_cases(tmp_path: Path) -> None:
    thresholds = tmp_path / "t.json"
    thresholds.write_text(
        '{"taguru_evaluate_thresholds":1,"cases":{"overrides":{"easy":{"recall.mrr":{"min":0}},'
        '"nope":{"recall.mrr":{"min":0}}}}}',
        encoding="utf-8",
    )
    code, out, err = gate(golden("a2_evaluation.json"), "--thresholds", str(thresholds))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"taguru-evaluate: gate: {thresholds}: cases.overrides: unknown case_id 'nope'",
        f"taguru-evaluate: gate: hint: {thresholds}: 'nope' is not one of the run's case_ids",
    ]


def test_every_problem_of_a_bad_file_is_reported_before_anything_else() -> None:
    code, out, err = gate(golden("a2_evaluation.json"), "--thresholds", golden("t3.json"))
    assert (code, out) == (2, "")
    assert err.count("; ") == 7 and "unknown case_id 'c1'" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: EVALUATION.json"),
        (["x.json"], "one of --thresholds or --slice-thresholds is required"),
        (["x.json", "--thresholds"], "--thresholds needs a file path"),
        (
            ["x.json", "--thresholds", "--regression-exit-code", "4"],
            "--thresholds needs a file path",
        ),
        (
            ["x.json", "--thresholds", "a", "--regression-exit-code"],
            "--regression-exit-code needs an exit status 0..=255",
        ),
        (
            ["x.json", "--thresholds", "a", "--regression-exit-code", "²"],
            "--regression-exit-code needs an exit status 0..=255",
        ),
        (["x.json", "--thresholds", "a", "--thresholds", "b"], "--thresholds given twice"),
        (
            ["x.json", "--thresholds", "a", "--regression-exit-code", "x"],
            "--regression-exit-code needs an exit status 0..=255",
        ),
        (
            ["x.json", "--thresholds", "a", "--regression-exit-code", "256"],
            "--regression-exit-code needs an exit status 0..=255",
        ),
        (["x.json", "--thresholds", "a", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_name_the_flag(argv: list[str], message: str) -> None:
    code, out, err = gate(*argv)
    assert (code, out) == (2, "")
    assert err == f"taguru-evaluate: gate: {message} — try 'taguru-evaluate gate --help'\n"


def test_unreadable_inputs_exit_2(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.json")
    code, _, err = gate(missing, "--thresholds", golden("a2.json"))
    assert code == 2
    assert err == (
        f"taguru-evaluate: gate: cannot read {missing}: No such file or directory (os error 2)\n"
    )
    code, _, err = gate(golden("a2.json"), "--thresholds", golden("a2.json"))
    assert code == 2 and "taguru_evaluation" in err


def test_help_exits_0() -> None:
    code, out, err = gate("--help")
    assert (code, err) == (0, "")
    assert "--regression-exit-code N" in out


def test_gate_publishes_to_github_when_asked(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    code, out, _ = gate(
        golden("a2_evaluation.json"),
        "--thresholds",
        golden("a2.json"),
        environ={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert code == 3
    assert "::error file=eval.jsonl,title=taguru case easy::" in out
    assert summary.read_text(encoding="utf-8").startswith("### taguru thresholds: FAIL")


def test_a_deeply_nested_artifact_is_an_input_error_not_a_crash(tmp_path: Path) -> None:
    # Before the one reader, an artifact nested past Python's limit ended in a traceback.
    deep = tmp_path / "deep.json"
    deep.write_text('{"taguru_evaluation":1,"x":' + "[" * 100_000 + "]" * 100_000 + "}")
    code, out, err = gate(str(deep), "--thresholds", golden("a2.json"))
    assert (code, out) == (2, "")
    assert "recursion limit exceeded at line 1 column 154" in err


# --- the slice gate ------------------------------------------------------------------------------


def sliced_artifact(tmp_path: Path, slices: bool = True) -> str:
    from sliced_run import sliced_run
    from synthetic_run import synthetic_run

    from pytest_taguru.artifact.writing import render

    run = synthetic_run(40)
    evaluation = sliced_run(run).evaluation if slices else run.evaluation
    path = tmp_path / "evaluation.json"
    path.write_text(render(evaluation), encoding="utf-8")
    return str(path)


def slice_thresholds(tmp_path: Path, slices: dict[str, object]) -> str:
    path = tmp_path / "slice-thresholds.json"
    path.write_text(
        json.dumps({"taguru_slice_thresholds": 1, "slices": slices}, indent=2), encoding="utf-8"
    )
    return str(path)


def test_slices_are_gated_from_the_artifacts_case_blocks(tmp_path: Path) -> None:
    artifact = sliced_artifact(tmp_path)
    failing = slice_thresholds(tmp_path, {
        "early": {"aggregate": {"recall.mrr": {"min": 0.999}}},
        "small": {"min_cases": 3, "aggregate": {"recall.mrr": {"min": 0.999}}},
    })  # fmt: skip
    code, out, err = gate(artifact, "--slice-thresholds", failing)
    lines = out.splitlines()
    assert (code, err) == (3, "")
    assert lines[0].startswith("  slice thresholds: FAIL — 1 violation(s) (sha256 ")
    assert lines[1].startswith("    [slice early] recall.mrr: ")
    assert lines[1].endswith(" < min 0.999000")
    assert lines[2] == (
        "  slice 'small': 1 case(s), fewer than its min_cases 3: reported, not judged"
    )
    assert gate(artifact, "--slice-thresholds", failing, "--regression-exit-code", "7")[0] == 7
    passing = slice_thresholds(tmp_path, {"early": {"aggregate": {"recall.mrr": {"min": 0}}}})
    code, out, _ = gate(artifact, "--slice-thresholds", passing)
    assert code == 0 and out.startswith("  slice thresholds: PASS (sha256 ")


def test_both_gates_at_once_exit_3_when_either_fails(tmp_path: Path) -> None:
    artifact = sliced_artifact(tmp_path)
    passing = slice_thresholds(tmp_path, {"early": {}})
    thresholds = tmp_path / "t.json"
    thresholds.write_text('{"taguru_evaluate_thresholds":1,"aggregate":{"recall.mrr":{"min":2}}}')
    code, out, _ = gate(artifact, "--thresholds", str(thresholds), "--slice-thresholds", passing)
    assert code == 3
    assert out.splitlines()[0].startswith("  thresholds: FAIL")
    assert out.splitlines()[-1].startswith("  slice thresholds: PASS")


def test_an_artifact_without_slices_cannot_be_slice_gated(tmp_path: Path) -> None:
    artifact = sliced_artifact(tmp_path, slices=False)
    code, out, err = gate(artifact, "--slice-thresholds", slice_thresholds(tmp_path, {}))
    assert (code, out) == (2, "")
    assert err == (
        f"taguru-evaluate: gate: {artifact} carries no slices to gate (a run given "
        "--taguru-slices or --taguru-slices-file records them)\n"
    )


def test_a_bad_slice_thresholds_file_exits_2_naming_its_line(tmp_path: Path) -> None:
    artifact = sliced_artifact(tmp_path)
    bad = slice_thresholds(tmp_path, {"eraly": {"aggregate": {"recall.mrr": {"min": 80}}}})
    code, out, err = gate(artifact, "--slice-thresholds", bad)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"taguru-evaluate: gate: {bad}:4: slices.eraly: unknown slice 'eraly'",
        f"taguru-evaluate: gate: hint: {bad}: 'eraly' is not a slice of the run — did you mean "
        "'early'?",
    ]
