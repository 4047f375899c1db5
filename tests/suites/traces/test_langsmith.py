"""``tooldiag import langsmith`` on runs built with the ``langsmith`` SDK's ``RunTree`` (nothing
posted: the runs' dicts are serialised to JSONL as ``Client.list_runs`` would return them), recording
the ``openai`` client's calls to the local fake OpenAI server; llm runs in OpenAI shape (as
``wrap_openai`` records them) and in LangChain's serialised-message shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.suites.traces.episodes import EPISODES, EXPECTED, TOOLS, run_tool
from tooldiag.api import diagnose_traces, import_traces
from tooldiag.cli.main import main
from tooldiag.testing.fake_openai import FakeOpenAIServer

pytest.importorskip("langsmith")

_LC_TYPES = {"user": "HumanMessage", "assistant": "AIMessage", "system": "SystemMessage", "tool": "ToolMessage"}


def langchain(message: dict[str, Any], status: str = "success") -> dict[str, Any]:
    """An OpenAI message as LangChain serialises its message objects (``dumpd``)."""
    kwargs: dict[str, Any] = {"content": message.get("content") or "", "type": message["role"]}
    if message.get("tool_calls"):
        kwargs["tool_calls"] = [
            {
                "name": c["function"]["name"],
                "args": _args(c["function"]["arguments"]),
                "id": c["id"],
                "type": "tool_call",
            }
            for c in message["tool_calls"]
        ]
    if message["role"] == "tool":
        kwargs.update(tool_call_id=message["tool_call_id"], status=status)
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", _LC_TYPES[message["role"]]],
            "kwargs": kwargs}  # fmt: skip


def _args(raw: str) -> Any:
    """LangChain parses arguments into ``args``; text that does not parse stays text (an invalid tool call)."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def record_runs(base_url: str, shape: str) -> list[dict[str, Any]]:
    """Every episode as one LangSmith trace: a chain run with llm and tool children."""
    import openai
    from langsmith.run_trees import RunTree

    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    roots = []
    for task, gold, turns, _replies in EPISODES:
        metadata = {"tooldiag.gold_class": gold} if task == "weather" else {}  # the rest: the gold map
        root = RunTree(name=f"agent {task}", run_type="chain", inputs={"task": task}, extra={"metadata": metadata})
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful agent."}]
        for user in turns:
            messages.append({"role": "user", "content": user})
            while True:
                request = {"model": "fake", "messages": list(messages), "tools": TOOLS}
                llm = root.create_child(
                    name="ChatOpenAI",
                    run_type="llm",
                    inputs=request if shape == "openai" else {"messages": [[langchain(m) for m in messages]]},
                )
                response = client.chat.completions.create(**request)
                message = response.choices[0].message.model_dump(
                    exclude_none=True, exclude={"refusal", "annotations", "audio"}
                )
                lc_generation = {"text": message.get("content") or "", "message": langchain(message)}
                llm.end(outputs=response.model_dump() if shape == "openai" else {"generations": [[lc_generation]]})
                messages.append(message)
                if not message.get("tool_calls"):
                    break
                for call in response.choices[0].message.tool_calls or []:
                    tool = root.create_child(
                        name=call.function.name, run_type="tool", inputs={"input": call.function.arguments}
                    )
                    result, raised = run_tool(call)
                    tool_message = {"role": "tool", "tool_call_id": call.id, "content": result}
                    output = result if shape == "openai" else langchain(tool_message, "error" if raised else "success")
                    tool.end(outputs={"output": output}, error=result if raised else None)
                    messages.append(tool_message)
        root.end(outputs={"messages": messages[-1:]})
        roots.append(root)
    runs: list[dict[str, Any]] = []

    def walk(run: Any) -> None:
        runs.append(run.model_dump(mode="json", exclude={"child_runs", "parent_run", "ls_client", "replicas"}))
        for child in run.child_runs:
            walk(child)

    for root in roots:
        walk(root)
    return runs


def write_runs(tmp_path: Path, runs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(run) + "\n" for run in runs))
    return path


def write_gold_map(tmp_path: Path) -> Path:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"attributes": {"name": {f"agent {t}": g for t, g, *_ in EPISODES if t != "weather"}}}))
    return path


@pytest.mark.parametrize("shape", ["openai", "langchain"])
def test_runs_are_diagnosed_with_the_classes_the_script_made(tmp_path, shape):
    with FakeOpenAIServer() as server:
        server.script(*[reply for *_, replies in EPISODES for reply in replies])
        runs = record_runs(server.base_url, shape)
    # shuffle the export: the reader must order by dotted_order, not by file order
    trace = write_runs(tmp_path, runs[::-1])
    gold = write_gold_map(tmp_path)
    log = tmp_path / "log.jsonl"
    assert import_traces("langsmith", [trace], log, gold_map=gold) == len(EPISODES)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    task_of = {row["id"]: row["attributes"]["name"].removeprefix("agent ") for row in rows}
    report = diagnose_traces("langsmith", [trace], gold_map=gold)
    assert {task_of[row.case_id]: row.classes for row in report.cases} == EXPECTED
    assert {c: s.gar_hits for c, s in report.categories.items()} == {
        "tool_call": 1,
        "confirm": 1,
        "ask": 1,
        "refuse": 1,
    }

    by_task = {task_of[row["id"]]: row for row in rows}
    assert by_task["weather"]["gold_class"] == "tool_call"  # from the run's metadata
    weather_tools = [m for m in by_task["weather"]["messages"] if m["role"] == "tool"]
    assert [bool(m.get("tool_error")) for m in weather_tools] == [False, True]  # Lyon: MCP isError
    unsafe = by_task["unsafe"]["messages"]
    call = next(m for m in unsafe if m.get("tool_calls"))["tool_calls"][0]
    assert call["function"]["arguments"] == '{"city": "Par' and "parse_error" in call
    assert next(m for m in unsafe if m["role"] == "tool")["tool_error"] is True  # the tool run's error
    assert [m["content"] for m in by_task["weather"]["messages"] if m["role"] == "user"] == EPISODES[0][2]


def test_llm_runs_without_recorded_messages_are_content_missing(tmp_path):
    with FakeOpenAIServer() as server:
        server.script(*[reply for *_, replies in EPISODES for reply in replies])
        runs = record_runs(server.base_url, "openai")
    for run in runs:  # as with LANGSMITH_HIDE_INPUTS / LANGSMITH_HIDE_OUTPUTS
        if run["run_type"] == "llm":
            run["inputs"], run["outputs"] = {}, {}
    trace = write_runs(tmp_path, runs)
    report = diagnose_traces("langsmith", [trace], gold_map=write_gold_map(tmp_path))
    assert report.categories["ask"].gar is None and "gar_not_computable" in report.categories["ask"].flags
    assert any("not computable" in note for note in report.notes)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"id": "1", "trace_id": "1", "run_type": "llm", "inputs": {"mess', "line 1 is truncated or invalid JSON"),
        ('{"resourceSpans": []}\n', "record 1 is not a LangSmith run"),
        ("[1, 2", "truncated or invalid JSON"),
    ],
)
def test_truncated_or_foreign_file_is_one_error_line(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(SystemExit) as info:
        main(["import", "langsmith", str(path), "--out", str(tmp_path / "log.jsonl")])
    assert info.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(path) in errors[0] and expected in errors[0] and "LangSmith runs" in errors[0]
