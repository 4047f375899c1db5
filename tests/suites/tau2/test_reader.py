"""Reading tau2 results in both layouts: streaming, tolerance, and errors with positions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.suites.tau2.conftest import AIRLINE_V1, RETAIL_V0
from tooldiag.errors import UserError
from tooldiag.suites.tau2.reader import open_results


def _sims(path, **kwargs):
    return [sim for _, sim in open_results(path, **kwargs).simulations()]


def test_single_file_layout_reads_header_and_every_simulation():
    source = open_results(RETAIL_V0)
    header = source.header
    assert header.layout == "json"
    assert header.domain == "retail"
    assert header.agent_model == "fake/agent-a" and header.user_model == "fake/user-sim"
    assert list(header.tasks) == ["1", "5", "10", "24"]
    assert not header.is_oracle
    sims = _sims(RETAIL_V0)
    assert [(s.task_id, s.trial) for s in sims] == [
        ("1", 0),
        ("1", 1),
        ("5", 0),
        ("5", 1),
        ("10", 0),
        ("10", 1),
        ("24", 0),
        ("24", 1),
    ]
    assert sims[1].termination_reason == "max_steps"


def test_dir_layout_follows_the_simulation_index():
    source = open_results(AIRLINE_V1)
    assert source.header.layout == "dir"
    assert source.header.results_file == AIRLINE_V1 / "results.json"
    ids = [s.id for s in _sims(AIRLINE_V1)]
    index = json.loads((AIRLINE_V1 / "results.json").read_text())["simulation_index"]
    assert ids == [entry["id"] for entry in index]
    # The same folder read through its results.json gives the same simulations.
    assert [s.id for s in _sims(AIRLINE_V1 / "results.json")] == ids


def test_dir_layout_without_index_reads_every_simulation_file(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(AIRLINE_V1, folder)
    results = json.loads((folder / "results.json").read_text())
    del results["simulation_index"]
    (folder / "results.json").write_text(json.dumps(results))
    assert sorted(s.id for s in _sims(folder)) == sorted(p.stem for p in (folder / "simulations").glob("*.json"))


def test_monolithic_results_json_in_a_run_folder(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(RETAIL_V0, folder / "results.json")
    source = open_results(folder)
    assert source.header.layout == "json"
    assert len(_sims(folder)) == 8


def test_header_after_simulations_is_still_found(tmp_path):
    data = json.loads(RETAIL_V0.read_text())
    reordered = {"simulations": data["simulations"], "tasks": data["tasks"], "info": data["info"]}
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(reordered))
    source = open_results(path)
    assert source.header.domain == "retail" and len(source.header.tasks) == 4
    assert len(_sims(path)) == 8


def test_missing_optional_fields_are_tolerated(tmp_path):
    data = json.loads(RETAIL_V0.read_text())
    data.pop("timestamp")
    for key in ("git_commit", "num_trials", "max_steps", "seed", "user_info"):
        data["info"].pop(key)
    for task in data["tasks"]:
        task.pop("description")
        task["evaluation_criteria"].pop("communicate_info")
        task["id"] = int(task["id"])  # some writers store integer ids
    for sim in data["simulations"]:
        for key in ("timestamp", "start_time", "end_time", "duration", "agent_cost", "user_cost", "seed", "trial"):
            sim.pop(key)
        sim["task_id"] = int(sim["task_id"])
        for message in sim["messages"]:
            message.pop("turn_idx", None)
            for call in message.get("tool_calls") or []:
                call.pop("id")
                call["arguments"] = json.dumps(call["arguments"])  # arguments stored as a JSON string
    data["simulations"][0].pop("reward_info")
    path = tmp_path / "sparse.json"
    path.write_text(json.dumps(data))
    source = open_results(path)
    assert source.header.user_model == "unknown-user"
    sims = _sims(path)
    assert sims[0].reward_info is None and sims[0].task_id == "1"
    call = next(c for m in sims[0].messages for c in m.calls)
    assert call.arguments == {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"}


def test_oracle_runs_are_flagged(tmp_path):
    data = json.loads(RETAIL_V0.read_text())
    data["info"]["agent_info"]["implementation"] = "llm_agent_gt"
    path = tmp_path / "oracle.json"
    path.write_text(json.dumps(data))
    assert open_results(path).header.is_oracle


@pytest.mark.parametrize("anchor, occurrence", [('"tasks": [', 0), ('"simulations": [', 0), ('"messages": [', 5)])
def test_truncated_file_names_file_line_and_column(tmp_path, anchor, occurrence):
    """Cut right after an opening bracket: the error is at the end of the file."""
    text = RETAIL_V0.read_text()
    cut = -1
    for _ in range(occurrence + 1):
        cut = text.index(anchor, cut + 1)
    cut += len(anchor)
    path = tmp_path / "cut.json"
    path.write_text(text[:cut])
    line = text[:cut].count("\n") + 1
    column = cut - text.rfind("\n", 0, cut)
    with pytest.raises(UserError) as info:
        source = open_results(path)
        list(source.simulations())
    assert str(info.value).startswith(f"{path}: invalid JSON at line {line}, column {column} ")


def test_malformed_json_names_the_exact_position(tmp_path):
    text = RETAIL_V0.read_text()
    anchor = text.index('"termination_reason"')
    broken = text[:anchor] + "," + text[anchor:]  # a stray comma inside a simulation
    path = tmp_path / "bad.json"
    path.write_text(broken)
    line = broken[:anchor].count("\n") + 1
    column = anchor - broken.rfind("\n", 0, anchor)  # 1-based column of the stray comma
    with pytest.raises(UserError) as info:
        list(open_results(path).simulations())
    assert f"{path}: invalid JSON at line {line}, column {column} " in str(info.value)


def test_malformed_simulation_file_in_dir_layout(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(AIRLINE_V1, folder)
    bad = folder / "simulations" / "a-12-0.json"
    bad.write_text(bad.read_text()[:-40])
    with pytest.raises(UserError) as info:
        list(open_results(folder).simulations())
    assert str(bad) in str(info.value) and "line" in str(info.value)


def test_schema_errors_name_the_json_path(tmp_path):
    data = json.loads(RETAIL_V0.read_text())
    del data["simulations"][2]["messages"][4]["tool_calls"][0]["name"]
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError) as info:
        list(open_results(path).simulations())
    assert f"{path}: simulations[2].messages[4].tool_calls[0].name" in str(info.value)


def test_missing_simulation_file_listed_in_index(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(AIRLINE_V1, folder)
    (folder / "simulations" / "a-13-0.json").unlink()
    with pytest.raises(UserError, match=r"a-13-0\.json: listed in results\.json's simulation_index but missing"):
        open_results(folder)


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("[1, 2]", "top level is a JSON array"),
        ('{"info": {}, "tasks": [], "simulations": {}}', "'simulations' is not a JSON array"),
        ("", "invalid JSON at line 1"),
    ],
)
def test_files_that_are_not_results(tmp_path, content, fragment):
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(UserError, match=fragment):
        list(open_results(path).simulations())


def test_missing_paths_and_folders_without_results(tmp_path):
    with pytest.raises(UserError, match="no such file or folder"):
        open_results(tmp_path / "nope.json")
    with pytest.raises(UserError, match=r"folder has no results\.json"):
        open_results(tmp_path)


def test_embedded_tasks_win_and_a_tasks_file_fills_in(tmp_path):
    data = json.loads(RETAIL_V0.read_text())
    tasks = data.pop("tasks")
    path = tmp_path / "no_tasks.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="embeds no tasks") as info:
        open_results(path)
    assert "--tasks" in info.value.hint
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps(tasks))
    header = open_results(path, tasks_file=tasks_file).header
    assert header.tasks_source == str(tasks_file) and list(header.tasks) == ["1", "5", "10", "24"]


def test_streaming_holds_one_simulation_at_a_time(tmp_path, monkeypatch):
    """The json layout is parsed incrementally: the file is never read whole."""
    import builtins

    data = json.loads(RETAIL_V0.read_text())
    data["simulations"] = data["simulations"] * 50
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    real_open = builtins.open
    largest = {"read": 0}

    class Spy:
        def __init__(self, handle):
            self._handle = handle

        def read(self, size=-1):
            chunk = self._handle.read(size)
            largest["read"] = max(largest["read"], len(chunk))
            return chunk

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._handle.close()

    def spy_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        return Spy(handle) if Path(file) == path and "b" in mode else handle

    monkeypatch.setattr(builtins, "open", spy_open)
    assert len(_sims(path)) == 400
    assert 0 < largest["read"] < path.stat().st_size // 10
