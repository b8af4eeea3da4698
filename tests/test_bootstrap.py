"""The closed-form bootstrap of a median against enumeration and against plain resampling."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from diagnosis.stats import bootstrap_median_ratio, bootstrap_medians


def exact_bootstrap(values: list[float]) -> dict[float, float]:
    """Every one of the n**n resamples, each with probability n**-n: the distribution of their medians."""
    n = len(values)
    dist: dict[float, float] = {}
    for picks in itertools.product(values, repeat=n):
        median = float(np.median(picks))
        dist[median] = dist.get(median, 0.0) + n**-n
    return dist


SMALL_SAMPLES = [[7.0], [2.0, 9.0], [3.0, 1.0, 2.0], [5.0, 1.0, 2.0, 9.0], [4, 4, 1, 8, 6]]


@pytest.mark.parametrize("values", SMALL_SAMPLES)
def test_distribution_is_the_exact_bootstrap(values: list[float]) -> None:
    draws = bootstrap_medians(np.array(values, dtype=float), 200_000, np.random.default_rng(3))
    exact = exact_bootstrap([float(v) for v in values])
    seen, counts = np.unique(draws, return_counts=True)
    assert set(seen.tolist()) <= set(exact)  # only medians a resample can have
    for median, probability in exact.items():
        share = counts[seen == median].sum() / draws.size
        assert share == pytest.approx(probability, abs=0.006), median


@pytest.mark.parametrize("n", [15, 40, 301, pytest.param(1200, marks=pytest.mark.slow)])
@pytest.mark.parametrize("factor", [0.8, 1.0, 1.7])
def test_interval_agrees_with_resampling(n: int, factor: float) -> None:
    """Continuous samples (with a few distinct values the percentiles jump between atoms)."""
    data = np.random.default_rng(n)
    a = data.lognormal(0.0, 0.5, n)
    b = data.lognormal(np.log(factor), 0.5, n)
    lo, hi = bootstrap_median_ratio(a, b, rounds=20_000, seed=1)
    rng = np.random.default_rng(2)
    ratios = np.median(b[rng.integers(0, n, (20_000, n))], axis=1) / np.median(
        a[rng.integers(0, n, (20_000, n))], axis=1
    )
    ref_lo, ref_hi = np.percentile(ratios, [2.5, 97.5])
    spread = ref_hi - ref_lo
    assert lo == pytest.approx(ref_lo, abs=0.06 * spread)
    assert hi == pytest.approx(ref_hi, abs=0.06 * spread)


def test_same_seed_same_interval_and_a_real_gap_is_detected() -> None:
    rng = np.random.default_rng(0)
    base = rng.lognormal(0.0, 0.1, 7000)
    slow = rng.lognormal(np.log(1.3), 0.1, 7000)
    assert bootstrap_median_ratio(base, slow) == bootstrap_median_ratio(base, slow)
    lo, hi = bootstrap_median_ratio(base, slow)
    assert 1.25 < lo < 1.3 < hi < 1.35
    same_lo, same_hi = bootstrap_median_ratio(base, rng.lognormal(0.0, 0.1, 7000))
    assert same_lo < 1.0 < same_hi
