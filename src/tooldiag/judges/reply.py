"""Typed judge replies, and re-asking after an unusable one as a new draw.

Why a schema per judge: what a reply must hold (a class name, a boolean, four scores) is the
judge's contract, so it is a pydantic model, validated once, not a chain of ``dict.get``
checks. :func:`parse_reply` offers the schema every JSON object of the reply
(:mod:`tooldiag.judges.extract`) and returns the first that validates.

Why retries are new draws: the response cache keys on ``TaskContext.sample``, so re-sending
the same request with the same sample would return the same unusable reply from the cache.
:func:`draw_until_parsed` gives attempt ``n`` the sample ``n`` whatever context the caller
builds, so a retry always reaches the model (or the cache entry of that draw). A caller that
asks for several independent verdicts of one request (repeated draws) passes ``first_sample``:
draw ``s`` with ``r`` retries starts at ``s * (r + 1)``, so no draw reuses another's samples.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from tooldiag.judges.extract import FENCES_FIRST, Extraction, iter_json_values
from tooldiag.models.base import ModelBackend, TaskContext
from tooldiag.trajectory import GenerationConfig, Message

Schema = TypeVar("Schema", bound=BaseModel)
Parsed = TypeVar("Parsed")


def parse_reply(text: str | None, schema: type[Schema], how: Extraction = FENCES_FIRST) -> Schema | None:
    """The first JSON object in ``text`` (searched as ``how`` says) that validates as ``schema``, else ``None``."""
    for value in iter_json_values(text, how):
        if not isinstance(value, dict):
            continue
        try:
            return schema.model_validate(value)
        except (ValidationError, ValueError, TypeError):
            continue
    return None


@dataclass
class Draws(Generic[Parsed]):
    """What :func:`draw_until_parsed` got: the parsed reply (``None``: none parsed) and every raw text."""

    value: Parsed | None
    texts: list[str | None] = field(default_factory=list)

    @property
    def attempts(self) -> int:
        return len(self.texts)


def draw_context(context: TaskContext | None, attempt: int) -> TaskContext | None:
    """``context`` for attempt ``attempt``, whose ``sample`` is the attempt number (none on attempt 0 stays none)."""
    if context is None:
        return None if attempt == 0 else TaskContext(sample=attempt)
    return context if context.sample == attempt else dataclasses.replace(context, sample=attempt)


async def draw_until_parsed(
    backend: ModelBackend,
    messages: Sequence[Message],
    config: GenerationConfig,
    parse: Callable[[str | None], Parsed | None],
    *,
    retries: int = 0,
    context: Callable[[int], TaskContext | None] | TaskContext | None = None,
    first_sample: int = 0,
) -> Draws[Parsed]:
    """Ask ``backend`` (no tools) until ``parse`` accepts a reply, at most ``1 + retries`` times.

    ``context`` is one :class:`TaskContext` or a function of the attempt number; either way
    attempt ``n`` is sent with ``sample=first_sample + n`` (``n`` by default). A :class:`ModelCallError`
    propagates to the caller, which decides whether it is an error row or fatal.
    """
    draws: Draws[Parsed] = Draws(None)
    for attempt in range(1 + retries):
        base = context(attempt) if callable(context) else context
        emission = await backend.generate(
            list(messages), None, None, config, context=draw_context(base, first_sample + attempt)
        )
        draws.texts.append(emission.text)
        draws.value = parse(emission.text)
        if draws.value is not None:
            break
    return draws
