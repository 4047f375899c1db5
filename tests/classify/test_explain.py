"""``explain``: the rule, cue and sentence behind a label, and never a different label."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooldiag.classify import ActionClass, get_classifier, has_tool_calls
from tooldiag.classify.explain import Explanation, explain, explain_many
from tooldiag.classify.llm import PROMPT_VERSION, LLMClassifier
from tooldiag.classify.provenance import CountingClassifier

DATA = Path(__file__).resolve().parents[1] / "data" / "classifier"


def _rows() -> list[tuple[str, object, bool]]:
    rows = []
    for path in sorted(DATA.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                row = json.loads(line)
                rows.append((f"{path.name}:{number}", row.get("content"), has_tool_calls(row.get("tool_calls"))))
    return rows


ROWS = _rows()


@pytest.mark.parametrize("scheme", ["default", "paper"])
def test_label_equals_the_classifier_on_every_labelled_row(scheme):
    classifier = get_classifier(scheme)
    assert len(ROWS) > 4000
    wrong = []
    unattributed = []
    for where, text, calls in ROWS:
        why = explain(classifier, text, calls)
        if why.label is not classifier(text, calls):
            wrong.append(where)
        if why.rule.endswith(":unattributed"):
            unattributed.append(where)
        assert why.scheme == scheme
    assert wrong == []
    # the trace mirrors the rules: every label of every labelled row has a reason
    assert unattributed == []


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_VOCABULARY = (
    "I cannot can't which what file ? . , shall proceed confirm the order ID would you like me to book "
    'Sorry function tool [ls() ] { "name" : } ¿ Qué desea cancelar no puedo Soll ich 吗 确认 « »'
)
words = st.sampled_from(_VOCABULARY.split())
texts = st.one_of(st.text(), st.lists(words, max_size=25).map(" ".join))


@FUZZ
@given(text=texts, calls=st.booleans())
def test_label_equals_the_classifier_on_random_text(text, calls):
    for scheme in ("default", "paper"):
        classifier = get_classifier(scheme)
        why = explain(classifier, text, calls)
        assert why.label is classifier(text, calls)
        assert why.rule and not why.rule.endswith(":unattributed")


@pytest.mark.parametrize(
    ("text", "label", "rule", "cue"),
    [
        ("Which folder should I move the report to?", ActionClass.ASK, "ask:wh_question", "which"),
        ("Could you tell me the file name?", ActionClass.ASK, "ask:ask_cue", None),
        ("Could you confirm the order ID?", ActionClass.ASK, "ask:confirm_value", "could you confirm the order id"),
        ("Shall I proceed with the booking for $350?", ActionClass.CONFIRM, "confirm:consent_request", None),
        ("Would you like me to delete the file?", ActionClass.CONFIRM, "confirm:consent_question", None),
        (
            "I'm sorry, I cannot do that: there is no function to send emails.",
            ActionClass.REFUSE,
            "refuse:missing_function",
            "cannot",
        ),
        ("I can't move it without the destination folder.", ActionClass.ASK, "ask:blocked_on_information", None),
        ('[cd(folder="docs")]', ActionClass.TOOL_CALL, "text_call:paper_syntax", None),
        ('<function=ls>{"a": 1}</function>', ActionClass.TOOL_CALL, "text_call:template_marker", None),
        ("The file has been moved.", ActionClass.OTHER, "other:no_cue", None),
        ("", ActionClass.OTHER, "other:empty", None),
        ("¿Qué vuelo desea cancelar?", ActionClass.ASK, "ask:wh_question", "¿qué"),
    ],
)
def test_default_rules_of_hand_picked_texts(text, label, rule, cue):
    why = explain(get_classifier("default"), text, False)
    assert (why.label, why.rule) == (label, rule)
    if cue is not None:
        assert why.cue == cue
    if label not in (ActionClass.OTHER, ActionClass.TOOL_CALL):
        assert why.sentence and why.cue and why.cue.lower() in why.sentence


def test_default_names_the_sentence_and_the_language():
    why = explain(get_classifier("default"), "The folder exists. Which file should I copy?", False)
    assert why.sentence == "which file should i copy?" and why.language == "en"
    german = explain(get_classifier("default"), "Soll ich die Buchung jetzt stornieren?", False)
    assert german.language == "de" and german.label is ActionClass.CONFIRM and german.rule.startswith("confirm:")
    russian = explain(get_classifier("default"), "Какой файл вы имеете в виду?", False)
    assert (russian.language, russian.rule) == ("ru", "ask:question_mark")


def test_structured_calls_and_raw_lists():
    default = get_classifier("default")
    assert explain(default, None, True).rule == "structured_call"
    raw = explain(default, [{"ls": {"a": 1}}], False)
    assert (raw.label, raw.rule, raw.cue) == (ActionClass.TOOL_CALL, "structured_call", "ls")


@pytest.mark.parametrize(
    ("text", "label", "rule", "cue"),
    [
        ("Shall I proceed with the booking?", ActionClass.ASK, "ask:question_mark", "?"),
        ("I cannot do that, sorry. Which one?", ActionClass.REFUSE, "refuse:refuse_cue", None),
        ("[ls()]", ActionClass.TOOL_CALL, "text_call:paper_syntax", None),
        ("The file has been moved.", ActionClass.OTHER, "other:no_cue", None),
    ],
)
def test_paper_names_the_cue_list_that_won(text, label, rule, cue):
    why = explain(get_classifier("paper"), text, False)
    assert (why.label, why.rule) == (label, rule)
    if cue is not None:
        assert why.cue == cue
    if label is ActionClass.REFUSE:
        assert why.cue in get_classifier("paper").cues.refuse and why.cue in why.sentence


def test_a_classifier_without_explain_says_the_scheme_decided():
    class Shouty:
        name = "shouty"

        def __call__(self, text, has_calls):
            return ActionClass.REFUSE if isinstance(text, str) and text.isupper() else ActionClass.OTHER

    why = explain(Shouty(), "NO", False)
    assert why == Explanation(label=ActionClass.REFUSE, rule="scheme:shouty", scheme="shouty")
    # a wrapper that only counts is looked through
    assert explain(CountingClassifier(get_classifier("default")), "Which file?", False).rule == "ask:wh_question"


def test_llm_names_the_judge_or_the_fallback():
    from tests.classify.test_llm_scheme import ScriptedJudge  # the scripted judge provider

    ScriptedJudge.prompts.clear()
    judge = LLMClassifier("scriptedjudge/x")
    items = [("That is above my pay grade.", False), ("[ls(a=True)]", False), ("Which file? garble", False)]
    judged, syntax, fallback = explain_many(judge, items)
    assert (judged.label, judged.rule, judged.scheme) == (ActionClass.REFUSE, "judge", "llm")
    assert judged.detail == f"judge scriptedjudge/x, prompt {PROMPT_VERSION}"
    assert (syntax.label, syntax.rule) == (ActionClass.TOOL_CALL, "text_call:paper_syntax")
    assert (fallback.label, fallback.rule) == (ActionClass.ASK, "fallback:ask:wh_question")
    assert "named no action class" in (fallback.detail or "")
    assert [why.label for why in explain_many(judge, items)] == judge.classify_many(items)
