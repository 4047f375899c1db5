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
    """``count / n`` with a Wilson score interval (:mod:`tooldiag.metrics.intervals`: the
    figures of statsmodels ``proportion_confint(method="wilson")``); all ``None`` when ``n == 0``."""
    if n == 0:
        return Proportion(count, n, None, None, None)
    if not 0 <= count <= n:
        raise ValueError(f"count {count} outside 0..{n}")
    from tooldiag.metrics.intervals import wilson_interval

    low, high = wilson_interval(count, n, confidence)  # type: ignore[misc]
    return Proportion(count, n, count / n, low, high)


def cohen_kappa(first: Sequence[object], second: Sequence[object]) -> float:
    """Cohen's kappa of two raters over the same items (:func:`tooldiag.metrics.agreement.cohen_kappa`).

    NaN when undefined, as scikit-learn's ``cohen_kappa_score``: no items, or both raters
    constant on one and the same label (p_e = 1; the shared function calls that 1.0).
    """
    from tooldiag.metrics.agreement import cohen_kappa as pair_kappa

    kappa = pair_kappa(list(first), list(second)).kappa
    return math.nan if len(set(first) | set(second)) == 1 else kappa


def mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None
