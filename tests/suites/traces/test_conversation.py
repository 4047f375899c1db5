"""The history merge and tool-failure marking shared by the trace readers, on small hand-made calls."""

from __future__ import annotations

import json

import pytest

from tooldiag.suites.traces.conversation import ConversationBuilder, ToolRun, failed_result, tool_call

USER = {"role": "user", "content": "Cancel order 7"}
CALL = {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "lookup", '{"id": 7}')]}
TOOL = {"role": "tool", "tool_call_id": "c1", "content": "pending"}
ASK = {"role": "assistant", "content": "Shall I cancel it?"}


def test_a_growing_history_is_kept_once():
    builder = ConversationBuilder()
    builder.add_call([USER], [CALL])
    # the second call re-sends everything, the arguments spelled differently: still the same call
    resent = {**CALL, "tool_calls": [tool_call("c1", "lookup", {"id": 7})]}
    builder.add_call([USER, resent, TOOL], [ASK])
    assert [m["role"] for m in builder.finish()] == ["user", "assistant", "tool", "assistant"]


def test_a_rewritten_history_adds_only_what_is_new():
    builder = ConversationBuilder()
    builder.add_call([{"role": "system", "content": "v1"}, USER], [CALL])
    builder.add_call([{"role": "system", "content": "summary"}, USER, TOOL], [ASK])
    contents = [m.get("content") for m in builder.finish()]
    assert contents == ["v1", "Cancel order 7", None, "summary", "pending", "Shall I cancel it?"]


def test_a_tool_run_no_later_call_carried_adds_its_message_after_the_call():
    builder = ConversationBuilder()
    builder.add_call([USER], [CALL])
    builder.add_tool_run(ToolRun(call_id=None, name="lookup", result={"isError": True, "content": []}, failed=False))
    messages = builder.finish()
    assert messages[-1] == {"role": "tool", "tool_call_id": "c1", "content": '{"isError": true, "content": []}',
                            "tool_error": True}  # fmt: skip


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        (json.dumps({"content": [], "isError": True}), True),
        (json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"content": [], "isError": True}}), True),
        (json.dumps({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "bad"}}), True),
        (json.dumps({"content": [], "isError": False}), False),
        ("isError: true", False),
        ({"isError": True}, True),
    ],
)
def test_mcp_failures_are_recognised(result, failed):
    assert failed_result(result) is failed


def test_arguments_that_are_not_json_keep_their_text_and_a_parse_error():
    call = tool_call("c", "f", '{"a": ')
    assert call["function"]["arguments"] == '{"a": ' and "parse_error" in call
    assert "parse_error" not in tool_call("c", "f", '{"a": 1}')
