"""The LiteLLM provider: the install hint without the SDK, and its translation and error
classification against a stand-in ``litellm`` module (the real SDK is an optional extra)."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest

from tooldiag.errors import MissingDependencyError, ModelCallError
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.trajectory import GenerationConfig, Message, ToolSpec

CHAT = [Message(role="user", content="hi")]
FAST = {"retry_base_s": 0.001, "retry_max_s": 0.002}


def test_missing_sdk_gives_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "litellm", None)
    with pytest.raises(MissingDependencyError) as info:
        resolve_model("litellm/groq/llama-3.3-70b", ModelOptions())
    assert "litellm" in info.value.message
    assert info.value.hint.startswith("pip install 'tooldiag[litellm]'")
    assert "uv sync --extra litellm" in info.value.hint


class _Error(Exception):
    def __init__(self, message, status_code=None, headers=None):
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.response = types.SimpleNamespace(headers=headers or {})


class RateLimitError(_Error):
    pass


class Timeout(_Error):
    pass


class APIConnectionError(_Error):
    pass


class BadRequestError(_Error):
    pass


class _Response:
    def __init__(self, body):
        self._body = body

    def model_dump(self):
        return self._body


@pytest.fixture
def fake_litellm(monkeypatch):
    module = types.ModuleType("litellm")
    module.calls = []
    module.outcomes = []

    async def acompletion(**kwargs):
        module.calls.append(kwargs)
        outcome = module.outcomes.pop(0) if module.outcomes else None
        if isinstance(outcome, Exception):
            raise outcome
        message = outcome or {"role": "assistant", "content": "ok", "tool_calls": None}
        return _Response({"choices": [{"message": message, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3}})

    module.acompletion = acompletion
    monkeypatch.setitem(sys.modules, "litellm", module)
    return module


def generate(backend, *args):
    return asyncio.run(backend.generate(*args))


def test_request_translation(fake_litellm, monkeypatch):
    monkeypatch.setenv("GROQ_KEY", "gsk-0123456789")
    backend = resolve_model(
        "litellm/groq/llama-3.3-70b",
        ModelOptions(cache=False, api_key_env="GROQ_KEY", base_url="http://127.0.0.1:9/v1"),
    )
    tool = ToolSpec(name="f")
    config = GenerationConfig(temperature=0.2, max_tokens=9, seed=4, stop=["x"], extra_body={"top_k": 3}, timeout_s=7)
    emission = generate(backend, CHAT, [tool], "auto", config)
    call = fake_litellm.calls[0]
    assert call["model"] == "groq/llama-3.3-70b" and call["messages"] == [{"role": "user", "content": "hi"}]
    assert call["tools"] == [tool.to_openai()] and call["tool_choice"] == "auto"
    assert (call["temperature"], call["max_tokens"], call["seed"], call["stop"], call["top_k"]) == (0.2, 9, 4, ["x"], 3)
    assert (call["timeout"], call["num_retries"]) == (7, 0)
    assert call["api_base"] == "http://127.0.0.1:9/v1" and call["api_key"] == "gsk-0123456789"
    assert emission.text == "ok" and emission.usage.input_tokens == 3


def test_tool_calls_are_parsed(fake_litellm):
    fake_litellm.outcomes = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "function": {"name": "f", "arguments": '{"x": 1}'}},
                {"id": "b", "function": {"name": "g", "arguments": "{oops"}},
            ],
        }
    ]
    emission = generate(resolve_model("litellm/openai/gpt-4o-mini", ModelOptions(cache=False)), CHAT)
    assert [(c.name, c.arguments) for c in emission.tool_calls] == [("f", {"x": 1}), ("g", None)]
    assert emission.tool_calls[1].raw_arguments == "{oops"


def test_retries_and_classification(fake_litellm):
    fake_litellm.outcomes = [
        RateLimitError("slow down", 429, {"retry-after": "0"}),
        Timeout("timed out"),
        APIConnectionError("reset"),
        _Error("upstream 503", 503),
    ]
    backend = resolve_model("litellm/x/y", ModelOptions(cache=False, extra=FAST))
    assert generate(backend, CHAT).text == "ok"
    assert len(fake_litellm.calls) == 5

    fake_litellm.outcomes = [BadRequestError("context too long", 400), None]
    with pytest.raises(ModelCallError) as info:
        generate(backend, CHAT)
    assert info.value.status == 400 and "context too long" in info.value.message
    assert len(fake_litellm.calls) == 6  # failed fast

    fake_litellm.outcomes = [_Error("bad key", 401)]
    with pytest.raises(ModelCallError) as info:
        generate(backend, CHAT)
    assert info.value.fatal
