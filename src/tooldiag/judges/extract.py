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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Extraction:
    """How a reply is searched for JSON values (see :func:`iter_json_values`)."""

    #: Characters a scanned value may start with.
    openers: str = "{["
    #: Try every opener, inner ones included (a value may then be offered more than once), for
    #: schemas whose object may sit inside an array or another object; else resume after a value.
    nested: bool = False
    #: Drop ``<think>`` blocks first.
    drop_reasoning: bool = True
    #: Offer fenced blocks before the whole text; else the whole text only, in order of position.
    fences_first: bool = True


#: The default reading: reasoning dropped, fenced blocks first, top-level values.
FENCES_FIRST = Extraction()
#: Every object by position, inner ones included, reasoning kept. Why it exists: the tau2 consent
#: judge and the ``llm`` classifier were read this way before the toolkit, and their stored
#: replies must keep reading the same.
BY_POSITION = Extraction(openers="{", nested=True, drop_reasoning=False, fences_first=False)


def iter_json_values(text: str | None, how: Extraction = FENCES_FIRST) -> Iterator[Any]:
    """Every JSON value that decodes from ``text``, in the order a reader would trust them.

    Reasoning is dropped first; then each fenced block, then the whole text. Without ``nested``
    a chunk that decodes whole is one value, otherwise it is scanned for values starting at one
    of ``openers``, resuming after each decoded value; with ``nested`` every opener is tried.
    """
    cleaned = strip_reasoning(text or "") if how.drop_reasoning else (text or "").strip()
    chunks = ([m.group(1) for m in _FENCE.finditer(cleaned)] if how.fences_first else []) + [cleaned]
    decoder = json.JSONDecoder()
    for chunk in chunks:
        chunk = chunk.strip()
        if not how.nested:
            try:
                yield json.loads(chunk)
                continue
            except (json.JSONDecodeError, RecursionError):
                pass
        i = 0
        while i < len(chunk):
            starts = [j for j in (chunk.find(opener, i) for opener in how.openers) if j >= 0]
            if not starts:
                break
            start = min(starts)
            try:
                value, end = decoder.raw_decode(chunk, start)
            except (json.JSONDecodeError, RecursionError):
                i = start + 1
                continue
            yield value
            i = start + 1 if how.nested else end


def json_values(text: str | None, how: Extraction = FENCES_FIRST) -> list[Any]:
    """:func:`iter_json_values` as a list."""
    return list(iter_json_values(text, how))
