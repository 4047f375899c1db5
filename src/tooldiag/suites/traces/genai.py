"""OpenTelemetry GenAI semantic conventions: what a ``chat`` and an ``execute_tool`` span say.

The conventions are still marked Development, so both spellings occur and both are read:

* **current** (``opentelemetry-instrumentation-openai-v2`` with
  ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``): the span attributes
  ``gen_ai.input.messages`` / ``gen_ai.output.messages``, JSON lists of ``{"role", "parts"}``
  with ``text``, ``tool_call`` (``id``, ``name``, ``arguments``) and ``tool_call_response``
  (``id``, ``response``) parts;
* **older**: span events ``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message`` (attributes ``content``, ``tool_calls``,
  ``id``) and ``gen_ai.choice`` (``message`` or ``content``/``tool_calls``, ``finish_reason``), and
  the oldest ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events (``gen_ai.prompt``,
  ``gen_ai.completion``: OpenAI messages as JSON).

A chat span with none of them did not capture content (capture is opt-in): its output is an
assistant message with ``content_missing: true``, carrying a tool call only when the finish
reason (``gen_ai.response.finish_reasons``, recorded without content) says it made one.
``execute_tool`` spans (``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.result``)
mark their call failed when the span's status is ERROR (or ``error.type`` is set) or the result
is an MCP ``isError`` result. Ignored: ``gen_ai.system_instructions``, reasoning and media parts,
token usage, embeddings.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tooldiag.suites.traces.conversation import ConversationBuilder, ToolRun, missing_output, text_of, tool_call

if TYPE_CHECKING:
    from tooldiag.suites.traces.otel import Span

_CHAT_OPERATIONS = {"chat", "text_completion", "generate_content"}
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
#: Stand-in name of a tool call whose name the trace did not capture (only its finish reason).
UNCAPTURED_TOOL = "(not captured)"


def add_span(builder: ConversationBuilder, span: Span) -> bool:
    """Feed ``span`` to ``builder`` if it is a GenAI chat or tool span; whether it was one."""
    attributes = span.attributes
    operation = attributes.get("gen_ai.operation.name")
    if operation == "execute_tool":
        builder.add_tool_run(
            ToolRun(
                call_id=_str_or_none(attributes.get("gen_ai.tool.call.id")),
                name=_str_or_none(attributes.get("gen_ai.tool.name")),
                result=attributes.get("gen_ai.tool.call.result"),
                failed=span.error or attributes.get("error.type") is not None,
            )
        )
        return True
    has_content = "gen_ai.input.messages" in attributes or "gen_ai.output.messages" in attributes
    has_events = any(
        name in _MESSAGE_EVENTS or name.startswith(("gen_ai.choice", "gen_ai.content.")) for name, _ in span.events
    )
    if operation not in _CHAT_OPERATIONS and not has_content and not has_events:
        return False
    if has_content:
        inputs = _part_messages(attributes.get("gen_ai.input.messages"))
        outputs = [m for m in _part_messages(attributes.get("gen_ai.output.messages")) if m["role"] == "assistant"]
    else:
        inputs, outputs = _event_messages(span.events)
    if not outputs:
        reasons = attributes.get("gen_ai.response.finish_reasons") or []
        calls = [tool_call(None, UNCAPTURED_TOOL, None)] if "tool_calls" in reasons else []
        outputs = [missing_output(calls)]
    builder.add_call(inputs or None, outputs[:1])
    return True


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _part_messages(value: Any) -> list[dict[str, Any]]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` as OpenAI messages (a tool response part
    becomes its own tool message)."""
    out: list[dict[str, Any]] = []
    for message in _json(value) or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", "user"))
        texts, calls = [], []
        for part in message.get("parts") or []:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                texts.append(str(part.get("content", "")))
            elif kind == "tool_call":
                calls.append(tool_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                response = part.get("response")
                content = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
                out.append({"role": "tool", "tool_call_id": str(part.get("id") or ""), "content": content})
        if role == "tool":  # its tool_call_response parts are the tool messages added above
            continue
        entry: dict[str, Any] = {"role": role, "content": "\n".join(texts) if texts else None}
        if calls:
            entry["tool_calls"] = calls
        out.append(entry)
    return out


def _openai_message(role: str, body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI message from an event's attributes (or a JSON ``message`` attribute)."""
    calls = []
    for raw in _json(body.get("tool_calls")) or []:
        if isinstance(raw, dict):
            function = raw.get("function") or {}
            calls.append(tool_call(raw.get("id"), function.get("name"), function.get("arguments")))
    message: dict[str, Any] = {"role": role, "content": text_of(_json_content(body.get("content")))}
    if calls:
        message["tool_calls"] = calls
    if role == "tool":
        message["tool_call_id"] = str(body.get("id") or body.get("tool_call_id") or "")
    return message


def _json_content(content: Any) -> Any:
    """Event ``content`` is text, or (some instrumentations) a JSON list of OpenAI content parts."""
    return _json(content) if isinstance(content, str) and content.startswith("[{") else content


def _event_messages(events: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The older spellings: per-message events, ``gen_ai.choice``, ``gen_ai.content.prompt/completion``."""
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for name, attributes in events:
        if name in _MESSAGE_EVENTS:
            inputs.append(_openai_message(_MESSAGE_EVENTS[name], attributes))
        elif name == "gen_ai.choice":
            body = _json(attributes.get("message"))
            outputs.append(_openai_message("assistant", body if isinstance(body, dict) else attributes))
        elif name == "gen_ai.content.prompt":
            for message in _json(attributes.get("gen_ai.prompt")) or []:
                if isinstance(message, dict):
                    inputs.append(_openai_message(str(message.get("role", "user")), message))
        elif name == "gen_ai.content.completion":
            for message in _json(attributes.get("gen_ai.completion")) or []:
                if isinstance(message, dict):
                    outputs.append(_openai_message("assistant", message))
    return inputs, outputs
