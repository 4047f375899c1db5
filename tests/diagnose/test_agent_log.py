"""Agent logs: the documented format, its errors, and the report it yields."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tooldiag.diagnose import diagnose_log, read_agent_log
from tooldiag.errors import UserError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_log.jsonl"


def test_example_log_report():
    report = diagnose_log(EXAMPLE)
    cats = report.categories
    assert list(cats) == ["cancel_order", "lookup", "missing_info", "unsupported"]
    assert cats["cancel_order"].gold.value == "confirm" and cats["cancel_order"].gar == pytest.approx(200 / 3)
    # the injected placeholder of no-tool-2 is harness text: not a refusal (reading A)
    assert cats["unsupported"].gar == 50.0 and cats["unsupported"].acc == 100.0
    assert cats["unsupported"].flags == ("bound_violation", "masking")
    assert cats["missing_info"].gold.value == "ask"  # category gold from per-message labels
    assert cats["lookup"].flags == ("execution_failure",)
    assert report.overall_acc == pytest.approx((200 / 3 + 0 + 100 + 100) / 4)
    assert report.capability.n == 8


def test_gold_turns_come_from_labelled_messages():
    conversations = {c.id: c for c in read_agent_log(EXAMPLE)}
    assert conversations["order-cancel-1"].gold_turns == (0,)
    assert conversations["order-cancel-2"].gold_turns is None  # unlabelled: every turn is gold
    assert conversations["missing-dest-2"].n_turns == 2


def write_log(tmp_path, *objs_or_lines):
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs_or_lines) + "\n")
    return path


GOOD = {
    "id": "a",
    "gold_class": "ask",
    "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Which file?"}],
}


@pytest.mark.parametrize(
    "lines, message",
    [
        ([GOOD, "{oops"], "line 2: not valid JSON"),
        (["[1]"], "line 1: expected a JSON object"),
        ([{"gold_class": "ask", "messages": []}], "line 1: missing 'id'"),
        ([GOOD, GOOD], "line 2: id 'a' already used on line 1"),
        ([{"id": "a", "messages": [{"role": "assistant", "content": "x"}]}], "line 1: no gold class"),
        ([{"id": "a", "gold_class": "maybe", "messages": []}], "'maybe' is not an action class"),
        ([{"id": "a", "gold_class": "other", "messages": []}], "'other' cannot be a gold class"),
        (
            [{"id": "a", "messages": [{"role": "assistant", "content": "Hi!", "gold_class": "Other"}]}],
            "'other' cannot be a gold class",
        ),
        ([{"id": "a", "gold_class": "ask", "messages": "hi"}], "'messages' must be a list"),
        ([{"id": "a", "gold_class": "ask", "passed": "yes", "messages": []}], "'passed' must be true, false or null"),
        (
            [{"id": "a", "gold_class": "ask", "messages": [{"content": "x"}]}],
            "message 0 is not an object with a 'role'",
        ),
        (
            [
                {
                    "id": "a",
                    "messages": [
                        {"role": "assistant", "gold_class": "ask"},
                        {"role": "assistant", "gold_class": "refuse"},
                    ],
                }
            ],
            "assistant messages carry different gold classes",
        ),
        (
            [{"id": "a", "gold_class": "ask", "messages": [{"role": "assistant", "gold_class": "refuse"}]}],
            "differ from the case gold_class",
        ),
        (
            [GOOD, {**GOOD, "id": "b", "gold_class": "refuse", "category": "ask"}],
            "line 2: category 'ask' has gold 'refuse'",
        ),
        ([""], "holds no conversation"),
    ],
)
def test_bad_logs_are_user_errors_naming_the_line(tmp_path, lines, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_agent_log(write_log(tmp_path, *lines))


def test_log_without_passed_reports_gar_only(tmp_path):
    report = diagnose_log(write_log(tmp_path, GOOD))
    summary = report.categories["ask"]
    assert summary.gar == 100.0 and summary.acc is None and summary.delta_pp is None and summary.flags == ()
    assert any("no conversation has 'passed'" in note for note in report.notes)


def test_cli_json_and_errors(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tooldiag", "diagnose", str(EXAMPLE), "--format", "json"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    run = json.loads(proc.stdout)["runs"][0]
    assert run["name"] == "agent_log" and run["categories"]["unsupported"]["gold_class"] == "refuse"
    bad = write_log(tmp_path, GOOD, "{oops")
    proc = subprocess.run([sys.executable, "-m", "tooldiag", "diagnose", str(bad)], capture_output=True, text=True)
    assert (
        proc.returncode == 2
        and proc.stderr.startswith("error: ")
        and "line 2" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_missing_file_and_directory_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        read_agent_log(tmp_path / "nope.jsonl")
    with pytest.raises(UserError, match="is a directory"):
        read_agent_log(tmp_path)
