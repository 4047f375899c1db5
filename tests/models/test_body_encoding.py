"""The spliced request body (each tool list encoded once) is the plain body, byte for byte."""

from __future__ import annotations

import json

import pytest

from tooldiag.models.body_encoding import ToolListEncoder
from tooldiag.models.openai_compat import build_request_body, encode_request_bytes
from tooldiag.trajectory import GenerationConfig, Message, ToolSpec


def tool(name: str, description: str = "") -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description or f"does {name} — ünïcode",
        parameters={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
        extra={"response": {"type": "dict"}},
    )


TOOLS = [tool("cd"), tool("ls"), tool("mv")]
CHAT = [Message(role="system", content="be brief"), Message(role="user", content='déplace "a" vers b\n')]


@pytest.mark.parametrize(
    ("tools", "tool_choice", "config"),
    [
        (TOOLS, None, GenerationConfig()),
        (TOOLS, "auto", GenerationConfig(temperature=0.0, seed=3, max_tokens=5, stop=["x"])),
        (TOOLS, "ls", GenerationConfig(top_p=0.5)),
        (TOOLS, None, GenerationConfig(extra_body={"chat_template_kwargs": {"think": False}, "temperature": 1.5})),
        (TOOLS, "required", GenerationConfig(temperature=None, extra_body={"tools": []})),  # extra_body wins
        (TOOLS, None, GenerationConfig(extra_body={"model": "other", "tool_choice": "none"})),
        (None, "auto", GenerationConfig()),
        ([], None, GenerationConfig()),
    ],
)
def test_spliced_body_is_the_plain_body(tools, tool_choice, config):
    plain = json.dumps(build_request_body("m", CHAT, tools, tool_choice, config), ensure_ascii=False).encode()
    encoder = ToolListEncoder()
    for _ in range(2):  # the second time from the encoder's cache
        assert encode_request_bytes("m", CHAT, tools, tool_choice, config, encoder) == plain
    assert encode_request_bytes("m", CHAT, tools, tool_choice, config) == plain


def test_a_changed_list_is_encoded_again():
    encoder = ToolListEncoder()
    tools = [tool("cd"), tool("ls")]
    first = json.loads(encoder.data(tools))
    tools.append(tool("mv"))  # in place: same list object, other members
    assert [t["function"]["name"] for t in json.loads(encoder.data(tools))] == ["cd", "ls", "mv"]
    tools[0] = tool("cd", description="another text")
    assert json.loads(encoder.data(tools))[0]["function"]["description"] == "another text"
    assert first[0]["function"]["description"] != "another text"


def test_the_cache_is_bounded_and_keeps_recent_lists():
    encoder = ToolListEncoder(size=2)
    lists = [[tool(f"t{i}")] for i in range(3)]
    for tools in lists:
        encoder.data(tools)
    assert len(encoder) == 2
    assert encoder.lists() == lists[1:]
    encoder.data(lists[1])  # used again: now the most recent
    encoder.data(lists[0])
    assert encoder.lists() == [lists[1], lists[0]]


def test_the_bytes_sent_are_the_plain_body_in_utf8():
    """What the backend posts (spliced as bytes) is the plain body's UTF-8, with a non-ASCII tool
    list and message, from the encoder's cache the second time."""
    config = GenerationConfig(seed=1, extra_body={"chat_template_kwargs": {"é": True}})
    plain = json.dumps(build_request_body("m", CHAT, TOOLS, "ls", config), ensure_ascii=False).encode("utf-8")
    encoder = ToolListEncoder()
    for _ in range(2):
        assert encode_request_bytes("m", CHAT, TOOLS, "ls", config, encoder) == plain
    assert encoder.data(TOOLS) == json.dumps([t.to_openai() for t in TOOLS], ensure_ascii=False).encode("utf-8")
