"""``tooldiag import langsmith``: LangSmith run exports as agent-log conversations.

A file is JSON lines of runs (what ``client.list_runs`` yields, one ``run.dict()`` / JSON per
line), or one JSON array of them. A run has ``id``, ``trace_id``, ``parent_run_id``,
``dotted_order``, ``run_type`` (``llm``, ``tool``, ``chain``, ...), ``name``, ``inputs``,
``outputs``, ``error`` and ``extra.metadata``. A conversation is a trace (or, when its runs carry
LangSmith's thread metadata ``thread_id`` / ``session_id`` / ``conversation_id``, that thread);
runs are taken in ``dotted_order`` (which sorts a run after its parent and its earlier siblings).

``llm`` runs give the model calls: ``inputs.messages`` in OpenAI shape (``wrap_openai``: the
request) or LangChain shape (serialised ``HumanMessage``/``AIMessage``/``ToolMessage``, or
``{"type": "human", ...}``; a batch ``[[...]]`` reads its first prompt); ``outputs.choices``
(OpenAI ChatCompletion), ``outputs.generations`` (LangChain ``LLMResult``) or
``outputs.messages``/``outputs.output``. An llm run with no messages recorded (hidden inputs
or outputs) gives an assistant message with ``content_missing``. ``tool`` runs mark their call
failed when ``error`` is set, the output ``ToolMessage`` has ``status: "error"``, or the output
is an MCP ``isError`` result. Gold: ``tooldiag.gold_class`` (and ``tooldiag.category``,
``tooldiag.passed``) in a run's ``extra.metadata``, else the gold map. Ignored: chain, retriever,
prompt and parser runs (they only order their children), feedback, token counts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.traces.agent_log import GoldMap
from tooldiag.suites.traces.conversation import (
    ConversationBuilder,
    ToolRun,
    finish_conversation,
    missing_output,
    openai_message,
    text_of,
    tool_call,
)

FORMATS = ("jsonl", "json")
_EXPECTED = "expected LangSmith runs: JSON lines (or a JSON array) of run objects with 'id', 'trace_id' and 'run_type'"
_HINT = "export runs with langsmith's Client.list_runs, one run.json() per line; see docs/traces.md, 'LangSmith'"
_THREAD_KEYS = ("thread_id", "session_id", "conversation_id")
_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}


def read_langsmith(paths: Sequence[Path], gold_map: GoldMap | None, fmt: str | None) -> list[dict[str, Any]]:
    """Every conversation in the run files ``paths`` (runs pooled across files), ordered by first run."""
    if fmt is not None and fmt not in FORMATS:
        raise UserError(f"unknown langsmith format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
    runs: list[tuple[str, dict[str, Any]]] = [(str(path), run) for path in paths for run in read_runs(path, fmt)]
    traces: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for source, run in runs:
        traces.setdefault(str(run["trace_id"]), []).append((source, run))
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for trace_id, members in traces.items():
        key = next((str(m) for _, r in members if (m := _thread(r)) is not None), trace_id)
        groups.setdefault(key, []).extend(members)
    conversations = []
    for key, members in sorted(groups.items(), key=lambda kv: (min(_order(r) for _, r in kv[1]), kv[0])):
        conversation = _conversation(key, [r for _, r in sorted(members, key=lambda m: _order(m[1]))])
        if conversation is not None:
            files = ", ".join(sorted({s for s, _ in members}))
            conversations.append(finish_conversation(conversation, conversation["attributes"], gold_map, files))
    if not conversations:
        raise UserError(f"{', '.join(map(str, paths))}: {len(runs)} run(s) but no llm run in them", hint=_HINT)
    return conversations


def read_runs(path: Path, fmt: str | None) -> list[dict[str, Any]]:
    """The runs of one file; a truncated or foreign file is one :class:`UserError` naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text; {_EXPECTED}", hint=_HINT) from None
    stripped = text.lstrip()
    if fmt == "json" or (fmt is None and stripped.startswith("[")):
        try:
            runs = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{path}: truncated or invalid JSON ({exc.msg} at line {exc.lineno}); {_EXPECTED}", hint=_HINT
            ) from None
        if not isinstance(runs, list):
            raise UserError(f"{path}: not a JSON array of runs; {_EXPECTED}", hint=_HINT)
        numbered = list(enumerate(runs, start=1))
    else:
        numbered = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                numbered.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise UserError(
                    f"{path}: line {number} is truncated or invalid JSON ({exc.msg}); {_EXPECTED}", hint=_HINT
                ) from None
    for number, run in numbered:
        if not isinstance(run, dict) or not all(k in run for k in ("id", "trace_id", "run_type")):
            found = f"keys {', '.join(sorted(run)[:5])}" if isinstance(run, dict) else type(run).__name__
            raise UserError(f"{path}: record {number} is not a LangSmith run (found {found}); {_EXPECTED}", hint=_HINT)
    if not numbered:
        raise UserError(f"{path}: no runs; {_EXPECTED}", hint=_HINT)
    return [run for _, run in numbered]


def _metadata(run: dict[str, Any]) -> dict[str, Any]:
    extra = run.get("extra") or {}
    metadata = extra.get("metadata") if isinstance(extra, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def _thread(run: dict[str, Any]) -> Any:
    metadata = _metadata(run)
    return next((metadata[k] for k in _THREAD_KEYS if metadata.get(k) not in (None, "")), None)


def _order(run: dict[str, Any]) -> str:
    """``dotted_order`` (start time and id of every ancestor, so it sorts depth first), else the start time."""
    return str(run.get("dotted_order") or run.get("start_time") or "")


def _conversation(key: str, runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    builder = ConversationBuilder()
    attributes: dict[str, Any] = {}
    for run in runs:
        if run.get("parent_run_id") is None and run.get("name") is not None:
            attributes.setdefault("name", run["name"])
        for name, value in _metadata(run).items():
            if isinstance(value, (str, int, float, bool)):
                attributes.setdefault(name, value)
        if run["run_type"] == "llm":
            inputs = _input_messages(run.get("inputs"))
            outputs = [m for m in _output_messages(run.get("outputs")) if m["role"] == "assistant"][:1]
            builder.add_call(inputs or None, outputs or [missing_output()])
        elif run["run_type"] == "tool":
            builder.add_tool_run(_tool_run(run))
    if not builder.messages:
        return None
    traces = ", ".join(sorted({str(r["trace_id"]) for r in runs}))
    return {"id": key, "source": f"langsmith trace {traces}", "attributes": attributes, "messages": builder.finish()}


def langchain_message(raw: dict[str, Any]) -> dict[str, Any]:
    """A serialised LangChain message (``{"lc": 1, "id": [..., "AIMessage"], "kwargs": {...}}`` or
    ``{"type": "ai", "data"|fields}``) as an OpenAI message."""
    if "kwargs" in raw and isinstance(raw.get("id"), list):
        kind = str(raw["id"][-1]).removesuffix("MessageChunk").removesuffix("Message").lower()
        body = raw["kwargs"]
    else:
        kind = str(raw.get("type", "human"))
        body = raw.get("data") if isinstance(raw.get("data"), dict) else raw
    role = _LANGCHAIN_ROLES.get(kind, "user")
    message: dict[str, Any] = {"role": role, "content": text_of(body.get("content"))}
    calls = [
        tool_call(c.get("id"), c.get("name"), c.get("args"))
        for c in body.get("tool_calls") or []
        if isinstance(c, dict) and "name" in c
    ]
    if not calls:  # an AIMessage that kept only the provider's raw calls
        raw_calls = (body.get("additional_kwargs") or {}).get("tool_calls") or []
        calls = openai_message({"tool_calls": raw_calls}).get("tool_calls", [])
    if calls:
        message["tool_calls"] = calls
    if role == "tool":
        message["tool_call_id"] = str(body.get("tool_call_id") or "")
        if body.get("status") == "error":
            message["tool_error"] = True
    return message


def _message(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    if "role" in raw and "lc" not in raw:
        return openai_message(raw)
    return langchain_message(raw)


def _input_messages(inputs: Any) -> list[dict[str, Any]]:
    if not isinstance(inputs, dict):
        return []
    messages = inputs.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[0], list):
        messages = messages[0]  # a LangChain batch: its first prompt
    if isinstance(messages, list):
        return [m for m in map(_message, messages) if m is not None]
    prompts = inputs.get("prompts")
    if isinstance(prompts, list) and prompts:
        return [{"role": "user", "content": str(prompts[0])}]
    return []


def _output_messages(outputs: Any) -> list[dict[str, Any]]:
    if not isinstance(outputs, dict):
        return []
    if isinstance(outputs.get("choices"), list):
        return [openai_message(c["message"]) for c in outputs["choices"] if isinstance(c, dict) and "message" in c]
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0][0] if isinstance(generations[0], list) and generations[0] else generations[0]
        if isinstance(first, dict):
            if isinstance(first.get("message"), dict):
                return [langchain_message(first["message"])]
            if first.get("text") is not None:
                return [{"role": "assistant", "content": str(first["text"])}]
    for key in ("messages", "output", "message"):
        value = outputs.get(key)
        items = value if isinstance(value, list) else [value]
        found = [m for m in map(_message, items) if m is not None]
        if found:
            return found
    return []


def _tool_run(run: dict[str, Any]) -> ToolRun:
    outputs = run.get("outputs") if isinstance(run.get("outputs"), dict) else {}
    output = outputs.get("output", outputs or None) if outputs else None
    message = _message(output) if isinstance(output, dict) and ("lc" in output or "type" in output) else None
    call_id = (message or {}).get("tool_call_id") or (run.get("inputs") or {}).get("tool_call_id")
    result = message["content"] if message is not None else output
    failed = run.get("error") not in (None, "") or bool(message and message.get("tool_error"))
    return ToolRun(call_id=str(call_id) if call_id else None, name=run.get("name"), result=result, failed=failed)
