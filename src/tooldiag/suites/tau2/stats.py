"""Small pure statistics of the tau2 diagnostic: pass^k, Wilson intervals, Cohen's kappa."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: tau2 ``agent_metrics.is_successful``: a simulation passes when |reward - 1| <= 1e-6.
SUCCESS_TOLERANCE = 1e-6


def is_success(reward: float | None) -> bool:
    """tau2's success test; a missing reward is a failure."""
    return reward is not None and abs(reward - 1.0) <= SUCCESS_TOLERANCE


def pass_hat_k(num_trials: int, success_count: int, k: int) -> float:
    """pass^k of one task: C(c, k) / C(n, k) (Yao et al., arXiv 2406.12045; tau2
    ``metrics/agent_metrics.py::pass_hat_k``): the chance that k trials drawn without
    replacement all succeed."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if num_trials < k:
        raise ValueError(f"number of trials {num_trials} is less than k {k}")
    if not 0 <= success_count <= num_trials:
        raise ValueError(f"success count {success_count} outside 0..{num_trials}")
    return math.comb(success_count, k) / math.comb(num_trials, k)


def pass_hat_ks(outcomes: Mapping[str, Sequence[bool]]) -> dict[int, float]:
    """pass^k for k = 1..(fewest trials of any task), averaged over tasks, as tau2's
    ``get_tasks_pass_hat_k`` does (it lowers max k to the smallest trial count)."""
    counts = [(len(trials), sum(trials)) for trials in outcomes.values() if len(trials) > 0]
    if not counts:
        return {}
    max_k = min(n for n, _ in counts)
    return {k: sum(pass_hat_k(n, c, k) for n, c in counts) / len(counts) for k in range(1, max_k + 1)}


@dataclass(frozen=True)
class Proportion:
    """A share with its 95 % Wilson score interval."""

    count: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    @property
    def percent(self) -> float | None:
        return None if self.value is None else 100.0 * self.value


def wilson(count: int, n: int, confidence: float = 0.95) -> Proportion:
    """``count / n`` with a Wilson score interval (tooldiag.metrics.intervals, i.e.
    statsmodels ``proportion_confint(method="wilson")``); all ``None`` when ``n == 0``."""
    if n == 0:
        return Proportion(count, n, None, None, None)
    if not 0 <= count <= n:
        raise ValueError(f"count {count} outside 0..{n}")
    from tooldiag.metrics.intervals import wilson_interval

    low, high = wilson_interval(count, n, confidence)  # type: ignore[misc]
    return Proportion(count, n, count / n, low, high)


def cohen_kappa(first: Sequence[object], second: Sequence[object]) -> float:
    """Cohen's kappa of two raters over the same items: (p_o - p_e) / (1 - p_e).

    NaN when undefined (no items, or both raters constant on the same single label, so
    p_e = 1); matches scikit-learn's ``cohen_kappa_score`` otherwise.
    """
    if len(first) != len(second):
        raise ValueError("both raters must label the same items")
    n = len(first)
    if n == 0:
        return math.nan
    labels = sorted(set(first) | set(second), key=repr)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    expected = sum((list(first).count(label) / n) * (list(second).count(label) / n) for label in labels)
    if math.isclose(expected, 1.0):
        return math.nan
    return (observed - expected) / (1.0 - expected)


def mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None
