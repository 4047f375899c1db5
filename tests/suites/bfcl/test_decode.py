"""The FC decoder on odd but legal OpenAI-compatible replies, as BFCL decodes them."""

import pytest

from tooldiag.models.openai_compat import parse_chat_completion
from tooldiag.suites.bfcl.decode import DecodeError, fc_decode


def reply(function: dict, content=None) -> dict:
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


@pytest.mark.parametrize(
    "function, expected",
    [
        ({"name": "cd", "arguments": '{"folder": "a"}'}, ["cd(folder='a')"]),
        ({"name": "cd", "arguments": {"folder": "a"}}, ["cd(folder='a')"]),  # already an object
        ({"name": "pwd", "arguments": "{}"}, ["pwd()"]),
    ],
)
def test_calls_decode_as_bfcl_builds_them(function, expected):
    assert fc_decode(parse_chat_completion(reply(function))) == expected


@pytest.mark.parametrize(
    "function",
    [
        {"name": "pwd", "arguments": ""},  # json.loads("") raises in BFCL
        {"name": "pwd", "arguments": "null"},  # None.items() raises in BFCL
        {"name": "pwd", "arguments": None},  # the SDK hands BFCL None
        {"name": "pwd"},  # no arguments at all: BFCL's parse keeps no call
    ],
)
def test_calls_bfcl_cannot_decode_end_the_turn(function):
    """BFCL's decode raises on these, so the step ends the turn; it never runs ``pwd()``."""
    emission = parse_chat_completion(reply(function, content="let me check"))
    assert emission.tool_calls and emission.tool_calls[0].name == "pwd"
    with pytest.raises(DecodeError):
        fc_decode(emission)
