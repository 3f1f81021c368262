"""``taguru-evaluate``: mode selection, the run-mode scan (evaluate-run.md §1.2, assembly.md
§1.1), the compare scan and command (thresholds-and-compare.md B.1, B.2, B.10, B-5)."""

import os
import shutil
from pathlib import Path

import pytest
from paths import GOLDEN

from pytest_taguru.cli import dispatch as cli
from pytest_taguru.cli.dispatch import (
    ArgumentError,
    CompareArgs,
    HelpRequested,
    RunArgs,
    main,
    parse_compare_args,
    parse_run_args,
    pytest_args,
)
from pytest_taguru.report import gate as gate_report

GOLDEN = GOLDEN / "compare"
HINT = " — try 'taguru-evaluate --help'"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "generated_at_now", lambda: "2026-07-29T12:00:00Z")
    return tmp_path


def _usage_message(args: list[str]) -> str:
    with pytest.raises(ArgumentError) as caught:
        parse_run_args(args)
    return caught.value.message


# --- run mode: the scan (§1.2) -----------------------------------------------------------------

REQUIRED = ["--eval", "e.jsonl", "--context", "sake"]


def test_every_flag_of_the_original_is_accepted() -> None:
    args = [
        *REQUIRED,
        "--url",
        "http://h/",
        "--config",
        "c.env",
        "--out",
        "o.json",
        "--thresholds",
        "t.json",
        "--assembly",
        "--max-items",
        "+5",
        "--max-bytes",
        "007",
        "--max-tokens",
        "18446744073709551615",
        "--rerank",
        "",
    ]
    assert parse_run_args(args) == RunArgs(
        eval="e.jsonl",
        context="sake",
        url="http://h/",
        config="c.env",
        out="o.json",
        thresholds="t.json",
        assembly=True,
        max_items=5,
        max_bytes=7,
        max_tokens=2**64 - 1,
        rerank="",
    )


def test_a_value_flag_takes_the_next_argument_verbatim() -> None:
    parsed = parse_run_args([*REQUIRED, "--out", "--assembly", "--url", "-h"])
    assert (parsed.out, parsed.assembly, parsed.url) == ("--assembly", False, "-h")


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--eval", "--eval needs a file path"),
        ("--config", "--config needs a file path"),
        ("--out", "--out needs a file path"),
        ("--thresholds", "--thresholds needs a file path"),
        ("--context", "--context needs a name"),
        ("--url", "--url needs a value"),
        ("--rerank", "--rerank needs a model name"),
        ("--max-items", "--max-items needs a positive integer"),
        ("--max-bytes", "--max-bytes needs a positive integer"),
        ("--max-tokens", "--max-tokens needs a positive integer"),
    ],
)
def test_a_missing_value_names_the_flag(flag: str, message: str) -> None:
    assert _usage_message([*REQUIRED, flag]) == message


@pytest.mark.parametrize(
    "value", ["abc", "0", "+0", "-1", " 5", "5 ", "5_0", "1.0", "", "٣", "18446744073709551616"]
)
def test_a_budget_value_must_be_a_positive_rust_integer(value: str) -> None:
    assert _usage_message([*REQUIRED, "--max-bytes", value]) == (
        "--max-bytes needs a positive integer"
    )


@pytest.mark.parametrize(
    "flag",
    [
        "--eval",
        "--context",
        "--url",
        "--config",
        "--out",
        "--thresholds",
        "--rerank",
        "--max-items",
        "--max-bytes",
        "--max-tokens",
    ],
)
def test_a_repeated_flag_is_refused(flag: str) -> None:
    args = [*REQUIRED, "--assembly", flag, "1", flag, "2"]
    assert _usage_message(args) == f"{flag} given twice"


def test_assembly_given_twice() -> None:
    assert _usage_message([*REQUIRED, "--assembly", "--assembly"]) == "--assembly given twice"


def test_a_budget_repeat_is_found_before_its_value_is_read() -> None:
    assert _usage_message(["--max-items", "5", "--max-items", "abc"]) == ("--max-items given twice")
    assert _usage_message(["--max-items", "5", "--max-items"]) == "--max-items given twice"


def test_a_missing_value_is_found_before_a_repeat_for_the_other_flags() -> None:
    assert _usage_message(["--out", "a", "--out"]) == "--out needs a file path"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unknown flag '--bogus' for evaluate"),
        (["--eval=e.jsonl"], "unknown flag '--eval=e.jsonl' for evaluate"),
        (["--eval", "e", "extra"], "evaluate takes no positional arguments"),
        (["--eval", "e", "-x"], "evaluate takes no positional arguments"),
        (["--eval", "e", "-"], "evaluate takes no positional arguments"),
        ([], "--eval FILE is required"),
        (["--context", "sake", "--rerank", "m"], "--eval FILE is required"),
        (["--eval", "e", "--rerank", "m"], "--context NAME is required"),
        ([*REQUIRED, "--rerank", "m"], "--rerank requires --assembly"),
        (["--bogus", "--help"], "unknown flag '--bogus' for evaluate"),
        (["--out", "--help", "--eval"], "--eval needs a file path"),
    ],
)
def test_run_mode_messages_in_precedence(args: list[str], message: str) -> None:
    assert _usage_message(args) == message


@pytest.mark.parametrize("args", [["--eval", "e", "--help"], ["--eval", "e", "-h", "--bogus"]])
def test_help_in_flag_position_wins_over_later_problems(args: list[str]) -> None:
    with pytest.raises(HelpRequested):
        parse_run_args(args)


def test_the_run_becomes_a_pytest_command_line_with_only_the_plugin() -> None:
    run = RunArgs(
        eval="--e.jsonl",
        context="sake",
        url="http://h",
        out="--o",
        max_items=3,
        assembly=True,
        rerank="m",
    )
    assert pytest_args(run, "/work") == [
        "-p",
        "taguru",
        "-p",
        "no:cacheprovider",
        "--noconftest",
        "-c",
        os.devnull,
        "--rootdir",
        "/work",
        "--taguru-eval=--e.jsonl",
        "--taguru-context=sake",
        "--taguru-url=http://h",
        "--taguru-out=--o",
        "--taguru-max-items=3",
        "--taguru-rerank=m",
        "--taguru-assembly",
        "--",
        "--e.jsonl",
    ]


def test_run_mode_returns_the_pytest_exit_status(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_pytest_main(args: list[str]) -> int:
        seen.append(args)
        return 3

    monkeypatch.setattr(pytest, "main", fake_pytest_main)
    assert main(["--eval", "e.jsonl", "--context", "sake"]) == 3
    assert seen[0][-2:] == ["--", "e.jsonl"]


# --- mode selection (§1.1) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "expected --eval FILE --context NAME"),
        (
            ["-x"],
            "unknown subcommand '-x' — the default mode is selected by a leading flag, "
            "e.g. 'taguru-evaluate --eval FILE --context NAME', or use the 'compare' or "
            "'gate' subcommand",
        ),
        (
            ["evaluate"],
            "unknown subcommand 'evaluate' — the default mode is selected by a "
            "leading flag, e.g. 'taguru-evaluate --eval FILE --context NAME', or use "
            "the 'compare' or 'gate' subcommand",
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
    assert capsys.readouterr().out == cli.USAGE


def test_gate_is_handed_the_rest_of_the_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_gate(args: list[str]) -> int:
        seen.append(args)
        return 3

    monkeypatch.setattr(gate_report, "run_gate", fake_gate)
    assert main(["gate", "run.json", "--thresholds", "t.json"]) == 3
    assert seen == [["run.json", "--thresholds", "t.json"]]


# --- compare: the scan (B.1) -------------------------------------------------------------------


def _compare_message(args: list[str]) -> str:
    with pytest.raises(ArgumentError) as caught:
        parse_compare_args(args)
    return caught.value.message


def test_compare_defaults_and_verbatim_values() -> None:
    assert parse_compare_args(["a", "b"]) == CompareArgs("a", "b", "changes.jsonl", "jsonl")
    assert parse_compare_args(["-x", "--out", "--help", "-"]) == CompareArgs("-x", "-", "--help")
    assert parse_compare_args(["a", "--format", "markdown", "b"]) == CompareArgs(
        "a", "b", "changes.md", "markdown"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["a"],
            "evaluate compare takes exactly two positional arguments, BASE.json and "
            "HEAD.json (got 1)",
        ),
        (
            ["a", "b", "c"],
            "evaluate compare takes exactly two positional arguments, BASE.json "
            "and HEAD.json (got 3)",
        ),
        (["a", "b", "--out"], "--out needs a file path"),
        (["--out", "x", "--out", "y", "a", "b"], "--out given twice"),
        (["--out", "x", "--out"], "--out needs a file path"),
        (["a", "b", "--bogus"], "unknown flag '--bogus' for evaluate compare"),
        (["--bogus", "--help"], "unknown flag '--bogus' for evaluate compare"),
        (["a", "b", "--format"], "--format needs jsonl or markdown"),
        (["a", "b", "--format", "html"], "--format must be jsonl or markdown, got 'html'"),
        (["--format", "jsonl", "--format", "jsonl"], "--format given twice"),
    ],
)
def test_compare_usage_errors(args: list[str], message: str) -> None:
    assert _compare_message(args) == message


@pytest.mark.parametrize("args", [["--help"], ["a", "b", "c", "--help"], ["x", "-h"]])
def test_compare_help_wins_over_the_positional_count(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *args]) == 0
    assert capsys.readouterr().out == cli.COMPARE_USAGE


# --- compare: the command (B.1, B.2, B.10, B-5) ------------------------------------------------


def _copy_golden(example: str, into: Path) -> None:
    for name in ("base.json", "head.json"):
        shutil.copy(GOLDEN / example / name, into / name)


@pytest.mark.parametrize("example", ["b1", "b2", "b3", "b4", "taguru_layout"])
def test_compare_writes_the_golden_file_and_prints_the_golden_summary(
    example: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_golden(example, workdir)
    assert main(["compare", "base.json", "head.json", "--out", "changes.jsonl"]) == 0
    written = (workdir / "changes.jsonl").read_bytes()
    assert written == (GOLDEN / example / "changes.jsonl").read_bytes()
    captured = capsys.readouterr()
    assert captured.out == (GOLDEN / example / "stdout.txt").read_text(encoding="utf-8")
    assert captured.err == (GOLDEN / example / "stderr.txt").read_text(encoding="utf-8")


def test_compare_markdown_goes_to_changes_md(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_golden("b2", workdir)
    assert main(["compare", "base.json", "head.json", "--format", "markdown"]) == 0
    expected = (GOLDEN / "b2" / "changes.md").read_text(encoding="utf-8")
    assert (workdir / "changes.md").read_text(encoding="utf-8") == expected
    assert capsys.readouterr().out.endswith("  wrote changes.md\n")


def _compare_fails(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["compare", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_wrong_positional_count_exits_2(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _compare_fails(["a.json"], capsys) == (
        2,
        "",
        "taguru-evaluate: evaluate compare takes exactly two positional arguments, "
        f"BASE.json and HEAD.json (got 1){HINT}\n",
    )


def test_base_is_read_and_checked_before_head(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _compare_fails(["missing.json", "also-missing.json"], capsys) == (
        2,
        "",
        "taguru-evaluate: BASE reading missing.json: No such file or directory (os error 2)\n",
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"taguru_evaluation":2}', "in.json: taguru_evaluation must be within 1..=1, got 2"),
        (
            b'{"taguru_evaluation":1,"cases":null}',
            "in.json: malformed evaluation.json: invalid type: null, expected a sequence",
        ),
        (
            b'{"taguru_evaluation":1,"generated_at":"\xff"}',
            "reading in.json: stream did not contain valid UTF-8",
        ),
    ],
)
def test_an_unusable_head_exits_2_with_the_reason(
    content: bytes, reason: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_golden("b1", workdir)
    (workdir / "in.json").write_bytes(content)
    assert _compare_fails(["base.json", "in.json"], capsys) == (
        2,
        "",
        f"taguru-evaluate: HEAD {reason}\n",
    )
    assert not (workdir / "changes.jsonl").exists()


def test_an_unwritable_out_exits_1_after_the_warnings_and_prints_no_summary(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_golden("b2", workdir)
    code, out, err = _compare_fails(
        ["base.json", "head.json", "--out", "/nonexistent_dir/x.jsonl"], capsys
    )
    warnings = (GOLDEN / "b2" / "stderr.txt").read_text(encoding="utf-8")
    assert (code, out) == (1, "")
    assert err == warnings + (
        "taguru-evaluate: writing /nonexistent_dir/x.jsonl: No such file or directory "
        "(os error 2)\n"
    )


def test_an_existing_out_survives_a_failed_read(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "changes.jsonl").write_text("keep\n", encoding="utf-8")
    assert _compare_fails(["nope.json", "nope.json"], capsys)[0] == 2
    assert (workdir / "changes.jsonl").read_text(encoding="utf-8") == "keep\n"


def test_an_undecodable_path_is_shown_with_replacement_characters(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw_name = os.fsdecode(b"base-\xff.json")
    shutil.copy(GOLDEN / "b1" / "base.json", workdir / raw_name)
    shutil.copy(GOLDEN / "b1" / "head.json", workdir / "head.json")
    assert main(["compare", raw_name, "head.json"]) == 0
    header = (workdir / "changes.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert '"path":"base-\ufffd.json"' in header
