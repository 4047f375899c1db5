"""Case verdicts: the evidence rows behind Acc > GAR and GAR >> Acc."""

from __future__ import annotations

import pytest

from tooldiag.classify.classes import ActionClass as A
from tooldiag.metrics.cases import VERDICTS, Verdict, case_row, case_verdict, gold_hit, verdict_counts
from tooldiag.metrics.gar import CaseObservation


def obs(gold=A.REFUSE, passed=True, turns=(), gold_turns=None, errored=False, emissions=None):
    return CaseObservation(
        case_id="c",
        category="miss_func",
        gold=gold,
        passed=passed,
        turns=tuple(frozenset(t) for t in turns),
        gold_turns=gold_turns,
        errored=errored,
        emissions=emissions,
    )


@pytest.mark.parametrize(
    ("passed", "turns", "expected"),
    [
        (True, [{A.TOOL_CALL}, {A.TOOL_CALL}], Verdict.MASKED),
        (True, [{A.TOOL_CALL}, {A.REFUSE}], Verdict.OK),
        (False, [{A.TOOL_CALL}, {A.REFUSE}], Verdict.EXECUTION_FAILURE),
        (False, [{A.TOOL_CALL}, set()], Verdict.FAIL),
        (None, [{A.REFUSE}], Verdict.UNGRADED),
    ],
)
def test_verdict_of_each_combination(passed, turns, expected):
    assert case_verdict(obs(passed=passed, turns=turns)) is expected


def test_gold_hit_reads_only_the_gold_turns():
    # the refusal came at turn 0, but the function went missing at turn 1
    case = obs(turns=[{A.REFUSE}, {A.TOOL_CALL}], gold_turns=(1,))
    assert not gold_hit(case)
    assert case_verdict(case) is Verdict.MASKED
    assert gold_hit(obs(turns=[{A.TOOL_CALL}, {A.REFUSE}], gold_turns=(1,)))
    # a gold turn the case never reached is no hit
    assert not gold_hit(obs(turns=[{A.REFUSE}], gold_turns=(3,)))


def test_errored_case_is_ungraded_even_with_a_verdict():
    row = case_row(obs(passed=True, turns=[{A.REFUSE}], errored=True), run="m")
    assert row.verdict is Verdict.UNGRADED and row.passed is None and row.errored


def test_row_keeps_every_emission_in_order_other_included():
    case = obs(turns=[{A.TOOL_CALL}], emissions=((A.TOOL_CALL, A.OTHER, A.TOOL_CALL),))
    row = case_row(case, run="m")
    assert row.classes == (("tool_call", "other", "tool_call"),)
    assert row.to_json()["classes"] == [["tool_call", "other", "tool_call"]]
    assert row.to_json()["verdict"] == "masked"


def test_row_without_emissions_falls_back_to_the_turn_sets():
    row = case_row(obs(turns=[{A.REFUSE, A.TOOL_CALL}]))
    assert row.classes == (("tool_call", "refuse"),)


def test_counts_name_every_verdict():
    rows = [case_row(obs(passed=True, turns=[{A.TOOL_CALL}])), case_row(obs(passed=False, turns=[set()]))]
    counts = verdict_counts(rows)
    assert list(counts) == list(VERDICTS)
    assert counts["masked"] == 1 and counts["fail"] == 1 and counts["ok"] == 0
