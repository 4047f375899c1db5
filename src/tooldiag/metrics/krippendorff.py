"""Krippendorff's alpha: agreement of any number of raters (or repeated draws) with missing values.

Why alpha and not Cohen's kappa: kappa compares exactly two raters who rated every unit;
repeated draws of a judge are K "raters", and a draw can be missing (a null reply, an omitted
metric). Alpha takes any number of values per unit, skips missing ones, and has a level of
measurement that says how far apart two values are.

Definitions (K. Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011, §§ A-E;
"Content Analysis", 4th ed., 2019, ch. 12):

* only *pairable* values count: units with at least two values; ``n`` is their number of values;
* observed disagreement ``D_o = (1/n) Σ_u 1/(m_u - 1) Σ_{i≠j in u} δ²(v_i, v_j)`` (``m_u`` values in unit u);
* expected disagreement ``D_e = 1/(n(n-1)) Σ_{i≠j over all n values} δ²(v_i, v_j)``;
* ``alpha = 1 - D_o / D_e``: 1 = perfect agreement, 0 = agreement at chance level, below 0 = systematic
  disagreement; undefined (NaN here) when nothing is pairable or every value is the same (``D_e = 0``);
* difference functions: nominal ``δ² = [a ≠ b]``; interval ``δ² = (a - b)²``; ordinal
  ``δ²_ck = (Σ_{g=c..k} n_g - (n_c + n_k)/2)²`` with ``n_g`` the pairable count of value g.

Interval alpha uses the closed form ``Σ_{i≠j}(a_i - a_j)² = 2(mΣa² - (Σa)²)`` on values shifted by
the unit's smallest (no coincidence matrix, so any number of distinct values costs nothing extra,
and a unit of equal values contributes exactly 0: identical draws give exactly 1); nominal and ordinal alpha build
the coincidence matrix over the distinct values. The numbers match the ``krippendorff`` package
(PyPI, Castro 2017) on its and Krippendorff's examples (``tests/metrics/test_krippendorff.py``).
"""

from __future__ import annotations

import numpy as np

LEVELS = ("nominal", "ordinal", "interval")


def krippendorff_alpha(values: np.ndarray, level: str = "interval") -> float:
    """Alpha of ``values`` (shape ``(units, raters)``, NaN = missing) at ``level`` of measurement.

    Units with fewer than two values are not pairable and drop out. NaN when no unit is
    pairable or all pairable values are equal.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    v = np.asarray(values, dtype=float)
    if v.ndim != 2:
        raise ValueError(f"values must be a 2-D array (units x raters), got shape {v.shape}")
    present = ~np.isnan(v)
    m = present.sum(axis=1)
    pairable = m >= 2
    v, present, m = v[pairable], present[pairable], m[pairable]
    n = int(m.sum())
    if n < 2:
        return float("nan")
    if level == "interval":
        # shifted by each unit's smallest value, so a unit of equal values sums to exactly 0
        shifted = np.where(present, v - np.nanmin(v, axis=1)[:, None], 0.0)
        s1, s2 = shifted.sum(axis=1), (shifted**2).sum(axis=1)
        observed = float((2 * (m * s2 - s1**2) / (m - 1)).sum()) / n
        overall = np.where(present, v - np.nanmean(v[present]), 0.0)
        t1, t2 = float(overall.sum()), float((overall**2).sum())
        expected = 2 * (n * t2 - t1**2) / (n * (n - 1))
    else:
        observed, expected = _coincidence_disagreements(v, present, m, n, level)
    if expected <= 1e-15 * max(1.0, observed):
        return float("nan")
    return 1.0 - observed / expected


def _coincidence_disagreements(
    v: np.ndarray, present: np.ndarray, m: np.ndarray, n: int, level: str
) -> tuple[float, float]:
    """``D_o`` and ``D_e`` from the coincidence matrix ``o_ck = Σ_u n_uc n_uk (- n_uc if c = k) / (m_u - 1)``."""
    categories, codes = np.unique(v[present], return_inverse=True)
    counts = np.zeros((len(v), len(categories)))
    rows = np.nonzero(present)[0]
    np.add.at(counts, (rows, codes), 1.0)
    weighted = counts / (m - 1)[:, None]
    coincidence = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    marginal = coincidence.sum(axis=0)  # n_c, summing to n
    if level == "nominal":
        delta = 1.0 - np.eye(len(categories))
    else:
        cumulative = np.cumsum(marginal)
        between = cumulative[None, :] - cumulative[:, None] + marginal[:, None]  # Σ_{g=c..k} n_g for c <= k
        between = np.where(np.arange(len(categories))[None, :] >= np.arange(len(categories))[:, None], between, 0.0)
        between = between + between.T - np.diag(np.diag(between))
        delta = (between - (marginal[:, None] + marginal[None, :]) / 2) ** 2
    observed = float((coincidence * delta).sum()) / n
    expected = float((np.outer(marginal, marginal) * delta).sum() - (marginal * np.diag(delta)).sum()) / (n * (n - 1))
    return observed, expected
