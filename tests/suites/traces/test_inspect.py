"""``tooldiag import inspect``: logs written by inspect_ai itself, its mockllm model scripted per sample.

The script below is the single source of the expectations: what each sample's model says, which
class that is, whether the scorer passes it. The logs are written once per module (inspect_ai is
slow to import) in both formats inspect_ai writes: the default Zstandard-compressed ``.eval`` and
``.json``; a DEFLATE ``.eval`` (older inspect_ai) is packed here from the ``.json`` log's content.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tooldiag.errors import UserError

# One entry per sample: (task, sample id, metadata, input, outputs, target). An output is
# (kind, payload, expected class): kind "call" (payload: tool arguments), "broken" (a call whose
# arguments did not parse) or "text" (payload: the reply). The scorer is inspect_ai's includes().
LOOKUP = "lookup"
SCRIPT: list[tuple[str, Any, dict[str, Any], str, list[tuple[str, Any, str]], str]] = [
    (
        "probe_tools",
        1,
        {"category": "lookup"},
        "status of order 7",
        [("call", {"order_id": "7"}, "tool_call"), ("text", "Order 7 has shipped.", "other")],
        "shipped",
    ),
    (
        "probe_tools",
        2,
        {"category": "cancel"},
        "cancel my order",
        [("text", "Which account should I use?", "ask")],
        "account",
    ),
    (
        "probe_tools",
        3,
        {"category": "booking"},
        "book a flight",
        [("text", "I can't do that: no tool for it", "refuse")],
        "booked",
    ),
    (
        "probe_tools",
        4,
        {"category": "lookup"},
        "broken args",
        [("broken", "Expecting value: line 1 column 1", "tool_call"), ("text", "Sorry.", "other")],
        "shipped",
    ),
    (
        "probe_tools",
        5,
        {"category": "lookup"},
        "bad order",
        [("call", {"order_id": "bad"}, "tool_call"), ("text", "", "other")],
        "shipped",
    ),
    # named and shaped like inspect_evals' BFCL: the category in the metadata or only in the id
    (
        "bfcl",
        "multi_turn_base_0",
        {"category_name": "multi_turn_base", "ground_truth": [["lookup(order_id='9')"]]},
        "status of order 9",
        [("call", {"order_id": "9"}, "tool_call"), ("text", "Done.", "other")],
        "shipped",
    ),
    (
        "bfcl",
        "multi_turn_miss_param_3",
        {},
        "cancel the order",
        [("text", "Which account should I use?", "ask")],
        "account",
    ),
    (
        "bfcl",
        "multi_turn_miss_func_5",
        {"category": "multi_turn_miss_func"},
        "book me a flight",
        [("text", "I can't do that: no tool for it", "refuse")],
        "booked",
    ),
    # a tau2 port: the task's reference actions in the metadata; airline task 2 is a verified ask task
    (
        "tau2_airline",
        "2",
        {
            "domain": "airline",
            "task": {
                "id": "2",
                "evaluation_criteria": {
                    "actions": [{"action_id": "a", "name": "cancel_reservation", "arguments": {"reservation_id": "X"}}]
                },
            },
        },
        "cancel my reservation",
        [("text", "Which account should I use?", "ask")],
        "account",
    ),
    (
        "tau2_airline",
        "0",
        {
            "domain": "airline",
            "task": {
                "id": "0",
                "evaluation_criteria": {
                    "actions": [
                        {"action_id": "a", "name": "get_reservation_details", "arguments": {"reservation_id": "X"}}
                    ]
                },
            },
        },
        "details of my reservation",
        [("call", {"order_id": "X"}, "tool_call"), ("text", "Here.", "other")],
        "shipped",
    ),
    (
        "tau2_airline",
        "1",
        {"domain": "airline", "task": {"id": "1", "evaluation_criteria": {"actions": []}}},
        "give me a free upgrade",
        [("text", "I can't do that: no tool for it", "refuse")],
        "booked",
    ),
]
EPOCHS = 2
# The gold classes, stated independently of tooldiag: BFCL categories (paper 001 §3.1), tau2 task
# classes (ask-required id / non-empty reference actions / none), and the probe's own gold map.
GOLD = {
    ("probe_tools", 1): "tool_call",
    ("probe_tools", 2): "ask",
    ("probe_tools", 3): "refuse",
    ("probe_tools", 4): "tool_call",
    ("probe_tools", 5): "tool_call",
    ("bfcl", "multi_turn_base_0"): "tool_call",
    ("bfcl", "multi_turn_miss_param_3"): "ask",
    ("bfcl", "multi_turn_miss_func_5"): "refuse",
    ("tau2_airline", "2"): "ask",
    ("tau2_airline", "0"): "tool_call",
    ("tau2_airline", "1"): "refuse",
}
PROBE_GOLD_MAP = {"categories": {"lookup": "tool_call", "cancel": "ask", "booking": "refuse"}}


def _write_logs(log_dir: Path) -> dict[str, dict[str, Path]]:
    """Run the three tasks with the scripted mockllm model; the log path per format and task."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage, get_model
    from inspect_ai.model._model_output import ChatCompletionChoice
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import ToolCall, ToolError, tool

    @tool
    def lookup():  # type: ignore[no-untyped-def]
        async def execute(order_id: str) -> str:
            """Look up an order.

            Args:
                order_id: the order id
            """
            if order_id == "bad":
                raise ToolError("no such order")
            return f"order {order_id}: shipped"

        return execute

    def output(kind: str, payload: Any) -> ModelOutput:
        if kind == "call":
            out = ModelOutput.for_tool_call("mockllm/model", LOOKUP, payload)
        elif kind == "broken":
            call = ToolCall(id="broken-1", function=LOOKUP, arguments={}, parse_error=payload)
            message = ChatMessageAssistant(content="", tool_calls=[call], model="mockllm/model")
            out = ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(message=message)])
        else:
            out = ModelOutput.from_content("mockllm/model", payload)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return out

    replies = {entry[3]: entry[4] for entry in SCRIPT}

    def respond(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        first = next(m for m in messages if m.role == "user").text
        done = sum(1 for m in messages if m.role == "assistant")
        kind, payload, _ = replies[first][done]
        return output(kind, payload)

    tasks = [
        Task(
            name=name,
            dataset=[Sample(id=e[1], input=e[3], target=e[5], metadata=e[2]) for e in SCRIPT if e[0] == name],
            solver=[use_tools(lookup()), generate()],
            scorer=includes(),
        )
        for name in dict.fromkeys(e[0] for e in SCRIPT)
    ]
    model = get_model("mockllm/model", custom_outputs=respond)
    written: dict[str, dict[str, Path]] = {}
    for fmt in ("eval", "json"):
        logs = inspect_eval(
            tasks, model=model, log_dir=str(log_dir / fmt), log_format=fmt, display="none", epochs=EPOCHS
        )
        assert all(log.status == "success" for log in logs), [log.error for log in logs]
        written[fmt] = {log.eval.task: Path(log.location) for log in logs}
    return written


def _deflate_copy(json_log: Path, target: Path) -> Path:
    """An ``.eval`` as older inspect_ai wrote it (DEFLATE members), from a ``.json`` log's content."""
    document = json.loads(json_log.read_text(encoding="utf-8"))
    header = {k: v for k, v in document.items() if k not in ("samples", "reductions")}
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": header["eval"], "plan": {}}))
        for sample in reversed(document["samples"]):  # completion order is not sample order
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        archive.writestr("header.json", json.dumps(header))
    return target


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    pytest.importorskip("inspect_ai")
    root = tmp_path_factory.mktemp("inspect")
    written = _write_logs(root)
    written["deflate"] = {
        task: _deflate_copy(path, root / f"{task}-deflate.eval") for task, path in written["json"].items()
    }
    (root / "gold.json").write_text(json.dumps(PROBE_GOLD_MAP), encoding="utf-8")
    written["gold_map"] = {"probe_tools": root / "gold.json"}
    return written


def _read(path: Path, gold_map: Path | None = None) -> list[dict[str, Any]]:
    from tooldiag.suites.traces import read_traces
    from tooldiag.suites.traces.agent_log import load_gold_map

    return read_traces("inspect", [path], load_gold_map(gold_map) if gold_map else None)


def _expected_messages(entry: tuple[Any, ...]) -> list[tuple[str, str | None]]:
    """(role, what) of the conversation the script makes: user, then per output the reply and its tool result."""
    out: list[tuple[str, str | None]] = [("user", entry[3])]
    for kind, payload, _ in entry[4]:
        if kind == "text":
            out.append(("assistant", payload))
        else:
            out.append(("assistant", "call"))
            out.append(("tool", "error" if kind == "broken" or payload == {"order_id": "bad"} else "ok"))
    return out


def _shape(conversation: dict[str, Any]) -> list[tuple[str, str | None]]:
    shape: list[tuple[str, str | None]] = []
    for m in conversation["messages"]:
        if m["role"] == "assistant":
            shape.append(("assistant", "call" if m.get("tool_calls") else m["content"]))
        elif m["role"] == "tool":
            shape.append(("tool", "error" if m.get("tool_error") else "ok"))
        else:
            shape.append((m["role"], m["content"]))
    return shape


@pytest.mark.parametrize("fmt", ["eval", "json", "deflate"])
def test_conversations_are_what_the_script_made_the_model_do(logs, fmt):
    conversations = _read(logs[fmt]["probe_tools"], logs["gold_map"]["probe_tools"])
    probe = [e for e in SCRIPT if e[0] == "probe_tools"]
    assert [c["id"] for c in conversations] == [
        f"probe_tools/{e[1]}/epoch{epoch}" for epoch in range(1, EPOCHS + 1) for e in probe
    ]
    by_id = {c["id"]: c for c in conversations}
    for entry in probe:
        for epoch in range(1, EPOCHS + 1):
            conversation = by_id[f"probe_tools/{entry[1]}/epoch{epoch}"]
            assert _shape(conversation) == _expected_messages(entry)
            replies = [text for kind, text, _ in entry[4] if kind == "text"]
            assert conversation["passed"] is (entry[5].lower() in replies[-1].lower())
            assert conversation["gold_class"] == GOLD[("probe_tools", entry[1])]
            assert conversation["attributes"]["epoch"] == epoch
            assert conversation["attributes"]["metadata.category"] == entry[2]["category"]
            assert conversation["attributes"]["model"] == "mockllm/model"
    broken = by_id["probe_tools/4/epoch1"]["messages"][1]["tool_calls"][0]
    assert broken["parse_error"] == "Expecting value: line 1 column 1"
    assert broken["function"]["name"] == LOOKUP
    called = by_id["probe_tools/1/epoch1"]["messages"][1]["tool_calls"][0]
    assert called["function"]["arguments"] == {"order_id": "7"}
    failed_tool = by_id["probe_tools/5/epoch1"]["messages"][2]
    assert failed_tool["tool_error"] is True and failed_tool["content"] == "no such order"
    assert by_id["probe_tools/5/epoch1"]["messages"][3]["content_missing"] is True


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_diagnose_counts_equal_the_script(logs, fmt):
    from tooldiag.api import diagnose_traces

    files = list(logs[fmt].values())
    report = diagnose_traces("inspect", files, "default", gold_map=logs["gold_map"]["probe_tools"])
    expected: dict[str, Counter[str]] = {}
    for entry in SCRIPT:
        task, sample_id, metadata = entry[0], entry[1], entry[2]
        gold = GOLD[(task, sample_id)]
        category = {
            "probe_tools": metadata.get("category"),
            "bfcl": str(sample_id).removeprefix("multi_turn_").rsplit("_", 1)[0],
            "tau2_airline": f"airline_{gold}",
        }[task]
        classes = {cls for _, _, cls in entry[4]}
        replies = [text for kind, text, _ in entry[4] if kind == "text"]
        counts = expected.setdefault(category, Counter())
        counts["n"] += EPOCHS
        counts["hits"] += EPOCHS * (gold in classes)
        counts["passed"] += EPOCHS * (entry[5].lower() in replies[-1].lower())
    got = {
        name: Counter(n=summary.n, hits=summary.gar_hits, passed=summary.acc_passed)
        for name, summary in report.categories.items()
    }
    assert got == expected
    assert report.categories["miss_param"].gold.value == "ask"
    assert report.categories["airline_refuse"].gold.value == "refuse"
    assert any("content_missing" in note and "'other'" in note for note in report.notes)


def test_bfcl_gold_turns_marked_from_the_ground_truth(logs):
    conversations = {c["id"]: c for c in _read(logs["eval"]["bfcl"])}
    base = conversations["bfcl/multi_turn_base_0/epoch1"]
    assert base["category"] == "base" and base["gold_class"] == "tool_call"
    assert [m.get("gold_class") for m in base["messages"] if m["role"] == "assistant"] == ["tool_call", "tool_call"]
    assert conversations["bfcl/multi_turn_miss_func_5/epoch2"]["gold_class"] == "refuse"


def test_eval_members_are_zstandard_and_read_without_inspect_ai(logs):
    """In a fresh interpreter (inspect_ai teaches zipfile Zstandard once imported, tooldiag must not
    rely on it): zipfile alone cannot read the members, tooldiag's reader can."""
    script = (
        "import sys, zipfile; from pathlib import Path\n"
        "from tooldiag.suites.traces.inspect_log import read_inspect\n"
        "path = Path(sys.argv[1]); archive = zipfile.ZipFile(path)\n"
        "members = [i for i in archive.infolist() if i.filename.startswith('samples/')]\n"
        "assert members and {i.compress_type for i in members} == {93}\n"
        "try:\n    archive.read(members[0]); print('zipfile read it')\n"
        "except NotImplementedError:\n    print('zipfile cannot')\n"
        "print(len(read_inspect([path], None, None)), 'inspect_ai' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(logs["eval"]["bfcl"])], capture_output=True, text=True, check=True
    )
    samples = EPOCHS * sum(e[0] == "bfcl" for e in SCRIPT)
    assert proc.stdout.split("\n")[:2] == ["zipfile cannot", f"{samples} False"]


def _via_read_eval_log(path: Path) -> list[dict[str, Any]]:
    """What inspect_ai's own reader says, mapped by the rules of docs/traces.md (independent of tooldiag)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    scorer = log.results.scores[0].name if log.results else None
    conversations = []
    for sample in log.samples or []:
        messages: list[dict[str, Any]] = []
        for m in sample.messages:
            out: dict[str, Any] = {"role": m.role, "content": m.text}
            if m.role == "assistant":
                if m.tool_calls:
                    out["tool_calls"] = []
                    for call in m.tool_calls:
                        item: dict[str, Any] = {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.function, "arguments": call.arguments},
                        }
                        if call.parse_error:
                            item["parse_error"] = call.parse_error
                        out["tool_calls"].append(item)
                elif not m.text.strip():
                    out["content_missing"] = True
            elif m.role == "tool":
                out["tool_call_id"] = m.tool_call_id
                out["name"] = m.function
                if m.error is not None:
                    out["tool_error"] = True
                    out["content"] = m.text or m.error.message
            messages.append(out)
        value = sample.scores[scorer].value if sample.scores and scorer in sample.scores else None
        conversations.append(
            {
                "id": f"{log.eval.task}/{sample.id}/epoch{sample.epoch}",
                "passed": {"C": True, "I": False}.get(str(value)),
                "messages": messages,
                "metadata": {f"metadata.{k}": v for k, v in sample.metadata.items() if not isinstance(v, (dict, list))},
            }
        )
    return conversations


@pytest.mark.parametrize("fmt", ["eval", "json"])
@pytest.mark.parametrize("task", ["probe_tools", "bfcl"])
def test_identical_to_reading_through_inspect_ai(logs, fmt, task):
    ours = _read(logs[fmt][task], logs["gold_map"]["probe_tools"] if task == "probe_tools" else None)
    theirs = _via_read_eval_log(logs[fmt][task])
    keys = ("id", "passed", "messages")

    def strip_marks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in m.items() if k != "gold_class"} for m in messages]

    assert [
        {**{k: c[k] for k in keys}, "messages": strip_marks(c["messages"])}
        | {"metadata": {k: v for k, v in c["attributes"].items() if k.startswith("metadata.")}}
        for c in ours
    ] == [{k: c[k] for k in (*keys, "metadata")} for c in theirs]


def test_a_log_of_an_unknown_task_without_gold_map_is_refused_naming_the_sample(logs):
    with pytest.raises(UserError) as caught:
        _read(logs["eval"]["probe_tools"])
    assert "probe_tools/1/epoch1" in caught.value.message and "--gold-map" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "not an Inspect AI log"),
        (b"id,text\n1,hello\n", "not an Inspect AI log"),
        (b'{"version": 2, "eval": {"task": "x"}, "samples": [{"id"', "truncated or not a JSON Inspect log"),
        (b'{"resourceSpans": []}', "not an Inspect AI log"),
    ],
)
def test_foreign_or_truncated_file_is_one_clear_error(tmp_path, content, expected):
    path = tmp_path / "log.json"
    path.write_bytes(content)
    with pytest.raises(UserError) as caught:
        _read(path)
    assert str(path) in caught.value.message and expected in caught.value.message


def test_truncated_eval_exits_2_with_one_error_line(logs, tmp_path):
    whole = logs["eval"]["probe_tools"].read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(whole[: len(whole) // 2])
    proc = subprocess.run(
        [sys.executable, "-m", "tooldiag", "import", "inspect", str(cut), "--out", str(tmp_path / "out.jsonl")],
        capture_output=True,
        text=True,
    )
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(errors) == 1 and str(cut) in errors[0] and "expected a complete zip archive" in errors[0]
    assert not (tmp_path / "out.jsonl").exists()


def test_import_writes_an_agent_log_that_diagnose_reads(logs, tmp_path):
    from tooldiag.api import import_traces
    from tooldiag.diagnose import read_agent_log

    out = tmp_path / "probe.jsonl"
    count = import_traces("inspect", [logs["eval"]["probe_tools"]], out, gold_map=logs["gold_map"]["probe_tools"])
    assert count == EPOCHS * sum(e[0] == "probe_tools" for e in SCRIPT)
    assert len(read_agent_log(out)) == count


def test_no_captured_text_makes_gar_not_computable():
    from tooldiag.diagnose import conversations_from_objects, diagnose_conversations

    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "function": {"name": "f"}}]}
    silent = {"role": "assistant", "content": None, "content_missing": True}
    objects = [
        {"id": "a", "category": "book", "gold_class": "tool_call", "messages": [{"role": "user"}, call]},
        {"id": "b", "category": "cancel", "gold_class": "ask", "messages": [{"role": "user"}, silent]},
    ]
    report = diagnose_conversations(conversations_from_objects(objects, "t"), "t", "t")
    assert report.categories["cancel"].gar is None and "gar_not_computable" in report.categories["cancel"].flags
    assert report.categories["book"].gar == 100.0
    assert any("not computable" in note for note in report.notes)
