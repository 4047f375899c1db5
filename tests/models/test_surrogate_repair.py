"""One surrogate repair for user files and model replies (issue 20, defect 2).

The same JSON text read as a user's file (:func:`tooldiag.errors.loads_user_json`) and arriving
as a model's reply (:func:`tooldiag.trajectory.repair_emission`, then the stores'
:func:`~tooldiag.trajectory.dump_json_repaired`) must come out repaired identically. The
expected value is derived here, code point by code point, not by the code under test.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldiag.errors import loads_user_json, repair_value
from tooldiag.trajectory import Emission, dump_json_repaired, repair_emission

SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
TEXT = st.text(alphabet=st.one_of(st.characters(), SURROGATES), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


def is_surrogate(char: str) -> bool:
    return 0xD800 <= ord(char) <= 0xDFFF


def expected(value: Any) -> tuple[Any, int]:
    """The oracle: each surrogate code point -> U+FFFD, counted (keys too)."""
    if isinstance(value, str):
        return "".join("\ufffd" if is_surrogate(c) else c for c in value), sum(map(is_surrogate, value))
    if isinstance(value, list):
        pairs = [expected(item) for item in value]
        return [item for item, _ in pairs], sum(count for _, count in pairs)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        total = 0
        for key, item in value.items():
            fixed_key, key_count = expected(key)
            fixed_item, item_count = expected(item)
            out[fixed_key] = fixed_item
            total += key_count + item_count
        return out, total
    return value, 0


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(JSON_VALUES, TEXT)
def test_user_files_and_model_replies_get_the_same_repair(value, text):
    wire = json.dumps({"body": value, "text": text})  # ensure_ascii: surrogates travel as \udXXX escapes
    decoded = json.loads(wire)
    want, want_count = expected(decoded)

    from_user_file = loads_user_json(wire, "reply.json")
    emission = repair_emission(Emission(text=decoded["text"], raw=decoded["body"]))

    assert from_user_file == want
    assert {"body": emission.raw, "text": emission.text} == want
    assert emission.text_repairs == want_count
    assert repair_value(decoded) == (want, want_count)
    stored, stored_count = dump_json_repaired(Emission(text=decoded["text"], raw=decoded["body"]))
    assert stored_count == want_count
    assert json.loads(stored)["raw"] == want["body"]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(JSON_VALUES)
def test_clean_values_come_back_as_the_same_object(value):
    fixed, count = expected(value)
    result, repaired = repair_value(value)
    assert repaired == count
    if count == 0:
        assert result is value
    assert result == fixed


def test_a_repair_never_mutates_its_input():
    value = {"a\ud800": ["x\udc00", ("y\ud800",)], "b": {"c": "\udfff"}}
    snapshot = repr(value)
    repaired, count = repair_value(value)
    assert repr(value) == snapshot
    assert count == 4
    assert repaired == {"a\ufffd": ["x\ufffd", ("y\ufffd",)], "b": {"c": "\ufffd"}}


def test_any_nesting_depth_is_repaired():
    depth = 50_000  # far past the interpreter's recursion limit
    value: Any = "\ud800"
    for _ in range(depth):
        value = [value]
    repaired, count = repair_value(value)
    assert count == 1
    for _ in range(depth):
        assert isinstance(repaired, list) and len(repaired) == 1
        repaired = repaired[0]
    assert repaired == "\ufffd"
