"""``tooldiag classify``: JSONL in, one JSON object per line out, clear errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tooldiag.cli.main import main

LABELLED = Path(__file__).resolve().parents[1] / "data" / "classifier" / "en-original.jsonl"


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tooldiag", *args], capture_output=True, text=True, input=stdin)


MESSAGES = [
    {"id": "a", "role": "assistant", "content": "Shall I proceed with the booking for $350?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "1", "type": "function", "function": {"name": "ls", "arguments": "{bad"}}],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Which folder should I use?"}]},
    {"role": "assistant", "content": "I cannot do that: no such function."},
]


def test_classify_file_in_order(tmp_path, capsys):
    path = tmp_path / "m.jsonl"
    path.write_text(
        "\n".join(json.dumps(m) for m in MESSAGES[:2]) + "\n\n" + "\n".join(json.dumps(m) for m in MESSAGES[2:]) + "\n"
    )
    main(["classify", str(path)])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["action_class"] for r in rows] == ["confirm", "tool_call", "ask", "refuse"]
    assert [r["line"] for r in rows] == [1, 2, 4, 5]  # the blank line is skipped, numbering kept
    assert rows[0]["id"] == "a" and "id" not in rows[1]


def test_classify_stdin_with_paper_scheme():
    proc = cli("classify", "--scheme", "paper", "-", stdin=json.dumps(MESSAGES[0]) + "\n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["action_class"] == "ask"


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"role": "assistant", "content": "ok"}\n{"role": "assistant", "content": \n', "line 2: not valid JSON"),
        ('"just a string"\n', "line 1: expected a JSON object"),
    ],
)
def test_bad_lines_name_the_line(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    proc = cli("classify", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and message in proc.stderr


def test_bad_scheme_and_missing_file(tmp_path):
    proc = cli("classify", "--scheme", "magic", "-", stdin="{}\n")
    assert proc.returncode == 2 and "unknown scheme" in proc.stderr
    proc = cli("classify", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = cli("classify", str(tmp_path))
    assert proc.returncode == 2 and "is a directory" in proc.stderr and "Traceback" not in proc.stderr


def test_evaluate_prints_precision_recall(capsys):
    main(["classify", str(LABELLED), "--evaluate"])
    out = capsys.readouterr().out
    assert "| class | support | paper P | paper R | default P | default R |" in out
    assert "| confirm |" in out and "gold \\ default" in out


def test_evaluate_needs_labels(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(MESSAGES[0]) + "\n")
    proc = cli("classify", str(path), "--evaluate")
    assert proc.returncode == 2 and "no 'label' field" in proc.stderr
