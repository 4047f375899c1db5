"""Hostile tool calls: results too large for text, calls over budget, arguments BFCL cannot decode.

Expectations come from BFCL itself (its executor and decoder, run on the same call
strings) or from an equivalent well-behaved run, never from the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tooldiag.models.base import ModelOptions
from tooldiag.store import RunStore
from tooldiag.suites.bfcl.budget import BudgetedSession, ExecutionBudget
from tooldiag.suites.bfcl.decode import DecodeError, convert_to_function_call
from tooldiag.suites.bfcl.executor import BackendSession
from tooldiag.suites.bfcl.importer import import_bfcl_results
from tooldiag.suites.bfcl.runner import run_bfcl
from tooldiag.testing.fake_openai import FakeOpenAIServer, Reply

MATH_CASES = ["multi_turn_base_31", "multi_turn_base_32"]  # GorillaFileSystem + MathAPI, two turns each
BIG_POWER = '{"base": 10, "exponent": 5000}'  # 10**5000: 5001 digits, past Python's 4300-digit str limit

BFCL_EXECUTE = r"""
import json, sys
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call
calls, classes = json.load(sys.stdin)
print(json.dumps(execute_multi_turn_func_call(calls, {}, classes, "bfcl_ref", "multi_turn_base_31")[0]))
"""


def bfcl_results(calls: list[str], classes: list[str]) -> list[str]:
    """BFCL's own (eval-based) executor on our fixed call strings, in a separate process."""
    proc = subprocess.run(
        [sys.executable, "-c", BFCL_EXECUTE],
        input=json.dumps([calls, classes]),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def calling(name: str, raw_arguments: str):
    """A model that makes one call per turn, then closes the turn with text."""

    def respond(request):
        if request.body["messages"][-1]["role"] == "tool":
            return Reply.say("Done.")
        return Reply.call((name, raw_arguments))

    return respond


def run_with(tmp_path, responder, ids=MATH_CASES, name="run"):
    with FakeOpenAIServer(responder=responder) as server:
        options = ModelOptions(base_url=server.base_url, cache=False)
        summary = run_bfcl("openai/fake", tmp_path / name, ids=ids, options=options)
    return summary, RunStore.open(tmp_path / name)


# -- defect 7: a result BFCL turns into an error string ----------------------------------
def test_result_too_large_for_text_is_bfcls_own_error_string():
    calls = ["power(base=10, exponent=5000)", "power(base=2, exponent=10)"]
    ours, _ = BackendSession().execute(calls, {}, ["MathAPI"], "bfcl_ref", "multi_turn_base_31")
    assert ours == bfcl_results(calls, ["MathAPI"])
    assert ours[0].startswith("Error during execution: Exceeds the limit (4300 digits)")


def test_run_of_a_model_that_always_calls_a_huge_power_grades_every_case(tmp_path):
    summary, store = run_with(tmp_path, calling("power", BIG_POWER))
    expected = bfcl_results(["power(base=10,exponent=5000)"], ["MathAPI"])[0]
    assert summary.errors == [] and summary.counts["base"]["done"] == len(MATH_CASES)
    for case_id in MATH_CASES:
        record = store.get_case(case_id)
        assert record.grade is not None
        assert record.trajectory.turns[0].steps[0].tool_results == [expected]
    store.close()


def write_result_file(folder, rows):
    target = folder / "multi_turn"
    target.mkdir(parents=True)
    with open(target / "BFCL_v4_multi_turn_base_result.json", "w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")


def test_import_of_results_with_a_huge_power_grades_every_case(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLDIAG_BFCL_CPU_S", "1")
    huge = [[{"power": BIG_POWER}], "Done."]
    endless = [[{"power": '{"base": 9, "exponent": 387420489}'}], "Done."]  # 9**9**9: minutes of CPU
    write_result_file(
        tmp_path / "in",
        [{"id": MATH_CASES[0], "result": [huge, huge]}, {"id": MATH_CASES[1], "result": [endless, huge]}],
    )
    summary = import_bfcl_results(tmp_path / "in", "hostile", tmp_path / "run")
    assert summary.errors == []
    with RunStore.open(tmp_path / "run") as store:
        grades = [store.get_case(case_id).grade for case_id in MATH_CASES]
    assert all(grade is not None and grade.passed is False for grade in grades)


# -- defect 8: a CPU and memory budget for every call ------------------------------------
def test_calls_over_budget_end_as_execution_errors_and_the_case_keeps_its_state():
    session = BudgetedSession(ExecutionBudget(cpu_seconds=1, memory_mb=256, wall_seconds=120))
    config = {"GorillaFileSystem": {"root": {"home": {"type": "directory", "contents": {}}}}}
    classes = ["GorillaFileSystem", "MathAPI"]
    calls = [
        "mkdir(dir_name='kept')",
        "power(base=10, exponent=1000000000000000)",  # 10**10**15 never finishes
        "square_root(number=2, precision=1000000000)",  # a billion digits
        "ls()",
        "add(a=1, b=2)",
    ]
    results, instances = session.execute(calls, config, classes, "m", "multi_turn_base_31")
    assert results[1].startswith("Error during execution: execution budget exceeded")
    assert results[2].startswith("Error during execution: execution budget exceeded")
    expected = BackendSession().execute([calls[0], calls[3], calls[4]], config, classes, "m", "multi_turn_base_31")[0]
    assert [results[0], results[3], results[4]] == expected
    assert "kept" in results[3] and "kept" in repr(vars(instances["GorillaFileSystem"]))


def test_within_budget_the_results_and_state_equal_in_process_execution():
    config = {"GorillaFileSystem": {"root": {"home": {"type": "directory", "contents": {}}}}}
    classes = ["GorillaFileSystem", "MathAPI"]
    calls = [
        "mkdir(dir_name='a')",
        "cd(folder='a')",
        "echo(content='x', file_name='f')",
        "ls()",
        "power(base=2, exponent=70)",
    ]
    budgeted, theirs = BudgetedSession(), BackendSession()
    for call in calls:
        ours_result, ours_instances = budgeted.execute([call], config, classes, "m", "multi_turn_base_31")
        ref_result, ref_instances = theirs.execute([call], config, classes, "m", "multi_turn_base_31")
        assert ours_result == ref_result
        assert repr(vars(ours_instances["GorillaFileSystem"])) == repr(vars(ref_instances["GorillaFileSystem"]))


# -- defect 10: what BFCL decodes and grades, we decode and grade ------------------------
def bfcl_convert(function_call_list):
    """BFCL's ``convert_to_function_call`` (``bfcl_eval/model_handler/utils.py``), copied
    verbatim: that module imports ``tree_sitter``, which is not installed here."""
    if type(function_call_list) == dict:  # noqa: E721
        function_call_list = [function_call_list]
    execution_list = []
    for function_call in function_call_list:
        for key, value in function_call.items():
            if type(value) == str:  # noqa: E721
                value = json.loads(value)
            execution_list.append(f"{key}({','.join([f'{k}={v!r}' for k, v in value.items()])})")
    return execution_list


def _bfcl_decode(step):
    try:
        return bfcl_convert(step)
    except Exception as exc:  # noqa: BLE001 - what BFCL's handler catches
        return type(exc)


HOSTILE_ARGUMENTS = {
    "5000-digit integer": '{"a": ' + "7" * 5000 + ', "b": 1}',
    "nested 500 deep": '{"a": ' + "[" * 500 + "]" * 500 + ', "b": 1}',
    "nested 3000 deep": '{"a": ' + "[" * 3000 + "]" * 3000 + ', "b": 1}',
    "nested dicts 300 deep": '{"a": ' + '{"k": ' * 300 + "1" + "}" * 300 + "}",
}


@pytest.mark.parametrize("label", sorted(HOSTILE_ARGUMENTS))
def test_decode_fails_exactly_where_bfcls_decode_fails(label):
    step = [{"add": HOSTILE_ARGUMENTS[label]}]
    theirs = _bfcl_decode(step)
    if isinstance(theirs, type):
        with pytest.raises(DecodeError):
            convert_to_function_call(step)
    else:
        assert convert_to_function_call(step) == theirs


@pytest.mark.parametrize("label", sorted(HOSTILE_ARGUMENTS))
def test_hostile_arguments_are_graded_as_bfcl_grades_them(tmp_path, label):
    raw = HOSTILE_ARGUMENTS[label]
    summary, store = run_with(tmp_path, calling("add", raw), ids=MATH_CASES[:1])
    assert summary.errors == [] and summary.counts["base"]["done"] == 1
    step = store.get_case(MATH_CASES[0]).trajectory.turns[0].steps[0]
    assert step.emission.tool_calls[0].raw_arguments == raw
    theirs = _bfcl_decode([{"add": raw}])
    if isinstance(theirs, type):  # BFCL's decode raises: the step ends the turn, like a text reply
        assert step.decode_error and step.tool_results == []
        _, text_store = run_with(tmp_path, lambda request: Reply.say("Done."), ids=MATH_CASES[:1], name="text")
        assert store.get_case(MATH_CASES[0]).grade == text_store.get_case(MATH_CASES[0]).grade
        text_store.close()
    else:  # BFCL executes the decoded call: the same result string
        assert step.tool_results == bfcl_results(theirs, ["GorillaFileSystem", "MathAPI"])
    store.close()
