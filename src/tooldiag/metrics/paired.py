"""Paired comparisons of two runs over the same cases: is a difference real, or repetition noise?

Two runs of the same cases give, per case, two binary outcomes (passed, gold hit). The
cases are shared, so the runs are *paired*: only the cases on which the runs disagree
carry information about which is better (McNemar 1947). The functions here are pure
and know no suite (``tooldiag compare`` feeds them; docs/compare.md has the formulas):

* :func:`mcnemar_exact`: the exact McNemar test, a two-sided binomial test of the
  discordant pairs against 1/2 (what ``statsmodels``' ``mcnemar(exact=True)`` computes),
  in exact integer arithmetic so that p = 1e-60 is not rounded to 0;
* :func:`case_differences`: per case, mean outcome of A minus mean outcome of B over its
  samples. One sample per case gives -1/0/+1; with repeats (K samples per case) a case is
  a *cluster* and its difference is a mean, so that resampling cases is the cluster
  bootstrap and the sign test of the differences reduces to McNemar at K = 1;
* :func:`paired_bootstrap_ci`: the percentile bootstrap interval of the mean case
  difference (Efron & Tibshirani 1993, ch. 13), cases resampled with replacement, seeded;
* :func:`mcnemar_mdd`: the minimum detectable difference at the run's size (Connor 1987's
  power formula for McNemar's test, solved for the difference);
* :func:`holm_adjust`: Holm's (1979) step-down adjustment across categories.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from tooldiag.errors import UserError


def binomial_tail(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exactly (integers, one rounding at the end)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    ``a_only``: cases where A succeeded and B did not; ``b_only``: the reverse. Under "no
    difference" each discordant case goes either way with probability 1/2, so the p-value
    is ``min(1, 2 * P(X <= min(a_only, b_only)))`` with ``X ~ Binomial(a_only + b_only, 1/2)``;
    1.0 when no case is discordant (nothing tells the runs apart).
    """
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts must be >= 0")
    n = a_only + b_only
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * binomial_tail(min(a_only, b_only), n))


def sign_counts(differences: Sequence[float]) -> tuple[int, int]:
    """(cases where A did better, cases where B did better): McNemar's discordant counts at K = 1."""
    return sum(1 for d in differences if d > 0), sum(1 for d in differences if d < 0)


def case_differences(clusters: Sequence[tuple[Sequence[bool], Sequence[bool]]]) -> list[float]:
    """Per case, the share of A's samples that succeeded minus the share of B's.

    ``clusters``: one ``(a_samples, b_samples)`` per case, each side non-empty (K samples of a
    case; one each without repeats). The sides need not have the same K: samples of A and B
    at the same index are not paired (independent draws), only the case is.
    """
    out = []
    for a, b in clusters:
        if not a or not b:
            raise ValueError("every case needs at least one sample on each side")
        out.append(sum(map(bool, a)) / len(a) - sum(map(bool, b)) / len(b))
    return out


def paired_bootstrap_ci(
    differences: Sequence[float], *, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``differences`` (cases resampled with replacement).

    Resampling whole cases keeps each case's pair (and, with repeats, its K samples) together:
    the paired bootstrap, and the cluster bootstrap over cases when a difference is a mean of
    samples. Percentile, not BCa: the statistic is a mean of bounded values, the interval
    stays inside [-1, 1], and it is what ``scipy.stats.bootstrap(..., method="percentile")``
    gives on the same data. ``None`` without cases. The numbers depend only on ``seed``.
    """
    import numpy as np

    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    values = np.asarray(differences, dtype=float)
    n = len(values)
    if n == 0:
        return None
    rng = np.random.Generator(np.random.PCG64(seed))
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // n)  # bounded memory on large runs
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        means[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def _z(probability: float) -> float:
    return NormalDist().inv_cdf(probability)


def mcnemar_mdd(n: int, discordance: float, *, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The smallest difference |p_A - p_B| McNemar's test detects with ``power`` at ``alpha`` on ``n`` cases.

    Connor's (1987) sample size for McNemar, ``n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2``
    (``psi``: share of discordant cases, ``d``: the difference, ``z_a = z(1 - alpha/2)``,
    ``z_b = z(power)``), solved for ``d`` by bisection. A difference ``d`` needs at least
    ``|d|`` of the cases discordant, so ``psi`` is ``max(observed discordance, d)``: with no
    discordance observed the answer is about ``(z_a + z_b)^2 / n``, not 0. ``None`` when no
    difference can reach ``alpha`` at all: even ``n`` discordant cases all one way give
    ``p = 2 / 2^n >= alpha`` (n < 6 at alpha = 0.05), and for ``n == 0``.
    """
    if n <= 0 or mcnemar_exact(n, 0) >= alpha:
        return None
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be in (0, 1)")
    z_a, z_b = _z(1 - alpha / 2), _z(power)
    root_n = math.sqrt(n)

    def short(d: float) -> float:  # > 0 while d is too small to detect
        psi = max(discordance, d)
        return z_a * math.sqrt(psi) + z_b * math.sqrt(max(psi - d * d, 0.0)) - root_n * d

    if short(1.0) > 0:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if short(mid) > 0 else (low, mid)
    return high


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order.

    Sort ascending; the i-th smallest (0-based) becomes ``(m - i) * p``, made non-decreasing
    along the sorted order and capped at 1 (statsmodels' ``multipletests(method="holm")``).
    Rejecting where the adjusted p < alpha controls the family-wise error rate at alpha.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def check_alpha(alpha: float) -> float:
    """``alpha``, or a clear error: a level must be strictly between 0 and 1."""
    if not 0 < alpha < 1:
        raise UserError(f"--alpha {alpha} is not a significance level", hint="give a number between 0 and 1, e.g. 0.05")
    return alpha
