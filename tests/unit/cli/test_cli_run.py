"""``taguru-evaluate`` run mode: the scan (evaluate-run.md §1.2, assembly.md §1.1), its usage
text and the pytest command line it becomes, all derived from the option table."""

import os

import pytest

from pytest_taguru.cli.arguments import ArgumentError, HelpRequested
from pytest_taguru.cli.dispatch import main
from pytest_taguru.cli.run import USAGE, parse_run_args, pytest_args
from pytest_taguru.flags import CLI_FLAG_PREFIX, OPTION_SPECS
from pytest_taguru.run.flag_values import RawOptions


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
    assert parse_run_args(args) == RawOptions(
        flag_prefix=CLI_FLAG_PREFIX,
        eval_path="e.jsonl",
        context="sake",
        url="http://h/",
        config="c.env",
        out="o.json",
        thresholds="t.json",
        assembly=True,
        max_items="+5",
        max_bytes="007",
        max_tokens="18446744073709551615",
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
    run = RawOptions(
        flag_prefix=CLI_FLAG_PREFIX,
        eval_path="--e.jsonl",
        context="sake",
        url="http://h",
        out="--o",
        max_items="3",
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
        # taguru's own behaviour: every request sent once, the run never stopped early, one
        # case at a time.
        "--taguru-retries=0",
        "--taguru-max-consecutive-failures=0",
        "--taguru-concurrency=1",
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


def test_plugin_only_flags_are_unknown_to_the_drop_in() -> None:
    assert _usage_message([*REQUIRED, "--serve", "x"]) == "unknown flag '--serve' for evaluate"
    assert _usage_message([*REQUIRED, "--regression-exit-code", "0"]) == (
        "unknown flag '--regression-exit-code' for evaluate"
    )


# --- usage (derived from the option table) -----------------------------------------------------


def test_the_usage_synopsis_wraps_without_splitting_a_flag() -> None:
    assert USAGE.startswith(
        "usage: taguru-evaluate --eval FILE --context NAME [--url URL] [--config FILE] "
        "[--out FILE]\n"
        "                       [--thresholds FILE] [--assembly] [--max-items N] [--max-bytes N]\n"
        "                       [--max-tokens N] [--rerank MODEL]\n"
        "       taguru-evaluate compare BASE.json HEAD.json [--out FILE] "
        "[--format jsonl|markdown]\n"
    )
    assert "'pytest --taguru-eval FILE --taguru-context NAME ...'" in USAGE
    assert max(len(line) for line in USAGE.splitlines()) <= 92


def test_the_usage_lists_every_drop_in_flag_with_its_help() -> None:
    for spec in OPTION_SPECS:
        entry = f"\n  {spec.synopsis(CLI_FLAG_PREFIX)} "
        assert (entry in USAGE) == spec.drop_in, spec.name
    assert "\n  --eval FILE          the eval.jsonl to run; every case becomes a test " in USAGE
    assert "\n  --rerank MODEL       rerank model for assembly (requires --assembly)\n" in USAGE
