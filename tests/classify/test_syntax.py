"""Calls written inside text, as imported BFCL result files hold them."""

import pytest

from tooldiag.classify import ActionClass, classify
from tooldiag.classify.syntax import embedded_call_list, python_call_syntax, text_holds_tool_call

TEXT_CALLS = {
    "json list text (xLAM-2)": '[{"name": "ls", "arguments": {"a": true}}]',
    "tool_call blocks plus prose (Qwen3)": 'I will sort it.\n<tool_call>\n{"name": "sort", "arguments": '
    '{"file_name": "a.txt"}}\n</tool_call>',
    "fenced json (Hammer2.1)": '```\n[{"name": "cd", "arguments": {"folder": "docs"}}]\n```',
    "prompt mode": "[cd(folder='document'), ls()]",
}
DEFAULT_ONLY = {
    "fenced python": "```python\n[mv(source='a.txt', destination='temp')]\n```",
    "bare python call": "cd(folder='document')",
    "prose then call list": 'Selling now. [place_order(order_type="Sell", symbol="AAPL", amount=5)]',
    "prose then fenced json": 'Looking it up.\n```json\n[{"name": "get_order_details", "arguments": {"order_id": '
    '"#W1"}}]\n```',
    "llama function tag": '<function=get_user_details>{"user_id": "u1"}</function>',
    "mistral marker": '[TOOL_CALLS][{"name": "ls", "arguments": {}}]',
    "python tag": '<|python_tag|>{"name": "ls", "parameters": {}}',
    "openai-shaped json": '{"tool_calls": [{"function": {"name": "ls", "arguments": "{}"}}]}',
    "truncated json list": '[{"name": "calculate", "arguments": {"expression": "1+1"}',
}
NOT_CALLS = [
    "[Note: this is just a comment]",
    "I will issue a tool_call to mv shortly.",
    "Hello(world)",
    "As shown in [see(above)], the file moved.",
    "```python\nprint('hi')\n```\nThat prints hi.",
    "The result is [1, 2, 3].",
    "Use the format f(x=1) when calling.",
]


@pytest.mark.parametrize("text", TEXT_CALLS.values(), ids=TEXT_CALLS.keys())
def test_text_calls_are_tool_calls_in_both_schemes(text):
    assert classify(text) is ActionClass.TOOL_CALL
    assert classify(text, scheme="paper") is ActionClass.TOOL_CALL


@pytest.mark.parametrize("text", DEFAULT_ONLY.values(), ids=DEFAULT_ONLY.keys())
def test_default_finds_more_call_syntaxes(text):
    assert classify(text) is ActionClass.TOOL_CALL


@pytest.mark.parametrize("text", NOT_CALLS)
def test_prose_is_not_a_call(text):
    assert not text_holds_tool_call(text, ("<tool_call",))
    assert classify(text) is not ActionClass.TOOL_CALL


def test_python_call_syntax_is_parsed_never_run(tmp_path):
    marker = tmp_path / "created_if_executed"
    payload = f"[open(file={str(marker)!r}, mode='w')]"
    assert python_call_syntax(payload)  # a call shape...
    assert classify(payload) is ActionClass.TOOL_CALL
    assert not marker.exists()  # ...that is never executed
    assert not python_call_syntax("[__import__('os').system('echo x')]")  # call on a call result: not a tool name
    assert not python_call_syntax("x = 1")
    assert not python_call_syntax("[" * 5000 + "]" * 5000)  # deep nesting does not raise
    assert embedded_call_list("Now: [send_message(receiver_id='U1', message='hi')] done")
    assert not embedded_call_list("A list [1, 2] and [see(above)].")
