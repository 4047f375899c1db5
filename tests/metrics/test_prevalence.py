"""Rogan-Gladen corrected rates: hand values, the chance judge, and CI coverage on synthetic judges."""

from __future__ import annotations

import numpy as np
import pytest

from tooldiag.metrics.prevalence import corrected_rate_with_ci, rogan_gladen


def test_rogan_gladen_hand_values() -> None:
    # p_obs = 0.9 * 0.3 + 0.2 * 0.7 = 0.41 for a true rate of 0.3
    assert rogan_gladen(0.41, 0.9, 0.8) == pytest.approx(0.3)
    assert rogan_gladen(0.5, 1.0, 1.0) == pytest.approx(0.5)  # a perfect judge changes nothing
    assert rogan_gladen(0.05, 0.9, 0.8) == 0.0  # (0.05 - 0.2) / 0.7 < 0: clipped
    assert rogan_gladen(0.99, 0.9, 0.8) == 1.0  # 0.79 / 0.7 > 1: clipped


@pytest.mark.parametrize(("tpr", "tnr"), [(0.5, 0.5), (0.3, 0.6), (0.0, 0.0)])
def test_chance_or_worse_judge_has_no_correction(tpr: float, tnr: float) -> None:
    assert rogan_gladen(0.4, tpr, tnr) is None


def test_corrected_rate_hand_case() -> None:
    # labelled: 100 true passes (80 judged pass), 100 true fails (20 judged pass) -> TPR 0.8, TNR 0.8
    truth = [True] * 100 + [False] * 100
    verdict = [True] * 80 + [False] * 20 + [True] * 20 + [False] * 80
    judged = [True] * 44 + [False] * 56  # p_obs 0.44 -> (0.44 + 0.8 - 1) / 0.6 = 0.4
    r = corrected_rate_with_ci(judged, truth, verdict, resamples=500, seed=1)
    assert (r.observed, r.tpr, r.tnr) == pytest.approx((0.44, 0.8, 0.8))
    assert r.corrected == pytest.approx(0.4)
    assert r.ci_low is not None and r.ci_high is not None
    assert 0.0 <= r.ci_low < 0.4 < r.ci_high <= 1.0
    assert (r.n_judged, r.n_labelled) == (100, 200)
    assert r.note == ""  # no replicate dropped
    again = corrected_rate_with_ci(judged, truth, verdict, resamples=500, seed=1)
    assert again == r  # seeded: deterministic
    assert corrected_rate_with_ci(judged, truth, verdict, resamples=500, seed=2).ci_low != r.ci_low


def test_chance_judge_gives_none_with_note() -> None:
    truth = [True] * 10 + [False] * 10
    verdict = [True] * 5 + [False] * 5 + [True] * 5 + [False] * 5  # TPR = TNR = 0.5
    r = corrected_rate_with_ci([True, False] * 20, truth, verdict, resamples=200)
    assert r.corrected is None and r.ci_low is None and r.ci_high is None
    assert r.tpr == 0.5 and r.tnr == 0.5
    assert "no better than chance" in r.note


def test_labelled_set_without_true_fails_gives_none() -> None:
    r = corrected_rate_with_ci([True, False], [True, True], [True, False], resamples=100)
    assert r.corrected is None and r.tnr is None and "true fails" in r.note


def test_recovers_true_prevalence_within_ci_in_95_percent_of_trials() -> None:
    """Must-hold: 200 seeded synthetic studies (true rate, judge TPR/TNR known, labelled n = 300,
    judged n = 500); the true rate lies inside the 95 % CI in at least 95 % of them."""
    rng = np.random.default_rng(20260515)
    hits = 0
    trials = 200
    for trial in range(trials):
        prevalence, tpr, tnr = rng.uniform(0.2, 0.8), rng.uniform(0.75, 0.95), rng.uniform(0.7, 0.95)

        def judge(truth: np.ndarray, tpr: float = tpr, tnr: float = tnr) -> np.ndarray:
            draws = rng.random(truth.size)
            return np.where(truth, draws < tpr, draws >= tnr)

        labelled = rng.random(300) < prevalence
        target = rng.random(500) < prevalence
        r = corrected_rate_with_ci(judge(target), labelled, judge(labelled), resamples=400, seed=trial)
        assert r.ci_low is not None and r.ci_high is not None
        hits += r.ci_low <= prevalence <= r.ci_high
    assert hits / trials >= 0.95
