"""Confidence intervals for proportions.

Paper 001 reports Wilson 95 % intervals (App. E, Table 14: "Confidence intervals are
Wilson 95 % on N = 200"). The interval is the Wilson score interval (E. B. Wilson, 1927,
"Probable inference, the law of succession, and statistical inference", J. Am. Stat.
Assoc. 22(158): 209-212), written out here as a few lines of plain Python.

Why not statsmodels' ``proportion_confint(method="wilson")``, which gives the same
numbers: importing it pulls in pandas and scipy, about 4-5 s before the first line of
output, and every report, ``diagnose`` and ``cases`` needs one interval. The standard
normal quantile comes from :class:`statistics.NormalDist` (Wichura's AS 241, accurate to
about 1e-16, like scipy's ``norm.isf``). ``tests/metrics/test_intervals.py`` checks this
function against statsmodels to 1e-12 over a grid of counts, sizes and confidence levels.
"""

from __future__ import annotations

import math
from statistics import NormalDist

_STANDARD_NORMAL = NormalDist()


def _two_sided_quantile(confidence: float) -> float:
    """``z`` with ``P(|Z| <= z) = confidence`` for a standard normal ``Z`` (1.959964... at 95 %).

    Taken from the lower tail, ``-Phi^-1(alpha / 2)``, not as ``Phi^-1(1 - alpha / 2)``: the
    subtraction from 1 would round away the digits of a small ``alpha`` (scipy's ``norm.isf``,
    which statsmodels uses, works in the tail too).
    """
    return -_STANDARD_NORMAL.inv_cdf((1.0 - confidence) / 2.0)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of ``successes / n`` on the 0..1 scale; ``None`` when ``n == 0``.

    ``successes`` may be fractional: a turn-level GAR of 36.5 % over 200 cases is
    interval-estimated as 73 successes in 200, as paper 001 Table 14 does. Counts outside
    ``0..n`` are clamped into it; a NaN count gives ``None``. With ``p = successes / n``
    and ``z`` the two-sided normal quantile of ``confidence``, the bounds are

        (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n),

    clipped to [0, 1] (mathematically inside it already; the clip absorbs rounding), the
    same arithmetic as statsmodels.
    """
    if n <= 0:
        return None
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    successes = min(max(float(successes), 0.0), float(n))
    if math.isnan(successes):
        return None
    size = float(n)
    z = _two_sided_quantile(confidence)
    z2 = z * z
    p = successes / size
    denom = 1.0 + z2 / size
    center = (p + z2 / (2.0 * size)) / denom
    half = z * math.sqrt(p * (1.0 - p) / size + z2 / (4.0 * size**2)) / denom
    return min(max(center - half, 0.0), 1.0), min(max(center + half, 0.0), 1.0)


def wilson_interval_pct(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """:func:`wilson_interval` on the 0..100 scale used by every report."""
    interval = wilson_interval(successes, n, confidence)
    if interval is None:
        return None
    return 100.0 * interval[0], 100.0 * interval[1]
