"""The option table and the flag values as typed: parsers, ``RawOptions``, start-up step 1
(evaluate-run.md §1.2, assembly.md §1.1)."""

import dataclasses
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.errors import UsageError
from pytest_taguru.flags import (
    CLI_FLAG_PREFIX,
    DEFAULT_CONCURRENCY,
    OPTION_SPECS,
    OPTIONS,
    PLUGIN_FLAG_PREFIX,
)
from pytest_taguru.run.flag_values import (
    RawOptions,
    check_flags,
    needs,
    parse_concurrency,
    parse_exit_code,
    parse_positive_int,
    raw_options,
)
from pytest_taguru.run.prefetch import AUTO_CONCURRENCY, Concurrency

RAW = RawOptions(eval_path="eval.jsonl", context="sake")


def with_(**changes: Any) -> RawOptions:
    return dataclasses.replace(RAW, **changes)


# ---------------------------------------------------------------- the table


def test_the_drop_in_has_exactly_taguru_evaluate_run_flags() -> None:
    # evaluate-run.md §1.2's table, in its order.
    assert [spec.cli_flag for spec in OPTION_SPECS if spec.drop_in] == [
        "--eval",
        "--context",
        "--url",
        "--config",
        "--out",
        "--thresholds",
        "--assembly",
        "--max-items",
        "--max-bytes",
        "--max-tokens",
        "--rerank",
    ]
    assert [spec.cli_flag for spec in OPTION_SPECS if spec.required] == ["--eval", "--context"]


def test_raw_options_has_one_field_per_flag_in_table_order() -> None:
    names = [field.name for field in dataclasses.fields(RawOptions)]
    assert names == [*(spec.attribute for spec in OPTION_SPECS), "flag_prefix", "typed"]


def test_raw_options_collects_every_flag() -> None:
    values: dict[str, str | bool | None] = {spec.dest: spec.name for spec in OPTION_SPECS}
    values[OPTIONS["assembly"].dest] = True
    raw = raw_options(values)
    assert raw.flag_prefix == PLUGIN_FLAG_PREFIX
    for spec in OPTION_SPECS:
        assert raw.value(spec) == (True if spec.metavar is None else spec.name)


def test_what_a_missing_value_needs_in_taguru_words() -> None:
    assert {spec.cli_flag: needs(spec) for spec in OPTION_SPECS if spec.metavar} == {
        "--eval": "a file path",
        "--context": "a name",
        "--url": "a value",
        "--config": "a file path",
        "--out": "a file path",
        "--html": "a file path",
        "--thresholds": "a file path",
        "--max-items": "a positive integer",
        "--max-bytes": "a positive integer",
        "--max-tokens": "a positive integer",
        "--rerank": "a model name",
        "--serve": "a file path",
        "--record": "a directory path",
        "--replay": "a directory path",
        "--regression-exit-code": "an exit status 0..=255",
        "--shard": "a shard I/N with 1 <= I <= N <= 10000, e.g. 2/3",
        "--timeout": "a number of seconds above 0, at most 86400",
        "--retries": "a whole number 0..=10",
        "--max-consecutive-failures": "a whole number (0 turns the rule off)",
        "--slices": 'slice definitions, "name: glob [glob…]" per line',
        "--slices-file": "a file path",
        "--slice-thresholds": "a file path",
        "--concurrency": "auto or a whole number 1..=64",
        "--baseline": "a file path",
        "--inconclusive": "warn or fail",
        "--alpha": "a significance level between 0 and 1",
        "--tolerance": "a tolerance (0.01, recall.mrr=0.02, or both)",
        "--save-baseline": "a file path",
    }


def test_help_notes_follow_the_surface() -> None:
    rerank, context = OPTIONS["rerank"], OPTIONS["context"]
    assert rerank.help_text(CLI_FLAG_PREFIX).endswith("(requires --assembly)")
    assert rerank.help_text(PLUGIN_FLAG_PREFIX).endswith("(requires --taguru-assembly)")
    assert context.help_text(CLI_FLAG_PREFIX).endswith("(required)")
    assert context.help_text(PLUGIN_FLAG_PREFIX).endswith(
        "(default: the eval header's default_target)"
    )


# ---------------------------------------------------------------- value parsers (§1.2)


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", 1), ("+5", 5), ("007", 7), ("18446744073709551615", 2**64 - 1)],
)
def test_positive_integers(text: str, value: int) -> None:
    assert parse_positive_int(text, "--taguru-max-items") == value


@pytest.mark.parametrize(
    "text",
    [
        "0",
        "+0",
        "-1",
        "-0",
        "",
        "+",
        " 5",
        "5 ",
        "1_000",
        "1e3",
        "0x10",
        "٣",
        "18446744073709551616",
    ],
)
def test_not_positive_integers(text: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_positive_int(text, "--max-bytes")
    assert raised.value.message == "--max-bytes needs a positive integer"


def test_check_flags_messages_and_order() -> None:
    def message(raw: RawOptions, **kwargs: bool) -> str:
        with pytest.raises(UsageError) as raised:
            check_flags(raw, **kwargs)
        return raised.value.message

    nothing = RawOptions(rerank="m")
    assert message(with_(max_tokens="0", eval_path=None)) == (
        "--taguru-max-tokens needs a positive integer"
    )
    assert message(nothing) == "--taguru-eval FILE is required"
    assert message(RawOptions(eval_path="e", rerank="m")) == "--taguru-context NAME is required"
    assert message(with_(rerank="m")) == "--taguru-rerank requires --taguru-assembly"
    assert message(RawOptions(eval_path="e", rerank="m"), require_context=False) == (
        "--taguru-rerank requires --taguru-assembly"
    )
    assert message(with_(serve_import="corpus.ndjson", url="http://h")) == (
        "--taguru-serve cannot be combined with --taguru-url"
    )
    cli = RawOptions(flag_prefix=CLI_FLAG_PREFIX, eval_path="e", context="c", rerank="m")
    assert message(cli) == "--rerank requires --assembly"
    assert message(RawOptions(flag_prefix=CLI_FLAG_PREFIX, max_items="x")) == (
        "--max-items needs a positive integer"
    )
    check_flags(with_(rerank="m", assembly=True, max_items="+3"))
    check_flags(RawOptions(eval_path="e"), require_context=False)


def test_a_huge_number_is_refused_with_the_message() -> None:
    with pytest.raises(UsageError, match=r"^--max-items needs a positive integer$"):
        parse_positive_int("9" * 5000, "--max-items")
    with pytest.raises(UsageError, match=r"^--regression-exit-code needs an exit status 0..=255$"):
        parse_exit_code("0" * 4999 + "1" + "0" * 3, "--regression-exit-code")
    assert parse_positive_int("0" * 5000 + "7", "--max-items") == 7


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("255", 255), ("+7", 7), ("0003", 3)])
def test_exit_statuses(text: str, value: int) -> None:
    assert parse_exit_code(text, "--regression-exit-code") == value


@pytest.mark.parametrize("text", [None, "", "256", "-1", "+", "x", " 3", "3 ", "1_0", "²", "٣"])
def test_not_exit_statuses(text: str | None) -> None:
    with pytest.raises(UsageError) as raised:
        parse_exit_code(text, "--regression-exit-code")
    assert raised.value.message == "--regression-exit-code needs an exit status 0..=255"


@given(st.text(st.sampled_from("+-0123456789 _\u00b2"), max_size=6))
def test_exit_status_parser_agrees_with_rust_rules(text: str) -> None:
    valid = re.fullmatch(r"\+?[0-9]+", text) is not None and int(text) <= 255
    if valid:
        assert parse_exit_code(text, "--x") == int(text)
    else:
        with pytest.raises(UsageError, match=r"^--x needs an exit status 0..=255$"):
            parse_exit_code(text, "--x")


@given(st.text(st.sampled_from("+-0123456789 _\u00b2auto"), max_size=4))
def test_concurrency_parser_takes_auto_or_1_to_64(text: str) -> None:
    valid = re.fullmatch(r"\+?[0-9]+", text) is not None and 1 <= int(text) <= 64
    if text == "auto":
        assert parse_concurrency(text, "--x") == AUTO_CONCURRENCY
    elif valid:
        assert parse_concurrency(text, "--x") == Concurrency(int(text))
    else:
        with pytest.raises(UsageError, match=r"^--x needs auto or a whole number 1..=64$"):
            parse_concurrency(text, "--x")


def test_auto_is_adaptive_up_to_the_default_window_and_a_number_is_fixed() -> None:
    assert parse_concurrency("auto", "--x") == Concurrency(DEFAULT_CONCURRENCY, adaptive=True)
    assert parse_concurrency("8", "--x") == Concurrency(8, adaptive=False)
    for text in ("AUTO", " auto", "auto8", None):
        with pytest.raises(UsageError, match=r"^--x needs auto or a whole number 1..=64$"):
            parse_concurrency(text, "--x")
