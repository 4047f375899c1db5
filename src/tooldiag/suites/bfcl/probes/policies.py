"""Reference policies that answer the probes' instructions: known-answer tests for SRI and CRI.

The suite's ``ref/halt`` and ``ref/overcall`` ignore a system message, so a retry can
only repeat their mistake. These two respond to it the way the probes hope a model
will, which is what makes "SRI recovers a halting model" and "CRI-retry moves GAR
toward gold" testable with known answers:

* ``ref/halt-recoverable``: like ``ref/halt`` (first ground-truth call of each turn,
  then a text summary), but once a ``system`` message has arrived in the current turn
  (SRI's reconciliation message, whatever the variant) it emits the turn's remaining
  ground-truth calls one per step ("exactly one progress-making tool_call now"), then
  closes the turn with text. Under ``--probe sri`` every turn after the first user
  message is completed, so Acc rises; turn 0 is never retried (the Halt Detector needs
  more than one user message), so cases whose first turn needs two or more calls
  still fail.
* ``ref/overcall-heeding``: like ``ref/overcall`` (acts on the next turn's calls where
  it should ask or refuse), but when a ``system`` message arrived in the current turn
  (CRI-retry's instruction) it asks (miss_param) or refuses (miss_func) instead. Under
  ``--probe cri-retry`` its ask/refuse GAR goes from 0 to the fired rate.
"""

from __future__ import annotations

from typing import Any

from tooldiag.models.base import ModelRequest, TaskContext
from tooldiag.suites.bfcl.policies import HALT_TEXT, RESULT_TEXT, BfclReferencePolicy, OvercallPolicy, empty_turn_text
from tooldiag.trajectory import Emission, Message


def current_turn(messages: list[Message]) -> list[Message]:
    """The messages after the last user message (this turn's steps so far)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return messages[index + 1 :]
    return list(messages)


def calls_made(turn_messages: list[Message]) -> int:
    return sum(len(m.tool_calls) for m in turn_messages if m.role == "assistant")


def instructed(turn_messages: list[Message]) -> bool:
    """A probe's ``system`` message arrived in this turn."""
    return any(m.role == "system" for m in turn_messages)


def halt_recoverable_action(turn_ground_truth: list[str], messages: list[Message]) -> tuple[str, Any]:
    """What ``ref/halt-recoverable`` does next: ``("calls", [call])`` or ``("text", text)``.

    A pure function of the turn's ground truth and the conversation, so tests can put
    the same behaviour behind an HTTP server.
    """
    this_turn = current_turn(messages)
    made = calls_made(this_turn)
    if not turn_ground_truth:
        return "text", HALT_TEXT
    if instructed(this_turn):
        if made < len(turn_ground_truth):
            return "calls", [turn_ground_truth[made]]
        return "text", RESULT_TEXT
    if made == 0:
        return "calls", turn_ground_truth[:1]
    return "text", HALT_TEXT


class HaltRecoverablePolicy(BfclReferencePolicy):
    """``ref/halt-recoverable``: halts after one call, completes the turn when reconciled."""

    async def complete(self, request: ModelRequest) -> Emission:
        await super().complete(request)  # validates the context
        context = request.context
        assert context is not None
        kind, value = halt_recoverable_action(context.answer_key["ground_truth"][context.turn_index], request.messages)
        return self._calls(value, context) if kind == "calls" else self._text(value)

    def respond(self, context: TaskContext, ground_truth: list[list[str]], after_calls: bool) -> Emission:
        return self._text(HALT_TEXT)


class OvercallHeedingPolicy(OvercallPolicy):
    """``ref/overcall-heeding``: over-calls, but asks or refuses when told not to call."""

    async def complete(self, request: ModelRequest) -> Emission:
        emission = await super().complete(request)
        context = request.context
        assert context is not None
        if instructed(current_turn(request.messages)):
            return self._text(empty_turn_text(context))
        return emission
