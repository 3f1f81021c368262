"""``taguru-evaluate gate``: a saved artifact re-gated offline, its flags from the option table."""

import io
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
        ([], "the following arguments are required: EVALUATION.json, --thresholds"),
        (["x.json"], "the following arguments are required: --thresholds"),
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
