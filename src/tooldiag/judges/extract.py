"""Finding the JSON a model meant, in a reply written for people.

Judges wrap JSON in markdown fences, put reasoning in ``<think>`` tags before it, or add a
sentence around it. Here: drop reasoning, then offer every JSON value that decodes, fenced
blocks first, then the whole reply, then values found by scanning; the caller's schema picks
the first that fits (:func:`tooldiag.judges.reply.parse_reply`). Nothing a model wrote is ever
evaluated as code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)


def strip_reasoning(text: str) -> str:
    """Remove ``<think>...</think>`` blocks; with a dangling ``</think>``, keep what follows it."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    return text.strip()


def iter_json_values(text: str | None, *, openers: str = "{[", nested: bool = False) -> Iterator[Any]:
    """Every JSON value that decodes from ``text``, in the order a reader would trust them.

    Reasoning is dropped first; then each fenced block, then the whole text: a chunk that
    decodes whole is one value, otherwise it is scanned for values starting at one of
    ``openers``. ``nested=False`` resumes the scan after a decoded value (its inner objects are
    not offered on their own); ``nested=True`` tries every opener, inner ones included, for
    schemas that may find their keys one level down.
    """
    cleaned = strip_reasoning(text or "")
    chunks = [m.group(1) for m in _FENCE.finditer(cleaned)] + [cleaned]
    decoder = json.JSONDecoder()
    for chunk in chunks:
        chunk = chunk.strip()
        try:
            yield json.loads(chunk)
            continue
        except (json.JSONDecodeError, RecursionError):
            pass
        i = 0
        while i < len(chunk):
            starts = [j for j in (chunk.find(opener, i) for opener in openers) if j >= 0]
            if not starts:
                break
            start = min(starts)
            try:
                value, end = decoder.raw_decode(chunk, start)
            except (json.JSONDecodeError, RecursionError):
                i = start + 1
                continue
            yield value
            i = start + 1 if nested else end


def json_values(text: str | None, *, openers: str = "{[", nested: bool = False) -> list[Any]:
    """:func:`iter_json_values` as a list."""
    return list(iter_json_values(text, openers=openers, nested=nested))
