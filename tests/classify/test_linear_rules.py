"""The classifier's rewritten rules: the same matches as the patterns they replace, on any input.

The reference patterns below are the rules as they were (quadratic on "a.a.a...?" and on long
runs of blank lines followed by anything but ">"); the rewrites must agree with them
exactly. How the time grows with input size is measured in ``bench/classifier_worst_case.py``.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldiag.classify import default, get_classifier

REFERENCE_BLOCKQUOTE = re.compile(r"^\s*>.*$", re.MULTILINE)
REFERENCE_CHOICE_QUESTION = re.compile(
    r"\b[\w#$.'-]+,? or (?!not\b|no\b|would\b|do\b|is\b|are\b|should\b|shall\b|if\b|anything\b|something\b|"
    r"make\b|change\b|need\b|want\b|have\b|did\b|does\b|can\b|could\b|will\b|just let\b)[\w#$.'-]+[^?]{0,400}\?"
)

BLOCKQUOTE_PIECES = st.sampled_from(["\n", " ", "\t", "\r", "\x0c", "\u2028", "\u00a0", ">", "a", "\n>", "> b"])
CHOICE_PIECES = st.sampled_from(
    ["a", "b", "1", "é", ".", "$", "#", "'", "-", " ", ",", "?", " or ", "x or not ", "tea or coffee", "\n"]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(BLOCKQUOTE_PIECES, max_size=16).map("".join))
def test_blockquote_masking_equals_the_reference_pattern(text):
    assert default._mask_blockquotes(text) == REFERENCE_BLOCKQUOTE.sub(" ", text)


@settings(max_examples=600, deadline=None)
@given(st.lists(CHOICE_PIECES, max_size=16).map("".join))
def test_choice_question_finds_what_the_reference_pattern_finds(text):
    reference, ours = REFERENCE_CHOICE_QUESTION.search(text), default._CHOICE_QUESTION.search(text)
    assert bool(reference) == bool(ours)
    if reference is not None:
        assert ours is not None and ours.span("option") == reference.span()


def repeat_to(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def test_the_worst_case_shapes_at_60_kb_get_the_label_of_their_short_forms():
    classify = get_classifier("default")
    for unit, tail in (("a.", "?"), ("\n", "x>"), ("Dr.", "?"), ("\n\n**", "x>"), ("tea or coffee.", "?")):
        short, long = repeat_to(unit, 60) + tail, repeat_to(unit, 60_000) + tail
        assert classify(long, False) == classify(short, False), (unit, tail)
