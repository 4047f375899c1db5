"""Confidence intervals for proportions.

Paper 001 reports Wilson 95 % intervals (App. E, Table 14: "Confidence intervals are
Wilson 95 % on N = 200"); we take them from statsmodels rather than re-deriving the
formula. statsmodels is imported on first use: it costs seconds, and the CLI must
start fast.
"""

from __future__ import annotations

import math


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of ``successes / n`` on the 0..1 scale; ``None`` when ``n == 0``.

    ``successes`` may be fractional: a turn-level GAR of 36.5 % over 200 cases is
    interval-estimated as 73 successes in 200, as paper 001 Table 14 does.
    """
    if n <= 0:
        return None
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    successes = min(max(float(successes), 0.0), float(n))
    if math.isnan(successes):
        return None
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=1.0 - confidence, method="wilson")
    return max(0.0, float(low)), min(1.0, float(high))


def wilson_interval_pct(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """:func:`wilson_interval` on the 0..100 scale used by every report."""
    interval = wilson_interval(successes, n, confidence)
    if interval is None:
        return None
    return 100.0 * interval[0], 100.0 * interval[1]
