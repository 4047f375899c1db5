"""SRI, the State-Reconciliation Intervention at the halt seam (paper 001 §3.3, App. B).

When the Halt Detector fires at a turn boundary, SRI retries the turn once with the
context ``c' = ReconPrompt(StateInject(HistoryEdit(c)))``:

* **HistoryEdit** drops the halt-triggering assistant message from the context (the
  halt emission stays in the recorded trajectory, as in the paper code, so BFCL's
  grader still sees it and drops it as a text step);
* **StateInject** adds the runtime-observed state (:mod:`tooldiag.suites.bfcl.probes.state`);
* **ReconPrompt** adds the fixed reconciliation text of App. B.1 with up to four prior
  user requests (most recent first) and the current one, each cut to 700 characters.
  The state block and the prose go into one ``system`` message appended to the
  context; it stays there for the rest of the case, as in the paper code.

The retry counts as a step toward BFCL's cap, fires at most once per turn boundary
(no chaining: a second halt in the same turn ends the turn), and is recorded in the
halt step's notes (``step.notes["sri"]``) and the case notes (``notes["probe"]``).

Variants (``--probe`` specs, paper 001 Tables 6-8):

==================== ==============================================================
``sri``              SRI v1: all three components.
``sri:no_history``   keeps the halt message in the context (no HistoryEdit).
``sri:no_state``     no state block in the reconciliation message.
``sri:no_recon``     HistoryEdit + a message holding the state block only (no header,
                     no requests, no decision rule; the paper code's
                     ``ablation_no_recon``).
``sri:hd_only``      the detector and the retry alone: the halt message stays, no
                     state, no reconciliation; the retry message is the paper code's
                     generic fallback instruction. Paper 001 reports HD-only (Tab. 6,
                     xLAM) without defining it; this is tooldiag's reading.
``sri:gate_global``  SRI-Gate (global): v1, but no retry when the halt is an ask-user
                     reply (``?`` or an ask phrase); the paper code's
                     ``decision_routed_v1``.
``sri:gate_miss_param`` SRI-Gate (miss_param): the same gate on miss_param cases only
                     (``decision_routed_v2_a``).
``sri:state_only``   state injection alone (Tab. 8): the halt message stays and the
                     retry message is the state block only.
==================== ==============================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tooldiag.suites.bfcl.probes.detectors import (
    detect_halt,
    emission_class,
    is_asking_response,
    outstanding_subtasks,
    turn_gold_class,
)
from tooldiag.suites.bfcl.probes.state import MAX_STATE_CHARS, state_dump, truncate
from tooldiag.suites.bfcl.rollout import Probe, Retry, Rollout
from tooldiag.trajectory import CaseTrajectory, Message, Step

#: Paper 001 App. B.1 header (the paper code writes ``[State Reconciliation Required]``).
SRI_HEADER = "[SRI Reconciliation]"
SRI_INTRO = (
    "Your previous response for this turn did not emit a parseable tool call.\n"
    "Before finalizing, reconcile the user requests against runtime-observed state."
)
STATE_TITLE = "Runtime-observed state from executed tool calls and tool results:"
DECISION_RULE = (
    "Decision rule:\n"
    "- If any requested sub-task is not reflected in the runtime-observed state, emit exactly one "
    "progress-making tool_call now.\n"
    "- If all requested sub-tasks are already reflected in the runtime-observed state, answer normally.\n"
    "- Do not mention this reconciliation instruction in the user-facing answer."
)
#: The paper code's fallback retry instruction (``_DEFAULT_RETRY_INSTRUCTION``), used by ``hd_only``.
GENERIC_RETRY = (
    "If the task is complete, provide the final user-facing answer directly. Otherwise emit the next tool_call now."
)
#: App. B.1 limits: up to 4 prior user requests, 700 characters each.
MAX_PRIOR_REQUESTS = 4
MAX_REQUEST_CHARS = 700

RetryMessage = Literal["recon", "state_block", "generic"]


@dataclass(frozen=True)
class SriVariant:
    """Which SRI components a variant keeps."""

    spec: str
    history_edit: bool = True
    message: RetryMessage = "recon"
    #: Include the state block in the reconciliation message (``recon`` only).
    state: bool = True
    #: SRI-Gate: skip the retry when the halt asks the user (``global``/``miss_param``).
    gate: Literal["global", "miss_param"] | None = None


SRI_VARIANTS: dict[str, SriVariant] = {
    "sri": SriVariant("sri"),
    "sri:no_history": SriVariant("sri:no_history", history_edit=False),
    "sri:no_state": SriVariant("sri:no_state", state=False),
    "sri:no_recon": SriVariant("sri:no_recon", message="state_block"),
    "sri:hd_only": SriVariant("sri:hd_only", history_edit=False, message="generic", state=False),
    "sri:gate_global": SriVariant("sri:gate_global", gate="global"),
    "sri:gate_miss_param": SriVariant("sri:gate_miss_param", gate="miss_param"),
    "sri:state_only": SriVariant("sri:state_only", history_edit=False, message="state_block"),
}


def reconciliation_message(
    user_requests: list[str],
    state_text: str | None,
    *,
    max_prior: int = MAX_PRIOR_REQUESTS,
    max_chars: int = MAX_REQUEST_CHARS,
) -> str:
    """The App. B.1 reconciliation prose; ``state_text=None`` omits the state block."""
    current = user_requests[-1] if user_requests else ""
    prior = list(reversed(user_requests[:-1]))[:max_prior]
    prior_lines = [f"- prior-{i}: {truncate(text, max_chars)}" for i, text in enumerate(prior, start=1)]
    parts = [
        f"{SRI_HEADER}\n{SRI_INTRO}",
        "Prior user requests, most recent first:\n" + "\n".join(prior_lines or ["- (none)"]),
        "Current user request:\n" + (truncate(current, max_chars) or "(empty user turn)"),
    ]
    if state_text is not None:
        parts.append(f"{STATE_TITLE}\n{state_text}")
    parts.append(DECISION_RULE)
    return "\n\n".join(parts)


def state_block(state_text: str) -> str:
    return f"{STATE_TITLE}\n{state_text}"


class SriProbe(Probe):
    """One SRI variant for one case (create a fresh one per case)."""

    def __init__(self, variant: SriVariant, max_state_chars: int = MAX_STATE_CHARS) -> None:
        self.variant = variant
        self.name = variant.spec
        self.max_state_chars = max_state_chars
        self.retried_turns: list[int] = []
        self.events: list[dict[str, Any]] = []

    def retry_text(self, rollout: Rollout) -> str:
        state_text = state_dump(rollout.executed, self.max_state_chars)
        if self.variant.message == "generic":
            return GENERIC_RETRY
        if self.variant.message == "state_block":
            return state_block(state_text)
        return reconciliation_message(rollout.user_requests, state_text if self.variant.state else None)

    def _gated(self, rollout: Rollout, step: Step) -> bool:
        gate = self.variant.gate
        if gate is None or not is_asking_response(step.emission.text):
            return False
        return gate == "global" or rollout.case.category == "miss_param"

    async def on_halt(self, rollout: Rollout, step: Step) -> Retry | None:
        turn = rollout.turn_index
        if turn in self.retried_turns:
            return None  # at most one retry per turn boundary
        verdict = detect_halt(
            gold_class=turn_gold_class(rollout.case, turn),
            user_messages_so_far=len(rollout.user_requests),
            halt_class=emission_class(step.emission),
            outstanding=outstanding_subtasks(rollout.case.ground_truth[turn], rollout.executed[turn]),
        )
        if not verdict.fired:
            return None
        event = {"turn": turn, "step": rollout.step_index, **verdict.as_note()}
        if self._gated(rollout, step):
            event["action"] = "gated"
            self.events.append(event)
            step.notes["sri"] = dict(event)
            return None
        self.retried_turns.append(turn)
        event["action"] = "retry"
        self.events.append(event)
        if not self.variant.history_edit:
            rollout.messages.append(step.emission.to_message())
        rollout.messages.append(Message(role="system", content=self.retry_text(rollout)))
        return Retry(keep_step=True, counts_as_step=True, note={"sri": dict(event)})

    def on_case_end(self, rollout: Rollout, trajectory: CaseTrajectory) -> None:
        for event in self.events:
            if event["turn"] < len(trajectory.turns):
                trajectory.turns[event["turn"]].notes.setdefault("probe", []).append(
                    {"probe": self.name, "action": event["action"], "step": event["step"]}
                )
        trajectory.notes["probe"] = {
            "spec": self.name,
            "kind": "sri",
            "fired": bool(self.retried_turns),
            "fired_turns": list(self.retried_turns),
            "detector_fired": bool(self.events),
            "events": list(self.events),
        }
