"""Reference policies for BFCL multi-turn: ``ref/oracle``, ``ref/overcall``, ``ref/halt``.

Deterministic, offline known-answer self-tests, reachable through the normal model
string and used by ``tooldiag demo``. They read the case's ground truth from
:class:`~tooldiag.models.base.TaskContext` (``answer_key["ground_truth"]``) and answer
in native function calling like any model would.

* ``ref/oracle`` replays the ground truth (all calls of a turn in one step, then a
  short text result). On a turn with empty ground truth it asks for the missing value
  (miss_param) or refuses (miss_func, and base/long_context's three empty turns), in
  text. Must score 100 (Acc and GAR).
* ``ref/overcall``, the tool-specialised pattern: never asks or refuses; on an
  empty-ground-truth turn it emits the *next* turn's ground-truth calls (on miss_func
  that calls the held-out function with its correct arguments, which BFCL executes),
  then replays the ground truth as usual. GAR for ask/refuse is 0 while BFCL's grader
  still passes some of these cases: Acc > GAR.
* ``ref/halt`` makes the first ground-truth call of each turn, then stops with a text
  summary: GAR for tool_call is 100, Acc far below (execution failure).
* ``ref/coin``, stochastic by design but seeded (the known answer of ``--repeats``): per
  (case, sample) it flips a coin and answers the whole draw as ``ref/overcall`` with
  probability :data:`COIN_Q`, else as ``ref/oracle``. The coin is :func:`coin_heads`: the first
  8 bytes of ``sha256("ref/coin:{seed}:{case_id}:{sample}")`` as an integer, divided by 2**64,
  below ``COIN_Q`` (``seed``: the request's ``GenerationConfig.seed``, ``none`` without one, so
  runs with other ``--seed`` values draw other coins). A case whose oracle and overcall verdicts
  differ flips across K repeats unless its K coins agree: expected flip rate
  ``1 - COIN_Q**K - (1 - COIN_Q)**K`` on those cases, 0 on the others.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
from typing import Any

from tooldiag.errors import UserError
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest, TaskContext
from tooldiag.trajectory import Emission, ToolCall

ASK_TEXT = "Could you please provide the missing value I need to complete this request?"
REFUSE_TEXT = "I cannot do that: none of the available functions can perform this request."
RESULT_TEXT = "Here are the results of the requested operations."
HALT_TEXT = "I started on your request; here is what I found so far."
#: ``ref/coin``: the probability that a (case, sample) draw answers as ``ref/overcall``.
COIN_Q = 0.3


@functools.cache
def _parameter_names(class_names: tuple[str, ...], method: str) -> tuple[str, ...]:
    from tooldiag.suites.bfcl.executor import _backend_config

    mapping, _ = _backend_config()
    import importlib

    for class_name in class_names:
        cls = getattr(importlib.import_module(mapping[class_name]), class_name)
        target = getattr(cls, method, None)
        if target is not None and not method.startswith("_"):
            params = list(inspect.signature(target).parameters)
            return tuple(p for p in params if p != "self")
    return ()


def ground_truth_call(call: str, involved_classes: list[str], call_id: str) -> ToolCall:
    """A ground-truth call string (``"sort('a.pdf')"``) as a structured tool call.

    Parsed with ``ast`` (literals only); positional arguments are named from the
    backend method's signature, as a function-calling model would name them.
    """
    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain call: {call!r}")
    name = node.func.id
    arguments: dict[str, Any] = {}
    names = _parameter_names(tuple(involved_classes), name)
    for position, arg in enumerate(node.args):
        arguments[names[position]] = ast.literal_eval(arg)
    for keyword in node.keywords:
        if keyword.arg is None:  # ``**mapping``: no ground-truth call is written so
            raise ValueError(f"not a plain call: {call!r}")
        arguments[keyword.arg] = ast.literal_eval(keyword.value)
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=json.dumps(arguments))


class BfclReferencePolicy(ModelBackend):
    """Shared plumbing: where are we in the case, and what does the answer key say."""

    def __init__(self, name: str, options: ModelOptions) -> None:
        self.policy = name

    @property
    def deterministic(self) -> bool:
        return True

    def _calls(self, calls: list[str], context: TaskContext) -> Emission:
        classes = context.answer_key.get("involved_classes", [])
        return Emission(
            tool_calls=[
                ground_truth_call(c, classes, f"call_{context.turn_index}_{context.step_index}_{i}")
                for i, c in enumerate(calls)
            ],
            finish_reason="tool_calls",
            latency_s=0.0,
        )

    @staticmethod
    def _text(text: str) -> Emission:
        return Emission(text=text, finish_reason="stop", latency_s=0.0)

    async def complete(self, request: ModelRequest) -> Emission:
        context, messages = request.context, request.messages
        if context is None or context.suite != "bfcl" or "ground_truth" not in context.answer_key:
            raise UserError(
                f"ref/{self.policy} is a BFCL reference policy and only answers BFCL cases",
                hint="use it with `tooldiag run bfcl` or `tooldiag demo`",
            )
        ground_truth: list[list[str]] = context.answer_key["ground_truth"]
        # The step index counts queries in this turn; after our calls ran, the last
        # message is a tool result and we close the turn with text.
        after_calls = bool(messages) and messages[-1].role == "tool"
        return self.respond(context, ground_truth, after_calls)

    def respond(self, context: TaskContext, ground_truth: list[list[str]], after_calls: bool) -> Emission:
        raise NotImplementedError


def empty_turn_text(context: TaskContext) -> str:
    return ASK_TEXT if context.category == "miss_param" else REFUSE_TEXT


class OraclePolicy(BfclReferencePolicy):
    """Replays the ground truth; asks or refuses on empty-ground-truth turns."""

    def respond(self, context: TaskContext, ground_truth: list[list[str]], after_calls: bool) -> Emission:
        turn = ground_truth[context.turn_index]
        if after_calls:
            return self._text(RESULT_TEXT)
        if not turn:
            return self._text(empty_turn_text(context))
        return self._calls(turn, context)


class OvercallPolicy(BfclReferencePolicy):
    """Never asks or refuses: on an empty turn it acts on the next turn's calls."""

    def respond(self, context: TaskContext, ground_truth: list[list[str]], after_calls: bool) -> Emission:
        if after_calls:
            return self._text(RESULT_TEXT)
        turn = ground_truth[context.turn_index]
        if not turn:
            later = [t for t in ground_truth[context.turn_index + 1 :] if t]
            if not later:
                return self._text(RESULT_TEXT)
            return self._calls(later[0], context)
        return self._calls(turn, context)


class HaltPolicy(BfclReferencePolicy):
    """Makes the first ground-truth call of each turn, then stops with a summary."""

    def respond(self, context: TaskContext, ground_truth: list[list[str]], after_calls: bool) -> Emission:
        turn = ground_truth[context.turn_index]
        if after_calls or not turn:
            return self._text(HALT_TEXT)
        return self._calls(turn[:1], context)


def coin_heads(seed: int | None, case_id: str, sample: int, q: float = COIN_Q) -> bool:
    """``ref/coin``'s draw for one (case, sample): overcall when true (module docstring)."""
    digest = hashlib.sha256(f"ref/coin:{'none' if seed is None else seed}:{case_id}:{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < q


class CoinPolicy(BfclReferencePolicy):
    """Oracle or overcall per (case, sample), by a seeded coin: repeats that really differ."""

    def __init__(self, name: str, options: ModelOptions) -> None:
        super().__init__(name, options)
        self.oracle = OraclePolicy(name, options)
        self.overcall = OvercallPolicy(name, options)

    async def complete(self, request: ModelRequest) -> Emission:
        context = request.context
        if context is not None and context.suite == "bfcl":  # otherwise the base class refuses, as every policy
            heads = coin_heads(request.config.seed, context.case_id, context.sample)
            return await (self.overcall if heads else self.oracle).complete(request)
        return await super().complete(request)
