"""Our advice beside taguru's thresholds refusals: hints after the message, ratio warnings."""

import pytest

from pytest_taguru.core.suggest import closest, did_you_mean, ranked
from pytest_taguru.errors import UsageError
from pytest_taguru.gate.advice import ratio_warnings
from pytest_taguru.gate.file import parse_thresholds
from pytest_taguru.gate.thresholds import check_thresholds
from pytest_taguru.score.metrics import definitions
from pytest_taguru.score.registry import CASE_SCOPED_METRICS

METRIC_NAMES = sorted(definitions())
STAMP = '"taguru_evaluate_thresholds":1'


def refused(text: str | bytes, case_ids: tuple[str, ...] = ("c1",)) -> UsageError:
    raw = text.encode() if isinstance(text, str) else text
    with pytest.raises(UsageError) as caught:
        check_thresholds(raw, path="t.json", metric_names=METRIC_NAMES, case_ids=case_ids)
    return caught.value


def test_suggestions_are_closest_first_and_never_the_word_itself() -> None:
    assert ranked("recall.mmr", ["recall.ndcg", "recall.mrr", "lanes.both"])[0] == "recall.mrr"
    assert closest("docs/hours.md", ["docs/hours.md", "docs/hour.md", "zzz"]) == ["docs/hour.md"]
    assert did_you_mean("hours.md", ["docs/hours.md", "docs/prices.md"]) == (
        "did you mean 'docs/hours.md'?"
    )
    assert did_you_mean("qqqq", ["docs/hours.md"]) == ""


def test_an_unknown_metric_keeps_taguru_message_and_lists_the_valid_names_closest_first() -> None:
    error = refused("{" + STAMP + ',"aggregate":{"recall.mmr":{"min":0.5}}}')
    assert error.message == "t.json: aggregate: unknown metric name 'recall.mmr'"
    (hint,) = error.hints
    prefix = "t.json: 'recall.mmr': the valid names, closest first: "
    assert hint.startswith(prefix + "recall.mrr, ")
    assert sorted(hint.removeprefix(prefix).split(", ")) == METRIC_NAMES


def test_case_scoped_names_and_case_ids_get_their_own_hints() -> None:
    error = refused(
        "{" + STAMP + ',"cases":{"default":{"citations.resolved":{"min":1}},'
        '"overrides":{"c-alpah":{"recall.mrr":{"min":0}}}}}',
        case_ids=("c-alpha", "c-beta"),
    )
    assert error.message == (
        "t.json: cases.default: unknown (or not case-scoped) metric name 'citations.resolved'; "
        "cases.overrides: unknown case_id 'c-alpah'"
    )
    default_hint, case_hint = error.hints
    listed = default_hint.split("closest first: ")[1].split(", ")
    assert sorted(listed) == sorted(CASE_SCOPED_METRICS)
    assert listed[0] == "citations.recall"
    assert case_hint == (
        "t.json: 'c-alpah' is not one of the run's case_ids — did you mean 'c-alpha'?"
    )


def test_a_bom_gets_a_hint_after_the_parse_error() -> None:
    error = refused(b"\xef\xbb\xbf{" + STAMP.encode() + b"}")
    assert error.message.startswith("t.json: expected value at line 1 column 1")
    assert error.hints == [
        "t.json starts with a UTF-8 byte-order mark (BOM), which taguru does not accept: "
        "save it as UTF-8 without a BOM"
    ]


@pytest.mark.parametrize(
    ("bound", "warning"),
    [
        ('{"min":1.5}', "min 1.5 is outside 0..1, the range of a ratio: it can never hold"),
        ('{"max":-0.5}', "max -0.5 is outside 0..1, the range of a ratio: it can never hold"),
        (
            '{"min":90}',
            "min 90 is outside 0..1, the range of a ratio: it can never hold "
            "(a percentage? write 0.9)",
        ),
        (
            '{"max":95}',
            "max 95 is outside 0..1, the range of a ratio: it always holds "
            "(a percentage? write 0.95)",
        ),
        ('{"min":-1}', "min -1 is outside 0..1, the range of a ratio: it always holds"),
    ],
)
def test_a_ratio_bound_outside_0_1_is_flagged(bound: str, warning: str) -> None:
    file = parse_thresholds(("{" + STAMP + ',"aggregate":{"recall.mrr":' + bound + "}}").encode())
    assert ratio_warnings(file) == [f"aggregate: 'recall.mrr': {warning}"]


def test_ratio_bounds_inside_0_1_and_non_ratio_metrics_are_not_flagged() -> None:
    text = (
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":0,"max":1},"latency.passage_ms":'
        '{"max":250},"diversity.sources":{"min":2}},"cases":{"overrides":{"c1":'
        '{"citations.recall":{"min":2}}}}}'
    )
    thresholds = check_thresholds(
        text.encode(), path="t.json", metric_names=METRIC_NAMES, case_ids=("c1",)
    )
    assert thresholds.warnings == (
        "t.json: cases.overrides.c1: 'citations.recall': min 2 is outside 0..1, the range of a "
        "ratio: it can never hold (a percentage? write 0.02)",
    )
