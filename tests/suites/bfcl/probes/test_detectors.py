"""Halt Detector and Call Detector rules (paper 001 §3.3, App. B) and the matching rules."""

import pytest

from tooldiag.suites.bfcl.data import case_by_id, load_cases
from tooldiag.suites.bfcl.probes.detectors import (
    Antecedents,
    detect_halt,
    detect_suspect_calls,
    emission_class,
    is_asking_response,
    is_execution_error,
    miss_param_gold_turn,
    numbers_in,
    outstanding_subtasks,
    turn_gold_class,
)
from tooldiag.trajectory import Emission, ToolCall, ToolSpec


def test_gold_class_of_turns_on_real_cases():
    mf = case_by_id("multi_turn_miss_func_0")  # give-back at turn 3, GT-empty turn 2
    assert [turn_gold_class(mf, i) for i in range(5)] == ["tool_call", "tool_call", "refuse", "tool_call", "tool_call"]
    mp = case_by_id("multi_turn_miss_param_0")
    assert [turn_gold_class(mp, i) for i in range(5)] == ["tool_call", "tool_call", "tool_call", "ask", "tool_call"]
    # base's own empty closing turns carry no gold class, in base and in the copies
    assert turn_gold_class(case_by_id("multi_turn_base_167"), 4) is None
    mp167 = case_by_id("multi_turn_miss_param_167")
    assert turn_gold_class(mp167, 1) == "ask" and turn_gold_class(mp167, 5) is None
    mf180 = case_by_id("multi_turn_miss_func_180")
    assert turn_gold_class(mf180, 0) == "refuse" and turn_gold_class(mf180, 4) is None


def test_every_missing_info_case_has_exactly_one_gold_turn():
    for case in load_cases(["miss_func", "miss_param"]):
        golds = [turn_gold_class(case, i) for i in range(len(case.turns))]
        assert golds.count("refuse" if case.category == "miss_func" else "ask") == 1, case.id
    assert miss_param_gold_turn([["a()"], [], ["b()"], []]) == 1
    assert miss_param_gold_turn([["a()"], ["b()"]]) is None


@pytest.mark.parametrize(
    ("result", "error"),
    [
        ("Error during execution: name 'x' is not defined", True),
        ('{"error": "No such file or directory: a.txt"}', True),
        ('{"current_working_directory": "temp"}', False),
        ("The build failed yesterday, said the file.", False),  # content mentioning failure is a result
        ('{"result": "error count: 0"}', False),
        ("{not json", False),
    ],
)
def test_execution_errors_are_bfcl_shapes_only(result, error):
    assert is_execution_error(result) is error


def test_outstanding_subtasks_are_a_multiset_of_requested_operations():
    requested = ["cd(folder='a')", "cd(folder='b')", "mv(source='x', destination='y')"]
    assert outstanding_subtasks(requested, []) == ["cd", "cd", "mv"]
    assert outstanding_subtasks(requested, [("cd(folder='a')", '{"current_working_directory": "a"}')]) == ["cd", "mv"]
    # a failed execution leaves its sub-task open; arguments are not compared
    done = [("cd(folder='zzz')", "{}"), ("cd(folder='q')", "{}"), ("mv(source='1')", '{"error": "no"}')]
    assert outstanding_subtasks(requested, done) == ["mv"]
    assert outstanding_subtasks([], [("ls()", "{}")]) == []


def test_halt_detector_conditions_in_order():
    ok = dict(gold_class="tool_call", user_messages_so_far=2, halt_class="other", outstanding=["mv"])
    assert detect_halt(**ok).fired and detect_halt(**ok).reason == "halt"
    assert detect_halt(**{**ok, "user_messages_so_far": 1}).reason == "first_user_message"
    assert detect_halt(**{**ok, "gold_class": "ask"}).reason == "gold_not_tool_call"
    assert detect_halt(**{**ok, "gold_class": None}).reason == "gold_not_tool_call"
    assert detect_halt(**{**ok, "halt_class": "tool_call"}).reason == "emission_is_tool_call"
    assert detect_halt(**{**ok, "outstanding": []}).reason == "no_outstanding_subtask"
    for cls in ("ask", "refuse", "confirm", "other"):
        assert detect_halt(**{**ok, "halt_class": cls}).fired


def test_emission_class_sees_calls_written_in_text():
    assert emission_class(Emission(text='[mv(source="a", destination="b")]')) == "tool_call"
    assert emission_class(Emission(text="Here is what I found.")) == "other"
    assert emission_class(Emission(text="Which file do you mean?")) == "ask"
    # a structured call whose arguments do not parse is a malformed call, not a halt
    assert emission_class(Emission(tool_calls=[ToolCall.from_raw("mv", '{"source": ')])) == "tool_call"


def test_sri_gate_ask_heuristic():
    assert is_asking_response("Which folder?")
    assert is_asking_response("Please PROVIDE the file name.")
    assert is_asking_response("I\u2019ll need the ticket id.")  # typographic apostrophe folded
    assert not is_asking_response("Done. The file was moved.")
    assert not is_asking_response(None)


def test_numbers_are_found_however_written():
    assert set(numbers_in("pay 1,000 now, or 2.50 later; id 42; -3e2")) == {1000.0, 2.5, 42.0, -300.0}
    assert numbers_in("file2.txt v10") == []  # digits glued to words are not numbers


@pytest.mark.parametrize(
    ("value", "resolved"),
    [
        ("Final Report.PDF", True),  # case-folded substring
        ("'final report.pdf'", True),  # surrounding quotes stripped
        ("the \u201cbudget\u201d plan", True),  # typographic quotes folded on both sides
        ("budget   plan", False),  # whitespace collapsed, still absent
        (10.0, True),  # "10" in the text
        ("10.00", True),
        (1000, True),  # "1,000"
        (2.5, True),
        (77, False),
        ("holiday.docx", False),
        ("x", True),  # shorter than 2 characters
        (7, True),
        (True, True),
        (None, True),
        (["a"], True),
        ({"k": "v"}, True),
    ],
)
def test_antecedent_matching_rules(value, resolved):
    ante = Antecedents.from_texts(
        [
            "Move \u2018Final Report.pdf\u2019 and send 10 units, pay 1,000 or 2.50.",
            '{"notes": "the \\"budget\\" plan"}',
            "the \u201cbudget\u201d plan",
        ]
    )
    assert ante.resolves(value) is resolved


def test_enum_and_default_resolve():
    ante = Antecedents.from_texts(["nothing relevant"])
    assert ante.resolves("economy", {"enum": ["economy", "business"]})
    assert ante.resolves("standard", {"default": "standard"})
    assert not ante.resolves("premium", {"enum": ["economy"], "default": "standard"})


def _tool(name, required, properties=None):
    props = properties or {p: {"type": "string"} for p in required}
    return ToolSpec(name=name, parameters={"type": "object", "properties": props, "required": required})


def test_call_detector_mc_and_ur():
    tools = [_tool("mv", ["source", "destination"]), _tool("ls", [])]
    ante = Antecedents.from_texts(["move report.txt into archive"])
    calls = [
        ToolCall(name="sort", arguments={"file_name": "report.txt"}),  # absent from the tools: MC
        ToolCall(name="mv", arguments={"source": "report.txt", "destination": "archive"}),
        ToolCall(name="mv", arguments={"source": "report.txt", "destination": "backup_2024"}),  # invented: UR
        ToolCall(name="mv", arguments={"source": "report.txt"}),  # missing required: not UR
        ToolCall(name="mv", raw_arguments='{"source": "secret.txt", "destination": "archive"}'),
    ]
    verdicts = detect_suspect_calls(calls, tools, ante)
    assert [(v.mc, v.ur, v.ur_param) for v in verdicts] == [
        (True, False, None),
        (False, False, None),
        (False, True, "destination"),
        (False, False, None),
        (False, True, "source"),
    ]
    assert [v.suspect for v in verdicts] == [True, False, True, False, True]


def test_ground_truth_never_leaves_a_subtask_open():
    """Why ref/oracle (and any model replaying the ground truth) never triggers SRI."""
    from tooldiag.suites.bfcl.executor import BackendSession
    from tooldiag.suites.bfcl.grader import fresh_model_name

    for case in load_cases():
        session, name = BackendSession(), fresh_model_name("gt")
        for calls in case.ground_truth:
            if not calls:
                continue
            results, _ = session.execute(calls, case.initial_config, case.involved_classes, name, case.id,
                                         long_context=case.long_context, is_evaL_run=False)  # fmt: skip
            assert outstanding_subtasks(calls, list(zip(calls, results))) == [], case.id
