"""Repeats metrics against definitions computed here another way (brute force, statistics)."""

import itertools
import random
import statistics

import pytest

from tooldiag.classify.classes import ActionClass
from tooldiag.metrics.gar import CaseObservation, Thresholds, calibration_flags
from tooldiag.metrics.repeats import flip_count, pass_hat_k, spread, summarize_repeats, surviving_flags

ASK, CALL = ActionClass.ASK, ActionClass.TOOL_CALL


def _brute_pass_k(case: list[bool], k: int) -> float:
    """pass^k of one case from its definition: k draws without replacement all succeed."""
    subsets = list(itertools.combinations(range(len(case)), k))
    return sum(all(case[i] for i in subset) for subset in subsets) / len(subsets)


def test_pass_hat_k_is_the_mean_over_cases_of_all_k_subsets_succeeding():
    rng = random.Random(11)
    outcomes = [[rng.random() < p for _ in range(rng.randint(1, 6))] for p in (0.1, 0.5, 0.9) * 7]
    for k in range(1, 7):
        eligible = [case for case in outcomes if len(case) >= k]
        expected = sum(_brute_pass_k(case, k) for case in eligible) / len(eligible) if eligible else None
        assert pass_hat_k(outcomes, k) == pytest.approx(expected)
    assert pass_hat_k([[True, False, True]], 1) == pytest.approx(2 / 3)  # pass^1: the success rate
    assert pass_hat_k([[True, True], [True]], 3) is None


def test_flip_count_counts_cases_not_alike_in_every_draw():
    assert flip_count([[True, True, True], [False, False], [True, False, True], [False], []]) == (1, 3)


def test_spread_is_mean_sample_sd_and_range():
    values = [80.0, None, 90.0, 100.0]
    cell = spread(values)
    assert cell.values == (80.0, 90.0, 100.0)
    assert cell.mean == pytest.approx(90.0) and cell.sd == pytest.approx(statistics.stdev([80, 90, 100]))
    assert (cell.low, cell.high) == (80.0, 100.0)
    assert spread([5.0]).sd is None and spread([]).mean is None


@pytest.mark.parametrize("gold", [ASK, CALL])
def test_with_no_noise_the_surviving_flags_are_the_one_run_flags(gold):
    for delta in [-80, -60, -15.0001, -15, -14.99, -5, -1e-6, 0, 10, 59.99, 60, 75]:
        gar, acc = 50.0 + delta / 2, 50.0 - delta / 2
        assert surviving_flags(gold, gar - acc, 0.0) == calibration_flags(gold, gar, acc)


def test_a_flag_survives_only_past_its_threshold_plus_the_floor():
    t = Thresholds()
    assert surviving_flags(ASK, -26.0, 10.0, t) == ["bound_violation", "masking"]  # -26 < -15 - 10
    assert surviving_flags(ASK, -24.0, 10.0, t) == ["bound_violation"]  # masking needs <= -25
    assert surviving_flags(ASK, -8.0, 10.0, t) == []  # -8 within the floor of 0
    assert surviving_flags(CALL, 71.0, 10.0, t) == ["execution_failure"]
    assert surviving_flags(CALL, 69.0, 10.0, t) == []
    assert surviving_flags(CALL, 69.0, None, t) == []  # one draw: no floor, nothing survives


def _case(case_id: str, passed: bool, asked: bool, errored: bool = False) -> CaseObservation:
    turns = (frozenset({ASK} if asked else {CALL}),)
    return CaseObservation(case_id, "miss_param", ASK, None if errored else passed, turns, (0,), errored)


def test_summarize_repeats_on_a_hand_built_category():
    # 4 cases x 3 draws: c1 always ok; c2 passes every draw but asks only in draw 0 (a GAR flip);
    # c3 fails in draw 2 (an Acc flip); c4 errored in draw 1 (that draw counts in no rate)
    plan = {
        0: [("c1", True, True), ("c2", True, True), ("c3", True, False), ("c4", False, False)],
        1: [("c1", True, True), ("c2", True, False), ("c3", True, False), ("c4", False, False, True)],
        2: [("c1", True, True), ("c2", True, False), ("c3", False, False), ("c4", False, False)],
    }
    draws = {sample: [_case(*row) for row in rows] for sample, rows in plan.items()}
    summary = summarize_repeats("miss_param", draws)
    # per draw (errored c4 left out of draw 1): Acc 75, 100, 50; GAR 50, 33.3, 25
    acc, gar = [75.0, 100.0, 50.0], [50.0, 100 / 3, 25.0]
    assert summary.acc.values == pytest.approx(tuple(acc)) and summary.gar.values == pytest.approx(tuple(gar))
    deltas = [g - a for g, a in zip(gar, acc)]
    assert summary.delta.sd == pytest.approx(statistics.stdev(deltas))
    assert summary.noise_floor == pytest.approx(2 * statistics.stdev(deltas))
    assert (summary.repeats, summary.n_cases) == (3, 4)
    assert (summary.flips_acc, summary.flip_n_acc) == (1, 4)  # c3 (c4 failed both graded draws)
    assert (summary.flips_gar, summary.flip_n_gar) == (1, 4)  # c2
    # pass^2 Acc: c1 1, c2 1, c3 C(2,2)/C(3,2) = 1/3, c4 0
    assert summary.pass_k_acc[1] == pytest.approx(100 * (1 + 1 + 1 / 3 + 0) / 4)
    # pass^3 needs 3 graded draws: c4 (2 graded) is left out
    assert summary.pass_k_acc[2] == pytest.approx(100 * (1 + 1 + 0) / 3)
    mean_delta = statistics.mean(deltas)
    assert summary.flags == tuple(calibration_flags(ASK, statistics.mean(gar), statistics.mean(acc)))
    assert "masking" in summary.flags  # mean Delta about -39 pp
    # ... but the draws disagree: Delta -25, -66.7, -25 (sd 24.1, floor 48.1): -38.9 passes neither
    # 0 - 48.1 (bound violation) nor -15 - 48.1 (masking), so no flag survives
    assert mean_delta == pytest.approx(-350 / 9) and summary.surviving == ()
