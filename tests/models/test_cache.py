"""The response cache: hits at temperature 0, misses otherwise, --no-cache, keys, processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest

from tests.support.fake_openai import Reply
from tooldiag.errors import ModelCallError, UserError
from tooldiag.models import resolve_model
from tooldiag.models.cache import CachedBackend, ResponseCache, cache_key, default_cache_path
from tooldiag.trajectory import Emission, GenerationConfig, Message, ToolCall, ToolSpec

CHAT = [Message(role="user", content="weather in Paris?")]
TOOL = ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})


def run(backend, messages=CHAT, tools=(TOOL,), tool_choice=None, config=None):
    return asyncio.run(backend.generate(messages, list(tools), tool_choice, config))


def test_second_identical_request_is_a_hit(server, options, tmp_path):
    server.script(Reply.call(("get_weather", {"city": "Paris"})), Reply.say("a different answer"))
    backend = resolve_model("openai/m", options(cache=True, cache_path=str(tmp_path / "c.sqlite")))
    assert isinstance(backend, CachedBackend)
    first = run(backend)
    second = run(backend)
    assert server.request_count == 1
    assert not first.cached and second.cached
    assert second.tool_calls == first.tool_calls and second.raw == first.raw
    assert second.latency_s == first.latency_s


def test_hits_survive_a_new_backend_and_a_changed_timeout(server, options, tmp_path):
    path = str(tmp_path / "c.sqlite")
    run(resolve_model("openai/m", options(cache=True, cache_path=path)), config=GenerationConfig(timeout_s=5))
    again = run(resolve_model("openai/m", options(cache=True, cache_path=path)), config=GenerationConfig(timeout_s=50))
    assert again.cached and server.request_count == 1


def test_default_location_is_tooldiag_cache_dir(server, options, tmp_path):
    backend = resolve_model("openai/m", options(cache=True))
    run(backend)
    assert backend.cache.path == tmp_path / "cache" / "responses.sqlite"
    assert default_cache_path() == tmp_path / "cache" / "responses.sqlite"
    assert len(backend.cache) == 1


def test_no_cache_bypasses(server, options):
    backend = resolve_model("openai/m", options(cache=False))
    assert not isinstance(backend, CachedBackend)
    run(backend)
    run(backend)
    assert server.request_count == 2


def test_sampling_requests_are_never_cached(server, options):
    backend = resolve_model("openai/m", options(cache=True))
    for temperature in (0.7, 0.7, None):
        assert not run(backend, config=GenerationConfig(temperature=temperature)).cached
    assert server.request_count == 3 and len(backend.cache) == 0


def test_failures_are_not_cached(server, options):
    server.script(Reply.fail(400, "bad"))
    backend = resolve_model("openai/m", options(cache=True))
    with pytest.raises(ModelCallError):
        run(backend)
    assert run(backend).text == "ok" and server.request_count == 2


def test_everything_that_shapes_the_answer_is_in_the_key():
    base = dict(provider="openai", model="m", messages=CHAT, tools=[TOOL], tool_choice=None, config=GenerationConfig())
    key = cache_key(**base)
    assert key == cache_key(**base)
    variants = [
        {"provider": "litellm"},
        {"model": "m2"},
        {"messages": [Message(role="user", content="weather in Rome?")]},
        {"messages": [*CHAT, Message(role="assistant", tool_calls=[ToolCall.from_raw("f", "{}")])]},
        {"tools": []},
        {"tools": [TOOL.model_copy(update={"description": "changed"})]},
        {"tool_choice": "required"},
        {"config": GenerationConfig(max_tokens=10)},
        {"config": GenerationConfig(seed=1)},
        {"config": GenerationConfig(stop=["x"])},
        {"config": GenerationConfig(extra_body={"chat_template_kwargs": {"enable_thinking": True}})},
    ]
    keys = {cache_key(**{**base, **variant}) for variant in variants}
    assert key not in keys and len(keys) == len(variants)
    assert cache_key(**{**base, "config": GenerationConfig(timeout_s=1)}) == key


def test_corrupt_rows_are_misses(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", "openai/m", Emission(text="x"))
    cache._connect().execute("UPDATE responses SET emission = '{not json'")
    assert cache.get("k") is None
    cache.put("k", "openai/m", Emission(text="y"))
    assert cache.get("k").text == "y"


def test_an_unusable_cache_path_is_a_user_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(UserError, match="cannot open the response cache") as info:
        ResponseCache(blocker / "c.sqlite")
    assert "--no-cache" in info.value.hint


def test_concurrent_writers_in_several_processes(tmp_path):
    path = tmp_path / "shared.sqlite"
    script = textwrap.dedent(
        f"""
        import sys
        from tooldiag.models.cache import ResponseCache
        from tooldiag.trajectory import Emission
        cache = ResponseCache({str(path)!r})
        tag = sys.argv[1]
        for i in range(300):
            cache.put(f"{{tag}}-{{i}}", "openai/m", Emission(text=f"{{tag}} {{i}}"))
            cache.put("shared", "openai/m", Emission(text=tag))
            assert cache.get(f"{{tag}}-{{i // 2}}") is not None
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, tag]) for tag in ("a", "b", "c")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 901
    assert cache.get("b-299").text == "b 299"
    assert cache._connect().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
