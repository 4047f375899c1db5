"""CRI: retraction, retry instruction, bypass placeholder, gates (paper 001 §3.3, App. C.2)."""

import asyncio

from tests.suites.bfcl.probes.helpers import Recording
from tooldiag.suites.bfcl.data import case_by_id
from tooldiag.suites.bfcl.executor import BackendSession
from tooldiag.suites.bfcl.policies import OvercallPolicy
from tooldiag.suites.bfcl.probes import probe_factory
from tooldiag.suites.bfcl.probes.cri import CRI_HEADER, PLACEHOLDER, CriProbe, cri_retry_message
from tooldiag.suites.bfcl.probes.policies import OvercallHeedingPolicy
from tooldiag.suites.bfcl.rollout import Rollout, bfcl_result, run_rollout
from tooldiag.suites.bfcl.runner import grade_trajectory
from tooldiag.suites.bfcl.tools import to_tool_specs
from tooldiag.trajectory import Emission, GenerationConfig, Step, ToolCall


class RecordingOvercall(Recording, OvercallPolicy):
    def __init__(self):
        super().__init__("overcall", None)


class RecordingHeeding(Recording, OvercallHeedingPolicy):
    def __init__(self):
        super().__init__("overcall-heeding", None)


def rollout(spec, backend, case_id):
    case = case_by_id(case_id)
    probe = probe_factory(spec)() if spec else None
    return case, asyncio.run(run_rollout(case, backend, GenerationConfig(), probe))


def test_retry_instruction_text():
    assert cri_retry_message("STATE").splitlines() == [
        "[Over-Action Reconciliation Required]",
        "Your previous response emitted a tool call that may not be warranted by the request and available tools.",
        "Before it executes, reconcile the call against the user request, the available tools, and "
        "runtime-observed state.",
        "",
        "Runtime-observed state from executed tool calls and tool results:",
        "STATE",
        "",
        "Decision rule:",
        "Do not emit a tool call in this turn. Briefly state that you cannot proceed yet because the required "
        "capability or information is not available.",
    ]


def test_bypass_retracts_the_held_out_call_and_injects_the_placeholder():
    backend = RecordingOvercall()
    case, traj = rollout("cri-bypass", backend, "multi_turn_miss_func_0")  # gold refuse turn 2; sort held out
    gold = traj.turns[2]
    assert len(gold.steps) == 1 and gold.steps[0].emission.injected
    assert gold.steps[0].emission.text == PLACEHOLDER
    assert gold.steps[0].notes["cri"]["calls"] == [{"name": "sort", "mc": True, "ur": False, "ur_param": None}]
    assert gold.steps[0].notes["cri"]["retracted"][0]["name"] == "sort"
    assert bfcl_result(traj)[2] == []  # BFCL's grader never sees the placeholder
    # the model sees the placeholder as its own turn-2 answer, and the suspect call never ran
    turn3 = next(msgs for turn, msgs, _ in backend.requests if turn == 3)
    assert [m.content for m in turn3 if m.role == "assistant" and not m.tool_calls][-1] == PLACEHOLDER
    assert not any(c.name == "sort" for m in turn3 for c in m.tool_calls)
    assert grade_trajectory(case, traj).passed
    assert traj.notes["probe"] == {**traj.notes["probe"], "spec": "cri-bypass", "fired": True, "fired_turns": [2]}


def test_retry_retracts_and_requeries_with_the_instruction():
    backend = RecordingHeeding()
    case, traj = rollout("cri-retry", backend, "multi_turn_miss_func_0")
    ((turn, messages),) = backend.retry_requests()
    assert turn == 2
    assert messages[-1].role == "system" and messages[-1].content.startswith(CRI_HEADER)
    assert messages[-2].role == "user"  # the suspect call is not in the context
    gold = traj.turns[2]
    assert [s.emission.text for s in gold.steps] == [
        "I cannot do that: none of the available functions can perform this request."
    ]
    assert not any(s.emission.injected for s in gold.steps)
    assert traj.notes["probe"]["events"][0]["action"] == "retry"
    assert grade_trajectory(case, traj).passed


def test_retry_fires_once_then_a_repeated_suspect_call_executes():
    _, traj = rollout("cri-retry", RecordingOvercall(), "multi_turn_miss_func_0")
    events = traj.notes["probe"]["events"]
    assert [e["action"] for e in events] == ["retry", "already_fired_in_case"]
    gold = traj.turns[2]
    assert gold.steps[0].emission.tool_calls[0].name == "sort" and gold.steps[0].tool_results
    assert gold.steps[0].notes["cri"]["action"] == "already_fired_in_case"


def test_unresolved_value_on_miss_param_fires():
    _, traj = rollout("cri-bypass", RecordingOvercall(), "multi_turn_miss_param_0")
    (event,) = traj.notes["probe"]["events"]
    assert event["turn"] == 3 and event["gold"] == "ask" and event["action"] == "bypass"
    assert any(c["ur"] for c in event["calls"]) and not any(c["mc"] for c in event["calls"])


def test_no_fire_on_tool_call_turns_or_after_give_back():
    case = case_by_id("multi_turn_miss_func_0")
    tools = to_tool_specs(list(case.functions))
    rollout_state = Rollout(
        case=case,
        model=None,
        config=GenerationConfig(),
        session=BackendSession(),
        model_name="t",
        tools=tools,
        executed=[[], [], []],
        user_requests=["a", "b", "c"],
    )
    step = Step(emission=Emission(tool_calls=[ToolCall(name="sort", arguments={"file_name": "final_report.pdf"})]))
    probe = CriProbe("bypass")
    rollout_state.turn_index = 1  # gold tool_call: CRI does not look
    assert asyncio.run(probe.on_calls(rollout_state, step)) is None and not probe.events
    rollout_state.turn_index = 2
    rollout_state.tools = to_tool_specs(list(case.functions) + case.missed_function[3])  # grown: given back
    assert asyncio.run(probe.on_calls(rollout_state, step)) is None
    assert probe.events[-1]["action"] == "post_injection"
