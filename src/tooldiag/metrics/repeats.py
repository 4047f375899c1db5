"""Repeated runs (``--repeats K``): is a category's number a property of the model or of one draw?

One run scores each case once, and its Wilson interval treats the cases as the only source of
noise. With K draws per case the same questions get answers from the draws themselves
(docs/diagnostic.md, "Repeats and flip rates"; pure functions, no suite):

* per category and draw r, Acc_r and GAR_r (:func:`~tooldiag.metrics.gar.summarize_category`
  on the draw's cases); their mean over draws, the sample standard deviation (n - 1) and the
  min-max range;
* pass^k as tau2-bench defines it: per case with n graded draws of which c succeed,
  C(c, k) / C(n, k) (the chance that k draws taken without replacement all succeed), averaged
  over the cases with n >= k, for k = 1..K; pass^1 is the mean success rate;
* the flip rate: the share of cases (with at least two graded draws) whose outcome is not the
  same in every draw; for Acc the outcome is the grader's ``passed``, for GAR it is Eq. 1's
  indicator (the gold class emitted at any turn, :func:`~tooldiag.metrics.gar.emitted_gold`);
* the noise floor of Delta = GAR - Acc: ``noise_sds`` (default 2) times the standard deviation
  of the per-draw Delta_r. A masking / execution-failure / bound-violation flag *survives* when
  the mean Delta passes its threshold by more than that floor (:func:`surviving_flags`); with
  a floor of 0 (every draw alike) the rule is exactly the one-run rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tooldiag.classify.classes import ActionClass
from tooldiag.metrics.gar import (
    FLAG_BOUND_VIOLATION,
    FLAG_EXECUTION_FAILURE,
    FLAG_MASKING,
    CaseObservation,
    Thresholds,
    calibration_flags,
    emitted_gold,
    summarize_category,
)

#: The noise floor in standard deviations of the per-draw Delta (module docstring).
NOISE_SDS = 2.0


@dataclass(frozen=True)
class Spread:
    """One number over the draws: each draw's value, their mean, sample sd and range."""

    values: tuple[float, ...]
    mean: float | None
    sd: float | None
    low: float | None
    high: float | None


def spread(values: Sequence[float | None]) -> Spread:
    """The :class:`Spread` of the known ``values`` (``None``: the draw had no such number);
    ``sd`` needs two values and is the sample standard deviation (divisor n - 1)."""
    known = tuple(float(value) for value in values if value is not None)
    if not known:
        return Spread((), None, None, None, None)
    mean = sum(known) / len(known)
    sd = math.sqrt(sum((value - mean) ** 2 for value in known) / (len(known) - 1)) if len(known) > 1 else None
    return Spread(known, mean, sd, min(known), max(known))


def pass_hat_k(outcomes: Sequence[Sequence[bool]], k: int) -> float | None:
    """tau2's pass^k in 0..1: mean over cases with ``n >= k`` draws of ``C(c, k) / C(n, k)``."""
    eligible = [case for case in outcomes if len(case) >= k]
    if not eligible or k < 1:
        return None
    return sum(math.comb(sum(case), k) / math.comb(len(case), k) for case in eligible) / len(eligible)


def flip_count(outcomes: Sequence[Sequence[bool]]) -> tuple[int, int]:
    """``(flips, n)``: cases with two or more draws, and those among them not alike in every draw."""
    eligible = [case for case in outcomes if len(case) >= 2]
    return sum(1 for case in eligible if len(set(case)) > 1), len(eligible)


def surviving_flags(
    gold: ActionClass,
    delta_mean: float | None,
    noise_floor: float | None,
    thresholds: Thresholds = Thresholds(),
) -> list[str]:
    """The calibration flags of the mean Delta that pass their threshold by more than
    ``noise_floor`` pp (``None``: no floor known, fewer than two draws: no flag survives)."""
    if delta_mean is None or noise_floor is None:
        return []
    flags = []
    if delta_mean < -noise_floor - 1e-9:
        flags.append(FLAG_BOUND_VIOLATION)
    if gold is ActionClass.TOOL_CALL:
        if delta_mean >= thresholds.execution_failure_pp + noise_floor - 1e-9:
            flags.append(FLAG_EXECUTION_FAILURE)
    elif delta_mean <= thresholds.masking_pp - noise_floor + 1e-9:
        flags.append(FLAG_MASKING)
    return flags


@dataclass(frozen=True)
class RepeatSummary:
    """The repeats section of one category (percentages and pp on 0..100)."""

    category: str
    gold: ActionClass
    #: K: the most draws any case of the category holds.
    repeats: int
    #: Cases with at least one draw.
    n_cases: int
    acc: Spread
    gar: Spread
    delta: Spread
    #: pass^k for k = 1..K, in %, on the grader's verdict and on the GAR indicator.
    pass_k_acc: tuple[float | None, ...]
    pass_k_gar: tuple[float | None, ...]
    flips_acc: int
    flip_n_acc: int
    flips_gar: int
    flip_n_gar: int
    #: ``noise_sds`` x sd of the per-draw Delta (pp); ``None`` with fewer than two draws.
    noise_floor: float | None
    #: The calibration flags of the mean profile, and those that survive the noise floor.
    flags: tuple[str, ...]
    surviving: tuple[str, ...]

    @property
    def flip_rate_acc(self) -> float | None:
        return 100.0 * self.flips_acc / self.flip_n_acc if self.flip_n_acc else None

    @property
    def flip_rate_gar(self) -> float | None:
        return 100.0 * self.flips_gar / self.flip_n_gar if self.flip_n_gar else None


def _pct(values: tuple[float | None, ...]) -> tuple[float | None, ...]:
    return tuple(None if value is None else 100.0 * value for value in values)


def summarize_repeats(
    category: str,
    draws: Mapping[int, Sequence[CaseObservation]],
    *,
    text_channel: bool = True,
    thresholds: Thresholds = Thresholds(),
    noise_sds: float = NOISE_SDS,
) -> RepeatSummary:
    """The repeats summary of one category from its cases per draw (``draws[sample]``).

    Errored draws (infrastructure errors) count in no rate; a case's outcomes are its graded
    draws. Without a text channel GAR of a non-tool_call gold is not measured: its spread,
    pass^k and flip rate stay empty, as in the one-run table.
    """
    per_draw = {
        sample: summarize_category(category, cases, text_channel=text_channel, thresholds=thresholds)
        for sample, cases in sorted(draws.items())
        if cases
    }
    gold = next(iter(per_draw.values())).gold if per_draw else ActionClass.OTHER
    acc_outcomes: dict[str, list[bool]] = {}
    gar_outcomes: dict[str, list[bool]] = {}
    counts: dict[str, int] = {}
    for cases in draws.values():
        for case in cases:
            counts[case.case_id] = counts.get(case.case_id, 0) + 1
            if case.errored:
                continue
            gar_outcomes.setdefault(case.case_id, []).append(emitted_gold(case))
            if case.passed is not None:
                acc_outcomes.setdefault(case.case_id, []).append(case.passed)
    measurable = text_channel or gold is ActionClass.TOOL_CALL
    if not measurable:
        gar_outcomes = {}
    repeats = max(counts.values(), default=0)
    delta = spread([summary.delta_pp for summary in per_draw.values()])
    floor = None if delta.sd is None else noise_sds * delta.sd
    acc = spread([summary.acc for summary in per_draw.values()])
    gar = spread([summary.gar for summary in per_draw.values()])
    flips_acc, flip_n_acc = flip_count(list(acc_outcomes.values()))
    flips_gar, flip_n_gar = flip_count(list(gar_outcomes.values()))
    return RepeatSummary(
        category=category,
        gold=gold,
        repeats=repeats,
        n_cases=len(counts),
        acc=acc,
        gar=gar,
        delta=delta,
        pass_k_acc=_pct(tuple(pass_hat_k(list(acc_outcomes.values()), k) for k in range(1, repeats + 1))),
        pass_k_gar=_pct(tuple(pass_hat_k(list(gar_outcomes.values()), k) for k in range(1, repeats + 1))),
        flips_acc=flips_acc,
        flip_n_acc=flip_n_acc,
        flips_gar=flips_gar,
        flip_n_gar=flip_n_gar,
        noise_floor=floor,
        flags=tuple(calibration_flags(gold, gar.mean, acc.mean, thresholds)),
        surviving=tuple(surviving_flags(gold, delta.mean, floor, thresholds)),
    )
