"""Grading equals BFCL's own checker, case by case, and is repeatable in one process."""

import json
import random
import subprocess
import sys

import pytest

from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.decode import convert_to_function_call
from tooldiag.suites.bfcl.grader import grade_decoded, grade_result


@pytest.fixture(scope="module")
def cases():
    return load_cases()


def gt_decoded(case):
    return [[turn] if turn else [] for turn in case.ground_truth]


def test_ground_truth_passes_all_800(cases):
    failures = [c.id for c in cases if not grade_decoded(c, gt_decoded(c)).passed]
    assert failures == []


def perturb(case, rng):
    """A plausible wrong trajectory: drop, duplicate, reorder or corrupt calls."""
    turns = []
    for turn in case.ground_truth:
        calls = list(turn)
        kind = rng.random()
        if calls and kind < 0.15:
            calls.pop(rng.randrange(len(calls)))
        elif calls and kind < 0.25:
            calls.append(calls[0])
        elif len(calls) > 1 and kind < 0.35:
            rng.shuffle(calls)
        elif calls and kind < 0.42:
            calls[0] = calls[0].replace("'", "'x", 1)
        elif not calls and kind < 0.6:
            calls = ["ls()"] if "GorillaFileSystem" in case.involved_classes else []
        turns.append([calls] if calls else [])
    return turns


BFCL_SCRIPT = r"""
import json, sys
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
payload = json.load(sys.stdin)
out = {}
for item in payload:  # sequentially, one model name for the run, as bfcl evaluate does
    r = multi_turn_checker(item["decoded"], item["ground_truth"], item["entry"], item["category"], "bfcl_reference_run")
    out[item["entry"]["id"]] = [bool(r["valid"]), r.get("error_type")]
json.dump(out, sys.stdout)
"""


def test_grades_equal_bfcl_separate_process_grading(cases):
    rng = random.Random(7)
    sample = [c for c in cases if int(c.id.rsplit("_", 1)[1]) % 5 == 0]
    payload = [
        {
            "entry": c.entry,
            "ground_truth": c.ground_truth,
            "category": f"multi_turn_{c.category}",
            "decoded": perturb(c, rng),
        }
        for c in sample
    ]
    proc = subprocess.run(
        [sys.executable, "-c", BFCL_SCRIPT], input=json.dumps(payload), capture_output=True, text=True, check=True
    )
    theirs = json.loads(proc.stdout)
    by_id = {c.id: c for c in sample}
    ours = {}
    for item in payload:
        grade = grade_decoded(by_id[item["entry"]["id"]], item["decoded"])
        ours[item["entry"]["id"]] = [grade.passed, grade.error_type]
    assert ours == theirs
    outcomes = {tuple(v) for v in ours.values()}
    # the sample exercises passes and every checker failure type
    assert (True, None) in outcomes
    assert {e for _, e in outcomes} >= {
        "multi_turn:instance_state_mismatch",
        "multi_turn:execution_response_mismatch",
        "multi_turn:empty_turn_model_response",
    }


def test_regrading_in_one_process_is_identical(cases):
    rng = random.Random(3)
    sample = [c for c in cases if int(c.id.rsplit("_", 1)[1]) % 17 == 0]
    trajectories = {c.id: perturb(c, rng) for c in sample}
    first = {c.id: grade_decoded(c, trajectories[c.id]).model_dump() for c in sample}
    second = {c.id: grade_decoded(c, trajectories[c.id]).model_dump() for c in sample}
    assert first == second


def test_pre_checks(cases):
    case = cases[0]
    grade, _ = grade_result(case, "Error during inference: boom", convert_to_function_call)
    assert grade.error_type == "multi_turn:inference_error" and not grade.passed
    grade, _ = grade_result(case, [[]] * (len(case.ground_truth) - 1), convert_to_function_call)
    assert grade.error_type == "multi_turn:force_terminated"
    # undecodable and empty steps are dropped, not fatal
    steps = [
        [{"cd": "not json"}, "some text", [], [{name: json.dumps(args)} for name, args in ()]]
        for _ in case.ground_truth
    ]
    grade, decoded = grade_result(case, steps, convert_to_function_call)
    assert decoded == [[] for _ in case.ground_truth]
    assert grade.error_type == "multi_turn:empty_turn_model_response"
