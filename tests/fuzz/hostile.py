"""Structured-but-hostile input: a real document with one part replaced by something a parser may not expect.

A purely random byte string is refused by the first ``json.loads`` and never reaches the
code behind it, so most examples here start from a valid seed document (an agent-log line,
a BFCL result entry, a tau2 file) and replace one subtree by a hostile value: a wrong
type, deep nesting, a huge integer, NaN or Infinity, a lone surrogate. The rest hit the
byte level: non-UTF-8 bytes, truncation, an empty file, a deeply nested line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st

#: Lone surrogates, which ``json.dumps`` writes as ``\\ud800`` escapes and ``json.loads`` accepts.
SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udc80b", "\ud83d"])
TEXT = st.one_of(st.text(max_size=20), SURROGATES, st.sampled_from(["", " ", "null", "{", "[]", "\x00", "é" * 3]))
NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**400, -(10**400), float("nan"), float("inf"), float("-inf"), -0.0, 1e308, 0, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
)
LEAVES = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)


#: A placeholder for deep nesting: :func:`dumps` replaces it by ``[[[...]]]`` as text, since
#: building the nesting as a value would make ``json.dumps`` itself hit the recursion limit.
_DEEP = "\x00deep:"


def nested(depth: int) -> str:
    """A value that :func:`dumps` writes as ``depth`` nested arrays."""
    return f"{_DEEP}{depth}"


HOSTILE_VALUES = st.one_of(
    LEAVES,
    st.lists(LEAVES, max_size=4),
    st.dictionaries(TEXT, LEAVES, max_size=4),
    st.integers(50, 5000).map(nested),
    st.sampled_from([[1, nested(900)], {"k": nested(2000)}]),
)


@st.composite
def mutated(draw: st.DrawFn, seed: Any, max_steps: int = 12) -> Any:
    """``seed`` with one subtree (maybe the whole of it) replaced by a hostile value, or a key dropped."""
    if draw(st.integers(0, max_steps)) == 0 or not isinstance(seed, (dict, list)) or not seed:
        return draw(HOSTILE_VALUES)
    if isinstance(seed, dict):
        keys = sorted(seed)
        key = draw(st.sampled_from(keys))
        copy = dict(seed)
        if draw(st.integers(0, 5)) == 0:
            del copy[key]
            return copy
        copy[key] = draw(mutated(seed[key], max_steps - 1))
        return copy
    index = draw(st.integers(0, len(seed) - 1))
    items = list(seed)
    items[index] = draw(mutated(seed[index], max_steps - 1))
    return items


def dumps(value: Any) -> str:
    """JSON as an attacker would write it: NaN/Infinity tokens allowed, surrogates escaped."""
    text = json.dumps(value, allow_nan=True)
    return re.sub(r'"\\u0000deep:(\d+)"', lambda match: deep_text(int(match.group(1))), text)


def deep_text(depth: int) -> str:
    """``[[[...]]]`` as text, ``depth`` deep: what ``json.loads`` answers with RecursionError."""
    return "[" * depth + "]" * depth


@st.composite
def corrupt_bytes(draw: st.DrawFn, text: str) -> bytes:
    """``text`` as UTF-8 with a byte-level defect: invalid bytes, truncation, empty, a BOM, a huge nesting."""
    data = text.encode("utf-8", errors="surrogatepass")
    kind = draw(st.sampled_from(["invalid", "truncate", "empty", "bom", "deep", "latin1", "surrogate_raw"]))
    if kind == "invalid":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x80\x80", b"\xed\xa0\x80"])) + data[at:]
    if kind == "truncate":
        return data[: draw(st.integers(0, max(len(data) - 1, 0)))]
    if kind == "empty":
        return draw(st.sampled_from([b"", b"\n", b"   \n\n"]))
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "deep":
        return deep_text(draw(st.integers(1000, 60_000))).encode() + b"\n" + data
    if kind == "latin1":
        return "café naïve".encode("latin-1") + b"\n" + data
    return text.replace("a", "\ud800", 1).encode("utf-8", errors="surrogatepass")


@st.composite
def hostile_document(draw: st.DrawFn, seed: Any) -> bytes:
    """One JSON document derived from ``seed``: mostly a structural mutation, sometimes a byte-level one."""
    value = draw(mutated(seed))
    text = dumps(value)
    if draw(st.integers(0, 3)) == 0:
        return draw(corrupt_bytes(text))
    return text.encode("utf-8")


@st.composite
def hostile_jsonl(draw: st.DrawFn, seeds: list[Any]) -> bytes:
    """JSON lines: every seed line kept, one or two of them mutated, maybe a byte-level defect."""
    lines = [dumps(seed) for seed in seeds]
    for _ in range(draw(st.integers(1, 2))):
        index = draw(st.integers(0, len(seeds) - 1))
        lines[index] = dumps(draw(mutated(seeds[index])))
    text = "\n".join(lines) + "\n"
    if draw(st.integers(0, 3)) == 0:
        return draw(corrupt_bytes(text))
    return text.encode("utf-8")
