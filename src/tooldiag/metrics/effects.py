"""Effect sizes with intervals: a least-squares slope with a robust CI, a difference of two means with a bootstrap CI.

Both serve bias analyses of judges (does the error grow with the size of what is judged; does a
judge treat one group of outputs differently from the rest), but know nothing of judges.

* :func:`ols_slope`: the slope of ``y = a + b·x`` by ordinary least squares, with a
  heteroscedasticity-consistent (White / HC1) standard error and a normal-quantile interval,
  the same numbers as ``statsmodels.OLS(y, add_constant(x)).fit(cov_type="HC1")``.
  HC1 rather than the classical standard error because a judge's error is bounded in [0, 1]
  and its spread changes with the plan's size, which the classical formula assumes away; a
  closed form rather than a bootstrap because it is exact, instant on 300,000 rows, and needs
  no seed (statsmodels is a dev-only dependency; the test checks the two agree).
* :func:`mean_differences`: ``mean(a) - mean(b)`` of two independent samples, column by column,
  with a percentile bootstrap CI; optionally a *cluster* bootstrap (whole clusters, such as
  every verdict on one record, are drawn), computed as cluster-multiplicity weights times
  cluster totals (one matrix product per chunk of resamples, all columns sharing the draws).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from tooldiag.metrics.agreement import percentile_interval


@dataclass(frozen=True)
class Slope:
    """``y ≈ intercept + slope·x`` over ``n`` points, with a CI of the slope (NaN where undefined)."""

    n: int
    slope: float
    intercept: float
    ci_low: float
    ci_high: float
    #: The slope's HC1 standard error.
    se: float


def ols_slope(x: np.ndarray, y: np.ndarray, confidence: float = 0.95) -> Slope:
    """Least-squares slope of ``y`` on ``x`` with an HC1 robust interval; NaN pairs are dropped.

    With ``r`` the residuals and ``Sxx = Σ(x - x̄)²``: ``se² = n/(n-2) · Σ(x - x̄)² r² / Sxx²``
    (the slope's entry of the HC1 sandwich), CI ``slope ± z·se``. Fewer than 3 points or a
    constant ``x`` give NaN slope and bounds.
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    keep = ~(np.isnan(xs) | np.isnan(ys))
    xs, ys = xs[keep], ys[keep]
    n = len(xs)
    nan = float("nan")
    if n < 3:
        return Slope(n, nan, nan, nan, nan, nan)
    dx = xs - xs.mean()
    sxx = float(dx @ dx)
    if np.ptp(xs) == 0:
        return Slope(n, nan, nan, nan, nan, nan)
    slope = float(dx @ (ys - ys.mean())) / sxx
    intercept = float(ys.mean() - slope * xs.mean())
    residual = ys - intercept - slope * xs
    se = float(np.sqrt(n / (n - 2) * float((dx * dx) @ (residual * residual)) / (sxx * sxx)))
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    return Slope(n, slope, intercept, slope - z * se, slope + z * se, se)


@dataclass(frozen=True)
class MeanDifference:
    """``mean(a) - mean(b)`` with its bootstrap percentile CI and the two sample sizes (non-NaN values)."""

    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float


#: Resampled clusters per chunk of the bootstrap (bounds the (resamples, clusters) weight matrix).
_CHUNK = 2_000_000


def _cluster_totals(values: np.ndarray, clusters: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster and column: the sum of the non-NaN values and how many there are."""
    codes = np.arange(len(values)) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]
    size = int(codes.max()) + 1 if len(codes) else 0
    present = ~np.isnan(values)
    filled = np.where(present, values, 0.0)
    sums = np.stack([np.bincount(codes, weights=filled[:, j], minlength=size) for j in range(values.shape[1])], 1)
    counts = np.stack([np.bincount(codes, weights=present[:, j], minlength=size) for j in range(values.shape[1])], 1)
    return sums.reshape(size, values.shape[1]), counts.reshape(size, values.shape[1])


def _resampled_means(sums: np.ndarray, counts: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, k)`` means of the columns over clusters drawn with replacement (ratio of totals)."""
    size, k = sums.shape
    totals = np.ascontiguousarray(np.hstack([sums, counts]))
    out = np.empty((n_resamples, k))
    step = max(1, _CHUNK // max(size, 1))
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        draws = rng.integers(0, size, (stop - start, size))
        draws += (np.arange(stop - start) * size)[:, None]
        weights = np.bincount(draws.ravel(), minlength=(stop - start) * size).reshape(-1, size).astype(float)
        both = weights @ totals  # one BLAS product: resampled sums and counts of every column
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:stop] = both[:, :k] / both[:, k:]
    return out


def _cluster_variance(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per column: the cluster-robust variance of the ratio mean ``Σs / Σn`` (0 for a single cluster)."""
    used = counts > 0
    clusters = used.sum(axis=0)
    total = counts.sum(axis=0)
    mean = sums.sum(axis=0) / total
    residual = np.where(used, sums - mean * counts, 0.0)
    factor = np.where(clusters > 1, clusters / np.maximum(clusters - 1, 1), 0.0)
    return factor * (residual * residual).sum(axis=0) / (total * total)


def mean_differences(
    a: np.ndarray,
    b: np.ndarray,
    *,
    clusters_a: np.ndarray | None = None,
    clusters_b: np.ndarray | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    rng: np.random.Generator | int = 42,
    interval: str = "bootstrap",
) -> list[MeanDifference]:
    """Per column of ``a`` and ``b`` (``(n, k)``, or 1-D for one column): ``mean(a) - mean(b)`` over the
    non-NaN values, with a percentile bootstrap CI.

    The two samples are resampled independently (``a`` first, from one generator). ``clusters_a``
    / ``clusters_b`` (one code per row) resample whole clusters, e.g. all verdicts on one record,
    so rows that are not independent do not narrow the interval; a mean is then the ratio of the
    resampled totals. All columns share the draws. A column with no value on one side gives NaN.

    ``interval="normal"`` gives the bootstrap's large-sample limit instead, at no cost: the
    cluster-robust variance of each ratio mean, ``C/(C-1) · Σ_c (s_c - m·n_c)² / N²`` (``C``
    clusters, ``s_c`` and ``n_c`` a cluster's total and count, ``N = Σ n_c``), summed over the two
    samples, and ``difference ± z·sd``. A cluster bootstrap costs resamples × clusters draws,
    too many for hundreds of thousands of verdicts; the test checks both give the same interval.
    """
    if interval not in ("bootstrap", "normal"):
        raise ValueError(f"interval must be bootstrap or normal, got {interval!r}")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    xa = xa[:, None] if xa.ndim == 1 else xa
    xb = xb[:, None] if xb.ndim == 1 else xb
    sums_a, counts_a = _cluster_totals(xa, clusters_a)
    sums_b, counts_b = _cluster_totals(xb, clusters_b)
    nan = float("nan")
    n_a, n_b = counts_a.sum(axis=0), counts_b.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_a, mean_b = sums_a.sum(axis=0) / n_a, sums_b.sum(axis=0) / n_b
    lo, hi = np.full(xa.shape[1], nan), np.full(xa.shape[1], nan)
    both = (n_a > 0) & (n_b > 0)
    if both.any() and interval == "normal":
        z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            sd = np.sqrt(_cluster_variance(sums_a, counts_a) + _cluster_variance(sums_b, counts_b))
        lo[both] = (mean_a - mean_b - z * sd)[both]
        hi[both] = (mean_a - mean_b + z * sd)[both]
    elif both.any():
        dist = _resampled_means(sums_a, counts_a, n_resamples, gen) - _resampled_means(
            sums_b, counts_b, n_resamples, gen
        )
        lo[both], hi[both] = percentile_interval(dist.T[both], confidence)
    out = []
    for j in range(xa.shape[1]):
        measurable = n_a[j] > 0 and n_b[j] > 0
        out.append(
            MeanDifference(
                int(n_a[j]),
                int(n_b[j]),
                float(mean_a[j]) if n_a[j] else nan,
                float(mean_b[j]) if n_b[j] else nan,
                float(mean_a[j] - mean_b[j]) if measurable else nan,
                float(lo[j]) if measurable else nan,
                float(hi[j]) if measurable else nan,
            )
        )
    return out
