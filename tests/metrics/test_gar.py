"""GAR, Acc, Delta, flags, Wilson intervals and capability counts (paper 001 §3.2, App. A, App. E)."""

import pytest

from tooldiag.classify import ActionClass
from tooldiag.metrics import (
    CaseObservation,
    Thresholds,
    accuracy,
    calibration_flags,
    capability_counts,
    case_gar,
    overall_accuracy,
    summarize_category,
    turn_gar,
    wilson_interval_pct,
)

TC, ASK, REFUSE, CONFIRM = ActionClass.TOOL_CALL, ActionClass.ASK, ActionClass.REFUSE, ActionClass.CONFIRM


def case(gold, turns, passed=True, gold_turns=None, category=None, errored=False, case_id="c"):
    return CaseObservation(
        case_id=case_id,
        category=category or gold.value,
        gold=gold,
        passed=passed,
        turns=tuple(frozenset(t) for t in turns),
        gold_turns=gold_turns,
        errored=errored,
    )


def cells(gold, n, hits, passed, category="cat"):
    """n cases, the first ``hits`` emit the gold class, the first ``passed`` pass."""
    other = TC if gold is not TC else ASK
    return [
        case(gold, [{gold if i < hits else other}], passed=i < passed, category=category, case_id=str(i))
        for i in range(n)
    ]


def test_case_gar_is_any_turn():
    cases = [case(REFUSE, [{TC}, {TC}, {REFUSE}]), case(REFUSE, [{TC}, {TC}]), case(REFUSE, [{TC, REFUSE}])]
    assert case_gar(cases) == (2, 3)


def test_turn_gar_averages_per_case_rates_over_gold_turns():
    cases = [
        case(ASK, [{ASK}, {TC}, {TC}, {ASK}], gold_turns=(0, 1)),  # 1 of 2 gold turns
        case(ASK, [{TC}, {ASK}], gold_turns=(1,)),  # 1 of 1
        case(ASK, [{TC}], gold_turns=(0, 3)),  # turn 3 never reached: 0 of 2
        case(ASK, [{ASK}], gold_turns=()),  # no gold turn: left out
    ]
    rate, n = turn_gar(cases)
    assert n == 3 and rate == pytest.approx((0.5 + 1.0 + 0.0) / 3)


def test_accuracy_skips_ungraded_and_overall_is_unweighted_mean():
    assert accuracy([case(ASK, [], passed=True), case(ASK, [], passed=None), case(ASK, [], passed=False)]) == (1, 2)
    assert overall_accuracy([18.0, 12.5, 15.5, 16.0]) == pytest.approx(15.5)  # Qwen3-1.7B row of Table 1
    assert overall_accuracy([None, 50.0]) == 50.0 and overall_accuracy([]) is None


@pytest.mark.parametrize(
    "gold, gar, acc, expected",
    [
        (REFUSE, 3.5, 42.0, ["bound_violation", "masking"]),  # gpt-oss-20b miss_func
        (REFUSE, 40.0, 41.0, ["bound_violation"]),  # Qwen3-8B miss_func: -1.0 pp, no masking
        (ASK, 50.0, 65.0, ["bound_violation", "masking"]),  # exactly -15 pp is masking
        (ASK, 50.0, 64.9, ["bound_violation"]),
        (TC, 98.5, 18.0, ["execution_failure"]),  # Qwen3-1.7B base: +80.5
        (TC, 100.0, 40.0, ["execution_failure"]),  # exactly +60 pp
        (TC, 99.5, 48.5, []),  # +51.0
        (TC, 50.0, 80.0, ["bound_violation"]),  # masking is only for non-tool_call gold
        (ASK, 90.0, 10.0, []),  # execution failure is only for tool_call gold
        (ASK, None, 10.0, []),
    ],
)
def test_flags(gold, gar, acc, expected):
    assert calibration_flags(gold, gar, acc) == expected


def test_thresholds_are_configurable():
    strict = Thresholds(masking_pp=-5.0, execution_failure_pp=40.0)
    assert calibration_flags(REFUSE, 40.0, 46.0, strict) == ["bound_violation", "masking"]
    assert calibration_flags(TC, 100.0, 55.0, strict) == ["execution_failure"]


def test_wilson_matches_paper_table_14():
    assert [round(x, 1) for x in wilson_interval_pct(80, 200)] == [33.5, 46.9]  # Qwen3-8B miss_func case GAR 40.0
    assert [round(x, 1) for x in wilson_interval_pct(0.365 * 200, 200)] == [30.1, 43.4]  # turn GAR 36.5
    assert [round(x, 1) for x in wilson_interval_pct(0, 200)] == [0.0, 1.9]
    assert [round(x, 1) for x in wilson_interval_pct(1, 200)] == [0.1, 2.8]
    assert wilson_interval_pct(0, 0) is None


def test_summarize_reproduces_a_table_1_cell():
    summary = summarize_category("miss_func", cells(REFUSE, 200, hits=7, passed=84, category="miss_func"))
    assert (summary.n, summary.gar, summary.acc) == (200, 3.5, 42.0)
    assert summary.delta_pp == pytest.approx(-38.5)
    assert summary.flags == ("bound_violation", "masking")
    assert [round(x, 1) for x in summary.gar_ci] == [1.7, 7.0]  # Table 14, gpt-oss-20b miss_func


def test_no_text_channel_makes_ask_refuse_gar_not_computable():
    cases = cells(ASK, 10, hits=0, passed=6)
    summary = summarize_category("miss_param", cases, text_channel=False)
    assert summary.gar is None and summary.gar_ci is None and summary.delta_pp is None and summary.turn_gar is None
    assert summary.flags == ("gar_not_computable",)  # never a bound violation
    assert summary.acc == 60.0
    tool = summarize_category("base", cells(TC, 10, hits=10, passed=3), text_channel=False)
    assert tool.gar == 100.0 and "execution_failure" in tool.flags


def test_errored_cases_are_excluded_and_flagged():
    cases = [*cells(TC, 4, hits=4, passed=2), case(TC, [], passed=None, errored=True, category="cat")]
    summary = summarize_category("cat", cases)
    assert (summary.n, summary.gar, summary.acc, summary.n_errors) == (4, 100.0, 50.0, 1)
    assert "errors_excluded" in summary.flags


def test_a_category_has_one_gold():
    with pytest.raises(ValueError, match="mixes gold classes"):
        summarize_category("x", [case(ASK, [], category="x"), case(REFUSE, [], category="x")])


def test_capability_counts_are_per_case():
    cases = [case(TC, [{TC}, {TC, ASK}]) for _ in range(10)] + [case(REFUSE, [{REFUSE}], errored=True)]
    counts = capability_counts(cases)
    assert counts.n == 10
    assert counts.counts == {TC: 10, REFUSE: 0, ASK: 10, CONFIRM: 0}
    assert counts.capable(TC) and counts.capable(ASK) and not counts.capable(REFUSE)
    assert capability_counts(cases, Thresholds(t_cap=11)).below_threshold == [TC, ASK, REFUSE, CONFIRM]
