"""Paired statistics of per-case deltas: a bootstrap interval of the mean and a sign-flip test.

Pure numerics on plain arrays (numpy); what the numbers mean for a gate is ``verdicts``. The
input is one column per metric of *oriented* per-case deltas ``xᵢ = (headᵢ − baseᵢ) · o``
(``o = +1`` when higher is better, ``−1`` when lower is), ``NaN`` where a case has no pair for
that metric; so a positive ``x`` is always an improvement. For one metric with ``n`` pairs:

* ``mean = x̄ = Σ xᵢ / n``;
* **paired bootstrap** (Efron): ``B = 10,000`` resamples of the ``n`` pairs with replacement,
  ``x̄*_b`` the mean of each; the 95 % interval is the 2.5th and 97.5th percentiles of the
  ``x̄*_b`` (linear interpolation between order statistics, as ``numpy.quantile``);
* **sign-flip randomization test**: under H₀ (no change) each delta is as likely ``+xᵢ`` as
  ``−xᵢ``. With ``T = Σ xᵢ`` and ``T*_b = Σ sᵢᵦ xᵢ`` for random signs ``sᵢᵦ = ±1``:
  one-sided (for the gate: "worse") ``p = (1 + #{b : T*_b ≤ T}) / (B + 1)``, two-sided (for
  reports) ``p = (1 + #{b : |T*_b| ≥ |T|}) / (B + 1)``. The ``B × n`` sign matrix is shared by
  every metric of one call: case ``i`` gets the same sign in resample ``b`` whatever the
  metric. When at most 16 deltas are non-zero the test is exact instead: all ``2^k`` sign
  vectors of the ``k`` non-zero deltas, ``p = #{…} / 2^k`` (a zero delta flips to itself).
  Ties are counted with a relative tolerance of ``1e-10 · Σ|xᵢ|`` (two sums of the same terms
  in another order must tie).

Both are seeded, so the same inputs give the same numbers, whatever the order of the cases.
Cost grows with the *distinct* deltas, not the cases: equal delta rows are drawn together
(the number of ``+`` signs among ``k`` equal rows is Binomial(k, ½), read off ``k`` random bits;
rows that occur once are summed eight at a time from tables of their 256 signed sums; the
bootstrap count of each distinct value is multinomial), so 100,000 cases whose scores take a
few hundred values cost about as much as a few hundred cases. Only a metric whose deltas are
mostly distinct is bootstrapped case by case (``B × n`` draws: about 3 s per metric at
100,000 cases).
"""

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

RESAMPLES = 10_000
EXACT_NONZERO = 16
"""At most this many non-zero deltas: the sign-flip test enumerates every sign vector."""
CONFIDENCE = 0.95
SEED = 12_2026
_TIE = 1e-10
_WORK = 1 << 22
"""Array elements one chunk of resamples may hold (per array), bounding memory."""
_MULTINOMIAL_GAIN = 20
"""Bootstrap by multinomial counts of distinct values when they are this many times fewer
than the pairs (a multinomial draw costs about as much as this many index draws)."""

Matrix = NDArray[np.float64]


@dataclass(frozen=True)
class PairedTest:
    """One metric's paired statistics, in oriented units (positive = better)."""

    n: int
    mean: float
    low: float
    high: float
    """The bootstrap interval of the mean."""
    p_worse: float
    """One-sided: the probability, under no change, of a sum this low or lower."""
    p_two_sided: float
    exact: bool
    """The sign-flip test enumerated every sign vector (else Monte Carlo, ``RESAMPLES``)."""
    sd: float
    """The sample standard deviation of the deltas (``n − 1`` denominator; 0 for one pair)."""


def _seed(*names: str) -> list[int]:
    return [SEED, *(zlib.crc32(name.encode("utf-8", errors="surrogatepass")) for name in names)]


@cache
def _all_signs(k: int) -> Matrix:
    """Every ±1 vector of length ``k``, one per row (``2^k`` rows)."""
    rows = np.arange(1 << k, dtype=np.int64)[:, None] >> np.arange(k, dtype=np.int64)
    return (2.0 * (rows & 1) - 1.0).astype(np.float64)


def _tolerance(values: Matrix) -> NDArray[np.float64]:
    scale: NDArray[np.float64] = np.abs(values).sum(axis=0)
    return _TIE * scale


def _exact_sign_flip(values: NDArray[np.float64]) -> tuple[float, float]:
    """Exact one-sided and two-sided p of the non-zero ``values`` (at most ``EXACT_NONZERO``)."""
    observed = float(values.sum())
    if values.size == 0:
        return 1.0, 1.0
    flipped = _all_signs(values.size) @ values
    gamma = _TIE * float(np.abs(values).sum())
    total = flipped.size
    worse = np.count_nonzero(flipped <= observed + gamma)
    extreme = np.count_nonzero(np.abs(flipped) >= abs(observed) - gamma)
    return worse / total, extreme / total


_LOW_BITS = np.array([(1 << r) - 1 for r in range(64)], dtype=np.uint64)


def _plus_counts(
    rng: np.random.Generator, sizes: NDArray[np.int64], resamples: int
) -> NDArray[np.int64]:
    """For each group ``j`` of ``sizes[j]`` equal rows, the number of ``+`` signs in each
    resample: the set bits among the group's ``sizes[j]`` consecutive bits of one random bit
    stream per resample, i.e. a Binomial(sizes[j], ½) draw. ``(resamples, groups)``."""
    bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    word, bit = bounds >> 6, bounds & 63
    words = int(word[-1]) + 1
    ones = rng.bit_generator.random_raw(size=(resamples, words))
    before = np.zeros((resamples, words + 1), dtype=np.int64)
    np.cumsum(np.bitwise_count(ones), axis=1, out=before[:, 1:])
    # Set bits before each boundary: whole words, then the low bits of the boundary's word.
    partial = np.bitwise_count(ones[:, word] & _LOW_BITS[bit]).astype(np.int64)
    at = before[:, word] + partial
    plus: NDArray[np.int64] = np.diff(at, axis=1)
    return plus


_TABLE_ROWS = 8
"""Rows of distinct deltas summed by one lookup: a random byte picks their 256 sign patterns."""
_TABLE_BLOCKS = 16
"""Lookup tables summed per pass (16 × 256 sums of ``m`` columns stay in the CPU cache)."""


def _sign_tables(rows: Matrix) -> Matrix:
    """For each block of 8 rows, the 256 signed sums ``Σⱼ ±rowⱼ``, the sign of row ``j`` being
    bit ``j`` of the index (``+`` when set): ``(blocks, 256, columns)``."""
    blocks = -(-rows.shape[0] // _TABLE_ROWS)
    padded = np.zeros((blocks * _TABLE_ROWS, rows.shape[1]))
    padded[: rows.shape[0]] = rows
    table = np.zeros((blocks, 1, rows.shape[1]))
    for j in range(_TABLE_ROWS):
        row = padded[j::_TABLE_ROWS][:, None, :]
        table = np.concatenate((table - row, table + row), axis=1)
    return table


def _single_row_sums(rows: Matrix, rng: np.random.Generator, resamples: int) -> Matrix:
    """``Σᵢ sᵢ rowᵢ`` over rows that occur once, for ``resamples`` random sign vectors: one
    random byte per block of 8 rows selects its signed sum (``_sign_tables``), a few blocks
    at a time so that their tables stay in the CPU cache."""
    sums = np.zeros((resamples, rows.shape[1]))
    span = _TABLE_ROWS * _TABLE_BLOCKS
    for first in range(0, rows.shape[0], span):
        tables = _sign_tables(rows[first : first + span])
        picks = np.frombuffer(rng.bytes(len(tables) * resamples), dtype=np.uint8)
        for table, pick in zip(tables, picks.reshape(len(tables), resamples), strict=True):
            sums += table[pick]
    return sums


def _monte_carlo_sign_flip(
    columns: Matrix, rng: np.random.Generator, resamples: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One-sided and two-sided p of every column (zero-filled), one sign matrix for all.

    Equal rows are drawn together (``_plus_counts``); rows that occur once, by lookup tables
    of their signed sums (``_single_row_sums``). Zero rows flip to themselves and are dropped.
    """
    rows = columns[np.any(columns != 0.0, axis=1)]
    if rows.shape[0] == 0:
        ones = np.ones(columns.shape[1])
        return ones, ones
    groups, sizes = np.unique(rows, axis=0, return_counts=True)
    sizes = sizes.astype(np.int64)
    observed = sizes.astype(np.float64) @ groups
    gamma = _tolerance(rows)
    once = sizes == 1
    flipped = np.zeros((resamples, columns.shape[1]))
    if once.any():
        flipped += _single_row_sums(groups[once], rng, resamples)
    shared, shared_sizes = groups[~once], sizes[~once]
    step = max(1, _WORK // (shared.shape[0] + int(shared_sizes.sum()) // 64 + 2))
    for start in range(0, resamples if shared.shape[0] else 0, step):
        count = min(step, resamples - start)
        plus = _plus_counts(rng, shared_sizes, count)
        flipped[start : start + count] += (2 * plus - shared_sizes).astype(np.float64) @ shared
    worse = np.count_nonzero(flipped <= observed + gamma, axis=0)
    extreme = np.count_nonzero(np.abs(flipped) >= np.abs(observed) - gamma, axis=0)
    return (1 + worse) / (resamples + 1), (1 + extreme) / (resamples + 1)


def _bootstrap_means(
    values: NDArray[np.float64], rng: np.random.Generator, resamples: int
) -> NDArray[np.float64]:
    """The means of ``resamples`` resamples of ``values`` with replacement (Efron)."""
    n = values.size
    distinct, counts = np.unique(values, return_counts=True)
    means = np.empty(resamples)
    if distinct.size * _MULTINOMIAL_GAIN < n:
        step = max(1, min(resamples, _WORK // distinct.size))
        for start in range(0, resamples, step):
            count = min(step, resamples - start)
            drawn = rng.multinomial(n, counts / n, size=count)
            means[start : start + count] = (drawn @ distinct) / n
        return means
    ordered = np.repeat(distinct, counts)  # the input order must not matter
    step = max(1, min(resamples, _WORK // n))
    for start in range(0, resamples, step):
        count = min(step, resamples - start)
        drawn = rng.integers(0, n, size=(count, n))
        means[start : start + count] = ordered[drawn].mean(axis=1)
    return means


def paired_tests(
    columns: Matrix,
    *,
    names: Sequence[str],
    stream: str = "",
    resamples: int = RESAMPLES,
) -> list[PairedTest | None]:
    """The paired statistics of each column of oriented deltas (``NaN`` = no pair); ``None``
    for a column without pairs. ``names`` label the columns (they seed each bootstrap);
    ``stream`` names the set of cases (a slice), seeding its sign matrix."""
    filled = np.nan_to_num(columns, nan=0.0)
    nonzero = np.count_nonzero(filled, axis=0)
    exact = nonzero <= EXACT_NONZERO
    p_worse = np.ones(columns.shape[1])
    p_two = np.ones(columns.shape[1])
    if not exact.all():
        sampled = np.flatnonzero(~exact)
        rng = np.random.default_rng(_seed("sign-flip", stream))
        worse, two = _monte_carlo_sign_flip(filled[:, sampled], rng, resamples)
        p_worse[sampled], p_two[sampled] = worse, two
    tests: list[PairedTest | None] = []
    for index, name in enumerate(names):
        column = columns[:, index]
        values = np.sort(column[~np.isnan(column)])  # sums in one order, whatever the input's
        if values.size == 0:
            tests.append(None)
            continue
        if exact[index]:
            p_worse[index], p_two[index] = _exact_sign_flip(values[values != 0.0])
        rng = np.random.default_rng(_seed("bootstrap", stream, name))
        means = _bootstrap_means(values, rng, resamples)
        tail = (1.0 - CONFIDENCE) / 2
        low, high = np.quantile(means, [tail, 1.0 - tail])
        tests.append(
            PairedTest(
                n=int(values.size),
                mean=float(values.mean()),
                low=float(low),
                high=float(high),
                p_worse=float(p_worse[index]),
                p_two_sided=float(p_two[index]),
                exact=bool(exact[index]),
                sd=float(values.std(ddof=1)) if values.size > 1 else 0.0,
            )
        )
    return tests


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order.

    With the ``k`` p-values sorted ascending, ``p₍₁₎ ≤ … ≤ p₍ₖ₎``:
    ``adj₍ᵢ₎ = max_{j ≤ i} min(1, (k − j + 1) · p₍ⱼ₎)``. Rejecting every hypothesis with
    ``adj < α`` controls the family-wise error rate at ``α``. Ties keep the input order.
    """
    k = len(p_values)
    order = sorted(range(k), key=lambda index: p_values[index])
    adjusted = [0.0] * k
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (k - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
