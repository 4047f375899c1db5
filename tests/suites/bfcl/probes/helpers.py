"""Backends for probe tests: record what the model was shown, script odd behaviours."""

from __future__ import annotations

import copy

from tooldiag.suites.bfcl.policies import OraclePolicy
from tooldiag.suites.bfcl.probes.policies import HaltRecoverablePolicy, current_turn
from tooldiag.trajectory import Emission, Message, ToolCall


class Recording:
    """Mixin: keep a copy of every request's messages and tool names."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.requests: list[tuple[int, list[Message], list[str]]] = []

    async def complete(self, request):
        tool_names = [t.name for t in request.tools or []]
        self.requests.append((request.context.turn_index, copy.deepcopy(request.messages), tool_names))
        return await super().complete(request)

    def retry_requests(self):
        """Requests whose current turn holds a system message (what a probe retry sends)."""
        return [(turn, msgs) for turn, msgs, _ in self.requests if msgs[-1].role == "system"]


class RecordingHaltRecoverable(Recording, HaltRecoverablePolicy):
    def __init__(self):
        super().__init__("halt-recoverable", None)


class AskingHalt(Recording, OraclePolicy):
    """First ground-truth call of a turn, then a clarification question (class ask)."""

    QUESTION = "Could you tell me which destination you mean?"

    def __init__(self):
        super().__init__("asking-halt", None)

    async def complete(self, request):
        context, messages = request.context, request.messages
        self.requests.append((context.turn_index, copy.deepcopy(messages), []))
        turn = context.answer_key["ground_truth"][context.turn_index]
        made = sum(len(m.tool_calls) for m in current_turn(messages) if m.role == "assistant")
        if turn and made == 0:
            return self._calls(turn[:1], context)
        return Emission(text=self.QUESTION)


class PwdThenHalt(OraclePolicy):
    """Oracle on turn 0; on turn 1, twenty `pwd` calls, then a text halt (for the step cap)."""

    def __init__(self):
        super().__init__("pwd-then-halt", None)

    async def complete(self, request):
        context, messages = request.context, request.messages
        if context.turn_index == 0:
            return await super().complete(request)
        made = sum(len(m.tool_calls) for m in current_turn(messages) if m.role == "assistant")
        if made < 20:
            return Emission(tool_calls=[ToolCall(id=f"p{made}", name="pwd", arguments={}, raw_arguments="{}")])
        return Emission(text="Still looking.")
