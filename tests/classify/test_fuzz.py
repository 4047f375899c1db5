"""Any input gets a class, never an exception (issue: any unicode, empty or huge text,
malformed tool-call JSON)."""

import functools
import json

import pytest
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


def _labelled_sentences():
    import pathlib

    from tooldiag.classify.default import clean_for_cues

    sentences = []
    for path in sorted((pathlib.Path(__file__).resolve().parents[1] / "data" / "classifier").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            content = json.loads(line).get("content") if line.strip() else None
            if isinstance(content, str):
                sentences.extend(clean_for_cues(content))
    return sentences


_CUE_WORDS = tuple(
    [
        "i",
        "you",
        "we",
        "can",
        "cannot",
        "not",
        "no",
        "able",
        "to",
        "please",
        "provide",
        "confirm",
        "would",
        "like",
        "me",
        "shall",
        "proceed",
        "is",
        "there",
        "anything",
        "else",
        "policy",
        "tool",
        "function",
        "allow",
        "the",
        "a",
        "do",
        "have",
        "access",
        "way",
        "beyond",
        "outside",
        "what",
        "which",
        "book",
        "cancel",
        "done",
        "has",
        "been",
    ]
)


@functools.lru_cache(maxsize=1)
def _cue_lists():
    """Built once: a DefaultClassifier compiles every language's cue files (most of a second),
    and the fuzz test used to pay that for every one of its examples."""
    from tooldiag.classify.default import DefaultClassifier

    patterns = DefaultClassifier()._p
    return [value for value in vars(patterns).values() if hasattr(value, "pattern") and hasattr(value, "unkeyed")]


def test_word_index_agrees_with_the_full_alternation_on_the_labelled_sentences():
    """IndexedCues.search skips entries whose key words are absent; it must never change an answer."""
    from tooldiag.classify.cue_index import sentence_keys

    lists = _cue_lists()
    for sentence in _labelled_sentences():
        keys = sentence_keys(sentence)
        for cues in lists:
            assert cues.search(sentence, keys) == bool(cues.pattern.search(sentence)), (sentence, cues.pattern.pattern)


@FUZZ
@given(
    words=st.lists(
        st.sampled_from(_CUE_WORDS) | st.text(alphabet="abcdefghijklmnopqrstuvwxyz'-?.,:; ", max_size=6), max_size=14
    ),
    separators=st.lists(st.sampled_from([" ", "  ", ", ", "'", "-", "\t", "?", ". "]), max_size=14),
)
def test_word_index_agrees_with_the_full_alternation_on_cue_soup(words, separators):
    from tooldiag.classify.cue_index import sentence_keys

    sentence = "".join(w + (separators[i] if i < len(separators) else " ") for i, w in enumerate(words))
    keys = sentence_keys(sentence)
    for cues in _cue_lists():
        assert cues.search(sentence, keys) == bool(cues.pattern.search(sentence)), (sentence, cues.pattern.pattern)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "unit",
    ['"?', 'He said "can you help me?" and left. ', "[", "can't ", "Which file? I cannot tell. ", "'", "<think>"],
)
def test_one_megabyte_adversarial_input_is_classified_in_linear_time(unit):
    """Coarse: bench/classifier_speed.py measures about 0.2 s at most; 5 s only catches a quadratic path."""
    import time

    text = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
    start = time.process_time()
    assert isinstance(classify(text), ActionClass)
    assert time.process_time() - start < 5
