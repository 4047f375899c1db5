"""CRI, the Call-Reconciliation Intervention at the call seam (paper 001 §3.3, App. C.2).

CRI watches emissions that decode to calls, before they execute, at the turn whose
gold action is not a call (the miss_func turn that needs the held-out function, gold
refuse; the miss_param turn that omits a value, gold ask; see
:func:`~tooldiag.suites.bfcl.probes.detectors.turn_gold_class`). The Call Detector flags a call
to a function absent from the in-context tools (MC) or a required value the
conversation never supplied (UR). When any call of the emission is suspect:

* **CRI-retry** (``cri-retry``, the paper code's ``v1``): the emission is retracted
  (not executed, not recorded, not kept in the context) and the model is re-queried
  once with a ``system`` instruction not to call a tool this turn. The instruction
  stays in the context for the rest of the case. GAR is read from this run: the
  re-emission is the model's own (paper 001 §4.4).
* **CRI-bypass** (``cri-bypass``): the emission is retracted and replaced by the fixed
  assistant placeholder :data:`PLACEHOLDER`; the turn ends without a re-query. The
  placeholder is stored as an injected emission (``Emission.injected``): BFCL's grader
  never sees it and GAR never counts it (reading A of App. C.2). Acc and
  ``fired_rate`` are read from this run.

Gates (the paper code's ``_cri_evaluate``): at most once per turn and once per case;
suppressed once the tool list has grown past its size at case start (the held-out
function was given back). The gold-turn gate makes the latter redundant on BFCL's
data; it is kept so a reordered case can never fire after the give-back.
"""

from __future__ import annotations

from typing import Any, Literal

from tooldiag.suites.bfcl.probes.detectors import ASK, REFUSE, Antecedents, detect_suspect_calls, turn_gold_class
from tooldiag.suites.bfcl.probes.state import MAX_STATE_CHARS, state_dump
from tooldiag.suites.bfcl.rollout import Bypass, Probe, Retry, Rollout
from tooldiag.trajectory import CaseTrajectory, Message, Step

#: Paper 001 App. C.2 and the paper code: the abstention CRI-bypass substitutes.
PLACEHOLDER = "I cannot proceed with this step yet; the required capability or information is not available."
CRI_HEADER = "[Over-Action Reconciliation Required]"
CRI_INTRO = (
    "Your previous response emitted a tool call that may not be warranted by the request and available tools.\n"
    "Before it executes, reconcile the call against the user request, the available tools, and runtime-observed state."
)
CRI_DECISION_RULE = (
    "Decision rule:\n"
    "Do not emit a tool call in this turn. Briefly state that you cannot proceed yet because the required "
    "capability or information is not available."
)

CriVariant = Literal["retry", "bypass"]
CRI_SPECS: dict[str, CriVariant] = {"cri-retry": "retry", "cri-bypass": "bypass"}


def cri_retry_message(state_text: str) -> str:
    """The paper code's ``_cri_retry_instruction``."""
    return "\n".join(
        [
            CRI_HEADER,
            CRI_INTRO,
            "",
            "Runtime-observed state from executed tool calls and tool results:",
            state_text,
            "",
            CRI_DECISION_RULE,
        ]
    )


def antecedents_of(rollout: Rollout) -> Antecedents:
    """User messages and every tool result so far (untruncated)."""
    texts = list(rollout.user_requests)
    texts.extend(result for turn in rollout.executed for _, result in turn)
    return Antecedents.from_texts(texts)


class CriProbe(Probe):
    """CRI-retry or CRI-bypass for one case (create a fresh one per case)."""

    def __init__(self, variant: CriVariant, max_state_chars: int = MAX_STATE_CHARS) -> None:
        self.variant = variant
        self.name = f"cri-{variant}"
        self.max_state_chars = max_state_chars
        self.initial_tool_count: int | None = None
        self.fired_turns: list[int] = []
        self.events: list[dict[str, Any]] = []

    def _suppressed(self, rollout: Rollout) -> str | None:
        if self.initial_tool_count is not None and len(rollout.tools) > self.initial_tool_count:
            return "post_injection"
        if self.fired_turns:
            return "already_fired_in_case"
        return None

    async def on_calls(self, rollout: Rollout, step: Step) -> Retry | Bypass | None:
        if self.initial_tool_count is None:
            self.initial_tool_count = len(rollout.case.functions)
        turn = rollout.turn_index
        gold = turn_gold_class(rollout.case, turn)
        if gold not in (ASK, REFUSE):
            return None
        verdicts = detect_suspect_calls(step.emission.tool_calls, rollout.tools, antecedents_of(rollout))
        if not any(v.suspect for v in verdicts):
            return None
        event: dict[str, Any] = {
            "turn": turn,
            "step": rollout.step_index,
            "gold": gold,
            "calls": [v.as_note() for v in verdicts],
            "retracted": [{"name": c.name, "arguments": c.raw_arguments} for c in step.emission.tool_calls],
        }
        suppressed = self._suppressed(rollout)
        if suppressed:
            event["action"] = suppressed
            self.events.append(event)
            step.notes["cri"] = dict(event)
            return None
        self.fired_turns.append(turn)
        if self.variant == "bypass":
            event["action"] = "bypass"
            self.events.append(event)
            return Bypass(PLACEHOLDER, note={"cri": dict(event)})
        event["action"] = "retry"
        self.events.append(event)
        state_text = state_dump(rollout.executed, self.max_state_chars)
        rollout.messages.append(Message(role="system", content=cri_retry_message(state_text)))
        return Retry(keep_step=False, counts_as_step=True, note={"cri": dict(event)})

    def on_case_end(self, rollout: Rollout, trajectory: CaseTrajectory) -> None:
        for event in self.events:
            if event["turn"] < len(trajectory.turns):
                trajectory.turns[event["turn"]].notes.setdefault("probe", []).append(
                    {"probe": self.name, "action": event["action"], "step": event["step"], "calls": event["calls"]}
                )
        trajectory.notes["probe"] = {
            "spec": self.name,
            "kind": "cri",
            "fired": bool(self.fired_turns),
            "fired_turns": list(self.fired_turns),
            "detector_fired": bool(self.events),
            "events": list(self.events),
        }
