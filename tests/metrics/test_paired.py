"""Paired statistics against the references: statsmodels' McNemar and Holm, scipy's binomial and bootstrap."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from tooldiag.metrics.paired import (
    binomial_tail,
    case_differences,
    holm_adjust,
    mcnemar_exact,
    mcnemar_mdd,
    paired_bootstrap_ci,
    sign_counts,
)


@pytest.mark.parametrize("n", [1, 7, 40, 301])
def test_binomial_tail_is_scipys_cdf(n):
    for k in range(-1, n + 2, max(1, n // 9)):
        assert binomial_tail(k, n) == pytest.approx(stats.binom.cdf(k, n, 0.5), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize(
    ("a_only", "b_only"), [(0, 0), (0, 1), (1, 0), (3, 3), (5, 12), (12, 5), (0, 6), (40, 25), (0, 200), (97, 131)]
)
def test_mcnemar_exact_is_statsmodels(a_only, b_only):
    concordant = 17  # McNemar reads only the off-diagonal: any diagonal gives the same p
    table = [[concordant, a_only], [b_only, concordant + 3]]
    expected = mcnemar(table, exact=True).pvalue
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-9)


def test_mcnemar_exact_keeps_tiny_p_values():
    # 200 discordant pairs all one way: p = 2 / 2^200, far below float's 1e-16 resolution of 1 - x
    assert mcnemar_exact(200, 0) == pytest.approx(2.0 * 0.5**200, rel=1e-12)
    assert mcnemar_exact(200, 0) < 1e-6


def test_holm_is_statsmodels_multipletests():
    rng = random.Random(7)
    for m in (1, 2, 5, 12):
        p = [rng.random() ** 3 for _ in range(m)] + [0.01, 0.01]  # ties included
        expected = multipletests(p, alpha=0.05, method="holm")[1]
        assert holm_adjust(p) == pytest.approx(list(expected), rel=1e-12)


def test_case_differences_are_share_differences_per_case():
    clusters = [([True], [False]), ([True, True, False], [True]), ([False, False], [True, False, True, True])]
    assert case_differences(clusters) == pytest.approx([1.0, 2 / 3 - 1.0, 0.0 - 0.75])
    assert sign_counts(case_differences(clusters)) == (1, 2)
    with pytest.raises(ValueError):
        case_differences([([], [True])])


def _scipy_percentile(data: tuple[np.ndarray, ...], statistic, resamples: int, seed: int) -> tuple[float, float]:
    result = stats.bootstrap(
        data, statistic, paired=True, vectorized=False, n_resamples=resamples, method="percentile",
        confidence_level=0.95, random_state=np.random.default_rng(seed),
    )  # fmt: skip
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def test_paired_bootstrap_matches_scipy_on_paired_outcomes():
    rng = np.random.default_rng(11)
    a = rng.random(200) < 0.7
    b = np.where(rng.random(200) < 0.8, a, ~a) & (rng.random(200) < 0.85)  # correlated with a, lower rate
    ours = paired_bootstrap_ci((a.astype(float) - b.astype(float)).tolist(), resamples=20_000, seed=3)
    theirs = _scipy_percentile((a, b), lambda x, y: np.mean(x) - np.mean(y), 20_000, 5)
    assert ours is not None
    assert ours == pytest.approx(theirs, abs=0.01)  # two Monte Carlo estimates of the same quantiles


def test_paired_bootstrap_is_seeded():
    draw = random.Random(5)
    diffs = [draw.uniform(-1, 1) for _ in range(70)]  # continuous: the quantiles move with the seed
    assert paired_bootstrap_ci(diffs, seed=1) == paired_bootstrap_ci(diffs, seed=1)
    assert paired_bootstrap_ci(diffs, seed=1) != paired_bootstrap_ci(diffs, seed=2)
    assert paired_bootstrap_ci([], seed=1) is None


def _clustered_pair(n_cases: int, k: int, seed: int) -> list[tuple[list[bool], list[bool]]]:
    """K samples a case; each side has its own per-case success rate, so a case's K differences agree."""
    rng = random.Random(seed)
    clusters = []
    for _ in range(n_cases):
        rate_a, rate_b = rng.choice([0.05, 0.95]), rng.choice([0.05, 0.9])  # strong within-case correlation
        clusters.append(([rng.random() < rate_a for _ in range(k)], [rng.random() < rate_b for _ in range(k)]))
    return clusters


def test_cluster_bootstrap_resamples_cases_not_samples():
    clusters = _clustered_pair(60, 5, seed=4)
    per_case = case_differences(clusters)
    ours = paired_bootstrap_ci(per_case, resamples=20_000, seed=0)
    # the same statistic by scipy: the mean over cases of per-case share differences, cases resampled
    a_share = np.array([np.mean(a) for a, _ in clusters])
    b_share = np.array([np.mean(b) for _, b in clusters])
    theirs = _scipy_percentile((a_share, b_share), lambda x, y: np.mean(x) - np.mean(y), 20_000, 1)
    assert ours is not None and ours == pytest.approx(theirs, abs=0.01)
    # ignoring the clusters (every sample an independent pair) gives a narrower, overconfident interval
    flat = [float(x) - float(y) for a, b in clusters for x, y in zip(a, b)]
    naive = paired_bootstrap_ci(flat, resamples=20_000, seed=0)
    assert naive is not None and (naive[1] - naive[0]) < 0.8 * (ours[1] - ours[0])


def test_mdd_solves_connors_sample_size_formula():
    z_a, z_b = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    for n, psi in ((200, 0.3), (50, 0.5), (800, 0.1)):
        d = mcnemar_mdd(n, psi)
        assert d is not None and 0 < d <= psi
        needed = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - d * d)) ** 2 / d**2  # Connor 1987, Eq. 3
        assert needed == pytest.approx(n, rel=1e-6)


def test_mdd_has_the_power_it_promises():
    """Simulated power of the exact test at the MDD: about 0.8 (the normal approximation, a conservative test)."""
    n, psi = 200, 0.3
    d = mcnemar_mdd(n, psi)
    assert d is not None
    rng = np.random.default_rng(9)
    trials = 4000
    discordant = rng.binomial(n, psi, size=trials)
    a_better = rng.binomial(discordant, (psi + d) / (2 * psi))
    p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(a_better, discordant - a_better), discordant, 0.5))
    power = float(np.mean(p < 0.05))
    assert 0.7 <= power <= 0.88


def test_mdd_without_discordance_is_not_zero():
    d = mcnemar_mdd(200, 0.0)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert d is not None and d == pytest.approx(z**2 / 200, rel=0.05)
    assert mcnemar_mdd(0, 0.0) is None
    assert mcnemar_mdd(200, 0.3, alpha=0.01) > mcnemar_mdd(200, 0.3, alpha=0.05)  # type: ignore[operator]


def test_mdd_is_none_where_no_difference_can_reach_alpha():
    # the smallest exact p on n cases is 2 / 2^n: 0.0625 at n = 5, 0.03125 at n = 6 (alpha 0.05)
    assert mcnemar_mdd(5, 0.2) is None
    assert mcnemar_mdd(6, 0.2) is not None
    assert mcnemar_mdd(6, 0.2, alpha=0.01) is None
