"""Reference-action matching, recomputed from the trajectory.

Stored ``action_checks`` cannot be used: tau2 omits them for simulations it does not
evaluate (``max_steps``, ``too_many_errors``, ...; notes/tau2-bench.md §9) and for tasks
without actions. The rule is tau2's ``Action.compare_with_tool_call`` and
``evaluator_action._check_actions`` (notes §6):

* predicted calls are every tool call in the trajectory (assistant and user messages),
  including calls whose tool message is an error; the agent's own signal (Table 2's
  tool_call GAR) matches only the agent's reference actions against the agent's calls,
  since a telecom user's reference actions are the user's to take;
* a reference action matches if *any* call matches (order-insensitive, not one-to-one);
* a call matches when the names agree and then: ``compare_args is None`` compares the
  keys present in the call (an omitted reference key still matches, an extra key fails);
  ``compare_args == []`` compares the name only; otherwise the listed keys;
* argument values compare with ``==`` after tau2 HEAD's normalisation of strings that
  hold JSON objects or arrays (so ``"100"`` still differs from ``100``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tooldiag.suites.tau2.schema import Action, MessageRecord, TaskRecord, ToolCallRecord


def normalize_argument(value: Any) -> Any:
    """Decode strings holding JSON objects/arrays, recursively (tau2 ``_normalize_action_arg_value``)."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith(("{", "[")):
            try:
                return normalize_argument(json.loads(stripped))
            except (json.JSONDecodeError, RecursionError):
                return value
        return value
    if isinstance(value, dict):
        return {key: normalize_argument(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalize_argument(item) for item in value]
    return value


def action_matches_call(action: Action, call: ToolCallRecord) -> bool:
    """tau2's ``Action.compare_with_tool_call`` (exact match, no partial credit)."""
    if action.name != call.name:
        return False
    keys = action.compare_args
    if keys is not None and len(keys) == 0:
        return True
    if call.arguments is None:  # arguments that are not a JSON object match nothing but a name-only action
        return False
    compare = list(call.arguments.keys()) if keys is None else keys
    if not compare:
        return True
    called = {k: normalize_argument(v) for k, v in call.arguments.items() if k in compare}
    expected = {k: normalize_argument(v) for k, v in action.arguments.items() if k in compare}
    return called == expected


def trajectory_calls(messages: Iterable[MessageRecord]) -> list[ToolCallRecord]:
    """Every tool call of the simulation, as tau2's ``ActionEvaluator.extract_tool_calls``."""
    calls: list[ToolCallRecord] = []
    for message in messages:
        if message.role in ("assistant", "user"):
            calls.extend(message.calls)
    return calls


def agent_calls(messages: Iterable[MessageRecord]) -> list[ToolCallRecord]:
    """The agent's tool calls: those on assistant messages. A telecom or banking user's own
    calls (on user messages, ``requestor: "user"``) are the user acting, not the agent."""
    return [call for message in messages if message.role == "assistant" for call in message.calls]


def user_calls(messages: Iterable[MessageRecord]) -> list[ToolCallRecord]:
    """The user simulator's own tool calls (telecom's phone, banking's user tools)."""
    return [call for message in messages if message.role == "user" for call in message.calls]


def is_user_action(action: Action) -> bool:
    """A reference action the user has to take (``requestor: "user"``; telecom, banking)."""
    return action.requestor == "user"


def match_actions(actions: Iterable[Action], calls: list[ToolCallRecord]) -> list[bool]:
    """One ``action_match`` per reference action."""
    return [any(action_matches_call(action, call) for call in calls) for action in actions]


def reference_paths(task: TaskRecord) -> list[tuple[str | None, list[Action]]]:
    """The task's reference action lists: ``actions``, or one per acceptable outcome
    (fork extension) when ``actions`` is null; ``[]`` when there are none."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return []
    if criteria.actions is not None:
        return [(None, list(criteria.actions))]
    if criteria.acceptable_outcomes:
        return [(outcome.outcome_id, list(outcome.actions or [])) for outcome in criteria.acceptable_outcomes]
    return []


def all_actions_matched(
    task: TaskRecord, calls: list[ToolCallRecord], *, agent_only: bool = False
) -> tuple[bool | None, str | None]:
    """Whether every reference action is matched (tau2's ACTION component).

    ``agent_only``: only the agent's reference actions count (the user's, ``requestor:
    "user"``, are left out; pass the agent's calls): the agent's own tool_call signal.
    Returns ``(None, None)`` for a task without (such) reference actions; with several
    acceptable outcomes, ``True`` and the first outcome fully matched, if any.
    """
    paths = [
        (outcome, [a for a in actions if not (agent_only and is_user_action(a))])
        for outcome, actions in reference_paths(task)
    ]
    paths = [(outcome, actions) for outcome, actions in paths if actions]
    if not paths:
        return None, None
    for outcome, actions in paths:
        if all(match_actions(actions, calls)):
            return True, outcome
    return False, None
