"""The repair's serialising pass is skipped only where it would change nothing (issue 16, sixth pass).

``OpenAICompatBackend.emission_of`` returns the parsed emission as it is when
``surrogate_free`` says the reply cannot hold a surrogate or nest past the serialiser. The
oracle here is the serialiser itself: whenever the skip is taken, ``model_dump_json`` of the
emission must succeed (so ``repair_emission`` would have returned it unchanged); and the
replies that hold a surrogate, directly or through an escaped escape in a call's arguments,
or nest deeply, must come out exactly as the old path (parse, then repair) made them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldiag.models.base import ModelOptions
from tooldiag.models.openai_compat import HTTPReply, OpenAICompatBackend, surrogate_free
from tooldiag.trajectory import repair_emission


def backend() -> OpenAICompatBackend:
    return OpenAICompatBackend("m", ModelOptions(base_url="http://127.0.0.1:9/v1", cache=False))


def reply_of(content: bytes) -> HTTPReply:
    return HTTPReply(200, {"content-type": "application/json"}, content)


def completion(text: Any = "ok", arguments: Any = '{"a": 1}', extra: Any = None) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    message = {"role": "assistant", "content": text, "tool_calls": [call]}
    return {"id": "x", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "extra": extra}


def old_path(content: bytes):
    return repair_emission(backend().parse_reply(reply_of(content)))


def test_a_plain_reply_skips_the_pass_and_is_the_same_emission():
    content = json.dumps(completion(text="déjà vu 😀"), ensure_ascii=False).encode()
    assert surrogate_free(content, backend().parse_reply(reply_of(content)))
    assert backend().emission_of(reply_of(content)) == old_path(content)


@pytest.mark.parametrize(
    "content",
    [
        # a lone surrogate in the text, sent escaped (the only way valid UTF-8 JSON carries one)
        json.dumps(completion(text="a\ud800b")).encode(),
        # one inside the arguments' own JSON: an escaped escape ("\\ud800" on the wire)
        json.dumps(completion(arguments=json.dumps({"a": "x\udc00"}))).encode(),
        # the arguments' backslash itself sent as \u005c: the wire shows no "\ud8" at all
        b'{"choices": [{"message": {"content": null, "tool_calls": [{"id": "c", "function": {"name": "f", '
        b'"arguments": "{\\"a\\": \\"\\u005cud800\\"}"}}]}}]}',
        # nesting past the serialiser's limit in the raw body
        json.dumps(completion(extra=json.loads("[" * 300 + "]" * 300))).encode(),
    ],
)
def test_replies_that_need_the_pass_take_it(content):
    emission = backend().parse_reply(reply_of(content))
    assert not surrogate_free(content, emission)
    assert backend().emission_of(reply_of(content)) == old_path(content)


def test_the_escaped_backslash_route_really_holds_a_surrogate():
    """The third case above is not vacuous: its parsed arguments hold a lone surrogate, repaired."""
    content = (
        b'{"choices": [{"message": {"content": null, "tool_calls": [{"id": "c", "function": {"name": "f", '
        b'"arguments": "{\\"a\\": \\"\\u005cud800\\"}"}}]}}]}'
    )
    assert backend().parse_reply(reply_of(content)).tool_calls[0].arguments == {"a": "\ud800"}
    repaired = backend().emission_of(reply_of(content))
    assert repaired.tool_calls[0].arguments == {"a": "\ufffd"}
    assert repaired.text_repairs >= 1


SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
TEXT = st.text(alphabet=st.one_of(st.characters(), SURROGATES), max_size=10)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(TEXT, VALUES, VALUES, st.booleans())
def test_the_skip_is_taken_only_where_the_serialiser_accepts_the_emission(text, arguments, extra, ascii_only):
    content = json.dumps(completion(text, json.dumps(arguments), extra), ensure_ascii=ascii_only).encode(
        "utf-8", errors="surrogatepass"
    )
    emission = backend().parse_reply(reply_of(content))
    if surrogate_free(content, emission):
        emission.model_dump_json()  # raises on a surrogate: the skip would have hidden one
    assert backend().emission_of(reply_of(content)) == old_path(content)
