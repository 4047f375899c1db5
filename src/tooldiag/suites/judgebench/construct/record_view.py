"""A record as the gates read it: the released-schema dict with its JSON-string columns decoded.

The released files store ``available_tools``, ``expected_responses``, each assistant turn's
``tool_calls``, each call's ``arguments``, each tool turn's ``content`` and ``metadata`` as JSON
strings; hand-written files (the built-in records) often hold them decoded. The gates must give
the same verdict on both, so they never read the raw dict: :func:`view_record` decodes once,
tolerates either form, and keeps every decoding problem as text for the gate that owns it
instead of raising (a gate reports, it does not crash on a bad record).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass
class PlanCall:
    """One expected call with what the trace recorded for it."""

    index: int  # position in the flat plan
    turn: int  # index of its assistant turn: calls of one turn cannot use each other's outputs
    call_id: str | None
    name: str
    arguments: Any  # decoded; a dict when the record is well formed
    output: Any = None  # the tool turn's content, decoded when it is JSON
    has_output: bool = False


@dataclass
class RecordView:
    """The decoded record; ``problems`` maps a column to what could not be decoded."""

    raw: Mapping[str, Any]
    tools: list[Any] | None
    responses: list[Any] | None
    expected_tool_calls: list[Any] | None
    metadata: Any
    calls: list[PlanCall] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def query(self) -> str:
        value = self.raw.get("user_message")
        return value if isinstance(value, str) else ""

    @property
    def dag_type(self) -> str:
        value = self.raw.get("dag_type")
        return value.strip().replace("-", "_") if isinstance(value, str) else ""

    def tool_body(self, name: str) -> dict[str, Any] | None:
        """The ``function`` object of the offered tool called ``name`` (first one), or ``None``."""
        for tool in self.tools or []:
            body = function_body(tool)
            if body is not None and body.get("name") == name:
                return body
        return None

    def tool_entry(self, name: str) -> dict[str, Any] | None:
        """The offered tool called ``name`` exactly as ``available_tools`` holds it."""
        for tool in self.tools or []:
            body = function_body(tool)
            if body is not None and body.get("name") == name:
                return tool if isinstance(tool, dict) else None
        return None


def function_body(tool: Any) -> dict[str, Any] | None:
    """``{"type": "function", "function": {...}}`` -> the inner object (a bare one is tolerated)."""
    if not isinstance(tool, dict):
        return None
    body = tool.get("function", tool)
    return body if isinstance(body, dict) else None


def decode(value: Any) -> tuple[Any, str | None]:
    """A JSON-string column decoded (other values as they are), with the problem if it is not JSON."""
    if not isinstance(value, str):
        return value, None
    try:
        return json.loads(value), None
    except json.JSONDecodeError as exc:
        return value, f"not valid JSON ({exc.msg} at char {exc.pos})"


def decode_arguments(value: Any) -> tuple[Any, str | None]:
    """Arguments as a dict: a JSON-object string is decoded, absent or blank means no arguments."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}, None
    decoded, problem = decode(value)
    if problem is None and not isinstance(decoded, dict):
        problem = f"is a JSON {type(decoded).__name__}, not an object"
    return decoded, problem


def view_record(record: Mapping[str, Any]) -> RecordView:
    """Decode ``record`` once for all gates (see the module docstring)."""
    problems: dict[str, str] = {}
    columns: dict[str, Any] = {}
    for column in ("available_tools", "expected_responses", "expected_tool_calls", "metadata"):
        value, problem = decode(record.get(column))
        if problem:
            problems[column] = problem
        columns[column] = value
    tools = columns["available_tools"] if isinstance(columns["available_tools"], list) else None
    responses = columns["expected_responses"] if isinstance(columns["expected_responses"], list) else None
    flat = columns["expected_tool_calls"] if isinstance(columns["expected_tool_calls"], list) else None
    view = RecordView(record, tools, responses, flat, columns["metadata"], problems=problems)
    _read_calls(view)
    return view


def _read_calls(view: RecordView) -> None:
    by_id: dict[str, PlanCall] = {}
    for turn, message in enumerate(view.responses or []):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant" and message.get("tool_calls"):
            items, problem = decode(message.get("tool_calls"))
            if problem or not isinstance(items, list):
                view.problems.setdefault("tool_calls", f"turn {turn}: tool_calls {problem or 'is not a list'}")
                continue
            for item in items:
                body = function_body(item) if isinstance(item, dict) else None
                if body is None:
                    view.problems.setdefault("tool_calls", f"turn {turn}: a call is not an object")
                    continue
                arguments, problem = decode_arguments(body.get("arguments"))
                name = body.get("name")
                if problem:
                    view.problems.setdefault("arguments", f"{name}: arguments {problem}")
                call_id = item.get("id") if isinstance(item.get("id"), str) else None
                call = PlanCall(len(view.calls), turn, call_id, name if isinstance(name, str) else "", arguments)
                view.calls.append(call)
                if call_id is not None and call_id not in by_id:
                    by_id[call_id] = call
        elif message.get("role") == "tool":
            answered = by_id.get(str(message.get("tool_call_id")))
            if answered is not None and not answered.has_output:
                answered.output, _ = decode(message.get("content"))
                answered.has_output = True


@dataclass(frozen=True)
class GateResult:
    """One gate's verdict on one record; ``passed`` is ``None`` when the gate was skipped."""

    name: str
    passed: bool | None
    detail: str = ""

    @property
    def status(self) -> Literal["pass", "fail", "skipped"]:
        return "skipped" if self.passed is None else "pass" if self.passed else "fail"


def gate_result(name: str, problems: list[str], ok_detail: str = "") -> GateResult:
    """Pass when there is no problem; otherwise fail with the first three problems as the detail."""
    if not problems:
        return GateResult(name, True, ok_detail)
    more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
    return GateResult(name, False, "; ".join(problems[:3]) + more)


def view_of(record: Mapping[str, Any], context: Mapping[str, Any]) -> RecordView:
    """The view :func:`~tooldiag.suites.judgebench.construct.gates.run_gates` decoded once, or a new one."""
    view = context.get("view")
    return view if isinstance(view, RecordView) else view_record(record)
