"""OpenInference conventions (Arize Phoenix and its instrumentations): LLM and TOOL spans.

An ``openinference.span.kind`` ``LLM`` span carries its messages flattened into attributes:
``llm.input_messages.<i>.message.{role,content,name,tool_call_id}``, text parts as
``...message.contents.<k>.message_content.text``, and tool calls as
``...message.tool_calls.<j>.tool_call.{id,function.name,function.arguments}`` (the same under
``llm.output_messages``). When the flattened messages are absent, ``input.value`` /
``output.value`` holding the OpenAI request / ChatCompletion JSON are read instead; with neither
(``OPENINFERENCE_HIDE_INPUTS``/``..._OUTPUTS``, or a span kind that records no text) the output is
``content_missing``. A ``TOOL`` span (``tool.name``, ``tool_call.id`` where recorded,
``output.value``) marks its call failed when its status is ERROR or its output is an MCP
``isError`` result. ``session.id`` groups the traces of one conversation (read by :mod:`.otel`).
Ignored: CHAIN/AGENT/RETRIEVER/EMBEDDING spans (they only order their children), ``llm.tools``,
token counts, images.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tooldiag.suites.traces.conversation import (
    ConversationBuilder,
    ToolRun,
    missing_output,
    openai_message,
    tool_call,
)

if TYPE_CHECKING:
    from tooldiag.suites.traces.otel import Span

KIND = "openinference.span.kind"


def add_span(builder: ConversationBuilder, span: Span) -> bool:
    """Feed ``span`` to ``builder`` if it is an OpenInference LLM or TOOL span; whether it was one."""
    kind = str(span.attributes.get(KIND, "")).upper()
    attributes = span.attributes
    if kind == "TOOL":
        call_id = attributes.get("tool_call.id") or attributes.get("tool.id")
        builder.add_tool_run(
            ToolRun(
                call_id=None if call_id is None else str(call_id),
                name=None if attributes.get("tool.name") is None else str(attributes["tool.name"]),
                result=attributes.get("output.value"),
                failed=span.error,
            )
        )
        return True
    if kind != "LLM":
        return False
    inputs = flattened_messages(attributes, "llm.input_messages.") or _request_messages(attributes.get("input.value"))
    outputs = flattened_messages(attributes, "llm.output_messages.") or _response_messages(
        attributes.get("output.value")
    )
    outputs = [m for m in outputs if m["role"] == "assistant"][:1]
    builder.add_call(inputs or None, outputs or [missing_output()])
    return True


def flattened_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The messages flattened under ``prefix`` (``llm.input_messages.``), in index order, as OpenAI messages."""
    nested: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if not index.isdigit() or not rest.startswith("message."):
            continue
        node = nested.setdefault(int(index), {})
        path = rest[len("message.") :].split(".")
        for step in path[:-1]:
            node = node.setdefault(step, {})
        node[path[-1]] = value
    return [_message(nested[i]) for i in sorted(nested)]


def _indexed(node: Any) -> list[Any]:
    """``{"0": {...}, "1": {...}}`` (a flattened list) in index order."""
    if not isinstance(node, dict):
        return []
    return [node[k] for k in sorted((k for k in node if k.isdigit()), key=int)]


def _message(node: dict[str, Any]) -> dict[str, Any]:
    role = str(node.get("role", "user"))
    content = node.get("content")
    if content is None and "contents" in node:
        texts = [p.get("message_content", {}).get("text") for p in _indexed(node["contents"]) if isinstance(p, dict)]
        content = "\n".join(t for t in texts if t) or None
    message: dict[str, Any] = {"role": role, "content": content}
    calls = []
    for entry in _indexed(node.get("tool_calls")):
        call = entry.get("tool_call", {}) if isinstance(entry, dict) else {}
        function = call.get("function", {})
        calls.append(tool_call(call.get("id"), function.get("name"), function.get("arguments")))
    if calls:
        message["tool_calls"] = calls
    if node.get("tool_call_id") is not None:
        message["tool_call_id"] = str(node["tool_call_id"])
    return message


def _json_object(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, str):
        return value if isinstance(value, dict) else None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _request_messages(value: Any) -> list[dict[str, Any]]:
    request = _json_object(value)
    messages = request.get("messages") if request else None
    return [openai_message(m) for m in messages or [] if isinstance(m, dict)]


def _response_messages(value: Any) -> list[dict[str, Any]]:
    response = _json_object(value)
    choices = response.get("choices") if response else None
    return [
        openai_message(c["message"])
        for c in choices or []
        if isinstance(c, dict) and isinstance(c.get("message"), dict)
    ]
