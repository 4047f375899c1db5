"""``tooldiag import otel``: OpenTelemetry traces (OTLP JSON or Jaeger JSON) as agent-log conversations.

Layouts (detected per file, ``--format otlp|jaeger`` forces one):

* **OTLP JSON**: one ``ExportTraceServiceRequest`` object (``{"resourceSpans": [...]}``, as the
  OTLP/HTTP JSON encoding and ``otel-cli``/collector dumps write it), or JSON lines of them (the
  collector's ``file`` exporter);
* **Jaeger JSON**: the Jaeger UI / query API download (``{"data": [{"traceID", "spans": [...]}]}``).

Which spans mean what comes from the instrumentation's conventions: :mod:`.genai` (OpenTelemetry
GenAI: ``chat`` and ``execute_tool`` spans) and :mod:`.openinference` (``openinference.span.kind``
LLM and TOOL spans); every other span only orders its children and lends its attributes to the
conversation (for the gold map). A conversation is a ``session.id`` (OpenInference) or
``gen_ai.conversation.id`` when the spans carry one, else a trace; its spans are walked depth
first, children by start time, and merged by :class:`~.conversation.ConversationBuilder`.

Gold: the attribute ``tooldiag.gold_class`` (and ``tooldiag.category``, ``tooldiag.passed``) on
any span or the resource, else the gold map (``--gold-map``); a conversation left without one is
refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.traces import genai, openinference
from tooldiag.suites.traces.agent_log import GoldMap
from tooldiag.suites.traces.conversation import ConversationBuilder, finish_conversation

FORMATS = ("otlp", "jaeger")
_EXPECTED = (
    "expected OpenTelemetry traces as OTLP JSON (an object with 'resourceSpans', or JSON lines of them) "
    "or Jaeger JSON (an object with 'data': [{'traceID', 'spans'}])"
)
_HINT = "export the spans as OTLP JSON or download the trace as Jaeger JSON; see docs/traces.md, 'OpenTelemetry'"
#: Attributes too large or too per-call to select a gold class on; left out of the conversation's attributes.
_BULKY = ("gen_ai.input.", "gen_ai.output.", "gen_ai.system_instructions", "llm.", "input.", "output.", "gen_ai.tool.")
_GROUP_KEYS = ("session.id", "gen_ai.conversation.id")


@dataclass
class Span:
    """One span, whatever the file layout: ids as hex text, times in nanoseconds."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    error: bool = False
    status_message: str = ""
    resource: dict[str, Any] = field(default_factory=dict)


def read_otel(paths: Sequence[Path], gold_map: GoldMap | None, fmt: str | None) -> list[dict[str, Any]]:
    """Every conversation in the OTLP / Jaeger JSON files ``paths`` (the files' spans pooled, so a
    trace split over several export batches is one conversation), ordered by first start time."""
    if fmt is not None and fmt not in FORMATS:
        raise UserError(f"unknown otel format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
    spans: list[Span] = []
    files_of: dict[str, list[str]] = {}
    for path in paths:
        for span in read_spans(path, fmt):
            spans.append(span)
            names = files_of.setdefault(span.trace_id, [])
            if str(path) not in names:
                names.append(str(path))
    groups = sorted(_grouped(spans).items(), key=lambda kv: (min(s.start for s in kv[1]), kv[0]))
    conversations = [c for key, group in groups if (c := _conversation(key, group, files_of)) is not None]
    if not conversations:
        raise UserError(
            f"{', '.join(map(str, paths))}: {len(spans)} span(s) but no model call in them (no GenAI chat span, "
            "no OpenInference LLM span)",
            hint=_HINT,
        )
    return [
        finish_conversation(conversation, conversation["attributes"], gold_map, source)
        for conversation, source in conversations
    ]


def read_spans(path: Path, fmt: str | None) -> list[Span]:
    """The spans of one file; a file that is truncated or not a trace is one :class:`UserError` naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text; {_EXPECTED}", hint=_HINT) from None
    documents = list(_documents(path, text))
    layout = fmt or _detect(path, documents)
    spans: list[Span] = []
    for document in documents:
        if layout == "otlp":
            if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
                raise UserError(f"{path}: no 'resourceSpans' list; {_EXPECTED}", hint=_HINT)
            spans.extend(_otlp_spans(path, document))
        else:
            if not isinstance(document, dict) or not isinstance(document.get("data"), list):
                raise UserError(f"{path}: no 'data' list of traces; {_EXPECTED}", hint=_HINT)
            spans.extend(_jaeger_spans(path, document))
    return spans


def _documents(path: Path, text: str) -> Iterator[Any]:
    """The file as one JSON document, or as JSON lines of documents."""
    try:
        yield json.loads(text)
        return
    except json.JSONDecodeError as whole:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) <= 1 or not lines[0].lstrip().startswith("{"):
            raise UserError(
                f"{path}: truncated or invalid JSON ({whole.msg} at line {whole.lineno} column {whole.colno}); "
                f"{_EXPECTED}",
                hint=_HINT,
            ) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{path}: line {number} is truncated or invalid JSON ({exc.msg}); {_EXPECTED}", hint=_HINT
            ) from None


def _detect(path: Path, documents: list[Any]) -> str:
    first = documents[0] if documents else None
    if isinstance(first, dict) and isinstance(first.get("resourceSpans"), list):
        return "otlp"
    if isinstance(first, dict) and isinstance(first.get("data"), list):
        return "jaeger"
    what = f"an object with keys {', '.join(sorted(first)[:5])}" if isinstance(first, dict) else type(first).__name__
    raise UserError(f"{path}: not an OpenTelemetry trace (found {what}); {_EXPECTED}", hint=_HINT)


# --- OTLP JSON -------------------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": ...}`` etc.) as a Python value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return key_values(value["kvlistValue"].get("values", []))
    return None


def key_values(items: Any) -> dict[str, Any]:
    return {str(kv["key"]): any_value(kv.get("value")) for kv in items or () if isinstance(kv, dict) and "key" in kv}


def _otlp_spans(path: Path, document: dict[str, Any]) -> Iterator[Span]:
    try:
        for resource_spans in document["resourceSpans"]:
            resource = key_values((resource_spans.get("resource") or {}).get("attributes"))
            scopes = resource_spans.get("scopeSpans") or resource_spans.get("instrumentationLibrarySpans") or []
            for scope in scopes:
                for raw in scope.get("spans") or []:
                    status = raw.get("status") or {}
                    yield Span(
                        trace_id=str(raw["traceId"]),
                        span_id=str(raw["spanId"]),
                        parent_id=str(raw["parentSpanId"]) if raw.get("parentSpanId") else None,
                        name=str(raw.get("name", "")),
                        start=int(raw.get("startTimeUnixNano") or 0),
                        attributes=key_values(raw.get("attributes")),
                        events=[
                            (str(e.get("name", "")), key_values(e.get("attributes"))) for e in raw.get("events") or []
                        ],
                        error=status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR"),
                        status_message=str(status.get("message") or ""),
                        resource=resource,
                    )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"{path}: a span is malformed ({type(exc).__name__}: {exc}); {_EXPECTED}", hint=_HINT) from None


# --- Jaeger JSON -----------------------------------------------------------------------------


def _tags(items: Any) -> dict[str, Any]:
    return {str(t["key"]): t.get("value") for t in items or () if isinstance(t, dict) and "key" in t}


def _jaeger_spans(path: Path, document: dict[str, Any]) -> Iterator[Span]:
    try:
        for trace in document["data"]:
            processes = trace.get("processes") or {}
            for raw in trace["spans"]:
                tags = _tags(raw.get("tags"))
                parent = next(
                    (r["spanID"] for r in raw.get("references") or () if r.get("refType") == "CHILD_OF"), None
                )
                events = []
                for log in raw.get("logs") or []:
                    fields = _tags(log.get("fields"))
                    events.append((str(fields.pop("event", "")), fields))
                process = processes.get(raw.get("processID"), {}) if isinstance(processes, dict) else {}
                resource = _tags(process.get("tags"))
                if process.get("serviceName"):
                    resource.setdefault("service.name", process["serviceName"])
                yield Span(
                    trace_id=str(raw.get("traceID") or trace["traceID"]),
                    span_id=str(raw["spanID"]),
                    parent_id=str(parent) if parent else None,
                    name=str(raw.get("operationName", "")),
                    start=int(raw.get("startTime") or 0) * 1000,
                    attributes=tags,
                    events=events,
                    error=str(tags.get("otel.status_code", "")).upper() == "ERROR"
                    or tags.get("error") in (True, "true"),
                    status_message=str(tags.get("otel.status_description") or ""),
                    resource=resource,
                )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"{path}: a span is malformed ({type(exc).__name__}: {exc}); {_EXPECTED}", hint=_HINT) from None


# --- conversations ---------------------------------------------------------------------------


def _grouped(spans: list[Span]) -> dict[str, list[Span]]:
    """Spans by conversation: the ``session.id`` / ``gen_ai.conversation.id`` a span has, else the trace."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    groups: dict[str, list[Span]] = {}
    for trace_id, trace_spans in by_trace.items():
        key = next(
            (str(s.attributes[k]) for s in trace_spans for k in _GROUP_KEYS if s.attributes.get(k) not in (None, "")),
            trace_id,
        )
        groups.setdefault(key, []).extend(trace_spans)
    return groups


def _ordered(spans: list[Span]) -> list[Span]:
    """Traces by start; within one, depth first from the roots, children by start time (robust to clock skew
    between a parent and its children, which start-time order alone is not)."""
    ids = {(s.trace_id, s.span_id) for s in spans}
    children: dict[tuple[str, str | None], list[Span]] = {}
    roots: list[Span] = []
    for span in spans:
        if span.parent_id is not None and (span.trace_id, span.parent_id) in ids:
            children.setdefault((span.trace_id, span.parent_id), []).append(span)
        else:
            roots.append(span)
    out: list[Span] = []
    stack = sorted(roots, key=lambda s: (s.start, s.span_id), reverse=True)
    while stack:
        span = stack.pop()
        out.append(span)
        stack.extend(
            sorted(children.get((span.trace_id, span.span_id), []), key=lambda s: (s.start, s.span_id), reverse=True)
        )
    return out


def _conversation(key: str, spans: list[Span], files_of: dict[str, list[str]]) -> tuple[dict[str, Any], str] | None:
    """``(conversation, its files)`` of one group of spans; ``None`` when no span is a model call (a trace of
    something else: it holds no decision to diagnose)."""
    builder = ConversationBuilder()
    attributes: dict[str, Any] = {}
    for span in _ordered(spans):
        for name, value in {**span.resource, **span.attributes}.items():
            if not name.startswith(_BULKY) and isinstance(value, (str, int, float, bool)):
                attributes.setdefault(name, value)
        for convention in (genai, openinference):
            if convention.add_span(builder, span):
                break
    if not builder.messages:
        return None
    traces = sorted({s.trace_id for s in spans})
    files = sorted({f for t in traces for f in files_of[t]})
    source = f"{', '.join(files)} trace {', '.join(traces)}"
    conversation = {"id": key, "source": source, "attributes": attributes, "messages": builder.finish()}
    return conversation, ", ".join(files)
