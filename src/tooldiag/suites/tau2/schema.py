"""The parts of a tau2-bench results file that the diagnostic reads.

Mirrors ``src/tau2/data_model/{simulation,tasks,message}.py`` of sierra-research/tau2-bench
(notes/tau2-bench.md §1, §8), but lenient: every field the diagnostic can do without has
a default, unknown fields are ignored (voice runs, review blocks, costs), and values
that changed type between versions (integer task ids, tool arguments stored as a JSON
string) are coerced. Only what the analysis cannot work without is required: a
simulation's ``task_id``, a tool call's ``name``, a message's ``role``, an action's
``name``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

#: Termination reasons after which tau2 evaluates a simulation (notes §9); the others
#: get reward 0 without ``db_check``/``action_checks``.
EVALUATED_TERMINATIONS = frozenset({"user_stop", "agent_stop"})

#: Excluded from pass^k and every rate, as tau2's ``agent_metrics.get_metrics_df`` does.
INFRASTRUCTURE_ERROR = "infrastructure_error"

#: The agent implementation that sees the reference actions in its prompt (oracle).
ORACLE_IMPLEMENTATION = "llm_agent_gt"

#: The fixed first assistant message of every tau2 simulation (notes §9).
AGENT_GREETING = "Hi! How can I help you today?"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _as_str_id(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class ToolCallRecord(_Lenient):
    """One tool call as tau2 stored it (``ToolCall = {id, name, arguments, requestor}``).

    ``arguments`` is ``None`` when the stored value is not a JSON object (the raw text
    is kept in ``raw_arguments``): such a call can still match a name-only action.
    """

    id: str = ""
    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str | None = None
    requestor: str = "assistant"

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: Any) -> Any:
        return "" if value is None else _as_str_id(value)

    @model_validator(mode="before")
    @classmethod
    def _arguments(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        raw = data.get("arguments")
        if isinstance(raw, str):
            data["raw_arguments"] = raw
            try:
                parsed = json.loads(raw)
            except (json.JSONDecodeError, RecursionError):
                parsed = None
            data["arguments"] = parsed if isinstance(parsed, dict) else None
        elif raw is None:
            data["arguments"] = {}
        elif not isinstance(raw, dict):
            data["raw_arguments"] = json.dumps(raw)
            data["arguments"] = None
        return data


class MessageRecord(_Lenient):
    """One message: ``assistant`` (text and/or tool calls), ``user``, ``tool`` or ``system``."""

    role: str
    content: str | None = None
    tool_calls: list[ToolCallRecord] | None = None
    #: On a tool message, the id of the call it answers.
    id: str | None = None
    #: On a tool message, true when the tool raised (content ``"Error: ..."``).
    error: bool = False
    turn_idx: int | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False)

    @field_validator("id", mode="before")
    @classmethod
    def _msg_id(cls, value: Any) -> Any:
        return _as_str_id(value)

    @field_validator("error", mode="before")
    @classmethod
    def _error(cls, value: Any) -> Any:
        return bool(value) if value is not None else False

    @property
    def calls(self) -> list[ToolCallRecord]:
        return list(self.tool_calls or [])

    @property
    def user_visible(self) -> bool:
        """An assistant message the user sees: tau2 never shows text that rides on a
        tool-call message (notes §9), so only messages without tool calls count."""
        return self.role == "assistant" and not self.tool_calls


class Action(_Lenient):
    """A reference action (``EvaluationCriteria.actions``)."""

    action_id: str = ""
    requestor: str = "assistant"
    name: str
    arguments: dict[str, Any] = {}
    compare_args: list[str] | None = None

    @field_validator("arguments", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        return {} if value is None else value


class AcceptableOutcome(_Lenient):
    """One accepted end state of a task with several (an extension of some forks,
    e.g. blakeelias/tau2-bench ``airline-relaxed``; absent from upstream tau2)."""

    outcome_id: str | None = None
    description: str | None = None
    actions: list[Action] | None = None
    reward: float | None = None


class EvaluationCriteria(_Lenient):
    actions: list[Action] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[str] | None = None
    acceptable_outcomes: list[AcceptableOutcome] | None = None


class TaskRecord(_Lenient):
    """A task as embedded in ``Results.tasks`` (tasks changed between tau2 versions,
    so the file's own copy is authoritative)."""

    id: str
    description: dict[str, Any] | None = None
    user_scenario: dict[str, Any] | str | None = None
    evaluation_criteria: EvaluationCriteria | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _task_id(cls, value: Any) -> Any:
        return _as_str_id(value)


class RewardInfo(_Lenient):
    reward: float | None = None
    reward_basis: list[str] | None = None
    info: dict[str, Any] | None = None


class SimulationRecord(_Lenient):
    """One simulation (``SimulationRun``): a task, a trial, its messages and reward."""

    id: str = ""
    task_id: str
    trial: int | None = None
    seed: int | None = None
    termination_reason: str | None = None
    reward_info: RewardInfo | None = None
    messages: list[MessageRecord] = []

    @field_validator("task_id", "id", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return _as_str_id(value)

    @field_validator("messages", mode="before")
    @classmethod
    def _messages(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("termination_reason", mode="before")
    @classmethod
    def _termination(cls, value: Any) -> Any:
        # Enums were dumped as their value; tolerate "TerminationReason.USER_STOP" too.
        if isinstance(value, str) and value.startswith("TerminationReason."):
            return value.split(".", 1)[1].lower()
        return value


class ParticipantInfo(_Lenient):
    implementation: str | None = None
    llm: str | None = None


class EnvironmentInfo(_Lenient):
    domain_name: str | None = None
    policy: str | None = None


class RunInfo(_Lenient):
    """``Results.info``: who played agent and user, in which domain, under which policy."""

    git_commit: str | None = None
    num_trials: int | None = None
    max_steps: int | None = None
    seed: int | None = None
    agent_info: ParticipantInfo = ParticipantInfo()
    user_info: ParticipantInfo = ParticipantInfo()
    environment_info: EnvironmentInfo = EnvironmentInfo()

    @field_validator("agent_info", "user_info", "environment_info", mode="before")
    @classmethod
    def _blocks(cls, value: Any) -> Any:
        return {} if value is None else value
