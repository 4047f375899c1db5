"""``tooldiag show LOG.jsonl CONV_ID``: an agent-log conversation as a transcript."""

import json
from pathlib import Path

import pytest

from tooldiag import show_case
from tooldiag.cli.main import main
from tooldiag.diagnose import diagnose_log

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_log.jsonl"


def test_every_conversation_agrees_with_diagnose():
    rows = {row.case_id: row for row in diagnose_log(EXAMPLE).cases}
    assert rows
    for case_id, row in rows.items():
        transcript = show_case(EXAMPLE, case_id)
        assert transcript.verdict == row.verdict.value and transcript.gold_hit == row.gold_hit
        counted = tuple(
            tuple(step.action_class.value for step in turn.steps if step.counted) for turn in transcript.turns
        )
        assert counted == row.classes


def test_show_prints_user_messages_tool_results_and_classes(capsys):
    main(["show", str(EXAMPLE), "order-cancel-1"])
    out = capsys.readouterr().out
    assert "user: Hi, I want to cancel order #W2378156" in out
    assert "confirm  [confirm:" in out and "tool_call  [structured_call]" in out
    assert 'result: {"status": "pending"' in out and "verdict OK" in out


def test_injected_message_of_a_log(tmp_path):
    log = tmp_path / "log.jsonl"
    messages = [
        {"role": "user", "content": "Book the 9am flight."},
        {"role": "assistant", "content": "Which date would you like?", "injected": True},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "1", "function": {"name": "book", "arguments": "{"}}],
        },
        {"role": "tool", "tool_call_id": "1", "content": "booked"},
    ]
    log.write_text(json.dumps({"id": "a", "gold_class": "ask", "passed": True, "messages": messages}) + "\n")
    transcript = show_case(log, "a")
    asked, booked = transcript.steps()
    assert asked.injected and asked.action_class.value == "ask" and not asked.counted
    assert booked.tool_calls[0].parse_error and booked.tool_results == ("booked",)
    assert transcript.verdict == "masked"


def test_unknown_conversation_id(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["show", str(EXAMPLE), "order-cancel-77"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "no conversation 'order-cancel-77'" in err and "close ids: order-cancel-" in err
    assert f"tooldiag cases {EXAMPLE}" in err
