"""Records: the built-in set, the released layouts (JSONL, JSON, Parquet, per-difficulty rows)
and the Hugging Face path on a local folder in the hub layout."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from tooldiag.errors import UserError
from tooldiag.metrics.structural import score_plan
from tooldiag.suites.judgebench.loaders import _builtin_rows, load_records, parse_hub_spec
from tooldiag.suites.judgebench.records import DAG_TYPES, DIFFICULTIES, JudgeBenchRecord


def released_row(row: dict) -> dict:
    """A built-in record written the way the released files store it (object columns as JSON strings)."""
    out = dict(row)
    for key in ("available_tools", "expected_responses", "expected_tool_calls"):
        out[key] = json.dumps(row[key])
    out["metadata"] = json.dumps({"bfcl_type": "multiple"})
    return out


def test_builtin_set_covers_every_topology_and_difficulty():
    records = load_records()
    assert len(records) == 36
    assert Counter(r.dag_type for r in records) == dict.fromkeys(DAG_TYPES, 6)
    for record in records:
        for difficulty in DIFFICULTIES:
            assert record.query(difficulty)
        calls = record.expected_calls()
        assert 2 <= len(calls) <= 5
        assert 8 <= len(record.available_tools) <= 19
        names = set(record.tool_names())
        assert {c["name"] for c in calls} <= names
        # the reference plan scores perfectly against itself, and flattening keeps its order
        assert score_plan(calls, calls).as_tuple() == (1, 1, 1, 1)
        assert calls == record.expected_tool_calls


def test_expected_calls_follow_the_released_flattening():
    record = JudgeBenchRecord(
        id="r1",
        dag_type="fan-in",
        user_message="q",
        available_tools=[],
        expected_responses=json.dumps(
            [
                {"role": "assistant", "tool_calls": json.dumps([{"function": {"name": "a", "arguments": {"x": 1}}}])},
                {"role": "tool", "content": "{}", "tool_call_id": "step1", "name": "a"},
                {
                    "role": "assistant",
                    "tool_calls": [{"function": {"name": "b", "arguments": '{"y": 2}'}}, {"name": "c"}],
                },
                {"role": "assistant", "content": "done"},
            ]
        ),
    )
    assert record.dag_type == "fan_in"
    assert record.expected_calls() == [
        {"name": "a", "arguments": {"x": 1}},
        {"name": "b", "arguments": {"y": 2}},
        {"name": "c", "arguments": {}},
    ]
    assert record.query("medium") is None


def test_tool_specs_use_openai_type_names():
    record = load_records()[0]
    spec = record.tool_specs()[0]
    assert spec.parameters["type"] == "object"
    assert "dict" not in json.dumps([s.parameters for s in record.tool_specs()])
    assert record.available_tools[0]["function"]["parameters"]["type"] == "dict"  # the record is untouched


def test_jsonl_json_and_parquet_in_released_layout(tmp_path):
    rows = [released_row(r) for r in _builtin_rows()[:5]]
    jsonl = tmp_path / "records.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    as_json = tmp_path / "records.json"
    as_json.write_text(json.dumps(rows))
    parquet = tmp_path / "records.parquet"
    pd.DataFrame(rows).to_parquet(parquet)
    builtin = load_records(limit=5)
    for source in (jsonl, as_json, parquet):
        loaded = load_records(source)
        assert [r.id for r in loaded] == [r.id for r in builtin]
        assert [r.fingerprint() for r in loaded] == [r.fingerprint() for r in builtin]


def test_per_difficulty_rows_are_merged(tmp_path):
    base = _builtin_rows()[0]
    rows = []
    for difficulty, text in zip(DIFFICULTIES, ("easy q", "medium q", "hard q"), strict=True):
        row = {k: base[k] for k in ("id", "dag_type", "system_prompt", "available_tools", "expected_responses")}
        rows.append(
            {**row, "user_message": text, "difficulty": difficulty, "expected_tool_calls": base["expected_tool_calls"]}
        )
    path = tmp_path / "per_difficulty.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    (record,) = load_records(path)
    assert [record.query(d) for d in DIFFICULTIES] == ["easy q", "medium q", "hard q"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a"}\nnot json\n', "is not valid JSON"),
        ("", "holds no records"),
        ('{"id": "a", "dag_type": "linear"}\n', "is invalid at user_message"),
        (
            '{"id": "a", "dag_type": "linear", "user_message": "q"}\n{"id": "a", "dag_type": "linear", '
            '"user_message": "q"}\n',
            "duplicate record id",
        ),
        ('{"id": "a", "dag_type": "linear", "user_message": "q", "available_tools": "[oops"}\n', "not valid JSON"),
        ('{"id": "a", "dag_type": "linear", "user_message": "q", "difficulty": "extreme"}\n', "difficulty"),
        (
            '{"id": "a", "dag_type": "linear", "user_message": "q", "available_tools": [{"function": '
            '{"description": "d"}}]}\n',
            "tool 0 has no name",
        ),
        (
            '{"id": "a", "dag_type": "linear", "user_message": "q", '
            '"expected_responses": [{"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}]}\n',
            "record 'a' is invalid: .*reference call 0 .* has no tool name",
        ),
    ],
)
def test_bad_files_are_user_errors(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(UserError, match=message):
        load_records(path)


def test_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_records(tmp_path / "nope.jsonl")


def test_hub_spec_parsing():
    assert parse_hub_spec("ServiceNow-AI/BFCL_agentic_judge_bench:linear@test") == (
        "ServiceNow-AI/BFCL_agentic_judge_bench",
        "linear",
        "test",
    )
    assert parse_hub_spec("owner/name") == ("owner/name", None, "train")


@pytest.fixture
def offline_hub(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-home" / "datasets"))


def test_hub_loader_on_a_local_folder_in_the_hub_layout(tmp_path, offline_hub):
    """Same layout as ServiceNow-AI/BFCL_agentic_judge_bench: one config per DAG type, JSON-string columns."""
    folder = tmp_path / "BFCL_agentic_judge_bench"
    (folder / "data").mkdir(parents=True)
    configs = ["linear", "fan_in"]
    (folder / "README.md").write_text(
        "---\nconfigs:\n"
        + "".join(
            f"- config_name: {c}\n  data_files:\n  - split: train\n    path: data/{c}-*.parquet\n" for c in configs
        )
        + "---\n"
    )
    rows = _builtin_rows()
    for config in configs:
        source = [
            {
                "id": r["id"],
                "dag_type": r["dag_type"].replace("_", "-"),
                "user_message": r["user_message"],
                "system_prompt": r["system_prompt"],
                "available_tools": json.dumps(r["available_tools"]),
                "expected_responses": json.dumps(r["expected_responses"]),
                "thoughts": "",
                "metadata": json.dumps({"tool_call_eval_result": True}),
            }
            for r in rows
            if r["dag_type"] == config
        ]
        pd.DataFrame(source).to_parquet(folder / "data" / f"{config}-00000-of-00001.parquet")
    records = load_records(f"hf:{folder}:fan_in")
    assert len(records) == 6 and {r.dag_type for r in records} == {"fan_in"}
    assert records[0].query("medium") is None  # the source set has the easy query only
    builtin = {r.id: r for r in load_records()}
    assert all(r.expected_calls() == builtin[r.id].expected_calls() for r in records)
    with pytest.raises(UserError, match="config"):
        load_records(f"hf:{folder}")


def test_unreachable_hub_is_a_user_error(offline_hub):
    with pytest.raises(UserError):
        load_records("hf:ServiceNow-AI/BFCL_agentic_judge_bench:linear")
