"""Traces users already have, read as agent logs: Inspect AI logs, OpenTelemetry GenAI and
OpenInference spans, LangSmith run exports (MCP tool results inside any of them).

Every reader turns its files into conversations of tooldiag's own agent-log format
(:mod:`tooldiag.diagnose.log`: one JSON object per conversation, OpenAI chat messages, gold
classes), so everything that reads an agent log (``diagnose``, ``cases``, ``show``, the HTML
report) reads an imported trace unchanged, and ``tooldiag import <source>`` can write the
converted log to disk for the user to inspect. Readers add fields the agent-log reader ignores
but a person looking at the log wants: ``source`` (where the conversation came from),
``parse_error`` on a tool call whose arguments did not parse, ``tool_error: true`` on a tool
message whose call failed (including an MCP result with ``isError: true``), and
``content_missing: true`` on an assistant message whose text was not captured.

``TRACE_SOURCES`` names each source's reader as ``"module:function"``; the module is imported
only when that source is read. A reader has the signature of :data:`TraceReader`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.traces.agent_log import GoldMap

#: ``reader(paths, gold_map, fmt) -> conversations`` (agent-log objects, in a stable order);
#: ``fmt`` forces one of the source's layouts (``None``: detect it per file, refusing a file that fits none).
TraceReader = Callable[[Sequence[Path], GoldMap | None, str | None], list[dict[str, Any]]]

#: Source name -> ``"module:function"`` of its reader. Add a source here.
TRACE_SOURCES: dict[str, str] = {
    "inspect": "tooldiag.suites.traces.inspect_log:read_inspect",
    "otel": "tooldiag.suites.traces.otel:read_otel",
    "langsmith": "tooldiag.suites.traces.langsmith:read_langsmith",
}


def trace_reader(source: str) -> TraceReader:
    """The reader of ``source``; an unknown name is a :class:`UserError` listing the known ones."""
    target = TRACE_SOURCES.get(source)
    if target is None:
        known = ", ".join(sorted(TRACE_SOURCES)) or "none"
        raise UserError(f"unknown trace source {source!r}", hint=f"use one of: {known}")
    module, _, function = target.partition(":")
    reader: TraceReader = getattr(importlib.import_module(module), function)
    return reader


def read_traces(
    source: str, paths: Sequence[str | Path], gold_map: GoldMap | None = None, fmt: str | None = None
) -> list[dict[str, Any]]:
    """Conversations (agent-log objects) of the trace files ``paths`` of ``source``."""
    reader = trace_reader(source)
    files = [Path(p) for p in paths]
    if not files:
        raise UserError(f"no {source} trace file given", hint=f"give one or more {source} trace files")
    for path in files:
        if not path.exists():
            raise UserError(f"{path} does not exist", hint=f"give {source} trace files")
    return reader(files, gold_map, fmt)
