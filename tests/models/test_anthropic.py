"""The Anthropic provider against the fake server's Messages route, and its conversions."""

from __future__ import annotations

import sys

import pytest

from tests.support.fake_openai import Reply
from tests.support.model_calls import generate_once as generate
from tooldiag.errors import MissingDependencyError, ModelCallError, ModelCallErrorKind, UserError
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.models.anthropic import (
    _sdk_accepts_sampling,
    parse_anthropic_message,
    to_anthropic_messages,
    to_anthropic_tool_choice,
)
from tooldiag.trajectory import GenerationConfig, Message, ToolCall, ToolSpec

pytest.importorskip("anthropic")

WEATHER = ToolSpec(name="get_weather", description="weather", parameters={"type": "object", "properties": {}})
HISTORY = [
    Message(role="system", content="be brief"),
    Message(role="user", content="weather in Paris and Rome?"),
    Message(
        role="assistant",
        content="checking",
        tool_calls=[
            ToolCall.from_raw("get_weather", '{"city": "Paris"}', "call.1"),
            ToolCall.from_raw("get_weather", '{"city": "Rome"', ""),  # no id, broken JSON
        ],
    ),
    Message(role="tool", tool_call_id="call.1", content="sunny"),
    Message(role="tool", content="rainy"),
]


@pytest.fixture
def anthropic_options(server):
    def make(**overrides):
        values = {"base_url": server.root_url, "cache": False, "extra": {"retry_base_s": 0.001}}
        values.update(overrides)
        return ModelOptions(**values)

    return make


def test_messages_convert_to_the_messages_api():
    system, messages = to_anthropic_messages(HISTORY)
    assert system == "be brief"
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    uses = [b for b in messages[1]["content"] if b["type"] == "tool_use"]
    assert messages[1]["content"][0] == {"type": "text", "text": "checking"}
    assert [u["id"] for u in uses] == ["call_1", "toolu_2_1"]  # made API-safe / generated
    assert uses[0]["input"] == {"city": "Paris"} and uses[1]["input"] == {}
    results = messages[2]["content"]
    assert [(r["tool_use_id"], r["content"]) for r in results] == [("call_1", "sunny"), ("toolu_2_1", "rainy")]


def test_tool_choice_mapping():
    assert to_anthropic_tool_choice("auto") == {"type": "auto"}
    assert to_anthropic_tool_choice("required") == {"type": "any"}
    assert to_anthropic_tool_choice("none") == {"type": "none"}
    assert to_anthropic_tool_choice("get_weather") == {"type": "tool", "name": "get_weather"}
    assert to_anthropic_tool_choice(None) is None


def test_round_trip_through_the_sdk(server, anthropic_options):
    server.script(
        Reply(
            text="Let me check.",
            reasoning="two cities",
            tool_calls=[("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Bergen"})],
        )
    )
    backend = resolve_model("anthropic/claude-test", anthropic_options())
    config = GenerationConfig(max_tokens=321, stop=["###"], extra_body={"metadata": {"user_id": "u1"}}, timeout_s=5)
    emission = generate(backend, HISTORY, [WEATHER], "required", config)
    request = server.requests[0]
    assert request.path == "/v1/messages"
    body = request.body
    assert body["model"] == "claude-test" and body["max_tokens"] == 321
    assert body["system"] == "be brief" and body["stop_sequences"] == ["###"]
    assert body["tools"] == [{"name": "get_weather", "description": "weather", "input_schema": WEATHER.parameters}]
    assert body["tool_choice"] == {"type": "any"}
    assert body["metadata"] == {"user_id": "u1"}
    # SDK 2.x (API 2026-10-21) rejects sampling parameters; older SDKs get them.
    import anthropic

    assert ("temperature" in body) == _sdk_accepts_sampling(anthropic)
    assert body["messages"] == to_anthropic_messages(HISTORY)[1]
    assert emission.text == "Let me check." and emission.reasoning == "two cities"
    assert [c.arguments for c in emission.tool_calls] == [{"city": "Oslo"}, {"city": "Bergen"}]
    assert [c.id for c in emission.tool_calls] == ["toolu_1_0", "toolu_1_1"]
    assert emission.finish_reason == "tool_calls"
    assert emission.usage.input_tokens == 10 and emission.raw["id"] == "msg_1"


def test_sdk_retries_are_ours(server, anthropic_options):
    server.script(
        Reply.fail(429, "slow", retry_after="0.05"), Reply.fail(529, "overloaded"), Reply.malformed(), Reply.say("fine")
    )
    emission = generate(resolve_model("anthropic/c", anthropic_options()), [Message(role="user", content="hi")])
    assert emission.text == "fine" and emission.finish_reason == "stop"
    assert server.request_count == 4


def test_errors_are_classified(server, anthropic_options):
    server.script(Reply.fail(400, "messages: roles must alternate"))
    with pytest.raises(ModelCallError) as info:
        generate(resolve_model("anthropic/c", anthropic_options()), [Message(role="user", content="hi")])
    assert info.value.status == 400 and info.value.kind is ModelCallErrorKind.REJECTED
    assert "HTTP 400: messages: roles must alternate" in info.value.message
    assert server.request_count == 1


def test_rejected_key_is_fatal_and_redacted(server, anthropic_options, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-0123456789")
    server.api_key = "sk-ant-other"
    with pytest.raises(ModelCallError) as info:
        generate(resolve_model("anthropic/c", anthropic_options()), [Message(role="user", content="hi")])
    assert info.value.fatal and info.value.status == 401
    assert "sk-ant-secret-0123456789" not in str(info.value)


def test_stall_then_timeout_then_success(server, anthropic_options):
    server.script(Reply.stall(2.0), Reply.say("ok"))
    emission = generate(
        resolve_model("anthropic/c", anthropic_options()),
        [Message(role="user", content="hi")],
        config=GenerationConfig(timeout_s=0.2),
    )
    assert emission.text == "ok" and server.request_count == 2


def test_hosted_api_needs_a_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY is not set"):
        resolve_model("anthropic/claude-sonnet-4-5", ModelOptions())


def test_missing_sdk_gives_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
    with pytest.raises(MissingDependencyError) as info:
        resolve_model("anthropic/claude-sonnet-4-5", ModelOptions(base_url="http://127.0.0.1:9"))
    assert info.value.hint.startswith("pip install 'tooldiag[anthropic]'")
    assert "uv sync --extra anthropic" in info.value.hint


def test_parse_maps_stop_reasons():
    body = {"content": [{"type": "text", "text": "x"}], "stop_reason": "max_tokens"}
    assert parse_anthropic_message(body).finish_reason == "length"
    with pytest.raises(ValueError):
        parse_anthropic_message({"type": "error"})
