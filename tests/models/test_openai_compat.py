"""The OpenAI-compatible backend against the fake server: what it sends, what it parses."""

from __future__ import annotations

import json

import pytest

from tests.support.fake_openai import Reply
from tests.support.model_calls import generate_once as generate
from tooldiag.errors import UserError
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.models.openai_compat import OpenAICompatBackend, build_request_body, parse_chat_completion
from tooldiag.trajectory import GenerationConfig, Message, ToolCall, ToolSpec

WEATHER = ToolSpec(
    name="get_weather",
    description="Weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CHAT = [Message(role="system", content="be brief"), Message(role="user", content="weather in Paris?")]


def test_resolve_model_with_default_install(server, options):
    backend = resolve_model("openai/fake-model", options())
    assert backend.name == "openai/fake-model"
    emission = generate(backend, CHAT)
    assert emission.text == "ok"
    assert emission.latency_s is not None and emission.latency_s > 0
    assert server.requests[0].body["model"] == "fake-model"
    assert server.requests[0].path == "/v1/chat/completions"


def test_request_carries_messages_tools_and_every_generation_setting(server, options):
    history = [
        *CHAT,
        Message(role="assistant", tool_calls=[ToolCall.from_raw("get_weather", '{"city": "Paris"}', "c1")]),
        Message(role="tool", tool_call_id="c1", content="sunny"),
    ]
    config = GenerationConfig(
        temperature=0.3,
        top_p=0.9,
        max_tokens=77,
        seed=11,
        stop=["END"],
        extra_body={"chat_template_kwargs": {"enable_thinking": False}, "top_k": 5},
        timeout_s=9.0,
    )
    generate(resolve_model("openai/m", options()), history, [WEATHER], "required", config)
    body = server.requests[0].body
    assert body["messages"] == [m.to_openai() for m in history]
    assert body["tools"] == [WEATHER.to_openai()]
    assert body["tool_choice"] == "required"
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"], body["stop"]) == (
        0.3,
        0.9,
        77,
        11,
        ["END"],
    )
    assert body["chat_template_kwargs"] == {"enable_thinking": False} and body["top_k"] == 5
    assert "timeout_s" not in body and "timeout" not in body
    assert "authorization" not in {k.lower() for k in server.requests[0].headers}


def test_unset_settings_are_left_to_the_server_and_named_tool_choice():
    body = build_request_body("m", CHAT, [WEATHER], "get_weather", GenerationConfig(temperature=None))
    assert not {"temperature", "top_p", "max_tokens", "seed", "stop"} & set(body)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert "tool_choice" not in build_request_body("m", CHAT, None, "auto", GenerationConfig())


def test_several_tool_calls_in_one_message_keep_raw_text_and_parse_errors(server, options):
    server.script(
        Reply.call(
            ("get_weather", {"city": "Paris"}),
            ("get_weather", '{"city": "Rome"}'),
            ("get_time", '{"tz": "CET"'),  # truncated JSON
            ("get_time", "[1, 2]"),  # valid JSON, not an object
        )
    )
    emission = generate(resolve_model("openai/m", options()), CHAT, [WEATHER])
    assert [c.name for c in emission.tool_calls] == ["get_weather", "get_weather", "get_time", "get_time"]
    assert emission.tool_calls[0].arguments == {"city": "Paris"}
    assert emission.tool_calls[1].raw_arguments == '{"city": "Rome"}'
    assert emission.tool_calls[2].arguments is None
    assert emission.tool_calls[2].raw_arguments == '{"tz": "CET"'
    assert emission.tool_calls[2].parse_error.startswith("invalid JSON")
    assert "not an object" in emission.tool_calls[3].parse_error
    assert [c.id for c in emission.tool_calls] == ["call_1_0", "call_1_1", "call_1_2", "call_1_3"]
    assert emission.finish_reason == "tool_calls"
    assert emission.usage.input_tokens == 10 and emission.usage.output_tokens == 5
    assert emission.raw["id"] == "chatcmpl-1"


def test_empty_tool_calls_list_means_no_call_and_reasoning_fields(server, options):
    server.script(
        Reply.say("hello", reasoning="let me think"),
        Reply.say("again", reasoning="thinking, Ollama style", reasoning_field="reasoning"),
    )
    backend = resolve_model("openai/m", options())
    first = generate(backend, CHAT, [WEATHER])
    second = generate(backend, CHAT, [WEATHER])
    assert server.requests[0].body and first.raw["choices"][0]["message"]["tool_calls"] == []
    assert (first.text, first.tool_calls, first.reasoning) == ("hello", [], "let me think")
    assert (second.text, second.reasoning) == ("again", "thinking, Ollama style")


def test_parse_variants_content_parts_legacy_function_call_and_missing_name():
    parts = {"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]}
    assert parse_chat_completion(parts).text == "ab"
    legacy = {"choices": [{"message": {"content": None, "function_call": {"name": "f", "arguments": "{}"}}}]}
    assert parse_chat_completion(legacy).tool_calls[0].name == "f"
    nameless = {"choices": [{"message": {"tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]}}]}
    call = parse_chat_completion(nameless).tool_calls[0]
    assert call.name == "" and call.parse_error == "no function name"
    decoded = {"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}}]}
    assert parse_chat_completion(decoded).tool_calls[0].arguments == {"a": 1}


def test_odd_metadata_keeps_the_answer():
    """Content null beside tool calls, odd usage and finish_reason, extra fields: the answer stands."""
    body = {
        "id": "x",
        "system_fingerprint": "fp",
        "choices": [
            {
                "index": 0,
                "logprobs": None,
                "finish_reason": 1,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "annotations": [],
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                },
            }
        ],
        "usage": {"prompt_tokens": 12.0, "completion_tokens": "n/a", "prompt_tokens_details": {"cached_tokens": 0}},
    }
    emission = parse_chat_completion(body)
    assert emission.text is None and emission.tool_calls[0].arguments == {}
    assert emission.finish_reason is None
    assert (emission.usage.input_tokens, emission.usage.output_tokens) == (12, None)
    body.pop("usage")
    assert parse_chat_completion(body).usage is None


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"choices": []},
        {"choices": [{"text": "completion-style"}]},
        {"choices": [{"message": {"tool_calls": 3}}]},
        # a content part whose text is null (found by the nightly fuzz profile: it raised TypeError)
        {"choices": [{"message": {"content": [{"type": "text", "text": None}]}}]},
        {"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": 3}]}}]},
    ],
)
def test_non_chat_bodies_are_malformed(body):
    with pytest.raises(ValueError):
        parse_chat_completion(body)


def test_base_url_from_environment_and_validation(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/")
    backend = OpenAICompatBackend("m", ModelOptions(cache=False))
    assert backend.base_url == server.base_url
    with pytest.raises(UserError, match="not an http"):
        OpenAICompatBackend("m", ModelOptions(base_url="127.0.0.1:8000/v1"))
    with pytest.raises(UserError, match="--concurrency"):
        OpenAICompatBackend("m", ModelOptions(base_url=server.base_url, concurrency=0))
    with pytest.raises(UserError, match="--max-retries"):
        OpenAICompatBackend("m", ModelOptions(base_url=server.base_url, max_retries=-1))


def test_hosted_openai_needs_a_key_and_a_named_variable_must_exist(monkeypatch):
    with pytest.raises(UserError, match="OPENAI_API_KEY is not set") as info:
        resolve_model("openai/gpt-4o", ModelOptions())
    assert "--api-key-env" in info.value.hint
    with pytest.raises(UserError, match="MY_KEY is not set"):
        resolve_model("openai/m", ModelOptions(base_url="http://127.0.0.1:9/v1", api_key_env="MY_KEY"))


def test_key_from_named_variable_is_sent_as_bearer(server, options, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-local-123456")
    server.api_key = "sk-local-123456"
    emission = generate(resolve_model("openai/m", options(api_key_env="MY_KEY")), CHAT)
    assert emission.text == "ok"
    assert server.requests[0].headers["Authorization"] == "Bearer sk-local-123456"


def test_unicode_round_trip(server, options):
    server.script(Reply.call(("get_weather", {"city": "Zürich 東京"})))
    emission = generate(resolve_model("openai/m", options()), [Message(role="user", content="météo ✓")], [WEATHER])
    assert emission.tool_calls[0].arguments == {"city": "Zürich 東京"}
    assert server.requests[0].body["messages"][0]["content"] == "météo ✓"
    assert json.loads(emission.tool_calls[0].raw_arguments) == {"city": "Zürich 東京"}
