"""Issue 20, defect 15: inputs that ended in a traceback end in one ``error:`` line (exit 2) or succeed.

Each test is one input the fuzz suites (tests/fuzz/) found crashing landed main; the
expectation is written from the input (what it is, where it is broken), not from the code.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

from tests.fuzz.harness import run_cli

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLE_LOG = Path(__file__).resolve().parents[2] / "examples" / "agent_log.jsonl"
DEEP = "[" * 100_000 + "]" * 100_000


def _example_lines() -> list[dict]:
    return [json.loads(line) for line in EXAMPLE_LOG.read_text(encoding="utf-8").splitlines() if line.strip()]


def _assert_user_error(outcome, *words: str) -> None:
    assert outcome.crash is None and "Traceback" not in outcome.stderr, outcome.explain()
    assert outcome.code == 2, outcome.explain()
    assert outcome.stderr.startswith("error: "), outcome.explain()
    for word in words:
        assert word in outcome.stderr, outcome.explain()


def test_a_deeply_nested_agent_log_line_is_one_error_naming_the_line(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(_example_lines()[0]) + "\n" + DEEP + "\n", encoding="utf-8")
    for command in (["diagnose", str(log)], ["show", str(log), "x"], ["classify", str(log)]):
        _assert_user_error(run_cli(command), "line 2", "nested too deeply")


def test_a_deeply_nested_score_plan_line_is_one_error_naming_the_line():
    _assert_user_error(run_cli(["score-plan", "-"], stdin=(DEEP + "\n").encode()), "stdin:1", "nested too deeply")


def test_a_score_plan_whose_plan_is_not_a_list_is_one_error():
    line = {"expected": [{"name": "ls", "arguments": {}}], "predicted": True}
    _assert_user_error(run_cli(["score-plan", "-"], stdin=json.dumps(line).encode()), "stdin:1", "plan must be")


def test_score_plan_schema_aware_with_malformed_tools_scores_the_line():
    tools = [{"function": 5}, {"name": "ls", "parameters": {"properties": 3}}, "x"]
    line = {
        "expected": [{"name": "ls", "arguments": {}}],
        "predicted": [{"name": "ls", "arguments": {}}],
        "tools": tools,
    }
    outcome = run_cli(["score-plan", "-", "--schema-aware"], stdin=json.dumps(line).encode())
    assert outcome.code == 0, outcome.explain()
    assert json.loads(outcome.stdout)["tool_selection"] == 1.0


def test_score_plan_arguments_with_an_over_long_integer_count_as_unreadable():
    arguments = '{"n": ' + "9" * 5000 + "}"  # valid JSON that Python's int() refuses (4300-digit limit)
    line = {"expected": [{"name": "f", "arguments": {"n": 1}}], "predicted": [{"name": "f", "arguments": arguments}]}
    outcome = run_cli(["score-plan", "-"], stdin=json.dumps(line).encode())
    assert outcome.code == 0, outcome.explain()
    assert json.loads(outcome.stdout)["parameter_structure"] == 0.0


def test_a_lone_surrogate_in_an_agent_log_is_shown_not_a_crash(tmp_path):
    conversation = _example_lines()[0]
    conversation["messages"][-1] = {"role": "assistant", "content": "Done \ud800 cancelled."}
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(conversation) + "\n", encoding="utf-8")  # json.dumps escapes it: "\\ud800"
    for command in (["show", str(log), conversation["id"]], ["diagnose", str(log)], ["classify", str(log)]):
        outcome = run_cli(command)
        assert outcome.code == 0, outcome.explain()
    assert "Done \ufffd cancelled." in run_cli(["show", str(log), conversation["id"]]).stdout


def test_a_tau2_file_with_a_non_utf8_string_is_one_error(tmp_path):
    data = (DATA / "tau2" / "retail_v0.json").read_bytes()
    assert b'"git_commit": "fixture"' in data
    path = tmp_path / "results.json"
    # a surrogate encoded as UTF-8 bytes (CESU-8): not UTF-8, which the streaming parser let through
    path.write_bytes(data.replace(b'"git_commit": "fixture"', b'"git_commit": "fix\xed\xa0\x80ture"', 1))
    _assert_user_error(run_cli(["tau2", "diagnose", str(path)]), str(path), "UTF-8")


def test_a_deeply_nested_tau2_simulation_file_is_one_error(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(DATA / "tau2" / "airline_v1", folder)
    simulation = sorted((folder / "simulations").glob("*.json"))[0]
    simulation.write_text(DEEP, encoding="utf-8")
    _assert_user_error(run_cli(["tau2", "diagnose", str(folder)]), simulation.name)


def test_nan_token_counts_in_bfcl_results_are_no_count(tmp_path):
    source = DATA / "bfcl_results" / "api_fc" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    entry = json.loads(source.read_text(encoding="utf-8").splitlines()[0])
    entry["input_token_count"] = float("nan")
    entry["output_token_count"] = [[float("inf")]]
    entry["latency"] = 10**400
    (tmp_path / "result").mkdir()
    (tmp_path / "result" / source.name).write_text(json.dumps(entry) + "\n", encoding="utf-8")  # NaN, Infinity
    run = tmp_path / "run"
    outcome = run_cli(["import", "bfcl", str(tmp_path / "result"), "--model-name", "m", "--run-dir", str(run), "-q"])
    assert outcome.code == 0, outcome.explain()
    exported = json.loads(run_cli(["export", str(run)]).stdout.splitlines()[0])
    assert exported["case_id"] == entry["id"]


def _imported_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    results = DATA / "bfcl_results" / "api_fc"
    assert run_cli(["import", "bfcl", str(results), "--model-name", "m", "--run-dir", str(run), "-q"]).code == 0
    return run


def test_a_corrupt_grade_in_a_store_is_one_error_naming_the_case(tmp_path):
    run = _imported_run(tmp_path)
    with sqlite3.connect(run / "run.sqlite") as conn:
        case_id = conn.execute("SELECT case_id FROM cases ORDER BY case_id").fetchone()[0]
        conn.execute("UPDATE cases SET grade = ? WHERE case_id = ?", ('{"passed": "perhaps', case_id))
    conn.close()
    for command in (["report", str(run)], ["cases", str(run)], ["show", str(run), case_id], ["export", str(run)]):
        _assert_user_error(run_cli(command), case_id, "unreadable")


def test_a_store_column_of_the_wrong_type_is_one_error_naming_the_case(tmp_path):
    run = _imported_run(tmp_path)
    with sqlite3.connect(run / "run.sqlite") as conn:
        case_id = conn.execute("SELECT case_id FROM cases ORDER BY case_id").fetchone()[0]
        conn.execute("UPDATE cases SET category = ? WHERE case_id = ?", (b"\xff", case_id))
    conn.close()
    _assert_user_error(run_cli(["cases", str(run)]), case_id, "unreadable")


def test_a_judge_reply_with_a_huge_integer_score_is_a_missing_score():
    from tooldiag.suites.judgebench.parsing import parse_judge_reply

    verdict = parse_judge_reply('{"tool_selection_accuracy": ' + "9" * 400 + ', "sequence_accuracy": 1}')
    assert verdict is not None
    assert verdict.values["tool_selection"] is None and verdict.values["sequence"] == 1.0


def test_a_file_name_of_non_utf8_bytes_printed_to_stdout_is_escaped(tmp_path):
    # Python decodes such a name with surrogateescape: "caf\udce9.json", which a strict UTF-8 stdout cannot take
    name = os.fsdecode(b"caf\xe9.json")
    path = tmp_path / name
    shutil.copyfile(DATA / "tau2" / "retail_v0.json", path)
    outcome = run_cli(["tau2", "diagnose", str(path)])
    assert outcome.code == 0 and outcome.crash is None, outcome.explain()
    assert "caf\\udce9.json" in outcome.stdout
