"""Any input gets a class, never an exception (issue: any unicode, empty or huge text,
malformed tool-call JSON)."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooldiag.classify import ActionClass, classify, classify_message, classify_signals

SCHEMES = ("paper", "default")
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
call_payloads = st.builds(
    lambda name, args: json.dumps([{"name": name, "arguments": args}]),
    st.text(max_size=12),
    json_values,
)
# valid call payloads cut at any point, with junk appended: malformed JSON/literals
malformed = st.tuples(call_payloads, st.integers(min_value=0, max_value=200), st.text(max_size=10)).map(
    lambda t: t[0][: t[1]] + t[2]
)
wrappers = st.sampled_from(
    ["{}", "<tool_call>{}</tool_call>", "```\n{}\n```", "```python\n{}", "Sure. {}", "[{}]", "{}?", "<think>{}"]
)


@FUZZ
@given(text=st.text())
def test_any_unicode(text):
    for scheme in SCHEMES:
        assert isinstance(classify(text, scheme=scheme), ActionClass)
    assert isinstance(classify_signals(text), frozenset)


@FUZZ
@given(payload=malformed, wrapper=wrappers)
def test_malformed_call_text(payload, wrapper):
    text = wrapper.replace("{}", payload, 1)
    for scheme in SCHEMES:
        assert isinstance(classify(text, scheme=scheme), ActionClass)


@FUZZ
@given(calls=st.lists(json_values, max_size=3), text=st.none() | st.text(max_size=50))
def test_malformed_structured_calls(calls, text):
    expected = ActionClass.TOOL_CALL if calls else None
    for scheme in SCHEMES:
        label = classify(text, calls, scheme=scheme)
        assert isinstance(label, ActionClass)
        if expected:
            assert label is expected


@FUZZ
@given(
    message=st.dictionaries(st.sampled_from(["role", "content", "tool_calls", "function_call", "text"]), json_values)
)
def test_arbitrary_message_dicts(message):
    assert isinstance(classify_message(message), ActionClass)


@FUZZ
@given(value=json_values)
def test_non_string_text(value):
    for scheme in SCHEMES:
        assert isinstance(classify(value, scheme=scheme), ActionClass)  # type: ignore[arg-type]


def test_huge_and_pathological_text():
    huge_prose = "I cannot tell which file you mean? " * 60_000  # ~2 MB
    cases = [
        huge_prose,
        "[" * 200_000,
        "{" * 200_000,
        "[f(" * 50_000,
        "```" * 50_000,
        '[{"name": "x", "arguments": ' + "[" * 100_000,
        "<tool_call>" + "a" * 1_000_000,
        "\x00\ud7ff\U0010ffff" * 10_000,
        '"' * 100_000,
        "?" * 100_000,
        "\n" * 100_000,
    ]
    for text in cases:
        for scheme in SCHEMES:
            assert isinstance(classify(text, scheme=scheme), ActionClass)
    assert classify(huge_prose) is ActionClass.ASK
