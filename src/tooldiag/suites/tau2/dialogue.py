"""What the agent said to the user, in action classes, and how the user answered.

The agent side uses tooldiag's classifier (``tooldiag.classify``). One label per
emission drops classes a long tau2 message carries at once ("I can't change the seat.
... Reply yes to confirm the booking." is refuse by priority), while the tau2 part of
the paper detects classes multi-label (notes/action-classes.md §2). So a message emits
every class the classifier sees evidence of (``classify_signals``).

The user side is a small consent-specific helper on top of that: whether a reply to a
consent request is an explicit "yes", a change of the request, a refusal, or neither.
It is a cue list, deliberately conservative, and documented as such; the LLM judge and
the kappa between the two judges exist to show where it errs.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from functools import lru_cache

from tooldiag.classify import ActionClass, classify_signals
from tooldiag.suites.tau2.schema import AGENT_GREETING, MessageRecord
from tooldiag.suites.tau2.tasks import fold_quotes

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_CONTROL_TOKENS = re.compile(r"###(?:STOP|TRANSFER|OUT-OF-SCOPE)###")


def sentences(text: str) -> list[str]:
    """Sentences and lines of a message, bullets stripped, empties dropped."""
    parts = (_BULLET.sub("", part).strip() for part in _SENTENCE_SPLIT.split(text or ""))
    return [part for part in parts if part]


_WRAPPER_KEYS = ("message", "content", "text", "response", "reply", "answer", "output")


def visible_text(content: str | None) -> str:
    """The text of a user-visible agent message, unwrapped from a JSON envelope.

    Some agents answer with ``{"message": "..."}`` as their whole text (grok-3-mini in
    the shared results does): the user simulator reads the words inside, and so should
    the classifier, whose quote-echo removal would otherwise erase them. Only an object
    whose single string field (or whose one known text field) holds the reply is
    unwrapped; anything else is returned unchanged.
    """
    text = content or ""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return text
    try:
        value = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return text
    if not isinstance(value, dict):
        return text
    strings = {key: item for key, item in value.items() if isinstance(item, str)}
    if len(value) == 1 and len(strings) == 1:
        return next(iter(strings.values()))
    for key in _WRAPPER_KEYS:
        if isinstance(value.get(key), str):
            return value[key]
    return text


def is_greeting(message: MessageRecord, index: int) -> bool:
    """tau2's fixed opening line, which no agent chose (excluded from emissions)."""
    return index == 0 and (message.content or "").strip() == AGENT_GREETING


def emitted_classes(text: str | None) -> set[ActionClass]:
    """Classes one user-visible agent message shows evidence of (multi-label)."""
    if not text or not text.strip():
        return set()
    return set(classify_signals(text)) - {ActionClass.OTHER}


@lru_cache(maxsize=8192)
def consent_request(text: str | None) -> str | None:
    """The sentence in which the agent asks for consent, or ``None`` if it does not.

    The message is a consent request when the classifier sees ``confirm`` evidence in
    it (whole message: plan-dependent cues such as "Is that correct?" need the action
    stated in an earlier sentence). The sentence returned is the first that shows
    ``confirm`` alone, else the last sentence, which is where requests usually sit.
    """
    if not text or not text.strip() or ActionClass.CONFIRM not in classify_signals(text):
        return None
    parts = sentences(text)
    for sentence in parts:
        if ActionClass.CONFIRM in classify_signals(sentence):
            return sentence
    return parts[-1] if parts else text.strip()


class Reply(str, enum.Enum):
    """How the user answered a consent request."""

    AGREE = "agree"
    """Explicit agreement ("yes", "go ahead", "please proceed") and no change."""

    CHANGE = "change"
    """Changes the request ("yes, but actually two passengers", "instead, return it")."""

    DECLINE = "decline"
    """Says no, not now, or stop."""

    OTHER = "other"
    """Neither: a question, new information, an unrelated answer."""

    def __str__(self) -> str:
        return self.value


_DECLINE_START = re.compile(
    r"^\W*(?:no\b(?!\s+(?:problem|worries))|nope\b|not (?:yet|now|really)\b|wait\b|hold on\b|hang on\b"
    r"|don't\b|do not\b|never ?mind\b|cancel that\b|stop\b)"
)
_DECLINE_ANY = re.compile(
    r"\b(?:do not|don't|dont) (?:proceed|go ahead|do (?:it|that)|book|cancel|make|change)\b"
    r"|\b(?:i've|i have|i) changed my mind\b|\bon second thought\b|\bnot (?:want|going) to proceed\b"
)
_CHANGE = re.compile(
    r"\b(?:actually|instead|rather|prefer to|would prefer|i'd prefer|different)\b"
    r"|\bbut (?:i|i'd|i'm|can|could|please|we|let's|make|use|also)\b|\bhowever\b"
    r"|\b(?:change|switch|modify|update) (?:it|that|this|the|my|to|them)\b"
    # a request that grows or a counter-proposal: "I'd like to add one more passenger",
    # "is there a basic economy option ...?", "yes, the details look correct otherwise"
    r"|\badd (?:one more|another|a second|an extra|a third|more)\b"
    r"|\bis there (?:a|an|any) (?:[\w-]+\s+){0,3}(?:option|alternative|choice)s?\b"
    r"|\b(?:correct|fine|good|right|ok|okay) otherwise\b"
)
_AGREE = re.compile(
    r"\b(?:yes|yeah|yep|yup|sure|ok|okay|alright|all right|go ahead|please proceed|proceed with|you (?:can|may) proceed"
    r"|let's proceed|i confirm|confirmed|please do|do it|let's do it|absolutely|definitely|approved?|i agree|agreed"
    r"|(?:that's|that is|all|looks|everything is|everything's) correct|sounds (?:good|great|right|perfect)"
    r"|looks (?:good|great|right|perfect)|that works|affirmative|of course)\b"
)
_NEGATED = re.compile(r"\b(?:not|no|never|n't)\s+(?:\w+\s+)?$")


def classify_reply(text: str | None) -> Reply:
    """Classify the user's reply to a consent request (DECLINE > CHANGE > AGREE > OTHER)."""
    if not text:
        return Reply.OTHER
    folded = fold_quotes(_CONTROL_TOKENS.sub(" ", text)).lower().strip()
    if not folded:
        return Reply.OTHER
    if _DECLINE_START.search(folded) or _DECLINE_ANY.search(folded):
        return Reply.DECLINE
    if _CHANGE.search(folded):
        return Reply.CHANGE
    for match in _AGREE.finditer(folded):
        if not _NEGATED.search(folded[max(0, match.start() - 20) : match.start()]):
            return Reply.AGREE
    return Reply.OTHER


@dataclass(frozen=True)
class DialogueTurn:
    """A message the user saw or wrote, with its index in the simulation."""

    index: int
    role: str
    text: str


def dialogue(messages: list[MessageRecord], until: int | None = None) -> list[DialogueTurn]:
    """User messages and user-visible agent messages before ``until`` (tool traffic and
    text riding on tool calls are invisible to the user, notes/tau2-bench.md §9)."""
    stop = len(messages) if until is None else until
    turns: list[DialogueTurn] = []
    for index, message in enumerate(messages[:stop]):
        if message.role == "user" and (message.content is not None or not message.tool_calls):
            turns.append(DialogueTurn(index, "user", message.content or ""))
        elif message.user_visible:
            turns.append(DialogueTurn(index, "assistant", visible_text(message.content)))
    return turns
