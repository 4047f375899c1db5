"""``tooldiag tau2 diagnose`` and ``tooldiag tau2 ask-scan`` from the command line."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.suites.tau2.conftest import AIRLINE_V1, RETAIL_V0
from tooldiag.cli.main import main


def run(capsys, *args):
    main(["tau2", *map(str, args)])
    return capsys.readouterr()


def fails(capsys, *args):
    with pytest.raises(SystemExit) as info:
        main(["tau2", *map(str, args)])
    assert info.value.code == 2
    return capsys.readouterr().err


def test_markdown_to_stdout(capsys):
    out = run(capsys, "diagnose", RETAIL_V0, AIRLINE_V1).out
    assert out.startswith("# tau2-bench action-class diagnostic")
    assert (
        "| fake/agent-b | airline | deterministic | all | 2 | 50.0 [9.5, 90.5] | 100.0 [34.2, 100.0] | -50.0 | 0 |"
        in out
    )


def test_csv_and_json_to_files(tmp_path, capsys):
    csv_path = tmp_path / "out" / "t.csv"
    result = run(capsys, "diagnose", RETAIL_V0, "--format", "csv", "--out", csv_path)
    assert result.out == "" and f"wrote {csv_path}" in result.err
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert sum(row["section"] == "event" for row in rows) == 4
    json_out = run(capsys, "diagnose", AIRLINE_V1, "-f", "json").out
    assert json.loads(json_out)["inputs"][0]["layout"] == "dir"


def test_user_errors_are_one_line_with_exit_2(tmp_path, capsys):
    assert "error: " in fails(capsys, "diagnose", tmp_path / "missing.json")
    assert "unknown format 'xml'" in fails(capsys, "diagnose", RETAIL_V0, "--format", "xml")
    cut = tmp_path / "cut.json"
    cut.write_text(RETAIL_V0.read_text()[:5000])
    err = fails(capsys, "diagnose", cut)
    assert err.startswith(f"error: {cut}: invalid JSON at line ") and "Traceback" not in err
    bad_ids = tmp_path / "ids.json"
    bad_ids.write_text('["1"]')
    assert "ask ids must map a domain name" in fails(capsys, "diagnose", RETAIL_V0, "--ask-ids", bad_ids)


def test_ask_ids_override(tmp_path, capsys):
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps({"retail": ["1", "10"]}))
    payload = json.loads(run(capsys, "diagnose", RETAIL_V0, "--ask-ids", ids, "-f", "json").out)
    summary = payload["task_classes"][0]
    assert summary["ids"]["ask"] == ["1", "10"] and summary["ask_source"] == "user file"


def test_ask_scan_on_results_and_tasks_files(tmp_path, capsys):
    tasks = json.loads(RETAIL_V0.read_text())["tasks"]
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps(tasks))
    payload = json.loads(run(capsys, "ask-scan", RETAIL_V0, tasks_file, "-f", "json").out)
    for row in payload:
        assert row["domain"] == "retail" and row["n_tasks"] == 4
        assert row["candidates"] == [
            {"task_id": "5", "phrases": ["if the agent asks"], "shipped": True},
            {"task_id": "24", "phrases": ["when the agent asks"], "shipped": True},
        ]
    table = run(capsys, "ask-scan", tasks_file).out
    assert "| 5 | if the agent asks | yes |" in table


def test_help_lists_the_tau2_commands(capsys):
    out = run(capsys, "--help").out
    assert "diagnose" in out and "ask-scan" in out
