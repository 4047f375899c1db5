"""SRI: the retry context of every variant (paper 001 App. B.1), gates, once per turn, notes."""

import asyncio

import pytest

from tests.suites.bfcl.probes.helpers import AskingHalt, PwdThenHalt, RecordingHaltRecoverable
from tooldiag.suites.bfcl.data import case_by_id
from tooldiag.suites.bfcl.policies import HALT_TEXT
from tooldiag.suites.bfcl.probes import probe_factory
from tooldiag.suites.bfcl.probes.sri import GENERIC_RETRY, SRI_HEADER, STATE_TITLE, reconciliation_message
from tooldiag.suites.bfcl.rollout import bfcl_result, run_rollout
from tooldiag.suites.bfcl.runner import grade_trajectory
from tooldiag.trajectory import GenerationConfig

CASE = "multi_turn_base_1"  # ground-truth sizes [1, 2, 2, 1]


def rollout(spec, backend, case_id=CASE):
    case = case_by_id(case_id)
    probe = probe_factory(spec)() if spec else None
    return case, asyncio.run(run_rollout(case, backend, GenerationConfig(), probe))


def test_reconciliation_message_follows_appendix_b1():
    requests = [f"request {i} " + "x" * 800 for i in range(7)]
    text = reconciliation_message(requests, "STATE")
    lines = text.splitlines()
    assert lines[0] == "[SRI Reconciliation]"
    assert lines[1] == "Your previous response for this turn did not emit a parseable tool call."
    assert lines[2] == "Before finalizing, reconcile the user requests against runtime-observed state."
    assert "Prior user requests, most recent first:" in lines
    prior = [line for line in lines if line.startswith("- prior-")]
    assert [p.split(":")[0] for p in prior] == ["- prior-1", "- prior-2", "- prior-3", "- prior-4"]
    assert prior[0].startswith("- prior-1: request 5 ") and prior[3].startswith("- prior-4: request 2 ")
    assert all(len(p) == len("- prior-1: ") + 700 and p.endswith("...") for p in prior)
    current = lines[lines.index("Current user request:") + 1]
    assert current.startswith("request 6 ") and len(current) == 700
    assert lines[lines.index(STATE_TITLE) + 1] == "STATE"
    assert lines[-4:] == [
        "Decision rule:",
        "- If any requested sub-task is not reflected in the runtime-observed state, emit exactly one "
        "progress-making tool_call now.",
        "- If all requested sub-tasks are already reflected in the runtime-observed state, answer normally.",
        "- Do not mention this reconciliation instruction in the user-facing answer.",
    ]
    assert STATE_TITLE not in reconciliation_message(requests, None)
    assert "- (none)" in reconciliation_message(["only"], "S")


@pytest.mark.parametrize(
    ("spec", "halt_kept", "expect"),
    [
        ("sri", False, "recon+state"),
        ("sri:no_history", True, "recon+state"),
        ("sri:no_state", False, "recon"),
        ("sri:no_recon", False, "state"),
        ("sri:hd_only", True, "generic"),
        ("sri:gate_global", False, "recon+state"),  # the halt is not a question: no gate
        ("sri:gate_miss_param", False, "recon+state"),
        ("sri:state_only", True, "state"),
    ],
)
def test_retry_context_of_each_variant(spec, halt_kept, expect):
    backend = RecordingHaltRecoverable()
    case, traj = rollout(spec, backend)
    retries = backend.retry_requests()
    assert [turn for turn, _ in retries] == [1, 2]  # turn 0 is never retried (one user message)
    messages = retries[0][1]
    system = messages[-1].content
    assert [m.role for m in messages[-3:-1]] == (["tool", "assistant"] if halt_kept else ["assistant", "tool"])
    assert (messages[-2].content == HALT_TEXT) is halt_kept
    if expect == "generic":
        assert system == GENERIC_RETRY
    elif expect == "state":
        assert system.startswith(STATE_TITLE) and SRI_HEADER not in system
        assert system.splitlines()[1:] == [
            '[t0] ls(a=True) -> {"current_directory_content": ["workspace"]}',
            '[t1] cd(folder=\'workspace\') -> {"current_working_directory": "workspace"}',
        ]
    else:
        assert system.startswith(SRI_HEADER)
        assert "- prior-1: " + case.turns[0][0]["content"][:50] in system
        assert (STATE_TITLE in system) is (expect == "recon+state")
    # the halt step stays recorded (the grader drops it), the retry then completes the turn
    turn1 = traj.turns[1]
    assert [s.emission.text for s in turn1.steps].count(HALT_TEXT) == 1
    halt_step = next(s for s in turn1.steps if s.emission.text == HALT_TEXT)
    assert halt_step.notes["probe"] == spec and halt_step.notes["sri"]["action"] == "retry"
    assert halt_step.notes["sri"]["outstanding"] == ["mv"]
    assert grade_trajectory(case, traj).passed
    notes = traj.notes["probe"]
    assert notes["spec"] == spec and notes["fired"] and notes["fired_turns"] == [1, 2]
    assert turn1.notes["probe"][0]["action"] == "retry"


def test_baseline_of_the_same_policy_fails_and_never_sees_a_system_message():
    backend = RecordingHaltRecoverable()
    case, traj = rollout(None, backend)
    assert not backend.retry_requests()
    assert not grade_trajectory(case, traj).passed
    assert "probe" not in traj.notes


def test_at_most_one_retry_per_turn_boundary():
    backend = AskingHalt()  # ignores the instruction: halts again after the retry
    _case, traj = rollout("sri", backend)
    for turn in traj.turns[1:]:
        retried = [s for s in turn.steps if s.notes.get("sri", {}).get("action") == "retry"]
        assert len(retried) <= 1
        # the second halt ended the turn: it is the last step
        assert turn.steps[-1].emission.text == AskingHalt.QUESTION
    fired = traj.notes["probe"]["fired_turns"]
    assert fired and 0 not in fired and len(fired) == len(set(fired))


def test_gates_skip_ask_halts_globally_or_on_miss_param_only():
    _, traj = rollout("sri:gate_global", AskingHalt())
    notes = traj.notes["probe"]
    assert not notes["fired"] and notes["detector_fired"]
    assert {e["action"] for e in notes["events"]} == {"gated"}
    _, traj = rollout("sri:gate_miss_param", AskingHalt())  # a base case: the gate does not apply
    assert traj.notes["probe"]["fired"]
    _, traj = rollout("sri:gate_miss_param", AskingHalt(), "multi_turn_miss_param_1")
    assert not traj.notes["probe"]["fired"] and traj.notes["probe"]["detector_fired"]


def test_retry_counts_toward_the_step_cap():
    case, traj = rollout("sri", PwdThenHalt(), "multi_turn_base_0")
    turn = traj.turns[1]
    assert turn.force_terminated and len(traj.turns) == 2  # 20 executed steps + the retry > 20
    assert turn.steps[-1].notes["sri"]["action"] == "retry"
    assert grade_trajectory(case, traj).error_type == "multi_turn:force_terminated"
    # the halt text is in BFCL's result, as the paper code leaves it
    assert bfcl_result(traj)[1][-1] == "Still looking."
