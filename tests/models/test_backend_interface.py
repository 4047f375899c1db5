"""The backend interface: one typed request, one method to implement, one network template.

Pins what must not drift: callers' ``generate(...)`` arguments reach ``complete`` as a
:class:`ModelRequest`; the network base class builds once, sends each attempt inside the
endpoint's semaphore and times only that; cache keys are byte-identical to the ones
written before the interface changed (existing caches still hit); and no class outside
``models/base.py`` re-types the long ``generate`` signature.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from tooldiag.errors import ModelCallError, ModelCallErrorKind
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest, TaskContext
from tooldiag.models.cache import CachedBackend, ResponseCache, cache_key
from tooldiag.models.endpoints import endpoint_semaphore
from tooldiag.models.network import NetworkBackend
from tooldiag.models.retry import AttemptFailure
from tooldiag.trajectory import Emission, GenerationConfig, Message, ToolCall, ToolSpec

ROOT = Path(__file__).resolve().parents[2]

MESSAGES = [
    Message(role="system", content="be brief"),
    Message(role="user", content="weather in Paris?"),
    Message(
        role="assistant",
        tool_calls=[
            ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}, raw_arguments='{"city": "Paris"}')
        ],
    ),
    Message(role="tool", tool_call_id="c1", content="sunny"),
]
TOOLS = [
    ToolSpec(
        name="get_weather",
        description="Weather by city",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
]


class Echo(ModelBackend):
    def __init__(self) -> None:
        self.seen: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> Emission:
        self.seen.append(request)
        return Emission(text=f"answer {len(self.seen)}")


def test_generate_hands_one_typed_request_to_complete():
    backend = Echo()
    context = TaskContext(suite="bfcl", case_id="c")
    asyncio.run(backend.generate(MESSAGES, TOOLS, "auto", None, context=context))
    (request,) = backend.seen
    assert request == ModelRequest(MESSAGES, TOOLS, "auto", GenerationConfig(), context)
    with pytest.raises(AttributeError):
        request.tools = None  # type: ignore[misc]  # frozen: a wrapper cannot change what the next one sees


def test_cache_keys_are_the_ones_written_before():
    """Golden digests computed by the code that wrote today's caches: a changed recipe would orphan them."""
    config = GenerationConfig(temperature=0, max_tokens=64, seed=7, timeout_s=30)
    assert cache_key("openai", "m", MESSAGES, TOOLS, "auto", config) == (
        "20d44f21268cf4ca6e45588ec1907bce5e63575f2c9b17417962e9439785bda2"
    )
    assert cache_key("openai", "m", MESSAGES, TOOLS, "auto", config, 2) == (
        "0615a482b8bf6af184fe5c9934224e1e18097c41e6f5c2dc251c362b8e7793ff"
    )
    assert cache_key("anthropic", "claude", MESSAGES[:2], None, None, GenerationConfig()) == (
        "aed429200d2d676ab81d69cb48d3bdcc15596e8cbe11f0215791befcd7c1a2d0"
    )


def test_a_row_stored_under_the_old_key_is_a_hit(tmp_path):
    config = GenerationConfig(temperature=0, max_tokens=64, seed=7, timeout_s=30)
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("20d44f21268cf4ca6e45588ec1907bce5e63575f2c9b17417962e9439785bda2", "openai/m", Emission(text="old"))
    inner = Echo()
    backend = CachedBackend(inner, "openai", "m", cache)
    hit = asyncio.run(backend.generate(MESSAGES, TOOLS, "auto", config, context=TaskContext(sample=0)))
    assert hit.text == "old" and hit.cached and inner.seen == []


class Scripted(NetworkBackend[str, str]):
    """A network backend whose ``send`` plays a script of replies and failures."""

    def __init__(self, script: list[str | AttemptFailure]) -> None:
        options = ModelOptions(concurrency=1, max_retries=2, extra={"retry_base_s": 0.001, "retry_max_s": 0.002})
        super().__init__(
            provider_name="scripted", endpoint="e", describe="scripted/m", options=options, secrets=("sk-secret",)
        )
        self.script = list(script)
        self.built = 0
        #: Whether the endpoint's only slot was taken, seen from inside each step.
        self.slot_taken_while_sending: list[bool] = []
        self.slot_taken_while_parsing: list[bool] = []

    def build_request(self, request: ModelRequest) -> str:
        self.built += 1
        return request.messages[-1].content or ""

    async def send(self, prepared: str, request: ModelRequest) -> str:
        self.slot_taken_while_sending.append(endpoint_semaphore("scripted", "e", 1).locked())
        await asyncio.sleep(0.01)
        step = self.script.pop(0)
        if isinstance(step, AttemptFailure):
            raise step
        return f"{step} to {prepared}"

    def parse_reply(self, reply: str) -> Emission:
        self.slot_taken_while_parsing.append(endpoint_semaphore("scripted", "e", 1).locked())
        return Emission(text=reply)


def test_network_template_builds_once_retries_sends_in_a_slot_and_times_the_send():
    backend = Scripted([AttemptFailure("server", "HTTP 503"), "hello"])
    emission = asyncio.run(backend.generate([Message(role="user", content="hi")]))
    assert emission.text == "hello to hi"
    assert backend.built == 1 and backend.script == []
    assert backend.slot_taken_while_sending == [True, True] and backend.slot_taken_while_parsing == [False]
    assert emission.latency_s is not None and emission.latency_s >= 0.01


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (AttemptFailure("client", "HTTP 400: too long sk-secret", status=400), ModelCallErrorKind.REJECTED),
        (AttemptFailure("client", "HTTP 401", status=401), ModelCallErrorKind.FATAL),
        (AttemptFailure("timeout", "no answer"), ModelCallErrorKind.TRANSIENT),
        (AttemptFailure("connection", "refused", unreachable=True), ModelCallErrorKind.FATAL),
    ],
)
def test_network_failures_end_in_one_closed_kind(failure, kind):
    backend = Scripted([failure] * 3)
    with pytest.raises(ModelCallError) as info:
        asyncio.run(backend.generate([Message(role="user", content="hi")]))
    assert info.value.kind is kind
    assert "sk-secret" not in info.value.message and info.value.message.startswith("scripted/m: ")


def _classes_defining_generate(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(ROOT)}:{node.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(
            isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "generate" for item in node.body
        )
    ]


def test_only_the_base_class_defines_generate():
    """Backends implement ``complete(request)``; re-typing ``generate`` is how the signatures drifted."""
    found = [
        hit
        for folder in ("src", "tests", "bench")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for hit in _classes_defining_generate(path)
    ]
    assert found == ["src/tooldiag/models/base.py:ModelBackend"]
