"""Typed reply schemas and retries as new draws."""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel

from tooldiag.judges import BY_POSITION, draw_context, draw_until_parsed, parse_reply
from tooldiag.models.base import ModelBackend, ModelRequest, TaskContext
from tooldiag.models.cache import cache_key
from tooldiag.trajectory import Emission, GenerationConfig, Message


class Answer(BaseModel):
    label: Literal["yes", "no"]


def test_parse_reply_takes_the_first_object_that_validates() -> None:
    assert parse_reply('{"label": "maybe"} then ```json\n{"label": "no"}\n```', Answer) == Answer(label="no")
    assert parse_reply('{"label": "maybe"} {"label": "yes"}', Answer) == Answer(label="yes")
    assert parse_reply('[{"label": "yes"}]', Answer) is None  # arrays are not objects, inner not scanned
    assert parse_reply('[{"label": "yes"}]', Answer, BY_POSITION) == Answer(label="yes")
    assert parse_reply("nothing", Answer) is None


class Scripted(ModelBackend):
    """Replies from a script; records the sample of every request."""

    name = "scripted/x"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.samples: list[int | None] = []

    async def complete(self, request: ModelRequest) -> Emission:
        self.samples.append(None if request.context is None else request.context.sample)
        return Emission(text=self.replies.pop(0))


def _parse(text: str | None) -> Answer | None:
    return parse_reply(text, Answer)


def test_retries_are_new_draws_until_a_reply_parses() -> None:
    backend = Scripted(["garbage", "still garbage", '{"label": "yes"}', "unused"])
    context = TaskContext(suite="s", case_id="c")
    question = [Message(role="user", content="q")]
    draws = asyncio.run(draw_until_parsed(backend, question, GenerationConfig(), _parse, retries=5, context=context))
    assert draws.value == Answer(label="yes") and draws.attempts == 3
    assert draws.texts == ["garbage", "still garbage", '{"label": "yes"}']
    assert backend.samples == [0, 1, 2]  # each retry is a new sample, so the cache cannot replay the old reply


def test_retries_exhausted_and_context_per_attempt() -> None:
    backend = Scripted(["a", "b"])
    draws = asyncio.run(
        draw_until_parsed(
            backend,
            [Message(role="user", content="q")],
            GenerationConfig(),
            _parse,
            retries=1,
            context=lambda attempt: TaskContext(step_index=attempt),  # sample left 0 by the caller: set anyway
        )
    )
    assert draws.value is None and draws.attempts == 2 and backend.samples == [0, 1]


def test_draw_context_and_cache_keys_differ_per_draw() -> None:
    assert draw_context(None, 0) is None and draw_context(None, 2) == TaskContext(sample=2)
    base = TaskContext(case_id="c")
    assert draw_context(base, 0) is base
    question = [Message(role="user", content="q")]
    samples = [draw_context(base, n).sample for n in range(3)]
    keys = {cache_key("p", "m", question, None, None, GenerationConfig(), sample) for sample in samples}
    assert len(keys) == 3


def test_first_sample_offsets_every_attempt_of_a_later_draw() -> None:
    backend = Scripted(["garbage", '{"label": "no"}', "garbage", "garbage", '{"label": "yes"}'])
    question = [Message(role="user", content="q")]
    first = asyncio.run(draw_until_parsed(backend, question, GenerationConfig(), _parse, retries=2))
    later = asyncio.run(
        draw_until_parsed(backend, question, GenerationConfig(), _parse, retries=2, first_sample=3, context=None)
    )
    assert first.value == Answer(label="no") and later.value == Answer(label="yes")
    # draw 0 keeps the one-draw numbering (no context on attempt 0); draw 1 of retries=2 starts at 1 * 3
    assert backend.samples == [None, 1, 3, 4, 5]
