"""Agreement statistics against scikit-learn, statsmodels and scipy, and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from tooldiag.metrics.agreement import (
    bin_verdicts,
    binary_collapse,
    bootstrap_cells,
    bootstrap_ci,
    boundary_share,
    cell_rng,
    confusion_matrix3,
    exact_agreement,
    grouped_resample_means,
    kappa_from_confusion,
    metric_alignment,
    paired_difference_means,
    percentile_interval,
    plain_ranks,
    record_alignment,
    soft_jury,
    spearman_plain,
    split_by_codes,
    stratified_resample_means,
    wilson_interval,
)

TOL = 1e-9


def _pooled_mean(n_total):
    def statistic(*samples, axis=-1):
        return sum(np.sum(s, axis=axis) for s in samples) / n_total

    return statistic


# --------------------------------------------------------------------------- alignment


def test_worked_example_alignment():
    p = np.array([[0.3333, 0.5, 0.3333, 0.6667]])
    judge = np.array([[0.5, 0.5, 0.5, 1.0]])
    assert metric_alignment(p, judge)[0] == pytest.approx([0.8333, 1.0, 0.8333, 0.6667], abs=1e-12)
    assert 100 * record_alignment(p, judge)[0] == pytest.approx(83.3325, abs=1e-9)
    assert round(100 * record_alignment(p, judge)[0], 2) == 83.33  # the released 2-d.p. record figure


def test_missing_metric_counts_zero_and_weights():
    p = np.array([[1.0, 0.5, 0.0, 1.0]])
    judge = np.array([[1.0, np.nan, 0.0, 1.0]])
    assert metric_alignment(p, judge)[0].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert record_alignment(p, judge)[0] == 0.75
    assert record_alignment(p, judge, weights=[1, 0, 1, 1])[0] == 1.0
    assert record_alignment(p, judge, weights=[1, 0.5, 1, 1])[0] == pytest.approx(3 / 3.5)
    with pytest.raises(ValueError):
        record_alignment(p, judge, weights=[1, 1])


# --------------------------------------------------------------------------- bins and kappa


def test_bins_and_their_edges():
    values = np.array([0.0, 0.1, 0.1000001, 0.5, 0.75, 0.8999, 0.9, 1.0, np.nan])
    assert bin_verdicts(values).tolist() == [0, 0, 1, 1, 1, 1, 2, 2, -1]


@pytest.mark.parametrize("seed", range(6))
def test_kappa_matches_sklearn_and_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 2000))
    a = rng.integers(0, 3, n)
    agree = rng.random(n) < rng.random()
    b = np.where(agree, a, rng.integers(0, 3, n))
    cm = confusion_matrix3(a, b)
    assert cm.sum() == n
    ours = kappa_from_confusion(cm)
    assert ours == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2]), abs=TOL)
    assert ours == pytest.approx(cohens_kappa(cm, return_results=False), abs=TOL)
    assert exact_agreement(cm) == pytest.approx(np.mean(a == b), abs=TOL)


def test_confusion_skips_missing_and_kappa_edge_cases():
    cm = confusion_matrix3(np.array([0, 1, -1, 2]), np.array([0, 2, 1, -1]))
    assert cm.sum() == 2 and cm[0, 0] == 1 and cm[1, 2] == 1
    assert np.isnan(kappa_from_confusion(np.zeros((3, 3))))
    assert kappa_from_confusion(np.diag([0, 0, 7])) == 1.0


def test_boundary_share_by_hand():
    cm = np.array([[10, 3, 1], [2, 20, 4], [0, 5, 30]])
    # off-diagonal: 3+1+2+4+0+5 = 15; involving the middle row/column: 3+2+4+5 = 14
    assert boundary_share(cm) == pytest.approx(14 / 15)
    assert np.isnan(boundary_share(np.diag([1, 2, 3])))


def test_binary_collapse_moves_middle_toward_reference():
    judge = np.array([0.5, 0.5, 0.0, 1.0, 0.7, np.nan])
    p = np.array([0.4, 0.5, 0.9, 0.1, 0.9, 0.2])
    out = binary_collapse(judge, p)
    assert out[:5].tolist() == [0.0, 1.0, 0.0, 1.0, 1.0]
    assert np.isnan(out[5])


# --------------------------------------------------------------------------- ranks


def test_spearman_matches_scipy_without_ties():
    rng = np.random.default_rng(3)
    for n in (2, 5, 6, 30):
        x, y = rng.random(n), rng.random(n)
        assert spearman_plain(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=TOL)


def test_spearman_plain_ranks_break_ties_by_position():
    assert plain_ranks([3.0, 1.0, 3.0]).tolist() == [2.0, 1.0, 3.0]
    # ranks x: [1,2,3]; y=[5,5,1] -> [2,3,1]; d = [-1,-1,2]; 1 - 6*6/(3*8) = -0.5
    assert spearman_plain([1, 2, 3], [5, 5, 1]) == pytest.approx(-0.5)
    assert np.isnan(spearman_plain([1], [2]))


# --------------------------------------------------------------------------- Wilson


def test_wilson_matches_statsmodels():
    rng = np.random.default_rng(11)
    n = rng.integers(1, 5000, 200)
    k = rng.integers(0, n + 1)
    lo, hi = wilson_interval(k, n)
    for i in range(len(n)):
        want = proportion_confint(int(k[i]), int(n[i]), alpha=0.05, method="wilson")
        assert lo[i] == pytest.approx(want[0], abs=TOL)
        assert hi[i] == pytest.approx(want[1], abs=TOL)
    lo90, _ = wilson_interval(7, 40, confidence=0.9)
    assert float(lo90) == pytest.approx(proportion_confint(7, 40, alpha=0.1, method="wilson")[0], abs=TOL)
    assert np.isnan(wilson_interval(0, 0)[0])


# --------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unstratified_bootstrap_matches_scipy(seed):
    x = np.random.default_rng(100 + seed).random(157)
    ours = bootstrap_ci(x, rng=np.random.default_rng(seed))
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(seed), vectorized=True
    ).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), abs=TOL)


def test_stratified_bootstrap_matches_scipy_multi_sample():
    rng = np.random.default_rng(5)
    x = rng.random(400)
    strata = rng.integers(0, 6, 400)
    groups = split_by_codes(x, strata)
    ref = stats.bootstrap(
        tuple(groups),
        _pooled_mean(len(x)),
        n_resamples=2000,
        method="percentile",
        paired=False,
        vectorized=True,
        rng=np.random.default_rng(9),
    )
    ours = bootstrap_ci(x, strata, rng=np.random.default_rng(9))
    assert ours == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high), abs=TOL)
    dist = stratified_resample_means(groups, 2000, np.random.default_rng(9))
    assert dist == pytest.approx(ref.bootstrap_distribution, abs=TOL)


def test_chunked_draws_do_not_change_the_stream(monkeypatch):
    import tooldiag.metrics.agreement as agreement

    x = np.random.default_rng(1).random(333)
    whole = stratified_resample_means([x], 500, np.random.default_rng(4))
    monkeypatch.setattr(agreement, "_CHUNK_DRAWS", 1000)
    chunked = stratified_resample_means([x], 500, np.random.default_rng(4))
    assert np.array_equal(whole, chunked)


def test_bootstrap_cells_each_equal_scipy_with_their_own_generator():
    rng = np.random.default_rng(8)
    values = rng.random(900)
    cells = rng.integers(0, 3, 900)
    strata = rng.integers(0, 4, 900)
    keys = ["judge-a|gen|easy|with_gt", "judge-b|gen|easy|with_gt", "judge-c|gen|hard|without_gt"]
    result = bootstrap_cells(values, cells, strata, keys, n_resamples=2000, seed=42, workers=2)
    lo, hi = result.interval()
    for i, key in enumerate(keys):
        mask = cells == i
        groups = split_by_codes(values[mask], strata[mask])
        ref = stats.bootstrap(
            tuple(groups),
            _pooled_mean(mask.sum()),
            n_resamples=2000,
            method="percentile",
            paired=False,
            vectorized=True,
            rng=cell_rng(42, key),
        )
        assert (lo[i], hi[i]) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high), abs=TOL)
        assert result.means[i] == pytest.approx(values[mask].mean(), abs=TOL)
        assert result.counts[i] == mask.sum()
    # a cell's CI depends on its key and the seed only, not on the other cells
    alone = bootstrap_cells(
        values[cells == 1], np.zeros((cells == 1).sum(), int), strata[cells == 1], [keys[1]], workers=1
    )
    assert np.array_equal(alone.distributions[0], result.distributions[1])


def test_paired_difference_matches_scipy_paired_and_handles_missing():
    rng = np.random.default_rng(12)
    a = rng.random(120)
    b = a - 0.1 + 0.05 * rng.random(120)
    dist = paired_difference_means(a, b, [np.arange(120)], 2000, np.random.default_rng(3))
    ref = stats.bootstrap(
        (a, b),
        lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        n_resamples=2000,
        method="percentile",
        paired=True,
        vectorized=True,
        rng=np.random.default_rng(3),
    )
    assert dist == pytest.approx(ref.bootstrap_distribution, abs=TOL)
    same = paired_difference_means(a, a, [np.arange(60), np.arange(60, 120)], 300, np.random.default_rng(1))
    assert np.abs(same).max() < 1e-12
    b_missing = b.copy()
    b_missing[:10] = np.nan
    dist = paired_difference_means(a, b_missing, [np.arange(120)], 50, np.random.default_rng(2))
    assert np.isfinite(dist).all()


def test_grouped_means_equal_the_stratified_draws_and_handle_missing_units():
    rng = np.random.default_rng(21)
    x = rng.random(90)
    strata = [np.arange(0, 40), np.arange(40, 90)]
    grouped = grouped_resample_means(np.column_stack([x, 2 * x]), strata, 400, np.random.default_rng(6))
    plain = stratified_resample_means([x[:40], x[40:]], 400, np.random.default_rng(6))
    assert np.allclose(grouped[0], plain, atol=TOL) and np.allclose(grouped[1], 2 * plain, atol=TOL)
    # with missing units each mean is over the resampled units that have the measurement
    y = x.copy()
    y[::3] = np.nan
    dist = grouped_resample_means(y, strata, 200, np.random.default_rng(8))[0]
    draws = np.random.default_rng(8)
    idx = [draws.integers(0, len(s), (200, len(s))) for s in strata]
    picked = np.concatenate([y[s][i] for s, i in zip(strata, idx, strict=True)], axis=1)
    assert np.allclose(dist, np.nanmean(picked, axis=1), atol=TOL)


def test_cell_rng_depends_on_seed_and_key_only():
    a = cell_rng(1, "j|g|easy").integers(0, 10**9, 5)
    assert np.array_equal(a, cell_rng(1, "j|g|easy").integers(0, 10**9, 5))
    assert not np.array_equal(a, cell_rng(2, "j|g|easy").integers(0, 10**9, 5))
    assert not np.array_equal(a, cell_rng(1, "j|g|hard").integers(0, 10**9, 5))


def test_percentile_interval_is_linear_quantile():
    d = np.random.default_rng(0).random((3, 2000))
    lo, hi = percentile_interval(d)
    assert lo == pytest.approx(np.percentile(d, 2.5, axis=1))
    assert hi == pytest.approx(np.percentile(d, 97.5, axis=1))


def test_soft_jury_needs_every_judge_complete():
    judges = np.array(
        [
            [[1, 1, 1, 1], [0.5, 0.5, 0.5, 0.5]],
            [[0, 1, 0, 1], [np.nan, 0.5, 0.5, 0.5]],
        ],
        dtype=float,
    )
    jury, complete = soft_jury(judges)
    assert complete.tolist() == [True, False]
    assert jury[0].tolist() == [0.5, 1.0, 0.5, 1.0]
