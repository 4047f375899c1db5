"""Gates 1-3 of paper 000 §3.1: schema validity, argument types, trace consistency.

These look at the record's form: are the tools valid function schemas, do the expected calls fit
them, and is the reference trace a well-formed conversation whose outputs the tools really
produce. The rules are written in docs/judgebench.md ("Quality gates").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from tooldiag.suites.judgebench.construct.record_view import (
    GateResult,
    RecordView,
    decode_arguments,
    function_body,
    gate_result,
    view_of,
)
from tooldiag.suites.judgebench.construct.schema_rules import object_problem, tool_problems
from tooldiag.suites.judgebench.records import DAG_TYPES

#: ``(tool schema as available_tools holds it, arguments) -> output``: construct/execute.py's ``execute``.
Executor = Callable[[dict[str, Any], dict[str, Any]], Any]

#: Fields every record has (the released source and rewritten layouts share them).
CORE_FIELDS = ("id", "dag_type", "user_message", "system_prompt", "available_tools", "expected_responses")
#: Fields of the hub's source layout (and the generator's): all or none.
SOURCE_FIELDS = ("tools", "thoughts", "expected_response", "metadata")
#: Fields of the rewritten layout: all or none.
REWRITE_FIELDS = ("query_medium", "query_hard", "rewrite_medium_status", "rewrite_hard_status")
#: ``metadata`` keys of the released source layout; a generated record adds ``GENERATOR_METADATA``.
RELEASED_METADATA = (
    "source_id",
    "user_utterance",
    "bfcl_type",
    "generation_type",
    "tool_call_eval_result",
    "args_format_type",
    "dag_formation_strategy",
    "all_tool_calls_success",
)
GENERATOR_METADATA = ("domain", "seed", "generator")


def schema_validity(record: Mapping[str, Any], **context: Any) -> GateResult:
    """Fields of the layout present, ``dag_type`` one of the six, every offered tool a valid schema."""
    if not isinstance(record, Mapping):
        return GateResult("schema_validity", False, "the record is not a JSON object")
    view = view_of(record, context)
    problems = [f"no {f}" for f in CORE_FIELDS if record.get(f) is None]
    for group in (SOURCE_FIELDS, REWRITE_FIELDS):
        present = [f for f in group if f in record]
        if present and len(present) < len(group):
            problems.append(f"has {present[0]} but not {', '.join(f for f in group if f not in record)}")
    problems.extend(f"{column} is {problem}" for column, problem in view.problems.items())
    if record.get("id") is not None and (not isinstance(record["id"], str | int) or str(record["id"]) == ""):
        problems.append("id is not a non-empty string")
    if record.get("dag_type") is not None and view.dag_type not in DAG_TYPES:
        problems.append(f"dag_type {record.get('dag_type')!r} is not one of {', '.join(DAG_TYPES)}")
    if record.get("user_message") is not None and (not isinstance(record["user_message"], str) or not view.query):
        problems.append("user_message is not a non-empty string")
    if record.get("system_prompt") is not None and not isinstance(record["system_prompt"], str):
        problems.append("system_prompt is not a string")
    problems.extend(_metadata_problems(view))
    problems.extend(_tools_problems(view))
    if view.responses is None and record.get("expected_responses") is not None:
        problems.append("expected_responses is not a list")
    elif view.responses is not None:
        if any(not isinstance(m, dict) or m.get("role") not in ("assistant", "tool") for m in view.responses):
            problems.append("expected_responses holds a turn that is not an assistant or tool message")
        if not view.calls:
            problems.append("expected_responses holds no tool call")
    if "expected_tool_calls" in record and view.expected_tool_calls is None:
        problems.append("expected_tool_calls is not a list")
    return gate_result("schema_validity", problems)


def _metadata_problems(view: RecordView) -> list[str]:
    if "metadata" not in view.raw or "metadata" in view.problems:
        return []
    if not isinstance(view.metadata, dict):
        return ["metadata is not an object"]
    wanted = RELEASED_METADATA + (GENERATOR_METADATA if "generator" in view.metadata else ())
    missing = [k for k in wanted if k not in view.metadata]
    return [f"metadata lacks {', '.join(missing)}"] if missing else []


def _tools_problems(view: RecordView) -> list[str]:
    if view.tools is None:
        return [] if view.raw.get("available_tools") is None else ["available_tools is not a list"]
    if not view.tools:
        return ["available_tools is empty"]
    problems = []
    for i, tool in enumerate(view.tools):
        problems.extend(tool_problems(tool, f"available_tools[{i}]"))
    names = [b.get("name") for b in map(function_body, view.tools) if b is not None]
    duplicates = sorted({str(n) for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"tool names offered twice: {', '.join(duplicates)}")
    return problems


# ---------------------------------------------------------------------------- 2. argument types


def argument_types(record: Mapping[str, Any], **context: Any) -> GateResult:
    """Each expected call names an offered tool; its arguments are an object that fits the tool's schema."""
    view = view_of(record, context)
    problems = []
    if not view.calls:
        problems.append("no expected call to check")
    for call in view.calls:
        where = f"call {call.index + 1} ({call.name or 'no name'})"
        body = view.tool_body(call.name)
        if body is None:
            problems.append(f"{where} names no offered tool")
            continue
        if not isinstance(call.arguments, dict):
            problems.append(f"{where}: arguments are not a JSON object")
            continue
        params = body.get("parameters")
        problem = object_problem(call.arguments, params if isinstance(params, dict) else {}, where)
        if problem:
            problems.append(problem)
    return gate_result("argument_types", problems)


# ---------------------------------------------------------------------------- 3. trace consistency


def trace_consistency(record: Mapping[str, Any], *, executor: Executor | None = None, **context: Any) -> GateResult:
    """The trace is well formed and, with an ``executor``, re-executing each call reproduces its output.

    Structure is always checked (it needs no executor): every assistant turn's calls carry ids
    unique in the record and are answered, before the next assistant turn, by one tool turn each
    with the same ``tool_call_id`` and ``name``; no tool turn answers nothing; ``expected_tool_calls``,
    when present, is the flat list of the same calls. Without an executor a well-formed record is
    ``skipped`` (the outputs were not re-executed), a malformed one fails.
    """
    view = view_of(record, context)
    problems = _structure_problems(view)
    if executor is None:
        if problems:
            return gate_result("trace_consistency", problems)
        return GateResult("trace_consistency", None, "structure ok; outputs not re-executed (no executor)")
    for call in view.calls:
        entry = view.tool_entry(call.name)
        if entry is None or not isinstance(call.arguments, dict) or not call.has_output:
            continue  # named by argument_types / the structure check
        try:
            produced = executor(entry, call.arguments)
        except Exception as exc:  # noqa: BLE001 - the executor is another module's: report it, never crash the gate
            problems.append(f"call {call.index + 1} ({call.name}): the executor raised {type(exc).__name__}: {exc}")
            continue
        if _canonical(produced) != _canonical(call.output):
            problems.append(
                f"call {call.index + 1} ({call.name}): re-execution gave {_canonical(produced)[:80]}, "
                f"the trace records {_canonical(call.output)[:80]}"
            )
    return gate_result("trace_consistency", problems, "every output reproduced")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _structure_problems(view: RecordView) -> list[str]:
    if view.responses is None:
        return ["expected_responses is not a list"]
    problems = [f"{column} is {problem}" for column, problem in view.problems.items() if column != "metadata"]
    pending: dict[str, str] = {}
    seen: set[str] = set()
    for turn, message in enumerate(view.responses):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "assistant":
            problems.extend(f"call {call_id!r} has no tool turn before the next assistant turn" for call_id in pending)
            pending = {}
            for call in (c for c in view.calls if c.turn == turn):
                if call.call_id is None:
                    problems.append(f"call {call.index + 1} ({call.name}) has no id")
                elif call.call_id in seen:
                    problems.append(f"call id {call.call_id!r} is used twice")
                else:
                    seen.add(call.call_id)
                    pending[call.call_id] = call.name
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            name = pending.pop(call_id, None)
            if name is None:
                problems.append(f"tool turn {turn} answers {call_id!r}, which no pending call has")
            elif message.get("name") != name:
                problems.append(f"tool turn {turn} for {call_id!r} is named {message.get('name')!r}, the call {name!r}")
    problems.extend(f"call {call_id!r} has no tool turn" for call_id in pending)
    if view.expected_tool_calls is not None:
        flat = [
            (c.get("name"), _canonical(decode_arguments(c.get("arguments"))[0]))
            for c in view.expected_tool_calls
            if isinstance(c, dict)
        ]
        if flat != [(c.name, _canonical(c.arguments)) for c in view.calls]:
            problems.append("expected_tool_calls differs from the calls of expected_responses")
    return problems
