"""``ModelOptions.timeout`` bounds every request of an OpenAI-compatible backend."""

import asyncio
import time

import pytest

from tests.support.fake_openai import Reply
from tooldiag.errors import ModelCallError
from tooldiag.models.registry import resolve_model
from tooldiag.trajectory import Message


def test_options_timeout_overrides_the_request_timeout(server, options):
    server.script(Reply.stall(2.0))
    backend = resolve_model("openai/fake", options(timeout=0.2, max_retries=0))

    async def ask():
        try:
            return await backend.generate([Message(role="user", content="hi")])  # config timeout: 120 s
        finally:
            await backend.aclose()

    started = time.perf_counter()
    with pytest.raises(ModelCallError, match=r"no answer within 0\.2 s"):
        asyncio.run(ask())
    assert time.perf_counter() - started < 1.5
