"""Rebuilding one conversation from the model calls and tool calls a trace recorded.

Shared by the OpenTelemetry (GenAI, OpenInference) and LangSmith readers, which differ only in
where they find a call's messages. A trace records each model call with the history it was sent,
so the same messages appear again and again; :class:`ConversationBuilder` merges them into one
history:

* a call whose input history starts with the history built so far adds only what follows it
  (the new user message, the tool results), then its output;
* a call whose input does not extend it (the agent trimmed or rewrote its history, or a
  sub-agent started its own) adds the input messages not yet in the history, then its output;

so the LAST call's long input never duplicates what earlier calls already contributed, and an
output that a later input repeats is kept once. Messages are compared by role, text, tool calls
(name and arguments, canonical JSON) and tool-call id.

Tool executions the trace recorded apart from the model calls (``execute_tool`` spans, LangSmith
tool runs) mark the tool message of their call ``tool_error: true`` when they failed, and add the
tool message when no later model call carried it. A failed call is one that raised, or an MCP
``CallToolResult`` with ``isError: true`` (a successful JSON-RPC response: an importer that only
looks at the error status would count it as a success), or a JSON-RPC ``error`` response.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.traces.agent_log import GoldMap

#: Span / run attributes (metadata) a trace can carry its own gold in, read before the gold map.
GOLD_ATTRIBUTE = "tooldiag.gold_class"
CATEGORY_ATTRIBUTE = "tooldiag.category"
PASSED_ATTRIBUTE = "tooldiag.passed"


def tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """An OpenAI tool call; ``arguments`` kept as the raw text, with ``parse_error`` when it is not JSON."""
    if arguments is None:
        raw = "{}"
    elif isinstance(arguments, str):
        raw = arguments
    else:
        raw = json.dumps(arguments, ensure_ascii=False)
    call: dict[str, Any] = {
        "id": "" if call_id is None else str(call_id),
        "type": "function",
        "function": {"name": "" if name is None else str(name), "arguments": raw},
    }
    if isinstance(arguments, str):  # arguments given already parsed (GenAI, LangChain) are JSON by construction
        try:
            json.loads(raw)
        except json.JSONDecodeError as exc:
            call["parse_error"] = f"arguments are not JSON ({exc.msg} at column {exc.colno})"
    return call


def failed_result(content: Any) -> bool:
    """Whether a tool result is a failure: an MCP result with ``isError: true`` (bare or inside a
    JSON-RPC ``result``) or a JSON-RPC ``error`` response; ``content`` is the result or its JSON text."""
    value = content
    if isinstance(value, str):
        text = value.strip()
        if not text.startswith("{"):
            return False
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return False
    if not isinstance(value, dict):
        return False
    if value.get("isError") is True:
        return True
    result = value.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return True
    return "jsonrpc" in value and isinstance(value.get("error"), dict)


def text_of(content: Any) -> str | None:
    """Message content as text (OpenAI parts joined); ``None`` stays ``None``."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type", "text") == "text"]
        return "\n".join(texts)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def openai_message(raw: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat message (as sent or received) with tool calls normalised (raw arguments, ``parse_error``)."""
    message: dict[str, Any] = {"role": str(raw.get("role", "user")), "content": text_of(raw.get("content"))}
    calls = []
    for call in raw.get("tool_calls") or []:
        if isinstance(call, dict):
            function = call.get("function") or {}
            calls.append(tool_call(call.get("id"), function.get("name"), function.get("arguments")))
    if calls:
        message["tool_calls"] = calls
    if raw.get("tool_call_id") is not None:
        message["tool_call_id"] = str(raw["tool_call_id"])
    return message


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except json.JSONDecodeError:
        return arguments


def fingerprint(message: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two recorded messages the same message (see the module docstring)."""
    calls = tuple(
        (c["function"]["name"], _canonical(c["function"]["arguments"])) for c in message.get("tool_calls") or ()
    )
    text = text_of(message.get("content")) or ""
    return (message.get("role"), text.strip(), calls, message.get("tool_call_id") or "")


@dataclass
class ToolRun:
    """A tool execution recorded apart from the model calls: its call id (if known), name, result, failure."""

    call_id: str | None
    name: str | None
    result: Any
    failed: bool


@dataclass
class ConversationBuilder:
    """Accumulates model calls and tool runs in trace order into one OpenAI-format history."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_runs: list[ToolRun] = field(default_factory=list)
    #: ``fingerprint`` of each of ``messages``, kept alongside: a trace re-sends the whole history on every call.
    _keys: list[tuple[Any, ...]] = field(default_factory=list)

    def add_call(self, inputs: Sequence[dict[str, Any]] | None, outputs: Sequence[dict[str, Any]]) -> None:
        """One model call: its input history (``None``: not captured) and its output message(s)."""
        if inputs:
            known = self._keys
            given = [fingerprint(m) for m in inputs]
            if given[: len(known)] == known:
                self._append(inputs[len(known) :], given[len(known) :])
            else:
                remaining = list(known)
                for message, key in zip(inputs, given, strict=True):
                    if key in remaining:
                        remaining.remove(key)
                    else:
                        self._append([message], [key])
        self._append(outputs, [fingerprint(m) for m in outputs])

    def _append(self, messages: Sequence[dict[str, Any]], keys: Sequence[tuple[Any, ...]]) -> None:
        self.messages.extend(messages)
        self._keys.extend(keys)

    def add_tool_run(self, run: ToolRun) -> None:
        self.tool_runs.append(run)

    def finish(self) -> list[dict[str, Any]]:
        """The history, with tool messages marked ``tool_error`` and the missing ones added from tool runs."""
        messages = [dict(m) for m in self.messages]
        for message in messages:
            if message.get("role") == "tool" and failed_result(message.get("content")):
                message["tool_error"] = True
        matched: set[str] = set()
        for run in self.tool_runs:
            found = _find_call(messages, run, matched)
            if found is None:
                continue
            position, call_id = found
            matched.add(call_id)
            tool_at = next(
                (i for i in range(position + 1, len(messages)) if messages[i].get("tool_call_id") == call_id), None
            )
            failed = run.failed or failed_result(run.result)
            if tool_at is None:
                insert_at = position + 1
                while insert_at < len(messages) and messages[insert_at].get("role") == "tool":
                    insert_at += 1
                content = run.result if isinstance(run.result, str) or run.result is None else json.dumps(run.result)
                tool: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content or ""}
                if failed:
                    tool["tool_error"] = True
                messages.insert(insert_at, tool)
            elif failed:
                messages[tool_at]["tool_error"] = True
        return messages


def _find_call(messages: list[dict[str, Any]], run: ToolRun, matched: set[str]) -> tuple[int, str] | None:
    """``(position, call id)`` of the assistant tool call ``run`` executed: by call id, else (no id
    recorded) the first call of its name not yet matched to a run."""
    for position, message in enumerate(messages):
        for call in message.get("tool_calls") or ():
            call_id = str(call.get("id", ""))
            if run.call_id is not None:
                if call_id == run.call_id:
                    return position, call_id
            elif call["function"]["name"] == run.name and call_id not in matched:
                return position, call_id
    return None


def missing_output(tool_calls: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """An assistant message whose text the trace did not capture: ``content_missing``, never a guessed class.

    ``tool_calls`` are those the trace still recorded (e.g. from the finish reason and the tool spans)."""
    message: dict[str, Any] = {"role": "assistant", "content": None, "content_missing": True}
    calls = list(tool_calls)
    if calls:
        message["tool_calls"] = calls
    return message


def finish_conversation(
    conversation: dict[str, Any], attributes: dict[str, Any], gold_map: GoldMap | None, source: str
) -> dict[str, Any]:
    """Gold, category and ``passed`` from the trace's own attributes, then the gold map; refuses a
    conversation left without gold, naming it and the fix."""
    out = dict(conversation)
    if attributes.get(GOLD_ATTRIBUTE) is not None:
        out["gold_class"] = str(attributes[GOLD_ATTRIBUTE])
    if attributes.get(CATEGORY_ATTRIBUTE) is not None:
        out["category"] = str(attributes[CATEGORY_ATTRIBUTE])
    passed = attributes.get(PASSED_ATTRIBUTE)
    if isinstance(passed, bool):
        out["passed"] = passed
    elif isinstance(passed, str) and passed.lower() in ("true", "false"):
        out["passed"] = passed.lower() == "true"
    if gold_map is not None:
        out = gold_map.apply(out)
    has_gold = out.get("gold_class") is not None or any(m.get("gold_class") for m in out["messages"])
    if not has_gold:
        raise UserError(
            f"{source}: conversation {out['id']!r} has no gold class",
            hint=f"give --gold-map FILE naming it under 'cases' (or a 'default'), or set the attribute "
            f"{GOLD_ATTRIBUTE} on its trace; see docs/traces.md, 'Gold map'",
        )
    return out
