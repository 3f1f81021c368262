"""The metric value shapes of evaluate-run.md §6.1 and Appendix N.4."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.score.shapes import distribution, ratio

# --- §6.1 value shapes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("samples", "p50", "p90", "p99"),
    [
        ([7], 7.0, 7.0, 7.0),
        ([1, 2], 1.0, 2.0, 2.0),
        ([1, 2, 3, 4], 2.0, 4.0, 4.0),
        (list(range(1, 11)), 5.0, 9.0, 10.0),
        (list(range(1, 101)), 50.0, 90.0, 99.0),
    ],
)
def test_nearest_rank_checks(samples: list[int], p50: float, p90: float, p99: float) -> None:
    value = distribution(samples)
    assert (value.p50, value.p90, value.p99) == (p50, p90, p99)


def test_distribution_writes_doubles_for_integer_samples() -> None:
    value = distribution([9, 3])
    assert to_jsonable(value) == {
        "n": 2, "min": 3.0, "p50": 3.0, "p90": 9.0, "p99": 9.0, "max": 9.0, "mean": 6.0,
        "sum": 12.0,
    }  # fmt: skip
    assert all(type(stat) is float for stat in (value.min, value.max, value.mean, value.sum))


def test_empty_distribution_is_all_nulls() -> None:
    assert to_jsonable(distribution([])) == {
        "n": 0, "min": None, "p50": None, "p90": None, "p99": None, "max": None, "mean": None,
        "sum": None,
    }  # fmt: skip


def test_distribution_drops_non_finite_samples() -> None:
    value = distribution([math.nan, 2.0, math.inf, -math.inf])
    assert (value.n, value.min, value.max, value.sum) == (1, 2.0, 2.0, 2.0)


def test_distribution_sums_the_sorted_samples() -> None:
    # Left to right as given: (1e16 - 1e16) + 1 = 1.0; sorted: (-1e16 + 1) + 1e16 = 0.0.
    value = distribution([1e16, -1e16, 1.0])
    assert value.sum == 0.0 and value.mean == 0.0


def test_distribution_sums_from_negative_zero_in_total_order() -> None:
    value = distribution([-0.0, -0.0])
    assert value.sum is not None and math.copysign(1.0, value.sum) == -1.0
    mixed = distribution([0.0, -0.0])
    assert mixed.min is not None and math.copysign(1.0, mixed.min) == -1.0


def test_ratio_shapes() -> None:
    assert to_jsonable(ratio(0, 0)) == {"value": None, "n": 0, "numerator": None}
    assert to_jsonable(ratio(1, 4)) == {"value": 0.25, "n": 4, "numerator": 1}
    assert to_jsonable(ratio(0, 2)) == {"value": 0.0, "n": 2, "numerator": 0}


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40))
def test_percentiles_are_observed_samples(samples: list[float]) -> None:
    value = distribution(samples)
    finite = [sample for sample in samples if math.isfinite(sample)]
    assert value.n == len(finite)
    if not finite:
        assert value.min is None and value.mean is None
        return
    for stat in (value.min, value.p50, value.p90, value.p99, value.max):
        assert stat in finite
    assert value.min is not None and value.max is not None and value.p50 is not None
    assert value.p90 is not None and value.p99 is not None
    assert value.min <= value.p50 <= value.p90 <= value.p99 <= value.max
