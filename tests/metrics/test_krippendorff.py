"""Krippendorff's alpha against the ``krippendorff`` package (PyPI 0.9.0) and Krippendorff's own example.

The expected numbers were computed once with ``python3 -m uv run --with krippendorff python``:
``krippendorff.alpha(reliability_data=DATA, level_of_measurement=LEVEL)`` (the package takes
raters as rows, so ``DATA`` is the transpose of what :func:`krippendorff_alpha` takes), and are
hard-coded here so the test needs no extra dependency.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tooldiag.metrics.krippendorff import krippendorff_alpha

nan = np.nan

#: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers x 12 units.
#: The paper prints alpha = 0.743 (nominal), 0.815 (ordinal), 0.849 (interval).
TEXTBOOK = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
).T

#: Ten plan x metric units, three draws each, judge values on the 0..1 scale, some missing.
DRAWS = np.array(
    [[0, 0, 0.5], [1, 1, 1], [0.25, 0.75, nan], [nan, nan, 1], [0.5, 0.5, 0.5], [1, 0, 1],
     [0, nan, 0], [0.75, 1, 1], [0, 0.25, 0], [1, 1, 0.5]]
)  # fmt: skip


@pytest.mark.parametrize(
    ("data", "level", "expected"),
    [
        (TEXTBOOK, "nominal", 0.743421052631579),
        (TEXTBOOK, "ordinal", 0.8153875037548814),
        (TEXTBOOK, "interval", 0.8491071428571428),
        (DRAWS, "nominal", 0.37662337662337664),
        (DRAWS, "ordinal", 0.5735553705245628),
        (DRAWS, "interval", 0.5724465558194775),
    ],
)
def test_alpha_matches_the_krippendorff_package(data, level, expected):
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-12)


def test_textbook_values_as_printed():
    printed = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}
    assert {lv: round(krippendorff_alpha(TEXTBOOK, lv), 3) for lv in printed} == printed


def test_identical_draws_give_one_and_unpairable_units_drop_out():
    same = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, nan], [0.5, 0.5, 0.5], [0.25, nan, nan]])
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha(same, level) == 1.0
    # the lone 0.25 is not pairable: adding a wildly different lone value changes nothing
    other = same.copy()
    other[3, 0] = 7.0
    assert krippendorff_alpha(other) == krippendorff_alpha(same)


def test_undefined_cases_are_nan():
    assert math.isnan(krippendorff_alpha(np.ones((4, 3))))  # no variation at all: D_e = 0
    assert math.isnan(krippendorff_alpha(np.array([[1.0, nan], [0.0, nan]])))  # nothing pairable
    assert math.isnan(krippendorff_alpha(np.zeros((0, 3))))


def test_two_raters_interval_alpha_by_hand():
    # units (0, 1) and (1, 1): n = 4, D_o = (1/4) * (2 * 1 / 1) = 0.5,
    # D_e = (1/(4*3)) * sum over ordered pairs of (a-b)^2 = (1/12) * 2 * (1 * 3) = 0.5 -> alpha = 0
    assert krippendorff_alpha(np.array([[0.0, 1.0], [1.0, 1.0]])) == pytest.approx(0.0)


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        krippendorff_alpha(np.zeros((2, 2)), "ratio")
    with pytest.raises(ValueError):
        krippendorff_alpha(np.zeros(3))
