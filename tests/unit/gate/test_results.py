"""Run-level gate results: the one-line form of a violation and the thresholds verdict."""

from pytest_taguru.gate.results import first_of, violation_line
from pytest_taguru.gate.thresholds import Violation


def test_a_bound_violation_in_one_short_line() -> None:
    low = Violation(
        scope="aggregate", metric="recall.mrr", bound="min", threshold=0.5,
        actual=1 / 3, reason="0.333333 < min 0.500000",
    )  # fmt: skip
    high = Violation(
        scope="case", case_id="c", metric="latency.passage_ms", bound="max", threshold=250.0,
        actual=1234.5, reason="1234.500000 > max 250.000000",
    )  # fmt: skip
    assert violation_line(low) == "recall.mrr 0.333333 < min 0.5"
    assert violation_line(high) == "latency.passage_ms 1234.5 > max 250"


def test_violations_without_a_bound_keep_their_reason() -> None:
    empty = Violation(scope="aggregate", metric="rerank.ran", reason="no samples (n=0)")
    assert violation_line(empty) == "rerank.ran: no samples (n=0)"


def test_first_of_counts_the_rest() -> None:
    assert first_of(["a"]) == "a"
    assert first_of(["a", "b", "c"]) == "a (+2 more)"
