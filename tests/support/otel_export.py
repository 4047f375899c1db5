"""Serialise the OpenTelemetry SDK's finished spans as OTLP JSON and as Jaeger JSON, for tests.

The OTLP exporter packages (``opentelemetry-exporter-otlp-proto-common`` and protobuf's
``json_format``) are not in the dev group, so the OTLP JSON shape (the protobuf JSON mapping of
``ExportTraceServiceRequest``: hex ids, nanosecond times as strings, ``AnyValue`` attributes) is
written here from the SDK's ``ReadableSpan`` objects; the Jaeger shape is that of the Jaeger
query API / UI download (``{"data": [{"traceID", "spans", "processes"}]}``), arrays as JSON text
as the OpenTelemetry-to-Jaeger translation writes them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": key, "value": _any_value(value)} for key, value in (attributes or {}).items()]


def otlp_json(spans: Sequence[Any]) -> str:
    """``spans`` (SDK ``ReadableSpan``) as one OTLP JSON ``ExportTraceServiceRequest``."""
    out = []
    for span in spans:
        entry: dict[str, Any] = {
            "traceId": format(span.context.trace_id, "032x"),
            "spanId": format(span.context.span_id, "016x"),
            "name": span.name,
            "kind": span.kind.value + 1,
            "startTimeUnixNano": str(span.start_time),
            "endTimeUnixNano": str(span.end_time),
            "attributes": _attributes(span.attributes),
            "events": [
                {"timeUnixNano": str(e.timestamp), "name": e.name, "attributes": _attributes(e.attributes)}
                for e in span.events
            ],
            "status": {"code": span.status.status_code.value, "message": span.status.description or ""},
        }
        if span.parent is not None:
            entry["parentSpanId"] = format(span.parent.span_id, "016x")
        out.append(entry)
    resource = _attributes(spans[0].resource.attributes) if spans else []
    request = {
        "resourceSpans": [
            {"resource": {"attributes": resource}, "scopeSpans": [{"scope": {"name": "tests"}, "spans": out}]}
        ]
    }
    return json.dumps(request)


def _tag(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "type": "bool", "value": value}
    if isinstance(value, int):
        return {"key": key, "type": "int64", "value": value}
    if isinstance(value, float):
        return {"key": key, "type": "float64", "value": value}
    if isinstance(value, (list, tuple)):
        return {"key": key, "type": "string", "value": json.dumps(list(value))}
    return {"key": key, "type": "string", "value": str(value)}


def jaeger_json(spans: Sequence[Any]) -> str:
    """``spans`` as a Jaeger JSON download: one entry per trace."""
    traces: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        trace_id = format(span.context.trace_id, "032x")
        tags = [_tag(k, v) for k, v in (span.attributes or {}).items()]
        if span.status.status_code.name == "ERROR":
            tags += [_tag("otel.status_code", "ERROR"), _tag("error", True)]
        references = []
        if span.parent is not None:
            references.append(
                {"refType": "CHILD_OF", "traceID": trace_id, "spanID": format(span.parent.span_id, "016x")}
            )
        traces.setdefault(trace_id, []).append(
            {
                "traceID": trace_id,
                "spanID": format(span.context.span_id, "016x"),
                "operationName": span.name,
                "references": references,
                "startTime": span.start_time // 1000,
                "duration": (span.end_time - span.start_time) // 1000,
                "tags": tags,
                "logs": [
                    {
                        "timestamp": e.timestamp // 1000,
                        "fields": [_tag("event", e.name)] + [_tag(k, v) for k, v in (e.attributes or {}).items()],
                    }
                    for e in span.events
                ],
                "processID": "p1",
            }
        )
    data = [
        {"traceID": trace_id, "spans": items, "processes": {"p1": {"serviceName": "tests", "tags": []}}}
        for trace_id, items in traces.items()
    ]
    return json.dumps({"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None})
