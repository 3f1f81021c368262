"""``taguru-evaluate compare``: the scan and the command (thresholds-and-compare.md B.1, B.2,
B.10, B-5)."""

import os
import shutil
from pathlib import Path

import pytest
from paths import GOLDEN

from pytest_taguru.cli import compare as compare_cli
from pytest_taguru.cli.arguments import ArgumentError
from pytest_taguru.cli.compare import COMPARE_USAGE, CompareArgs, parse_compare_args
from pytest_taguru.cli.dispatch import main

GOLDEN = GOLDEN / "compare"
HINT = " — try 'taguru-evaluate --help'"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(compare_cli, "generated_at_now", lambda: "2026-07-29T12:00:00Z")
    return tmp_path


# --- compare: the scan (B.1) -------------------------------------------------------------------


def _compare_message(args: list[str]) -> str:
    with pytest.raises(ArgumentError) as caught:
        parse_compare_args(args)
    return caught.value.message


def test_compare_defaults_and_verbatim_values() -> None:
    assert parse_compare_args(["a", "b"]) == CompareArgs("a", "b", "changes.jsonl", "jsonl")
    assert parse_compare_args(["-x", "--out", "--help", "-"]) == CompareArgs("-x", "-", "--help")
    assert parse_compare_args(["a", "--format", "markdown", "b"]) == CompareArgs(
        "a", "b", "-", "markdown"
    )
    assert parse_compare_args(["a", "b", "--fail-on-regression"]) == CompareArgs(
        "a", "b", "changes.jsonl", "jsonl", fail_on_regression=True
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
        (["--fail-on-regression", "--fail-on-regression"], "--fail-on-regression given twice"),
    ],
)
def test_compare_usage_errors(args: list[str], message: str) -> None:
    assert _compare_message(args) == message


@pytest.mark.parametrize("args", [["--help"], ["a", "b", "c", "--help"], ["x", "-h"]])
def test_compare_help_wins_over_the_positional_count(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *args]) == 0
    assert capsys.readouterr().out == COMPARE_USAGE


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


def test_compare_markdown_goes_to_stdout(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_golden("b2", workdir)
    assert main(["compare", "base.json", "head.json", "--format", "markdown"]) == 0
    expected = (GOLDEN / "b2" / "changes.md").read_text(encoding="utf-8")
    captured = capsys.readouterr()
    assert captured.out == expected
    assert captured.err.endswith("  wrote stdout\n")
    assert not (workdir / "changes.md").exists()


def test_fail_on_regression(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _copy_golden("b2", workdir)  # b-mixed regressed
    assert main(["compare", "base.json", "head.json", "--out", "-", "--fail-on-regression"]) == 3
    assert capsys.readouterr().err.splitlines()[-1] == (
        "taguru-evaluate: compare: 1 regressed case(s) — exit 3 (--fail-on-regression)"
    )
    assert main(["compare", "base.json", "base.json", "--out", "-", "--fail-on-regression"]) == 0


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


def test_a_deeply_nested_artifact_is_an_input_error_not_a_crash(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before the one reader, compare ended in a RecursionError traceback with exit 1.
    _copy_golden("b1", workdir)
    deep = '{"taguru_evaluation":1,"x":' + "[" * 100_000 + "]" * 100_000 + "}"
    (workdir / "head.json").write_text(deep, encoding="utf-8")
    assert main(["compare", "base.json", "head.json"]) == 2
    assert capsys.readouterr().err == (
        "taguru-evaluate: HEAD head.json: malformed evaluation.json: recursion limit exceeded "
        "at line 1 column 154\n"
    )
