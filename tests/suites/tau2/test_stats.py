"""pass^k, Wilson intervals and Cohen's kappa of the tau2 diagnostic."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from tooldiag.suites.tau2.stats import cohen_kappa, is_success, pass_hat_k, pass_hat_ks, wilson


def brute_force_pass_hat_k(outcomes: list[bool], k: int) -> float:
    """Share of k-subsets of the trials that all succeed (the definition of pass^k)."""
    subsets = list(itertools.combinations(outcomes, k))
    return sum(all(s) for s in subsets) / len(subsets)


@given(st.lists(st.booleans(), min_size=1, max_size=8), st.integers(min_value=1, max_value=8))
def test_pass_hat_k_is_the_all_success_rate_of_k_subsets(outcomes, k):
    if k > len(outcomes):
        with pytest.raises(ValueError):
            pass_hat_k(len(outcomes), sum(outcomes), k)
        return
    assert math.isclose(pass_hat_k(len(outcomes), sum(outcomes), k), brute_force_pass_hat_k(outcomes, k))


def test_pass_hat_ks_averages_tasks_up_to_the_fewest_trials():
    ks = pass_hat_ks({"a": [True, True, False, True], "b": [True, False, False], "c": [True, True, True]})
    assert set(ks) == {1, 2, 3}  # tau2 lowers max k to the smallest trial count
    assert math.isclose(ks[1], (3 / 4 + 1 / 3 + 1) / 3)
    assert math.isclose(ks[2], (3 / 6 + 0 + 1) / 3)
    assert math.isclose(ks[3], (1 / 4 + 0 + 1) / 3)
    assert pass_hat_ks({}) == {}


def test_success_follows_tau2_tolerance():
    assert is_success(1.0) and is_success(1.0 - 5e-7)
    assert not is_success(0.7) and not is_success(None) and not is_success(0.999)


@pytest.mark.parametrize("count, n", [(0, 1), (1, 1), (3, 7), (43, 50), (0, 0)])
def test_wilson_matches_statsmodels(count, n):
    rate = wilson(count, n)
    if n == 0:
        assert rate.value is None and rate.low is None
        return
    low, high = proportion_confint(count, n, method="wilson")
    assert rate.value == count / n and math.isclose(rate.low, low) and math.isclose(rate.high, high)


@settings(max_examples=200)
@given(st.lists(st.tuples(st.sampled_from([True, False]), st.sampled_from([True, False])), min_size=1, max_size=40))
def test_kappa_matches_scikit_learn(pairs):
    first = [a for a, _ in pairs]
    second = [b for _, b in pairs]
    ours = cohen_kappa(first, second)
    if len(set(first) | set(second)) == 1:
        assert math.isnan(ours)  # p_e = 1: undefined (scikit-learn returns nan with a warning)
        return
    assert abs(ours - cohen_kappa_score(first, second)) < 1e-9


def test_kappa_three_labels_and_edge_cases():
    first = ["a", "b", "c", "a", "b", "c", "a"]
    second = ["a", "b", "b", "a", "c", "c", "b"]
    assert abs(cohen_kappa(first, second) - cohen_kappa_score(first, second)) < 1e-9
    assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 2])
