"""Requests to one endpoint are bounded by --concurrency, across backend instances."""

from __future__ import annotations

import asyncio

from tests.support.fake_openai import FakeOpenAIServer
from tooldiag.models import resolve_model
from tooldiag.trajectory import Message


def _ask(backend, n: int):
    return [backend.generate([Message(role="user", content=f"q{i}")]) for i in range(n)]


def test_in_flight_requests_never_exceed_the_bound(options):
    server_latency = 0.05
    with FakeOpenAIServer(latency_s=server_latency) as server:
        backend = resolve_model("openai/m", options(base_url=server.base_url, concurrency=4))

        async def go():
            results = await asyncio.gather(*_ask(backend, 24))
            await backend.aclose()
            return results

        results = asyncio.run(go())
    assert len(results) == 24 and all(r.text == "ok" for r in results)
    assert server.max_in_flight == 4  # reached, never exceeded


def test_backends_on_one_endpoint_share_the_bound(options):
    with FakeOpenAIServer(latency_s=0.05) as server:
        first = resolve_model("openai/a", options(base_url=server.base_url, concurrency=3))
        second = resolve_model("openai/b", options(base_url=server.base_url, concurrency=3))

        async def go():
            await asyncio.gather(*_ask(first, 10), *_ask(second, 10))
            await first.aclose()
            await second.aclose()

        asyncio.run(go())
    assert server.max_in_flight == 3
    assert server.request_count == 20


def test_separate_endpoints_have_separate_bounds(options):
    with FakeOpenAIServer(latency_s=0.05) as one, FakeOpenAIServer(latency_s=0.05) as two:
        first = resolve_model("openai/m", options(base_url=one.base_url, concurrency=2))
        second = resolve_model("openai/m", options(base_url=two.base_url, concurrency=2))

        async def go():
            await asyncio.gather(*_ask(first, 6), *_ask(second, 6))

        asyncio.run(go())
    assert one.max_in_flight == 2 and two.max_in_flight == 2


def test_a_backend_survives_successive_event_loops(server, options):
    backend = resolve_model("openai/m", options(concurrency=2))
    for _ in range(3):
        assert asyncio.run(backend.generate([Message(role="user", content="hi")])).text == "ok"
    assert server.request_count == 3
