"""The response size cap (``--max-response-bytes``) for every provider, against a real server.

Each provider meets :mod:`tests.support.fault_server`'s oversized body through its real client
(httpx for ``openai/``, the Anthropic SDK, LiteLLM when installed): the request fails at once,
unretried, as ``REJECTED`` with the one ``too_large`` message naming the cap, whether the
server declares the length or only closes the connection at the end; a cap above the body's
size lets the same answer through (so the cap, not the fault, is what refused it).
"""

from __future__ import annotations

import pytest

from tests.support.fault_server import FaultServer
from tests.support.model_calls import generate_once
from tooldiag.errors import ModelCallError, ModelCallErrorKind
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.trajectory import Message

CHAT = [Message(role="user", content="hi")]
BODY_BYTES = 300_000
CAP = 100_000


@pytest.fixture(autouse=True)
def _fault_key(monkeypatch):
    """A key for the SDKs that insist on one; the fault server ignores it."""
    monkeypatch.setenv("FAULT_KEY", "sk-fault-test")


def options(base_url: str, cap: int) -> ModelOptions:
    return ModelOptions(
        base_url=base_url,
        api_key_env="FAULT_KEY",
        cache=False,
        max_retries=3,
        max_response_bytes=cap,
        extra={"retry_base_s": 0.001, "retry_max_s": 0.002},
    )


def generate(model: str, base_url: str, cap: int):
    return generate_once(resolve_model(model, options(base_url, cap)), CHAT)


def assert_refused_by_the_cap(model: str, server: FaultServer, base_url: str) -> None:
    with pytest.raises(ModelCallError) as info:
        generate(model, base_url, CAP)
    assert info.value.kind is ModelCallErrorKind.REJECTED
    assert f"exceeds the cap of {CAP} bytes" in info.value.message
    assert "--max-response-bytes" in info.value.message
    assert server.outcomes["fault:oversized"] == 1  # refused once, never retried


@pytest.mark.parametrize("declare_length", [True, False], ids=["content-length", "close-delimited"])
def test_the_anthropic_sdk_stops_reading_at_the_cap(declare_length):
    pytest.importorskip("anthropic")
    with FaultServer("oversized", persistent=True, oversized_bytes=BODY_BYTES, declare_length=declare_length) as s:
        root = s.base_url.removesuffix("/v1")
        assert_refused_by_the_cap("anthropic/claude-test", s, root)
        # the same oversized answer under a cap above its size is read and parsed
        emission = generate("anthropic/claude-test", root, 2 * BODY_BYTES)
    assert emission.text == "ok"
    assert emission.retries == {}


@pytest.mark.parametrize("declare_length", [True, False], ids=["content-length", "close-delimited"])
def test_the_openai_provider_and_anthropic_give_the_same_refusal(declare_length):
    pytest.importorskip("anthropic")
    messages = []
    for model, suffix in (("openai/m", ""), ("anthropic/claude-test", "")):  # the same text for both
        with FaultServer("oversized", persistent=True, oversized_bytes=BODY_BYTES, declare_length=declare_length) as s:
            base = s.base_url if model.startswith("openai/") else s.base_url.removesuffix("/v1")
            with pytest.raises(ModelCallError) as info:
                generate(model, base + suffix, CAP)
        messages.append(info.value.message.split(": ", 1)[-1])
    assert messages[0] == messages[1]


@pytest.mark.parametrize("declare_length", [True, False], ids=["content-length", "close-delimited"])
def test_litellm_refuses_an_answer_over_the_cap(declare_length, monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: no fetch of the price list
    pytest.importorskip("litellm")
    monkeypatch.setenv("FAULT_KEY", "sk-fault-test")
    with FaultServer("oversized", persistent=True, oversized_bytes=BODY_BYTES, declare_length=declare_length) as s:
        assert_refused_by_the_cap("litellm/openai/fault-model", s, s.base_url)
        emission = generate("litellm/openai/fault-model", s.base_url, 2 * BODY_BYTES)
    assert emission.text == "ok"
