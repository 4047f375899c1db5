"""``tooldiag classify`` reads assistant messages or conversations, and refuses anything else by line."""

import json
import subprocess
import sys

import pytest

from tooldiag.cli.main import main


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tooldiag", *args], capture_output=True, text=True, input=stdin)


CONVERSATION = {
    "id": "conv-7",
    "messages": [
        {"role": "system", "content": "You are a file agent."},
        {"role": "user", "content": "Move report.pdf."},
        {"role": "assistant", "content": "Which folder should it go to?"},
        {"role": "user", "content": "tmp"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "mv", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "1", "content": "ok"},
        {"role": "assistant", "content": "Done: report.pdf is in tmp."},
    ],
}  # fmt: skip


def test_conversation_lines_classify_each_assistant_message(tmp_path, capsys):
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"content": "I cannot do that."}) + "\n" + json.dumps(CONVERSATION) + "\n")
    main(["classify", str(path)])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [
        {"line": 1, "action_class": "refuse"},
        {"line": 2, "id": "conv-7", "message": 2, "action_class": "ask"},
        {"line": 2, "id": "conv-7", "message": 4, "action_class": "tool_call"},
        {"line": 2, "id": "conv-7", "message": 6, "action_class": "other"},
    ]


GOOD = json.dumps({"role": "assistant", "content": "ok"})


@pytest.mark.parametrize(
    "bad, problem",
    [
        ({"role": "user", "content": "hi"}, "a 'user' message; only assistant messages are classified"),
        ({"role": "system", "content": "be nice"}, "a 'system' message"),
        ({"role": "tool", "tool_call_id": "1", "content": "ok"}, "a 'tool' message"),
        ({"id": "x", "label": "ask"}, "an object with neither 'content' nor 'tool_calls' nor 'messages'"),
        ([{"role": "assistant", "content": "hi"}], "expected a JSON object"),
        ("just text", "expected a JSON object"),
        ({"id": "c", "messages": [{"role": "user", "content": "hi"}]}, "a conversation with no assistant message"),
        ({"id": "c", "messages": "hello"}, "'messages' must be a list"),
        ({"id": "c", "messages": [{"content": "no role"}]}, "message 0 is not an object with a 'role'"),
    ],
)
def test_wrong_shaped_lines_are_refused_by_line(tmp_path, bad, problem):
    path = tmp_path / "in.jsonl"
    path.write_text(GOOD + "\n\n" + json.dumps(bad) + "\n")
    proc = cli("classify", str(path))
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len([line for line in lines if line.startswith("error: ")]) == 1
    assert lines[0].startswith(f"error: {path} line 3: {problem}")
    assert lines[1].startswith("  fix: ")


def test_evaluate_refuses_conversations(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(CONVERSATION) + "\n")
    proc = cli("classify", str(path), "--evaluate")
    assert proc.returncode == 2 and "line 1: --evaluate reads one labelled assistant message per line" in proc.stderr


def test_format_only_with_evaluate(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(GOOD + "\n")
    proc = cli("classify", str(path), "--format", "json")
    assert proc.returncode == 2 and "--format applies to --evaluate" in proc.stderr
    proc = cli("classify", str(path), "--evaluate", "--format", "xml")
    assert proc.returncode == 2 and "unknown format 'xml'" in proc.stderr
