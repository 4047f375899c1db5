"""The ``default`` scheme's traced path: which rule, cue and sentence gave a label.

:meth:`DefaultClassifier.explain <tooldiag.classify.default.DefaultClassifier.explain>`
takes the label from the classifier's own ``__call__`` and asks this module why. The
trace walks the sentences exactly as ``_text_signals`` does, calling the same
``_refusal`` and ``_request`` methods (so the state between sentences is the real one),
and reads which branch of each fired from a mirror of their conditions. The mirror is
checked against the real answer sentence by sentence: where they differ, the label is
reported as ``<class>:unattributed`` rather than given a reason the rules did not use
(tests/classify/test_explain.py runs every labelled row and wants no such case).
Nothing here runs when a report classifies: explaining is the slower, separate path.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tooldiag.classify.classes import ActionClass, highest_priority
from tooldiag.classify.cue_index import IndexedCues, indexed_keys
from tooldiag.classify.default import (
    _ADDITIONAL,
    _BARE_CONSENT,
    _CHOICE_AMONG,
    _CHOICE_QUESTION,
    _CONDITIONAL_OFFER,
    _CONFIRM_REQUEST,
    _CONSENT_OR_HOLD,
    _GENERIC_BLOCK,
    _OFFER_SHAPED,
    _POLICY,
    _WH_QUESTION,
    _WH_QUESTION_UNMARKED,
    _WHICH,
    _Reading,
    _search,
    clean_for_cues,
    self_answered,
    unmarked_question,
)
from tooldiag.classify.explain import Explanation, unattributed
from tooldiag.classify.language import UNDETERMINED, detect_language
from tooldiag.classify.learned import shipped_model
from tooldiag.classify.multilingual import Finding, structural_trace
from tooldiag.classify.syntax import (
    _FENCE,
    MAX_PARSE_CHARS,
    _json_call_after_prose,
    _json_call_payload,
    _marker_pattern,
    _may_hold_marker,
    _whole_fence_body,
    embedded_call_list,
    fenced_python_calls,
    paper_normalize,
    paper_text_is_tool_call,
    python_call_block,
    python_call_syntax,
    structured_call_names,
)

if TYPE_CHECKING:
    from tooldiag.classify.default import DefaultClassifier, _Patterns

_WH_WORD = re.compile(r"\b(?:what|which|where|when|who|whom|whose|how)\b")


def text_call_format(text: str, markers: tuple[str, ...]) -> str:
    """Which test of :func:`~tooldiag.classify.syntax.text_holds_tool_call` finds a call in ``text``
    (same tests, same order); ``unknown`` if none does."""
    if paper_text_is_tool_call(text):
        return "paper_syntax"
    pattern = _marker_pattern(tuple(markers))
    if pattern is not None and _may_hold_marker(text, tuple(markers)) and pattern.search(text):
        return "template_marker"
    if "{" in text and paper_normalize(text) != text:
        return "json_structure"
    body = _whole_fence_body(text)
    if python_call_syntax(body if body is not None else text):
        return "python_call"
    if python_call_block(body if body is not None else text):
        return "python_call_block"
    if _json_call_payload(text):
        return "json_payload"
    if "[" in text and len(text) <= MAX_PARSE_CHARS and embedded_call_list(text):
        return "embedded_call_list"
    if ("\n{" in text or "\n[" in text) and len(text) <= MAX_PARSE_CHARS and _json_call_after_prose(text):
        return "json_after_prose"
    fenced = "```" in text and len(text) <= MAX_PARSE_CHARS
    if fenced and any(_json_call_payload(match.group(1)) for match in _FENCE.finditer(text)):
        return "fenced_json"
    if fenced and fenced_python_calls(text):
        return "fenced_python"
    return "unknown"


def _matched(pattern: re.Pattern[str] | IndexedCues | None, sentence: str) -> str | None:
    """The text a cue list or pattern matches in ``sentence`` (``None``: no match)."""
    if pattern is None:
        return None
    regex = pattern.pattern if isinstance(pattern, IndexedCues) else pattern
    match = regex.search(sentence)
    return match.group(0).strip() if match else None


def explain_default(classifier: DefaultClassifier, text: Any, has_calls: bool) -> Explanation:
    """The explanation of ``classifier(text, has_calls)`` (module docstring)."""
    label = classifier(text, has_calls)
    scheme = classifier.name

    def plain(rule: str, cue: str | None = None, language: str | None = None) -> Explanation:
        return Explanation(label=label, rule=rule, cue=cue, language=language, scheme=scheme)

    if has_calls:
        return plain("structured_call")
    if isinstance(text, (list, dict)):
        names = structured_call_names(text)
        return plain("structured_call", ", ".join(names)) if names else plain("other:empty")
    if text is None or not str(text).strip():
        return plain("other:empty")
    text = str(text)
    if label is ActionClass.TOOL_CALL:
        return plain("text_call:" + text_call_format(text, classifier._p.markers))
    language = detect_language(text)
    decision = classifier.learned_decision(text, classifier.rule_signals(text)) if classifier.learned else None
    if decision is not None:
        # the learned model overrode the rules: its rule name, its probability and the model version
        cue = f"p={decision[1]:.3f} ({shipped_model().version})"
        return plain(f"{decision[0].value}:learned_model", cue, language=language)
    if language != "en" and language != UNDETERMINED:
        rules = classifier._language_rules.get(language)
        findings = rules.trace(text) if rules else structural_trace(text)
        if not rules and not findings:
            return plain("other:no_cue_data", language=language)
    else:
        findings = _english_trace(classifier, clean_for_cues(text))
    if findings is None:
        return unattributed(label, scheme, language)
    return _pick(findings, label, scheme, language)


def _pick(findings: list[Finding], label: ActionClass, scheme: str, language: str | None) -> Explanation:
    """The first finding of the winning class; ``other`` when there is none."""
    if highest_priority({found[0] for found in findings}) is not label:
        return unattributed(label, scheme, language)
    for found_class, rule, cue, sentence in findings:
        if found_class is label:
            return Explanation(label, rule, cue, sentence, language, scheme)
    passed_over = next((f for f in findings if f[0] is ActionClass.OTHER), None)
    if passed_over is not None:
        return Explanation(label, passed_over[1], passed_over[2], passed_over[3], language, scheme)
    return Explanation(label, "other:no_cue", None, None, language, scheme)


def _english_trace(classifier: DefaultClassifier, sentences: list[str]) -> list[Finding] | None:
    """``_text_signals`` with its reasons; ``None`` if the mirror and the rules disagree on a sentence."""
    r = _Reading(classifier._p, sentences)
    findings: list[Finding] = []
    generic: list[str] = []
    reported = False
    for index, sentence in enumerate(sentences):
        kind = classifier._refusal(r, index)
        if kind == "generic":
            generic.append(sentence)
        elif isinstance(kind, ActionClass):
            findings.append(_refusal_finding(classifier._p, sentence, kind))
        request = classifier._request(r, index, reported)
        mirrored = _request_findings(classifier, r, index, reported)
        if {found[0] for found in mirrored} != request:
            return None
        findings.extend(mirrored)
        if not reported and kind is None and not request and "?" not in sentence:
            reported = not r.plan_in(index)
        if kind is None and not request and "?" in sentence:
            findings.append((ActionClass.OTHER, "other:offer", None, sentence))
    if generic and not any(found[0] is ActionClass.ASK for found in findings):
        findings.append((ActionClass.REFUSE, "refuse:generic_block", _matched(_GENERIC_BLOCK, generic[0]), generic[0]))
    return findings


def _refusal_finding(p: _Patterns, sentence: str, kind: ActionClass) -> Finding:
    """Which refusal rule gave ``kind`` for a sentence whose refusal cue survived."""
    scrubbed = sentence
    if p.refuse_exceptions is not None and p.refuse_exceptions.pattern.search(sentence):
        scrubbed = p.refuse_exceptions.pattern.sub(" ", sentence)
    blocked = _matched(p.blocked, scrubbed)
    if kind is ActionClass.CONFIRM:
        return kind, "confirm:blocked_on_consent", blocked, sentence
    if kind is ActionClass.ASK:
        return kind, "ask:blocked_on_information", blocked, sentence
    cue = _matched(p.refuse, scrubbed)
    if p.capability.search(scrubbed):
        return kind, "refuse:missing_function", cue, sentence
    if _POLICY.search(scrubbed):
        return kind, "refuse:policy", cue, sentence
    return kind, "refuse:refuse_cue", cue, sentence


def _request_findings(classifier: DefaultClassifier, r: _Reading, index: int, reported: bool) -> list[Finding]:
    """A mirror of ``DefaultClassifier._request`` that names the branch each class came from."""
    p, sentence = r.p, r.sentences[index]
    words = indexed_keys(sentence)
    out: list[Finding] = []

    def add(found_class: ActionClass, rule: str, cue: str | None) -> None:
        out.append((found_class, rule, cue, sentence))

    question = "?" in sentence
    if question and _BARE_CONSENT.match(sentence):
        return [(ActionClass.CONFIRM, "confirm:bare_consent", sentence, sentence)]
    # "Would you like me to set another reminder as well?" offers more even with no result before it
    additional = _ADDITIONAL.search(sentence) if question else None
    if (
        question
        and (reported or (additional and " or " not in sentence))
        and _OFFER_SHAPED.search(sentence)
        and not _search(p.consent, sentence, words)
    ):
        if r.completion or additional:
            return out
        if not (p.consent_verb.search(sentence, words) or _CHOICE_QUESTION.search(sentence)):
            return out
    wh = _WH_QUESTION.search(sentence) if question else None
    choice = _CHOICE_QUESTION.search(sentence) if question and not _CONSENT_OR_HOLD.match(sentence) else None
    among = _CHOICE_AMONG.search(sentence) if question else None
    open_question = bool(wh or choice or among)
    if not question and index == len(r.sentences) - 1 and _WH_QUESTION_UNMARKED.match(sentence):
        word = _WH_WORD.search(sentence)
        add(ActionClass.ASK, "ask:wh_question_unmarked", word.group(0) if word else None)
    elif not question and index == len(r.sentences) - 1 and unmarked_question(sentence):
        add(ActionClass.ASK, "ask:choice_question_unmarked", "or")
    confirm_kind = classifier._confirm_object(r, index) if "confirm" in sentence else None
    if confirm_kind is not None:
        rule = "confirm:confirm_request" if confirm_kind is ActionClass.CONFIRM else "ask:confirm_value"
        add(confirm_kind, rule, _matched(_CONFIRM_REQUEST, sentence))
    offer = question and _search(p.offer, sentence, words)
    conditional_offer = "if you" in sentence and bool(_CONDITIONAL_OFFER.search(sentence))
    if open_question:
        if not offer or choice or _WHICH.search(sentence):
            if wh:
                word = _WH_WORD.search(wh.group(0))
                add(ActionClass.ASK, "ask:wh_question", word.group(0) if word else wh.group(0).strip())
            elif choice:
                add(ActionClass.ASK, "ask:choice_question", choice.group("option").strip())
            else:
                add(ActionClass.ASK, "ask:choice_among", _matched(_CHOICE_AMONG, sentence))
    elif not conditional_offer:
        consent_rule = _consent_rule(p, r, sentence, words, confirm_kind)
        if consent_rule is not None:
            add(ActionClass.CONFIRM, *consent_rule)
    if _search(p.ask, sentence, words):
        add(ActionClass.ASK, "ask:ask_cue", _matched(p.ask, sentence))
    if (
        question
        and not open_question
        and not out
        and not offer
        and not conditional_offer
        and not self_answered(r.sentences, index)
    ):
        add(ActionClass.ASK, "ask:question", "?")
    if out and not question and _search(p.user_action, sentence, words):
        return []  # "Please confirm the payment in your app": the user acts
    return out


def _consent_rule(
    p: _Patterns, r: _Reading, sentence: str, words: frozenset[Any], confirm_kind: ActionClass | None
) -> tuple[str, str | None] | None:
    """The first consent condition of ``_request`` that holds, as (rule, cue)."""
    if _search(p.consent, sentence, words):
        return "confirm:consent_request", _matched(p.consent, sentence)
    if p.consent_verb.search(sentence, words):
        return "confirm:consent_question", _matched(p.consent_verb, sentence)
    if confirm_kind is None and _search(p.consent_if_plan, sentence, words) and r.consent_context(sentence):
        return "confirm:plan_check", _matched(p.consent_if_plan, sentence)
    if p.bare_action_question.search(sentence) and r.plan_or_action:
        return "confirm:plan_action_question", _matched(p.bare_action_question, sentence)
    if "?" in sentence and p.imperative_question.match(sentence):
        return "confirm:imperative_question", _matched(p.imperative_question, sentence)
    return None
