"""The executor never runs model-produced code, and matches BFCL's results otherwise."""

import json
import subprocess
import sys

import pytest

from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.decode import DecodeError, convert_to_function_call
from tooldiag.suites.bfcl.executor import BackendSession

FS_CONFIG = {
    "GorillaFileSystem": {
        "root": {
            "home": {
                "type": "directory",
                "contents": {"alex": {"type": "directory", "contents": {"doc.txt": {"type": "file", "content": "hi"}}}},
            }
        }
    }
}


def run(calls, config=FS_CONFIG, classes=("GorillaFileSystem",), session=None):
    session = session or BackendSession()
    results, _ = session.execute(list(calls), config, list(classes), "m", "multi_turn_base_0")
    return results


@pytest.mark.parametrize(
    "name",
    [
        "__import__('os').system",
        "importlib.import_module('os').getcwd",
        "__import__",
        "os.system",
        "ls.__globals__",
        "__builtins__",
        "getattr",
        "exec",
        "eval",
        "open",
        "print",
        "cd.__self__._load_scenario",
    ],
)
def test_crafted_tool_names_are_never_executed(tmp_path, name):
    marker = tmp_path / "pwned"
    step = [{name: json.dumps({"command": f"touch {marker}", "path": str(marker), "source": f"open('{marker}','w')"})}]
    try:
        calls = convert_to_function_call(step)
    except DecodeError:
        return
    results = run(calls)
    assert not marker.exists()
    assert len(results) == 1 and results[0].startswith("Error during execution:")


def test_code_in_arguments_stays_inert(tmp_path):
    marker = tmp_path / "pwned"
    # A prompt-mode call string with code in an argument position.
    attacks = [
        f"cd(folder=__import__('os').system('touch {marker}'))",
        f"cd(folder=open('{marker}', 'w'))",
        "cd(folder=[x for x in ().__class__.__base__.__subclasses__()])",
        "cd(folder=(lambda: 1)())",
        "cd(**{'folder': 'alex'})",
        "cd(*['alex'])",
        "cd(folder='alex').__class__",
        "ls().__class__.__mro__",
    ]
    results = run(attacks)
    assert not marker.exists()
    assert all(r.startswith("Error during execution:") for r in results), results


def test_dunder_and_private_methods_are_not_reachable():
    results = run(["_load_scenario(scenario={})", "__init__()", "cd.__call__(folder='alex')"])
    assert results[0] == "Error during execution: name '_load_scenario' is not defined"
    assert results[1] == "Error during execution: name '__init__' is not defined"
    assert results[2].startswith("Error during execution:")


def test_denylist_message_matches_bfcl():
    assert run(["remove(path='x')"]) == ["Error during execution: Function call remove is not allowed."]
    assert run(["run(x=1)"]) == ["Error during execution: Function call run is not allowed."]


def test_legitimate_calls_and_state():
    session = BackendSession()
    results = run(["cd(folder='alex')", "ls()", "cat(file_name='doc.txt')", "nope(a=1)", "cd(foo=1)"], session=session)
    assert results[0] == json.dumps({"current_working_directory": "alex"})
    assert json.loads(results[2]) == {"file_content": "hi"}
    assert results[3] == "Error during execution: name 'nope' is not defined"
    assert "unexpected keyword argument 'foo'" in results[4]


def test_sessions_do_not_share_state():
    a, b = BackendSession(), BackendSession()
    run(["mkdir(dir_name='new')"], session=a)
    assert "new" in run(["ls()"], session=a)[0]
    assert "new" not in run(["ls()"], session=b)[0]


def test_long_context_travel_extension_does_not_leak():
    case = next(c for c in load_cases(["long_context"]) if "TravelAPI" in c.involved_classes)
    card = "1234567812345678"

    def balance(session):
        session.execute([], case.initial_config, case.involved_classes, "m", case.id, long_context=True)
        inst = next(v for k, v in session.instances.items() if k.endswith("TravelAPI_instance"))
        return inst.credit_card_list[card]["balance"]

    first = BackendSession()
    before = balance(first)
    inst = next(v for k, v in first.instances.items() if k.endswith("TravelAPI_instance"))
    inst.credit_card_list[card]["balance"] = before - 400.0
    assert balance(BackendSession()) == before


SCRIPT = r"""
import json, sys
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call
payload = json.load(sys.stdin)
out = []
for item in payload:
    results = []
    for step in item["steps"]:
        r, _ = execute_multi_turn_func_call(
            step, item["config"], item["classes"], "bfcl_ref", item["id"], long_context=item["lc"]
        )
        results.append(r)
    out.append(results)
json.dump(out, sys.stdout)
"""


def test_results_equal_bfcl_executor_on_ground_truth_and_errors():
    """Differential test against BFCL's own (eval-based) executor, in a separate process."""
    cases = [c for c in load_cases() if int(c.id.rsplit("_", 1)[1]) % 9 == 0]
    payload = []
    for c in cases:
        steps = [t for t in c.ground_truth if t]
        # plus calls that error in different ways, and an in-string method name
        steps.append(
            [
                "nope(a=1)",
                "cd(folder='does_not_exist')",
                "ls(bogus=1)",
                "echo(content='ls(x)', file_name='f.txt')",
                "cat(file_name='f.txt')",
            ]
        )
        payload.append(
            {
                "id": c.id,
                "config": c.initial_config,
                "classes": c.involved_classes,
                "lc": c.long_context,
                "steps": steps,
            }
        )
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], input=json.dumps(payload), capture_output=True, text=True, check=True
    )
    theirs = json.loads(proc.stdout)
    for item, their_results in zip(payload, theirs):
        session = BackendSession()
        ours = [
            session.execute(step, item["config"], item["classes"], "bfcl_ref", item["id"], long_context=item["lc"])[0]
            for step in item["steps"]
        ]
        assert ours == their_results, item["id"]


def test_numeric_arithmetic_as_eval_gives_it_and_nothing_more():
    results = run(
        [
            "add(a=2 * 3, b=-1)",
            "add(a=2 ** 10, b=+0.5)",
            "add(a=9 ** 9 ** 9, b=1)",
            "add(a='a' * 10, b=1)",
            "add(a=1 << 10**9, b=1)",
        ],
        config={},
        classes=("MathAPI",),
    )
    assert json.loads(results[0]) == {"result": 5}
    assert json.loads(results[1]) == {"result": 1024.5}
    assert results[2] == "Error during execution: integer result too large to compute"
    assert results[3] == "Error during execution: arithmetic is only computed on numbers"
    assert results[4] == "Error during execution: integer result too large to compute"
