"""The pure-Python Wilson interval against statsmodels' ``proportion_confint(method="wilson")``.

statsmodels is the reference, imported by tests only: the package computes the interval
itself so that no CLI command pays seconds of pandas/scipy imports for it.
"""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.proportion import proportion_confint

from tooldiag.metrics.intervals import wilson_interval, wilson_interval_pct

SIZES = [1, 2, 3, 7, 10, 40, 200, 800, 10_000, 1_000_000, 10**9]
CONFIDENCES = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1e-6, 1.0 - 1e-9]


def _counts(n: int) -> list[float]:
    """0, n, 1, n-1, the middle, and fractional counts (turn-level GAR rates times n)."""
    counts = {0.0, float(n), 1.0, float(max(n - 1, 0)), n / 2.0, 0.365 * n, n / 3.0, 0.999 * n, 0.25}
    return sorted(count for count in counts if 0.0 <= count <= n)


GRID = [(count, n, confidence) for n in SIZES for count in _counts(n) for confidence in CONFIDENCES]


def test_grid_covers_the_edges() -> None:
    """The grid holds 0 and n, fractional counts, n = 1 and very large n (a guard on the grid itself)."""
    assert any(count == 0 for count, _, _ in GRID) and any(count == n for count, n, _ in GRID)
    assert any(count != int(count) for count, _, _ in GRID)
    assert {1, 10**9} <= {n for _, n, _ in GRID}
    assert len(GRID) > 500


@pytest.mark.parametrize("n", SIZES)
def test_matches_statsmodels_to_1e_12(n: int) -> None:
    for count, size, confidence in GRID:
        if size != n:
            continue
        expected = proportion_confint(count, size, alpha=1.0 - confidence, method="wilson")
        got = wilson_interval(count, size, confidence)
        assert got is not None
        assert got[0] == pytest.approx(expected[0], abs=1e-12, rel=0), (count, size, confidence)
        assert got[1] == pytest.approx(expected[1], abs=1e-12, rel=0), (count, size, confidence)


def test_paper_001_table_14_figures() -> None:
    """Paper 001 Table 14 style: 80 / 200 -> [33.5, 46.9]; a fractional 36.5 % turn GAR -> [30.1, 43.4]."""
    assert [round(x, 1) for x in wilson_interval_pct(80, 200)] == [33.5, 46.9]  # type: ignore[union-attr]
    assert [round(x, 1) for x in wilson_interval_pct(0.365 * 200, 200)] == [30.1, 43.4]  # type: ignore[union-attr]


def test_boundaries_stay_inside_unit_interval() -> None:
    """At 0 and n one bound is 0 or 1 up to rounding (as in statsmodels), never outside [0, 1]."""
    for count, n, confidence in GRID:
        low, high = wilson_interval(count, n, confidence)  # type: ignore[misc]
        assert 0.0 <= low <= count / n + 1e-15 and count / n - 1e-15 <= high <= 1.0, (count, n, confidence)
    low, high = wilson_interval(0, 10)  # type: ignore[misc]
    assert low == pytest.approx(0.0, abs=1e-15) and 0.0 < high < 1.0
    low, high = wilson_interval(10, 10)  # type: ignore[misc]
    assert 0.0 < low < 1.0 and high == pytest.approx(1.0, abs=1e-15)


def test_counts_outside_range_are_clamped() -> None:
    assert wilson_interval(-3, 10) == wilson_interval(0, 10)
    assert wilson_interval(12.5, 10) == wilson_interval(10, 10)


def test_empty_and_nan() -> None:
    assert wilson_interval(0, 0) is None
    assert wilson_interval(3, -1) is None
    assert wilson_interval_pct(0, 0) is None
    assert wilson_interval(math.nan, 10) is None


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 1.5, math.nan])
def test_confidence_must_be_inside_zero_one(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence must be in"):
        wilson_interval(3, 10, confidence)


def test_higher_confidence_gives_wider_interval() -> None:
    narrow = wilson_interval(7, 40, 0.9)
    wide = wilson_interval(7, 40, 0.99)
    assert narrow is not None and wide is not None
    assert wide[0] < narrow[0] and narrow[1] < wide[1]
