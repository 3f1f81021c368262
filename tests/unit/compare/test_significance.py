"""``compare.significance``: α, the tolerance syntax and the inconclusive policy, parsed."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.compare.significance import (
    SpecError,
    Tolerances,
    parse_alpha,
    parse_inconclusive,
    parse_tolerances,
)
from pytest_taguru.score.registry import PAIRED_METRICS


def test_alpha_is_a_plain_decimal_strictly_between_0_and_1() -> None:
    assert parse_alpha("0.05") == 0.05
    assert parse_alpha(" .01 ") == 0.01
    for text in ("0", "1", "1.5", "-0.1", "5e-2", "nan", "", "0.05x"):
        with pytest.raises(SpecError):
            parse_alpha(text)


def test_tolerances_take_a_plain_value_and_per_metric_ones() -> None:
    assert parse_tolerances("0.01") == Tolerances(0.01, {})
    assert parse_tolerances("recall.mrr=0.02") == Tolerances(0.0, {"recall.mrr": 0.02})
    parsed = parse_tolerances("0.005, recall.mrr = 0.02 ,recall.ndcg=0.01")
    assert parsed.of("recall.mrr") == 0.02
    assert parsed.of("recall.ndcg") == 0.01
    assert parsed.of("recall.recall_at_k") == 0.005
    assert parsed.describe() == "0.005 (recall.mrr 0.02, recall.ndcg 0.01)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("recall.mr=0.1",
         "'recall.mr' is not a metric with paired statistics (did you mean recall.mrr?)"),
        ("latency.passage_ms=5", "'latency.passage_ms' is not a metric with paired statistics"),
        ("0.1,0.2", "the plain tolerance is given twice"),
        ("recall.mrr=0.1,recall.mrr=0.2", "recall.mrr is given twice"),
        ("-0.1", "'-0.1' is not a plain decimal number"),
        ("recall.mrr=", "'' is not a plain decimal number"),
        ("", "'' is not a plain decimal number"),
    ],
)  # fmt: skip
def test_bad_tolerances_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_tolerances(text)
    assert str(caught.value) == message


def test_inconclusive_is_warn_or_fail() -> None:
    assert parse_inconclusive("warn") == "warn"
    assert parse_inconclusive(" fail ") == "fail"
    with pytest.raises(SpecError):
        parse_inconclusive("error")


_DECIMALS = st.decimals(min_value=0, max_value=100, places=4).map(lambda value: f"{value:f}")


@given(
    default=st.one_of(st.none(), _DECIMALS),
    own=st.dictionaries(st.sampled_from(PAIRED_METRICS), _DECIMALS, max_size=4),
)
def test_any_written_tolerance_reads_back(default: str | None, own: dict[str, str]) -> None:
    items = ([] if default is None else [default]) + [f"{k}={v}" for k, v in own.items()]
    if not items:
        return
    parsed = parse_tolerances(",".join(items))
    assert parsed.default == (0.0 if default is None else float(default))
    assert parsed.per_metric == {name: float(value) for name, value in own.items()}


@given(st.text(max_size=30))
def test_any_text_parses_or_is_refused_with_a_message(text: str) -> None:
    try:
        parsed = parse_tolerances(text)
    except SpecError as error:
        assert str(error)
    else:
        assert parsed.default >= 0 and all(value >= 0 for value in parsed.per_metric.values())
