"""The classifier's speed gates never change an answer (issue 11, "Speed").

Each gate skips work when a cheap test says a pattern cannot match: a trie scan for the
literal starts of entries, a required literal before an entry is searched, a leading
``\\b<word>`` rewritten so that the regex engine can skip by the word, and the call-syntax
tests skipped for prose. The expectations come from ``re`` itself on the original
pattern (or from the full alternation of a cue list), never from the gated code.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from tooldiag.classify.cue_index import literal_first, required_literal, trie_pattern
from tooldiag.classify.syntax import text_holds_tool_call

DATA = Path(__file__).resolve().parents[1] / "data" / "classifier"

#: Sources shaped like cue entries: phrases, "re:" bodies, quantifiers after the first word.
_SOURCES = (
    r"\bje\s+ne\s+peux\b",
    r"\bcould?n",
    r"\bab|cd",
    r"\bfoo{2}x",
    r"\bé\w",
    r"\b12\s",
    r"\b_x",
    r"(?:\bfoo|bar)",
    r"(?:(?:\bab))",
    r"(?:\bab)?c",
    r"(?:a)(?:\bb)",
    r"(?:[)]\bx)",
    r"(?:\b(?:est|sont|c'est) (?:\w+ )?x)",
    r"^\W*(?:your|the|[a-z]+'s) [^.?!,]{1,60},? please\W*$",
    r"\b(?:ist|sind)\b[^.?!]{0,20}\bab\b",
)
_ALPHABET = "je ne peux couldn abcd foox éa 12 _x est sont c'est bar ist ab please the your, ?."


def _random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 24))) for _ in range(count)]


def test_literal_first_finds_the_same_matches_as_the_source():
    texts = [*_random_texts(20000, seed=11), "je ne peux", "xje ne peux", "could", "coun", "foox", "c'est x"]
    for source in _SOURCES:
        rewritten = re.compile(literal_first(source))
        original = re.compile(source)
        for text in texts:
            want, got = original.search(text), rewritten.search(text)
            assert (want and (want.span(), want.group())) == (got and (got.span(), got.group())), (source, text)


def test_literal_first_moves_the_boundary_behind_a_literal_word():
    # the point of the rewrite: the engine sees a literal first (and a source it cannot rewrite is kept)
    assert literal_first(r"\bje\s+ne\b") == r"je(?<!\w.{2})\s+ne\b"
    assert literal_first(r"\bcould?n") == r"coul(?<!\w.{4})d?n"
    assert literal_first(r"\bc?x") == r"\bc?x"
    assert literal_first(r"(?:a)(?:\bb)") == r"(?:a)(?:\bb)"


def test_every_match_holds_the_required_literal():
    texts = [*_random_texts(20000, seed=12), "the box, please", "ist nicht ab"]
    for source in _SOURCES:
        needed = required_literal(source)
        pattern = re.compile(source)
        for text in texts:
            if pattern.search(text):
                assert needed in text, (source, needed, text)
    assert required_literal(r"^\W*[a-z][\w'#-]*(?: [\w'#-]+){0,3},? please\W*$") == " please"
    assert required_literal(r"(?i)please") == ""  # a literal matches other cases: no gate
    assert required_literal(r"a|b") == ""  # nothing every match holds


def test_trie_pattern_finds_the_longest_literal_starting_at_each_position():
    literals = ["j", "je", "je l'", "je le fais", "on y va", "puis-je", "(oui/non)", "\u786e\u8ba4", "x.y"]
    scan = trie_pattern(literals)
    for text in [*_random_texts(3000, seed=13), "je le fais (oui/non) puis-je on y va x.y 确认"]:
        for position in range(len(text)):
            here = [literal for literal in literals if text.startswith(literal, position)]
            match = scan.match(text, position)
            assert (match.group() if match else None) == (max(here, key=len) if here else None), (text, position)


#: Enough sentences per language to reach every list, few enough for a fast test.
_SENTENCES_PER_LANGUAGE = 120


def _language_sentences(classifier) -> dict[str, list[str]]:
    from tooldiag.classify.language import detect_language

    found: dict[str, list[str]] = {}
    for path in sorted(DATA.glob("*-dev.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = json.loads(line).get("content") if line.strip() else None
            if not isinstance(text, str):
                continue
            code = detect_language(text)
            rules = classifier._language_rules.get(code)
            if rules is not None and len(found.setdefault(code, [])) < _SENTENCES_PER_LANGUAGE:
                found[code].extend(rules.sentences(text))
    return found


def test_every_language_list_agrees_with_its_full_alternations():
    """The indexed, trie-gated search of each language's lists against one scan of all their entries."""
    from tooldiag.classify import get_classifier

    classifier = get_classifier("default")  # (built once per process: the languages compile on first use)
    sentences = _language_sentences(classifier)
    assert {"de", "es", "fr", "it", "ja", "pt", "zh"} <= set(sentences)
    for code, texts in sentences.items():
        rules = classifier._language_rules.get(code)
        assert rules is not None
        for name, cues in rules._c.items():
            if cues is None:
                continue
            for text in texts:
                want = bool((cues.plain and cues.plain.search(text)) or (cues.regex and cues.regex.search(text)))
                assert cues.search(text) == want, (code, name, text)


@pytest.mark.parametrize(
    ("text", "markers"),
    [
        ("[get_weather(city='Paris')]", ()),
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}', ()),
        ("<tool_call>get_weather</tool_call>", ()),
        ("send_message(to='bob', text='hi')\nview_messages_sent()", ()),
        ("Booking it now:\n```python\nbook_flight(travel_from='SFO')\n```", ()),
        # markers are tested before the prose gate: a marker need not hold "( [ { <"
        ("CALL: get_weather city=Paris", ("call:",)),
        ("CALLTOOL get_weather", ("calltool",)),  # no caseless character: every text is scanned
    ],
)
def test_the_prose_gate_skips_no_call(text, markers):
    assert text_holds_tool_call(text, markers)


@pytest.mark.parametrize("text", ["Which file should I move?", "I cannot do that: it is not allowed.", "Done!"])
def test_prose_without_call_characters_is_no_call(text):
    assert not text_holds_tool_call(text, ("<tool_call", "functools["))
