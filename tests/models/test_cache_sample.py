"""A re-ask after an unusable answer is a new draw, not a cache hit."""

import asyncio

from tooldiag.models.base import ModelBackend, TaskContext
from tooldiag.models.cache import CachedBackend, ResponseCache, cache_key
from tooldiag.trajectory import Emission, GenerationConfig, Message


class Counter(ModelBackend):
    def __init__(self):
        self.calls = 0

    async def complete(self, request):
        self.calls += 1
        return Emission(text=f"draw {self.calls}")


def test_sample_is_part_of_the_key(tmp_path):
    msgs = [Message(role="user", content="grade this")]
    cfg = GenerationConfig(temperature=0)
    assert cache_key("openai", "m", msgs, None, None, cfg) == cache_key("openai", "m", msgs, None, None, cfg, 0)
    assert cache_key("openai", "m", msgs, None, None, cfg) != cache_key("openai", "m", msgs, None, None, cfg, 1)

    inner = Counter()
    backend = CachedBackend(inner, "openai", "m", ResponseCache(tmp_path / "c.sqlite"))

    async def ask(sample):
        return (await backend.generate(msgs, config=cfg, context=TaskContext(sample=sample))).text

    assert asyncio.run(ask(0)) == "draw 1"
    assert asyncio.run(ask(0)) == "draw 1"  # cached
    assert asyncio.run(ask(1)) == "draw 2"  # the retry reaches the model
    assert asyncio.run(ask(1)) == "draw 2"  # and is itself cached for a resumed run
    assert inner.calls == 2
