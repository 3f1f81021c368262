"""``taguru-evaluate`` mode selection (evaluate-run.md §1.1): the first argument picks the
mode; errors carry the ``--help`` hint."""

import gc

import pytest

from pytest_taguru.cli import gate as gate_cli
from pytest_taguru.cli.dispatch import main
from pytest_taguru.cli.run import USAGE

HINT = " — try 'taguru-evaluate --help'"


# --- mode selection (§1.1) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "expected --eval FILE --context NAME"),
        (
            ["-x"],
            "unknown subcommand '-x' — the default mode is selected by a leading flag, "
            "e.g. 'taguru-evaluate --eval FILE --context NAME', or use a subcommand: "
            "'compare', 'gate', 'report', 'merge', 'init', 'import-dir', 'check', 'schema', "
            "'unjudged', 'label-merge'",
        ),
        (
            ["evaluate"],
            "unknown subcommand 'evaluate' — the default mode is selected by a "
            "leading flag, e.g. 'taguru-evaluate --eval FILE --context NAME', or use a "
            "subcommand: 'compare', 'gate', 'report', 'merge', 'init', 'import-dir', 'check', "
            "'schema', 'unjudged', 'label-merge'",
        ),
        (["--eval", "e", "x"], "evaluate takes no positional arguments"),
    ],
)
def test_mode_selection_errors_exit_2_with_the_hint(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"taguru-evaluate: {message}{HINT}\n")


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["-h", "--bogus"]])
def test_help_prints_the_usage_and_exits_0(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 0
    assert capsys.readouterr().out == USAGE


def test_gate_is_handed_the_rest_of_the_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_gate(args: list[str]) -> int:
        seen.append(args)
        return 3

    monkeypatch.setattr(gate_cli, "run_gate", fake_gate)
    assert main(["gate", "run.json", "--thresholds", "t.json"]) == 3
    assert seen == [["run.json", "--thresholds", "t.json"]]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert main(["--version"]) == 0
    expected = f"taguru-evaluate (pytest-taguru) {version('pytest-taguru')}\n"
    assert capsys.readouterr().out == expected


# --- the offline subcommands run without the cycle collector -----------------------------------


def test_gate_runs_with_the_collector_paused_and_restores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []

    def fake_gate(args: list[str]) -> int:
        seen.append(gc.isenabled())
        raise gate_cli.UsageError("stop here")

    monkeypatch.setattr(gate_cli, "run_gate", fake_gate)
    assert gc.isenabled()
    assert main(["gate", "x.json"]) == 2
    assert seen == [False]
    assert gc.isenabled()
