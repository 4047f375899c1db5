"""Import speed of large traces: ``tooldiag import otel`` / ``langsmith`` on 10,000 spans / runs.

    uv run python bench/trace_import.py [--spans 10000] [--repeats 3] [--check]

Issue 18: a trace with 10,000 spans must import in < 5 s. The script writes, in a temporary
directory, an OTLP JSON file of ``--spans`` spans in the shape the GenAI instrumentation
writes (conversations of 10 chat spans, each chat span carrying the whole history so far in
``gen_ai.input.messages``, plus an ``execute_tool`` span per call and a root span), the same
spans as Jaeger JSON, and a LangSmith JSONL of as many runs, then times
``tooldiag.api.import_traces`` (read, rebuild, check, write the agent log) on each; the
median of ``--repeats`` is printed with the file size. ``--check`` exits 1 if any median
exceeds 5 s. The timings are wall time, so the host line (CPUs, load) is printed with them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine import host_line  # bench/machine.py: the folder is on sys.path
from tooldiag.api import import_traces

BUDGET_S = 5.0
CHATS_PER_CONVERSATION = 10
SPANS_PER_CONVERSATION = 1 + 2 * CHATS_PER_CONVERSATION  # root + chat/tool pairs


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def conversation_spans(index: int) -> list[dict[str, Any]]:
    """One conversation: a root span, then per step a chat span (full history) and an execute_tool span."""
    trace_id = f"{index:032x}"
    root_id = f"{index:08x}{0:08x}"
    spans = [{"traceId": trace_id, "spanId": root_id, "name": "invoke_agent", "startTimeUnixNano": "1",
              "attributes": [_attr("tooldiag.gold_class", "tool_call")]}]  # fmt: skip
    history: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": f"task {index}"}]}]
    for step in range(CHATS_PER_CONVERSATION):
        call_id = f"call_{index}_{step}"
        output = [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": "lookup",
                                                   "arguments": {"step": step, "note": "x" * 40}}]}]  # fmt: skip
        spans.append({"traceId": trace_id, "spanId": f"{index:08x}{2 * step + 1:08x}", "parentSpanId": root_id,
                      "name": "chat fake", "startTimeUnixNano": str(10 + 2 * step),
                      "attributes": [_attr("gen_ai.operation.name", "chat"),
                                     _attr("gen_ai.input.messages", json.dumps(history)),
                                     _attr("gen_ai.output.messages", json.dumps(output))]})  # fmt: skip
        spans.append({"traceId": trace_id, "spanId": f"{index:08x}{2 * step + 2:08x}", "parentSpanId": root_id,
                      "name": "execute_tool lookup", "startTimeUnixNano": str(11 + 2 * step),
                      "attributes": [_attr("gen_ai.operation.name", "execute_tool"),
                                     _attr("gen_ai.tool.name", "lookup"),
                                     _attr("gen_ai.tool.call.id", call_id)]})  # fmt: skip
        response = {"type": "tool_call_response", "id": call_id, "response": {"ok": True}}
        history += [*output, {"role": "tool", "parts": [response]}]
    return spans


def write_otlp(path: Path, spans: int) -> int:
    items = [s for i in range(max(1, spans // SPANS_PER_CONVERSATION)) for s in conversation_spans(i)]
    path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": items}]}]}))
    return len(items)


def write_jaeger(path: Path, otlp: Path) -> None:
    """The OTLP file's spans as a Jaeger JSON download."""
    spans = json.loads(otlp.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    traces: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        tags = [
            {"key": a["key"], "type": "string", "value": next(iter(a["value"].values()))} for a in span["attributes"]
        ]
        refs = [{"refType": "CHILD_OF", "spanID": span["parentSpanId"]}] if span.get("parentSpanId") else []
        entry = {"traceID": span["traceId"], "spanID": span["spanId"], "operationName": span["name"],
                 "references": refs, "startTime": int(span["startTimeUnixNano"]), "tags": tags}  # fmt: skip
        traces.setdefault(span["traceId"], []).append(entry)
    path.write_text(json.dumps({"data": [{"traceID": t, "spans": s} for t, s in traces.items()]}))


def write_langsmith(path: Path, runs: int) -> int:
    """LangSmith runs in OpenAI shape: per conversation a chain run and llm/tool children, full history each."""
    lines = []
    for index in range(max(1, runs // SPANS_PER_CONVERSATION)):
        root = f"r{index}"
        order = f"20260101T000000{index:06d}Z{root}"
        lines.append({"id": root, "trace_id": root, "run_type": "chain", "name": "agent", "dotted_order": order,
                      "extra": {"metadata": {"tooldiag.gold_class": "tool_call"}}})  # fmt: skip
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"task {index}"}]
        for step in range(CHATS_PER_CONVERSATION):
            arguments = json.dumps({"step": step, "note": "x" * 40})
            call = {
                "id": f"c{index}_{step}",
                "type": "function",
                "function": {"name": "lookup", "arguments": arguments},
            }
            answer = {"role": "assistant", "content": None, "tool_calls": [call]}
            lines.append({"id": f"{root}l{step}", "trace_id": root, "parent_run_id": root, "run_type": "llm",
                          "dotted_order": f"{order}.{2 * step:04d}", "inputs": {"messages": list(messages)},
                          "outputs": {"choices": [{"message": answer}]}})  # fmt: skip
            lines.append({"id": f"{root}t{step}", "trace_id": root, "parent_run_id": root, "run_type": "tool",
                          "name": "lookup", "dotted_order": f"{order}.{2 * step + 1:04d}",
                          "outputs": {"output": "ok"}})  # fmt: skip
            messages += [answer, {"role": "tool", "tool_call_id": call["id"], "content": "ok"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return len(lines)


def timed(source: str, path: Path, out: Path, repeats: int) -> tuple[float, float]:
    """Median wall time and median CPU time (which other work on the machine barely moves) of one import."""
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        import_traces(source, [path], out)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check", action="store_true", help=f"exit 1 if any median exceeds {BUDGET_S} s")
    args = parser.parse_args(argv)
    print(host_line())
    slow = False
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        otlp, jaeger, runs = folder / "otlp.json", folder / "jaeger.json", folder / "runs.jsonl"
        n_spans = write_otlp(otlp, args.spans)
        write_jaeger(jaeger, otlp)
        n_runs = write_langsmith(runs, args.spans)
        for label, source, path, count in (
            ("otel OTLP JSON", "otel", otlp, n_spans),
            ("otel Jaeger JSON", "otel", jaeger, n_spans),
            ("langsmith JSONL", "langsmith", runs, n_runs),
        ):
            median, cpu = timed(source, path, folder / "log.jsonl", args.repeats)
            size_mb = path.stat().st_size / 1e6
            print(
                f"{label}: {count} spans/runs, {size_mb:.1f} MB: median {median:.2f} s wall, {cpu:.2f} s CPU "
                f"over {args.repeats}"
            )
            slow = slow or median > BUDGET_S
    if args.check and slow:
        print(f"FAIL: an import took more than {BUDGET_S} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
