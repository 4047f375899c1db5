"""``tooldiag import otel`` on traces written by the real producers: the OpenTelemetry SDK with the
GenAI (``opentelemetry-instrumentation-openai-v2``) and the OpenInference instrumentation of the
``openai`` client, calling the local fake OpenAI server. The expected classes are those the
script below makes the fake model emit, written down by hand, not computed by tooldiag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.suites.traces.episodes import EPISODES, EXPECTED, MCP_FAILED, TOOLS, run_tool
from tests.support.otel_export import jaeger_json, otlp_json
from tooldiag.api import diagnose_traces, import_traces
from tooldiag.cli.main import main
from tooldiag.testing.fake_openai import FakeOpenAIServer

pytest.importorskip("opentelemetry.sdk")


def drive(base_url: str, tracer: Any, tool_kind: str, session: Any | None = None) -> None:
    """Run every episode as an agent would: one root span per episode (GenAI) or one session (OpenInference)."""
    import contextlib

    import openai
    from opentelemetry.trace import Status, StatusCode

    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    for task, _gold, turns, _replies in EPISODES:
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful agent."}]
        root = (
            tracer.start_as_current_span(f"invoke_agent {task}", attributes={"task.name": task})
            if session is None
            else contextlib.nullcontext()
        )
        with root, session(f"session-{task}") if session is not None else contextlib.nullcontext():
            for user in turns:
                messages.append({"role": "user", "content": user})
                while True:
                    reply = client.chat.completions.create(model="fake", messages=messages, tools=TOOLS)
                    message = reply.choices[0].message
                    messages.append(message.model_dump(exclude_none=True, exclude={"refusal", "annotations", "audio"}))
                    if not message.tool_calls:
                        break
                    for call in message.tool_calls:
                        if tool_kind == "genai":
                            name, call_id = call.function.name, call.id
                            attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                                          "gen_ai.tool.call.id": call_id}  # fmt: skip
                        else:
                            from openinference.instrumentation import get_attributes_from_context

                            # as OpenInference's own tracers do: the session's attributes on every span
                            attributes = {"openinference.span.kind": "TOOL", "tool.name": call.function.name,
                                          **dict(get_attributes_from_context())}  # fmt: skip
                        with tracer.start_as_current_span(
                            f"execute_tool {call.function.name}", attributes=attributes
                        ) as span:
                            result, raised = run_tool(call)
                            if tool_kind != "genai":
                                span.set_attribute("output.value", result)
                            if raised:
                                span.set_status(Status(StatusCode.ERROR, result))
                        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch):
    """``record(instrumentation, capture)``: the finished spans of one scripted run; instrumentors undone after."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    instrumentors: list[Any] = []

    def record(instrumentation: str, capture: bool = True) -> list[Any]:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        session = None
        if instrumentation == "genai":
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

            # the current GenAI conventions: messages as span attributes (opt-in), or no content at all
            monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
            monkeypatch.setenv(
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY" if capture else "NO_CONTENT"
            )
            instrumentor: Any = OpenAIInstrumentor()
        else:
            from openinference.instrumentation import using_session
            from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInferenceInstrumentor

            instrumentor = OpenInferenceInstrumentor()
            session = using_session
        instrumentor.instrument(tracer_provider=provider)
        instrumentors.append(instrumentor)
        with FakeOpenAIServer() as server:
            server.script(*[reply for *_, replies in EPISODES for reply in replies])
            drive(server.base_url, provider.get_tracer("agent"), instrumentation, session)
        instrumentor.uninstrument()
        instrumentors.remove(instrumentor)
        return list(exporter.get_finished_spans())

    yield record
    for instrumentor in instrumentors:
        instrumentor.uninstrument()


def write_gold_map(tmp_path: Path, key: str) -> Path:
    """Gold by the trace's ``task.name`` attribute (GenAI) or by session id (OpenInference)."""
    if key == "attributes":
        body: dict[str, Any] = {"attributes": {"task.name": {task: gold for task, gold, *_ in EPISODES}}}
    else:
        body = {"cases": {f"session-{task}": gold for task, gold, *_ in EPISODES}}
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(body))
    return path


def classes_by_task(report: Any, key_of: dict[str, str]) -> dict[str, tuple[tuple[str, ...], ...]]:
    return {key_of[row.case_id]: row.classes for row in report.cases}


def task_of(log: Path) -> dict[str, str]:
    """Conversation id -> task name, read back from the converted log's attributes."""
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    return {row["id"]: row["attributes"].get("task.name") or row["id"].removeprefix("session-") for row in rows}


@pytest.mark.parametrize("layout", ["otlp", "jaeger"])
def test_genai_spans_are_diagnosed_with_the_classes_the_script_made(recorded, tmp_path, layout):
    spans = recorded("genai")
    trace = tmp_path / f"trace.{layout}.json"
    trace.write_text(otlp_json(spans) if layout == "otlp" else jaeger_json(spans))
    gold = write_gold_map(tmp_path, "attributes")
    log = tmp_path / "log.jsonl"
    assert import_traces("otel", [trace], log, gold_map=gold) == len(EPISODES)
    report = diagnose_traces("otel", [trace], gold_map=gold)
    assert classes_by_task(report, task_of(log)) == EXPECTED
    assert {c: s.gar_hits for c, s in report.categories.items()} == {
        "tool_call": 1,
        "confirm": 1,
        "ask": 1,
        "refuse": 1,
    }

    rows = {row["attributes"]["task.name"]: row for row in map(json.loads, log.read_text().splitlines())}
    weather_tools = [m for m in rows["weather"]["messages"] if m["role"] == "tool"]
    assert [bool(m.get("tool_error")) for m in weather_tools] == [False, True]  # Lyon: MCP isError
    unsafe = rows["unsafe"]["messages"]
    call = next(m for m in unsafe if m.get("tool_calls"))["tool_calls"][0]
    assert call["function"]["arguments"] == '{"city": "Par' and "parse_error" in call
    assert next(m for m in unsafe if m["role"] == "tool")["tool_error"] is True  # the span's ERROR status
    # the history is rebuilt once: each user message once, in order
    assert [m["content"] for m in rows["weather"]["messages"] if m["role"] == "user"] == EPISODES[0][2]


def test_genai_spans_without_content_are_not_computable(recorded, tmp_path):
    trace = tmp_path / "trace.json"
    trace.write_text(otlp_json(recorded("genai", capture=False)))
    gold = write_gold_map(tmp_path, "attributes")
    log = tmp_path / "log.jsonl"
    import_traces("otel", [trace], log, gold_map=gold)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assistant = [m for row in rows for m in row["messages"] if m["role"] == "assistant"]
    assert len(assistant) == sum(len(replies) for *_, replies in EPISODES)
    assert all(m["content_missing"] is True and m["content"] is None for m in assistant)
    report = diagnose_traces("otel", [trace], gold_map=gold)
    # tool calls are still known from the finish reason; nothing else is guessed
    assert classes_by_task(report, task_of(log)) == {
        "weather": (("tool_call", "other", "tool_call", "other"),),
        "cancel": (("other",),),
        "booking": (("other",),),
        "unsafe": (("tool_call", "other"),),
    }
    for category in ("ask", "confirm", "refuse"):
        assert report.categories[category].gar is None and "gar_not_computable" in report.categories[category].flags
    assert report.categories["tool_call"].gar == 100.0
    assert any("not computable" in note for note in report.notes)


def test_openinference_spans_grouped_by_session(recorded, tmp_path):
    spans = recorded("openinference")
    assert len({s.context.trace_id for s in spans}) > len(EPISODES)  # every model call its own trace
    trace = tmp_path / "trace.json"
    trace.write_text(otlp_json(spans))
    gold = write_gold_map(tmp_path, "cases")
    log = tmp_path / "log.jsonl"
    assert import_traces("otel", [trace], log, gold_map=gold) == len(EPISODES)
    report = diagnose_traces("otel", [trace], gold_map=gold)
    assert classes_by_task(report, task_of(log)) == EXPECTED
    rows = {row["id"]: row for row in map(json.loads, log.read_text().splitlines())}
    weather_tools = [m for m in rows["session-weather"]["messages"] if m["role"] == "tool"]
    assert [bool(m.get("tool_error")) for m in weather_tools] == [False, True]
    unsafe_call = next(m for m in rows["session-unsafe"]["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert "parse_error" in unsafe_call


def cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """stderr of a CLI call that must fail with exit status 2."""
    with pytest.raises(SystemExit) as info:
        main(list(args))
    assert info.value.code == 2
    return capsys.readouterr().err


def test_a_conversation_without_gold_is_refused_naming_it(recorded, tmp_path, capsys):
    trace = tmp_path / "trace.json"
    trace.write_text(otlp_json(recorded("openinference")))
    err = cli_error(capsys, "import", "otel", str(trace), "--out", str(tmp_path / "log.jsonl"))
    assert "conversation 'session-weather' has no gold class" in err and "--gold-map" in err
    assert not (tmp_path / "log.jsonl").exists()


def older_spelling_trace() -> dict[str, Any]:
    """The older GenAI spelling (message events on the chat span), hand-written: no installed
    instrumentation writes it any more, but traces recorded with earlier versions hold it."""

    def attr(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value} if isinstance(value, str) else {"boolValue": value}}

    def span(span_id: str, start: int, events: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
        return {"traceId": "ab" * 16, "spanId": span_id, "parentSpanId": "0" * 15 + "1", "name": "chat gpt",
                "startTimeUnixNano": str(start), "attributes": [attr("gen_ai.operation.name", "chat")],
                "events": [{"name": n, "attributes": a} for n, a in events]}  # fmt: skip

    calls = json.dumps([{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}])
    first = span("00000000000000a1", 2, [
        ("gen_ai.user.message", [attr("content", "Cancel order 7")]),
        ("gen_ai.choice", [attr("message", json.dumps({"role": "assistant", "tool_calls": json.loads(calls)}))]),
    ])  # fmt: skip
    second = span("00000000000000a2", 3, [
        ("gen_ai.user.message", [attr("content", "Cancel order 7")]),
        ("gen_ai.assistant.message", [attr("tool_calls", calls)]),
        ("gen_ai.tool.message", [attr("content", MCP_FAILED), attr("id", "c1")]),
        ("gen_ai.choice", [attr("message", json.dumps({"role": "assistant", "content": "Shall I cancel it?"}))]),
    ])  # fmt: skip
    root = {"traceId": "ab" * 16, "spanId": "0" * 15 + "1", "name": "agent", "startTimeUnixNano": "1",
            "attributes": [attr("tooldiag.gold_class", "confirm")]}  # fmt: skip
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [second, root, first]}]}]}


def test_older_event_spelling_and_a_per_trace_gold_attribute(tmp_path):
    trace = tmp_path / "old.json"
    trace.write_text(json.dumps(older_spelling_trace()))
    log = tmp_path / "log.jsonl"
    import_traces("otel", [trace], log)
    (row,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert row["gold_class"] == "confirm"
    assert [m["role"] for m in row["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert row["messages"][2]["tool_error"] is True
    report = diagnose_traces("otel", [trace])
    assert report.cases[0].classes == (("tool_call", "confirm"),)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "ab"', "truncated or invalid JSON"),
        ('{"model": "gpt", "messages": []}', "not an OpenTelemetry trace"),
        ("[1, 2]", "not an OpenTelemetry trace"),
    ],
)
def test_truncated_or_foreign_file_is_one_error_line(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    err = cli_error(capsys, "diagnose", "--from", "otel", str(path))
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(path) in errors[0] and expected in errors[0] and "OTLP JSON" in errors[0]
    assert "Traceback" not in err
