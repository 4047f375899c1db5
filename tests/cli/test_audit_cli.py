"""CLI: `tooldiag audit import` and `tooldiag audit report`, and one clear line on bad input."""

import json
import subprocess
import sys

import pytest

from tooldiag.cli.main import main
from tooldiag.suites.bfcl.audit import AUDIT_FILE

ROWS = [
    {"case_id": "multi_turn_miss_param_0", "turn": 3, "rater": "r1", "label": "ask"},
    {"case_id": "multi_turn_miss_param_0", "turn": 3, "rater": "r2", "label": "confirm", "note": "reads as consent"},
    {"case_id": "multi_turn_miss_param_0", "turn": 3, "rater": "adjudicated", "label": "ask"},
    {"case_id": "multi_turn_base_2", "turn": 0, "rater": "r1", "label": "tool_call"},
    {"case_id": "multi_turn_base_2", "turn": 0, "rater": "r2", "label": "tool_call"},
    {"case_id": "multi_turn_base_2", "rater": "r1", "label": "tool_call"},
    {"case_id": "multi_turn_base_2", "rater": "r2", "label": "tool_call"},
]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "tooldiag", *map(str, args)], capture_output=True, text=True)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def run_dir(tmp_path):
    run = tmp_path / "run"
    ids = "multi_turn_miss_param_0,multi_turn_base_2"
    main(["run", "bfcl", "--model", "ref/oracle", "--run-dir", str(run), "--ids", ids, "-q"])
    return run


def test_import_then_report(run_dir, tmp_path, capsys):
    labels = write_jsonl(tmp_path / "labels.jsonl", ROWS)
    main(["audit", "import", str(labels), "--run-dir", str(run_dir)])
    err = capsys.readouterr().err
    assert "7 label(s) read: 7 added, 0 unchanged, 0 replaced" in err and "raters r1, r2 and adjudicated" in err
    main(["audit", "import", str(labels), "--run-dir", str(run_dir)])
    assert "0 added, 7 unchanged" in capsys.readouterr().err
    assert len((run_dir / AUDIT_FILE).read_text().splitlines()) == 7

    main(["audit", "report", str(run_dir)])
    md = capsys.readouterr().out
    assert md.startswith("# Audit: ref/oracle (classifier: default)")
    assert "\nClassifier: default: " in md  # the provenance line every report carries
    # r1 and r2 agree on 2 of 3 items; the kappa of [ask, tc, tc] vs [confirm, tc, tc] is 0.4
    assert "| r1 | r2 | 3 | 66.7 | 0.400 |" in md
    assert "| multi_turn_miss_param_0 | 3 | ask | confirm | ask | ask |" in md

    out = tmp_path / "audit.json"
    main(["audit", "report", str(run_dir), "--format", "json", "--scheme", "paper", "--out", str(out)])
    data = json.loads(out.read_text())
    assert data["scheme"] == "paper" and data["classifier"]["scheme"] == "paper"
    assert data["classifier"]["emissions"] > 0 and data["classifier"]["judge"] is None
    summary = next(t for t in data["tables"] if t["key"] == "audit_summary")["records"][0]
    assert summary["adjudicated_share"] == pytest.approx(1 / 3) and summary["resolved_share"] == 1.0


def test_changed_label_warns(run_dir, tmp_path, capsys):
    main(["audit", "import", str(write_jsonl(tmp_path / "a.jsonl", ROWS)), "--run-dir", str(run_dir)])
    changed = [{**ROWS[1], "label": "ask"}]
    main(["audit", "import", str(write_jsonl(tmp_path / "b.jsonl", changed)), "--run-dir", str(run_dir)])
    err = capsys.readouterr().err
    assert "0 added, 0 unchanged, 1 replaced" in err
    assert "warning: 1 stored label(s) replaced by a different label" in err
    main(["audit", "report", str(run_dir)])
    assert "The raters agree on every item they share." in capsys.readouterr().out


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"case_id": "multi_turn_base_199", "rater": "r1", "label": "ask"}, "'multi_turn_base_199' is not in the run"),
        ({"case_id": "multi_turn_base_2", "rater": "r1", "label": "clarify"}, "'clarify' is not an action class"),
        ("{not json", "not valid JSON"),
    ],
)
def test_bad_input_is_one_error_line_and_changes_nothing(run_dir, tmp_path, bad, message):
    assert cli("audit", "import", write_jsonl(tmp_path / "ok.jsonl", ROWS), "--run-dir", run_dir).returncode == 0
    stored = (run_dir / AUDIT_FILE).read_bytes()
    path = tmp_path / "bad.jsonl"
    line = bad if isinstance(bad, str) else json.dumps(bad)
    path.write_text(json.dumps(ROWS[0]) + "\n" + line + "\n", encoding="utf-8")
    proc = cli("audit", "import", path, "--run-dir", run_dir)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"error: {path} line 2: ") and message in lines[0]
    assert len(lines) == 2 and lines[1].startswith("  fix: ")
    assert (run_dir / AUDIT_FILE).read_bytes() == stored


def test_report_errors(run_dir, tmp_path):
    proc = cli("audit", "report", run_dir)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "holds no audit labels" in proc.stderr
    proc = cli("audit", "report", run_dir, "--format", "csv")
    assert proc.returncode == 2 and "unknown format 'csv'" in proc.stderr
    proc = cli("audit", "report", run_dir, "--scheme", "nope")
    assert proc.returncode == 2 and "unknown scheme 'nope'" in proc.stderr
    proc = cli("audit", "import", tmp_path / "missing.jsonl", "--run-dir", run_dir)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
