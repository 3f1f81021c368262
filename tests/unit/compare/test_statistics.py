"""``compare.statistics``: the bootstrap interval and the sign-flip test against known values,
an independent implementation written here, and scipy.stats (within Monte Carlo error)."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from pytest_taguru.compare.statistics import (
    RESAMPLES,
    _plus_counts,
    _sign_tables,
    holm,
    paired_tests,
)


def one(values: list[float], *, name: str = "m", resamples: int = RESAMPLES):  # type: ignore[no-untyped-def]
    result = paired_tests(np.array(values, dtype=float)[:, None], names=[name], resamples=resamples)
    assert result[0] is not None
    return result[0]


def exact_sign_flip(values: list[float]) -> tuple[float, float]:
    """An independent exact sign-flip test: every sign vector, listed by itertools."""
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(values))))
    flipped = signs @ np.array(values)
    observed = sum(values)
    worse = np.count_nonzero(flipped <= observed + 1e-12)
    extreme = np.count_nonzero(np.abs(flipped) >= abs(observed) - 1e-12)
    return worse / len(signs), extreme / len(signs)


def naive_monte_carlo(values: list[float], resamples: int, seed: int) -> tuple[float, float]:
    """An independent Monte Carlo sign-flip test: an explicit ±1 matrix, p = (1 + c) / (B + 1)."""
    rng = np.random.default_rng(seed)
    x = np.array(values)
    signs = rng.choice((-1.0, 1.0), size=(resamples, x.size))
    flipped = signs @ x
    observed = x.sum()
    worse = np.count_nonzero(flipped <= observed + 1e-9)
    extreme = np.count_nonzero(np.abs(flipped) >= abs(observed) - 1e-9)
    return (1 + worse) / (resamples + 1), (1 + extreme) / (resamples + 1)


def monte_carlo_error(p: float, resamples: int = RESAMPLES) -> float:
    """Four standard errors of a Monte Carlo p, plus the (1 + c) / (B + 1) offset."""
    return 4 * math.sqrt(max(p * (1 - p), 1e-4) / resamples) + 2 / resamples


# --- known values ------------------------------------------------------------------------------


def test_exact_enumeration_gives_known_p_values() -> None:
    falling = one([-1.0, -2.0, -3.0])
    assert falling.exact
    assert falling.p_worse == pytest.approx(1 / 8)  # only all-minus reaches -6
    assert falling.p_two_sided == pytest.approx(2 / 8)
    rising = one([1.0, 2.0, 3.0])
    assert rising.p_worse == 1.0
    assert rising.mean == pytest.approx(2.0)


def test_zero_deltas_flip_to_themselves() -> None:
    # Zeros change nothing: three non-zero deltas among 40 are enumerated exactly.
    result = one([0.0] * 37 + [-0.5, -0.5, -0.5])
    assert result.exact and result.n == 40
    assert result.p_worse == pytest.approx(1 / 8)
    nothing = one([0.0] * 20)
    assert (nothing.p_worse, nothing.p_two_sided, nothing.low, nothing.high) == (1, 1, 0, 0)


@pytest.mark.parametrize("size", [1, 5, 11, 16])
def test_exact_p_values_match_an_independent_enumeration(size: int) -> None:
    rng = np.random.default_rng(size)
    values = list(np.round(rng.normal(-0.2, 1.0, size), 3))
    result = one(values)
    assert result.exact
    assert (result.p_worse, result.p_two_sided) == pytest.approx(exact_sign_flip(values))


def test_exact_p_values_match_scipy_permutation_test() -> None:
    values = [-0.5, -0.25, 0.1, -0.3, -0.05, -0.6, 0.2, -0.45, -0.1, -0.2, 0.05, -0.35]
    result = one(values)
    for alternative, ours in (("less", result.p_worse), ("two-sided", result.p_two_sided)):
        theirs = stats.permutation_test(
            (np.array(values),), np.sum, permutation_type="samples", alternative=alternative
        ).pvalue
        assert ours == pytest.approx(theirs)


def test_monte_carlo_p_values_match_the_exact_ones_within_error() -> None:
    rng = np.random.default_rng(3)
    values = list(np.round(rng.normal(-0.15, 1.0, 18), 3))  # 18 > 16: Monte Carlo
    result = one(values)
    assert not result.exact
    worse, extreme = exact_sign_flip(values)
    assert abs(result.p_worse - worse) < monte_carlo_error(worse)
    assert abs(result.p_two_sided - extreme) < monte_carlo_error(extreme)


def test_monte_carlo_p_values_match_an_independent_implementation_and_scipy() -> None:
    rng = np.random.default_rng(4)
    values = list(rng.choice([-1.0, -0.5, 0.0, 0.0, 0.5, 1.0], size=120) - 0.08)
    result = one(values)
    naive_worse, naive_two = naive_monte_carlo(values, RESAMPLES, seed=11)
    scipy_worse = stats.permutation_test(
        (np.array(values),), np.sum, permutation_type="samples", alternative="less",
        n_resamples=RESAMPLES, rng=np.random.default_rng(12),
    ).pvalue  # fmt: skip
    for theirs in (naive_worse, scipy_worse):
        assert abs(result.p_worse - theirs) < 2 * monte_carlo_error(theirs)
    assert abs(result.p_two_sided - naive_two) < 2 * monte_carlo_error(naive_two)


def test_a_clear_drop_reaches_the_smallest_monte_carlo_p() -> None:
    result = one([-0.5] * 60 + [0.0] * 140)
    assert result.p_worse == pytest.approx(1 / (RESAMPLES + 1))
    assert result.mean == pytest.approx(-0.15)


def test_the_bootstrap_interval_matches_scipy_within_error() -> None:
    values = [-0.5] * 12 + [0.0] * 24 + [0.25] * 4  # skewed: a symmetric method would miss
    result = one(values)
    theirs = stats.bootstrap(
        (np.array(values),), np.mean, method="percentile", n_resamples=RESAMPLES,
        confidence_level=0.95, rng=np.random.default_rng(5),
    ).confidence_interval  # fmt: skip
    width = theirs.high - theirs.low
    assert result.low == pytest.approx(theirs.low, abs=0.05 * width)
    assert result.high == pytest.approx(theirs.high, abs=0.05 * width)


def test_the_bootstrap_interval_agrees_with_the_paired_t_interval_for_many_pairs() -> None:
    rng = np.random.default_rng(6)
    base = rng.uniform(0.0, 1.0, 400)
    head = np.clip(base + rng.normal(-0.03, 0.2, 400), 0.0, 1.0)
    result = one(list(head - base))
    t_interval = stats.ttest_rel(head, base).confidence_interval(0.95)
    assert result.mean == pytest.approx(float(np.mean(head - base)))
    width = t_interval.high - t_interval.low
    assert result.low == pytest.approx(t_interval.low, abs=0.06 * width)
    assert result.high == pytest.approx(t_interval.high, abs=0.06 * width)


def test_both_bootstrap_paths_resample_the_mean_with_its_variance() -> None:
    few = [0.0, 1.0, -1.0] * 400  # 3 distinct values among 1,200: multinomial counts
    many = list(np.random.default_rng(7).normal(0.0, 1.0, 300))  # all distinct: indices
    for values in (few, many):
        result = one(values)
        se = np.std(values) / math.sqrt(len(values))
        assert (result.high - result.low) == pytest.approx(2 * 1.96 * se, rel=0.08)


# --- the machinery -----------------------------------------------------------------------------


def test_equal_rows_draw_binomial_plus_counts() -> None:
    sizes = np.array([1, 3, 64, 65, 130, 7], dtype=np.int64)
    plus = _plus_counts(np.random.default_rng(8), sizes, 100_000)
    assert plus.min() >= 0 and (plus <= sizes).all()
    assert plus.mean(axis=0) == pytest.approx(sizes / 2, rel=0.01)
    assert plus.var(axis=0) == pytest.approx(sizes / 4, rel=0.03)


def test_sign_tables_hold_every_signed_sum() -> None:
    rows = np.arange(1.0, 21.0).reshape(10, 2)  # 10 rows: two blocks, the second padded
    tables = _sign_tables(rows)
    assert tables.shape == (2, 256, 2)
    for pattern in (0, 1, 5, 255):
        signs = np.array([1.0 if pattern >> j & 1 else -1.0 for j in range(8)])
        assert tables[0, pattern] == pytest.approx(signs @ rows[:8])
        assert tables[1, pattern] == pytest.approx(signs[:2] @ rows[8:])


def test_one_sign_matrix_is_shared_by_every_metric() -> None:
    rng = np.random.default_rng(9)
    column = rng.normal(-0.1, 1.0, 300)
    other = rng.normal(0.0, 1.0, 300)
    together = paired_tests(np.column_stack([column, other, column]), names=["a", "b", "c"])
    assert together[0] is not None and together[2] is not None
    assert together[0].p_worse == together[2].p_worse  # same deltas, same signs
    flipped = paired_tests(np.column_stack([column, -column]), names=["a", "b"])
    assert flipped[0] is not None and flipped[1] is not None
    # -x under the same signs: T*(-x) <= -T exactly when T*(x) >= T.
    total = flipped[0].p_worse + flipped[1].p_worse
    assert total == pytest.approx(1 + 2 / (RESAMPLES + 1), abs=0.01)


def test_the_same_inputs_give_the_same_numbers_in_any_case_order() -> None:
    values = list(np.random.default_rng(10).choice([-0.5, 0.0, 0.5, 1.0], 500))
    first, again, shuffled = one(values), one(values), one(values[::-1])
    assert first == again == shuffled


def test_a_column_without_pairs_has_no_test() -> None:
    columns = np.array([[0.5, np.nan], [-0.5, np.nan]])
    assert paired_tests(columns, names=["a", "b"])[1] is None


# --- Holm --------------------------------------------------------------------------------------


def test_holm_adjusts_in_step_down_order() -> None:
    # Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> monotone 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_keeps_ties_in_order() -> None:
    assert holm([0.5, 0.5, 0.9]) == pytest.approx([1.0, 1.0, 1.0])
    assert holm([0.01, 0.01]) == pytest.approx([0.02, 0.02])
    assert holm([]) == []

