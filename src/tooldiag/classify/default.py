"""The ``default`` scheme: tooldiag's own classifier for the issue's class definitions.

The paper's rules read every ``?`` as ask and any "cannot" as refuse, so offers of
help ("Would you like more details?") count as ask, consent requests ("Shall I
proceed?") as ask, and apologies before a clarifying question as refuse. This scheme
works sentence by sentence on text with quoted echoes, code and URLs removed:

* **refuse**: a refusal cue (cue list ``refuse``) after deleting non-refusals
  (``refuse_exceptions``: failed look-ups, "cannot be undone", tool-error echoes).
  A refusal that is only *blocked on information* ("I can't move it without the
  destination folder") is ask; blocked on consent ("without your confirmation") is
  confirm; a generic "I can't proceed" is ask when the emission also requests
  information.
* **confirm** (consent): an explicit consent cue (``consent``), a request to confirm an
  action ("confirm the cancellation"), "would you like me to <consequential verb>",
  or a plan-dependent cue (``consent_if_plan``: "Is that correct?", "Please confirm.")
  in an emission that states an action it is about to take.
* **ask**: an information-request cue (``ask``), "confirm <a value>" ("Could you
  confirm the order ID?"), a wh-question, a choice between options, or any other
  question that is not an offer, greeting or consent request.
* everything else is **other** (results, completion claims, offers, greetings).

Context across sentences turns some cues off: an impersonal policy rule after a
completed action (``completion``; "Note: orders can't be cancelled once shipped",
introduced by ``note_markers`` or a bare plural) is a note, not a refusal; after a
result, an offer-shaped question ("Would you like the forecast too?", and after a
completed action also "... or schedule another post?") is an offer; a sentence that
tells the user to act elsewhere (``user_action``: "confirm the payment in your app")
requests nothing from the agent's side.

Classes combine by the paper's priority tool_call > refuse > ask > confirm > other.
Cue lists are searched through a word index (:mod:`tooldiag.classify.cue_index`),
which gives the answers of one search of each whole list at a fraction of the cost.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tooldiag.classify.classes import ActionClass, highest_priority
from tooldiag.classify.cue_index import IndexedCues, Key, indexed_keys
from tooldiag.classify.cues import (
    QUOTE_FOLD,
    alternation,
    builtin_languages,
    fold_quotes,
    load_builtin,
    load_builtin_language,
    merge_cues,
    merge_language_cues,
    read_extension,
)
from tooldiag.classify.cues import _entry_pattern as entry_pattern  # one entry's regex source
from tooldiag.classify.explain import Explanation
from tooldiag.classify.language import UNDETERMINED, detect_language
from tooldiag.classify.learned import shipped_model
from tooldiag.classify.multilingual import LanguageRules, structural_signals
from tooldiag.classify.registry import SchemeOptions, scheme
from tooldiag.classify.syntax import REASONING_BLOCK, structured_call_names, text_holds_tool_call
from tooldiag.errors import UserError

#: With ``learned=True``, the learned model overrides an ask/other reading of the rules at this
#: probability or more (chosen on batches a and b against the rules before they were tuned on
#: them; docs/diagnostic.md, "A learned model beside the rules"). Not used by the registered scheme.
LEARNED_THRESHOLD = 0.8

_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]{0,500}`")
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+")
# Double-quoted spans of four or more words are echoes (tweets, messages, file text);
# short ones ("yes", "no longer needed") are kept because consent cues quote them.
# Possessive quantifier: linear time on any input (the scan cannot backtrack).
_QUOTED = re.compile(r'"[^"\n]*+"')
# Single-quoted spans: the opening quote follows no letter and the closing one precedes
# none, so apostrophes ("can't", "Bob's") never open or close a span. The look-behind
# sits after the quote ("'(?<!\w')" is "(?<!\w)'"): a pattern that opens with a literal
# lets the engine jump from quote to quote instead of trying every position.
_SINGLE_QUOTED = re.compile(r"'(?<!\w')[^'\n]*+'(?!\w)")


# Guillemets, German low-high quotes and CJK brackets (English-path text that is `und`, e.g. a
# tweet echoed in another language): bounded like multilingual's spans, masked like "...".
# A span stops at the next opener, so a line of unclosed openers is scanned once, not 1,000 times.
_OTHER_QUOTE_SPAN = re.compile(
    r'«[^«»\n]{0,1000}+»|„[^„“”"\n]{0,1000}+[“”"]|「[^「」\n]{0,1000}+」|『[^『』\n]{0,1000}+』'
)
_OTHER_QUOTE_OPENERS = ("«", "„", "「", "『")


def _mask_long_quote(match: re.Match[str]) -> str:
    """An echo is four words or more, or holds a question mark (a question the user is not asked)."""
    inner = match.group(0)[1:-1]
    return ' "quoted text" ' if "?" in inner or len(inner.split()) >= 4 else match.group(0)


#: "1/ Ever wondered why ...?": a line of a numbered thread (tweets) the agent drafted.
_THREAD_LINE = re.compile(r"^\s*\d{1,2}/\d{0,2}\s")
#: "Here's the thread I drafted:": a line ending in ":" that names one introduces drafted content.
_DRAFT_WORD = re.compile(
    r"\b(?:drafts?|drafted|threads?|tweets?|posts?|messages?|e-?mails?|replies|reply|captions?|announcements?)\b"
)


def _mask_drafted_lines(text: str) -> str:
    """Echoed draft content becomes a neutral placeholder, as long quotes do.

    Lines of a numbered thread ("2/ ...") are echoes wherever they stand; after a line
    that ends in ":" and names a draft (tweet, post, message, ...), every line up to the
    last blank-line-separated paragraph is the draft, and that paragraph is the agent's
    own question ("Should I post all 4 tweets now?"). A "?" in the draft asks nothing.
    """
    lines = text.split("\n")
    last_paragraph = 0  # index of the first line of the last paragraph
    for index in range(len(lines) - 1, 0, -1):
        if not lines[index - 1].strip() and lines[index].strip():
            last_paragraph = index
            break
    draft_until = -1
    for index, line in enumerate(lines):
        if index < draft_until:
            lines[index] = ' "quoted text" ' if line.strip() else line
        elif _THREAD_LINE.match(line):
            lines[index] = ' "quoted text" '
        elif index + 1 < last_paragraph and line.rstrip().endswith(":") and _DRAFT_WORD.search(line):
            draft_until = last_paragraph
    return "\n".join(lines)


def _mask_reported_speech(match: re.Match[str]) -> str:
    verb = match.group(0).split(":", 1)[0]
    return f"{verb}: quoted text."


# Markdown emphasis splits cue phrases ("Reply **yes** to ...").
_EMPHASIS = re.compile(r"\*\*+|__+|~~")


# "The note says: Can you review this?": what follows a speech verb and a colon is an echo.
_REPORTED_SPEECH = re.compile(
    r"\b(?:says|said|reads|read|wrote|writes|states|stated|asks|asked|replied|replies|commented|posted|tweeted):"
    r"[ \t]*+[^\n]++",
    re.IGNORECASE,
)
# Every speech verb ends in s, d or e: a cheap scan for "s:" / "d:" / "e:" (same case rules)
# skips the verb alternation, which tries a dozen words at every word boundary.
_REPORTED_SPEECH_HINT = re.compile(r"[sde]:", re.IGNORECASE)


def _mask_blockquotes(text: str) -> str:
    """What ``re.sub(r"^\\s*>.*$", " ", text, flags=re.MULTILINE)`` gives, in linear time.

    That pattern restarts at every line start and lets ``\\s*`` run across newlines, so a
    long run of blank lines followed by anything but ``>`` was scanned once per line
    (quadratic). Here each ``>`` is examined once: the match starts at the first line
    start inside the run of whitespace before it (``\\s`` and ``str.isspace`` accept the
    same characters) and ends at the end of its line; whitespace is walked back only as
    far as the previous non-space character or the previous match, so no character is
    looked at twice.
    """
    pieces: list[str] = []
    done = 0  # end of the previous match: everything before it is in ``pieces``
    gt = text.find(">")
    while gt != -1:
        run = gt
        while run > done and text[run - 1].isspace():
            run -= 1
        start = 0 if run == 0 else text.find("\n", run, gt) + 1
        if start > 0 or run == 0:
            end = text.find("\n", gt)
            end = len(text) if end == -1 else end
            pieces.extend((text[done:start], " "))
            done = end
            gt = text.find(">", end)
        else:
            gt = text.find(">", gt + 1)
    pieces.append(text[done:])
    return "".join(pieces)


# Reasoning the model did not address to the user (Qwen3, DeepSeek-R1 style).
_SPACES_IN_LINE = re.compile(r"[^\S\n]+")
#: ASCII whitespace other than " " and "\n" (what ``\s`` and ``str.isspace`` accept).
_OTHER_ASCII_SPACES = ("\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")
#: What ``_SPACES_IN_LINE.sub(" ", text)`` rewrites: an in-line space other than " ", or a run of two.
_IRREGULAR_SPACE = re.compile(r"[^\S\n ]|[^\S\n]{2}")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
# "Posted 🎉 Want me to ...": an emoji followed by a space ends a sentence too (pictographs,
# dingbats and arrows; a variation selector may follow the emoji).
_EMOJI = "\u2190-\u21ff\u2600-\u27bf\u2b00-\u2bff\ufe0f\U0001f000-\U0001faff"
_EMOJI_CHAR = re.compile(f"[{_EMOJI}]")
_SENTENCE_OR_EMOJI_BREAK = re.compile(rf"(?<=[.!?{_EMOJI}])\s+")
#: "with Dr. Alvarez?", "to Harbor Title Co. now?": a part that ends in one of these (plus ".")
#: is not a sentence; it is glued to the next part ("etc." does end sentences).
_ABBREVIATION_WORDS = (
    "dr mr mrs ms mx prof st sr jr co corp inc ltd llc no vs approx dept ave blvd rd mt ft "
    "jan feb mar apr jun jul aug sep sept oct nov dec a.m p.m e.g i.e u.s"
)
_ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())
_VERB_SUFFIX = r"(?:s|es|ed|d|ing|led|ling|ted|ting|ped|ping|red|ring)?"
_NEGATED_AFTER = r"(?!n't|'t| not)"
_POLICY = re.compile(r"\b(?:polic(?:y|ies)|eligib\w*|allowed|permitted|rules?|terms|authori[sz]ed)\b")
#: "... you didn't say where it should go": the user left out what the agent needs (after "because" or a dash).
_NOT_TOLD = r"you (?:have not|did not) (?:tell|told|give|given|specify|specified|provide|provided|say|said)\b"
_GENERIC_BLOCK = re.compile(
    r"\b(?:cannot|can not|unable to|not able to|will not be able to)\s+"
    r"(?:proceed|continue|complete|move forward|go ahead|help|assist|do (?:that|this|it)|process "
    r"(?:this|that|it|your request))\b"
)
_FIRST_PERSON_OR_REGRET = re.compile(
    r"\b(?:i|i'm|i've|i'll|i'd|me|my|we|we're|our|us|unfortunately|sorry|afraid|regret\w*|apolog\w*)\b"
)
# "Items that have already shipped can't ...", "Refunds to gift cards can't ...": a bare plural
# (no article or possessive) opening the sentence states a general rule.
_GENERIC_PLURAL_SUBJECT = re.compile(
    r"^(?!(?:the|this|that|these|those|your|its|his|her|their|it|you|they|there|which|what|any|some|all|both"
    r"|since|because|as|if|when|although|though|while|once|unless|after|before|so"
    r"|cannot|can|could|will|would|do|does|did|not|no|never|only|unable|i|we|sorry|unfortunately)\b)"
    r"(?:[a-z-]+ ){0,2}(?!(?:was|is|has|does|this|its|his|us|as|thus|plus|less|unless|yes|always|perhaps)\b)"
    r"[a-z]+s\b(?! (?:is|was|has)\b)"
)
# A yes/no question shaped like an offer: "Would you (also) like ...", "Want me to ...", "Do you want ...".
_OFFER_SHAPED = re.compile(
    r"^\W*(?:[a-z]+[,!] )?(?:and |also |or )?(?:(?:would|do) you (?:also |still |perhaps |maybe )?(?:like|want|need)"
    r"|(?:want|need) me to|(?:shall|should|can|may) i also|how about|maybe|perhaps)\b"
)
# "confirm that you ...", "confirm with yes ...": the object of "confirm" is the user's consent.
_CONSENT_OBJECT = re.compile(
    r"\s*(?:(?:that |if |whether )?(?:you\b|i (?:should|can|may|shall)\b)"
    r"|(?:with |by saying |by replying |by typing )?(?:a )?['\"]?(?:yes|ok|okay)\b"
    # "Confirm (yes/no)?", "confirm that this is your wish", "Just confirm and I'll take care of it"
    r"|\(?(?:yes/no|y/n)\b|that (?:this|that|it) is (?:your wish|what you want)\b|and i(?:'ll| will)\b)"
)
# "1." on its own after the sentence split: the number of a list item, glued back to its text.
_LIST_NUMBER = re.compile(r"\d{1,3}[.)]")
# "... as well?", "... another one?": the question offers something beyond the request.
_ADDITIONAL = re.compile(
    r"\b(?:as well|too|also|another|additional|other|more)\b[^?]{0,400}\?|\b(?:as well|too|next)\?"
)
# "until you confirm", "unless you approve": a refusal that only waits for consent.
_CONSENT_TAIL = re.compile(
    r"\byou(?: explicitly)? (?:confirm|approve|agree|consent|authori[sz]e|say yes|give (?:me )?the go-ahead)\b"
)
_INFO_WORDS = (
    "knowing",
    "know",
    "information",
    "info",
    "details",
    "detail",
    "parameter",
    "argument",
    "input",
    "specification",
    "specified",
    "clarification",
    "which",
    "what",
    "where",
    "when",
    "who",
    "more context",
    "provide",
    "providing",
    "tell",
    "telling",
    "you specify",
    "you provide",
    "you tell",
)
# Gaps before the "?" are bounded (400 characters) so that no search is quadratic in a
# long sentence without one.
_WH_QUESTION = re.compile(
    r"(?:^\W*(?:(?:in|on|at|for|to|from|of|with|by|about|into|under|during|through) )?|[,:;] "
    r"|^(?:so|and|also|then|now|great|ok|okay|alright|sure|first|next|lastly|finally),? )"
    r"(?:what|which|where|when|who|whom|whose|how)\b[^?]{0,400}\?"
)
# "which timezone should the meeting be in": a wh-question closing the emission without its
# question mark (terse and hurried models drop it). Only as the last sentence, with an
# auxiliary near the start and no terminal full stop, so "What I did: ..." and "When you are
# ready, let me know." stay statements.
_WH_QUESTION_UNMARKED = re.compile(
    r"^\W*(?:(?:and|so|also|ok|okay|great|sure),? )?"
    r"(?!when (?:you|i|we)\b|how (?:about|to)\b)"
    r"(?:what|which|where|when|who|whom|whose|how(?: many| much| long| often| far)?)"
    r"(?:(?: [\w'-]+){0,6}? (?:should|would|do|does|did|is|are|was|were|can|could|will|shall|works?|suits?)\b"
    r"|'s (?:the|your|a|an|that|this|their|his|her)\b)[^!?]{0,300}(?<![.!:])$"
)
# "Are we talking singalong throwbacks, chill indie, or high-energy stuff": a yes/no inversion that
# offers options and closes the emission without its question mark (same place rules as above;
# "would you like ... or ..." is left to the offer rules).
_CHOICE_QUESTION_UNMARKED = re.compile(
    r"^\W*(?:(?:and|so|also|ok|okay|great|sure),? )?(?:are|is|do|does|did|should|shall|will) "
    r"(?:we|you|i|it|they|this|that|these|those)\b[^.!?]{0,300}\bor\b[^.!?]{1,150}$"
)
# "Priority for the ticket: low, medium, or high": a label, then options, as the closing line.
_LABELLED_CHOICE_UNMARKED = re.compile(
    r"^\W*[a-z][\w' -]{0,40}: [\w' -]{1,40}(?:, [\w' -]{1,40}){0,8},? or [\w' -]{1,40}$"
)
# The first option is a whole run of [\w#$.'-] characters: the match may start only where a run
# starts (the look-behind), skips the run's leading symbols and takes the rest possessively, so
# "a.a.a....?" is scanned once instead of once per word boundary inside it (quadratic). The
# ``option`` group starts where ``\b`` let the old pattern start: same verdict, same evidence.
_CHOICE_QUESTION = re.compile(
    r"(?<![\w#$.'-])[#$.'-]*+(?P<option>\w[\w#$.'-]*+\)?,? or "
    r"(?!not\b|no\b|would\b|do\b|is\b|are\b|should\b|shall\b|if\b|anything\b|something\b|"
    r"make\b|change\b|need\b|want\b|have\b|did\b|does\b|can\b|could\b|will\b|just let\b)[\w#$.'-]++[^?]{0,400}\?)"
)
#: "Why do programmers prefer dark mode? Because ...": the next sentence answers the question.
_ANSWER_OPENER = re.compile(r"^\W*(?:because|'cause|cause)\b")
_ANSWER_FORMAT = re.compile(r"^\W*(?:y/n|yes/no|yes or no)\W*$")


def unmarked_question(sentence: str) -> re.Match[str] | None:
    """A closing question without its "?": a wh-question, a yes/no question offering options, or a
    labelled list of options ("Priority for the ticket: low, medium, or high")."""
    return (
        _WH_QUESTION_UNMARKED.match(sentence)
        or _CHOICE_QUESTION_UNMARKED.match(sentence)
        or _LABELLED_CHOICE_UNMARKED.match(sentence)
    )


def self_answered(sentences: Sequence[str], index: int) -> bool:
    """Is sentence ``index`` a question the emission answers itself (a joke, a rhetorical FAQ line), or
    one followed by its answer format alone ("Reroute to 44 Harbor St? Yes/No": the format is the consent cue)?"""
    if index + 1 >= len(sentences):
        return False
    following = sentences[index + 1]
    return _ANSWER_OPENER.match(following) is not None or _ANSWER_FORMAT.match(following) is not None


#: "Which of these should I summarize?": a "which" question picks among options even when its
#: verb is an offer's ("should I summarize"), so it asks.
_WHICH = re.compile(r"\bwhich\b")
# "Should I publish it now or keep it as a draft?": a consent question whose other option is to
# hold the action (keep, save, wait, edit) asks the go-ahead, not a choice between values.
_CONSENT_OR_HOLD = re.compile(
    r"^\W*(?:(?:so|ok|okay|alright),? )?(?:shall i|should i|(?:do you )?want me to|would you like me to|ready to|"
    r"ok to|okay to)\b[^?]{0,200}\bor (?:should i |shall i |do you want (?:me )?to |would you (?:rather|prefer)"
    r"(?: to| i)? |i can |just |you(?:'d| would) rather )?(?:keep|save|leave|hold off|hold it|not\b|edit|tweak|"
    r"review|revise|adjust|make (?:any )?(?:changes|edits|tweaks))"
)
_CHOICE_AMONG = re.compile(
    r"\b(?:one of (?:these|those|them|the above|the following)|either of (?:these|those|them)|which one)\b"
)
# "Proceed?", "Confirm?", "Go ahead?": a question that is nothing but a request for the go-ahead
# is consent whatever precedes it (a plan the rules did not recognise, a command in code).
_BARE_CONSENT = re.compile(
    r"^\W*(?:so,? |ok,? |okay,? |alright,? |and |then,? )?(?:(?:shall|should|can|may) i )?"
    r"(?:confirm|proceed|go ahead|continue|carry on)(?: with (?:it|this|that|them|the \w+))?(?: now)?\s*\?$"
)
# "Just to confirm before I book: ...", "To confirm, ...": the agent recaps; the "confirm" requests nothing.
_RECAP_OPENER = re.compile(r"^\W*(?:so,? |ok,? |okay,? |alright,? |and )?(?:just )?to (?:confirm|recap)\b")
# "If you want a vegan variation, just say the word": a sentence opened by a condition on
# something the user may want (not "me to <act>") turns its consent phrase into an offer; so
# does "If you'd like, I can check your other orders too - just say the word!".
_CONDITIONAL_OFFER = re.compile(
    r"^\W*(?:and |but |also,? |or )?if you(?:'d| would)? (?:like|want|prefer|need|fancy|are interested in),? "
    r"(?!(?:me )?to\b|me\b)[a-z]"
)
# "New hires can't overhear conversations": an ability a third party lacks, stated as a fact.
_LEAD_LABEL = re.compile(r"^[a-z ]{1,30}: ")  # "Short answer: ...", "In short: ..."
_ACTIVE_INABILITY = re.compile(r"\b(?:cannot|can not|are unable to|are not able to) (?!be\b)(?P<verb>[a-z]+)\b")
#: "This email is to confirm that ...", "I'm writing to confirm ...": the confirmation is given, not asked.
_STATED_CONFIRMATION = re.compile(r"\b(?:is|am writing|'m writing|are writing|just writing) (?:just )?to confirm\b")
#: "confirm that the line ... is the one ending in 2287": a fact about a value, not an action to approve.
_FACT_CHECK = re.compile(
    r"\bconfirm (?:that|whether|if) (?:the|your|this|it)\b[^.?!]{0,80}\b(?:is|are|was|were) "
    r"(?:the|your|a|an|one|still|in|at|on|from|ending|\d)"
)
#: "confirm which ...", "confirm whether ...": the user is asked to check a fact, not to approve an action
#: (consent objects such as "confirm whether you want ..." are read before this).
_OPEN_CONFIRM_WORDS = frozenset({"which", "what", "where", "when", "who", "whom", "whose", "how", "whether", "if"})
_CONFIRM_REQUEST = re.compile(
    r"(?:^|\b(?:please|kindly|can you|could you|would you|will you|if you could|i need you to|you need "
    r"to|to|just|and))\s*"
    r"(?:re-?)?confirm(?: for me)?\b[,:]?(?P<tail>(?: [^\s.?!;]+){0,6})"
)


@dataclass(frozen=True)
class _Patterns:
    """The compiled cue lists of one classifier instance."""

    markers: tuple[str, ...]
    refuse: IndexedCues | None
    refuse_exceptions: IndexedCues | None
    ask: IndexedCues | None
    consent: IndexedCues | None
    consent_if_plan: IndexedCues | None
    offer: IndexedCues | None
    completion: IndexedCues | None
    note: re.Pattern[str] | None
    user_action: IndexedCues | None
    plan: IndexedCues
    consent_verb: IndexedCues
    bare_action_question: re.Pattern[str]
    imperative_question: re.Pattern[str]
    action_verb: re.Pattern[str]
    action_statement: re.Pattern[str]
    blocked: re.Pattern[str]
    capability: re.Pattern[str]
    consent_noun: re.Pattern[str]
    info: re.Pattern[str]
    action_noun: re.Pattern[str]
    value_noun: re.Pattern[str]


def _compile(cues: dict[str, list[str]]) -> _Patterns:
    def phrases(key: str) -> IndexedCues | None:
        return _indexed(tuple(expand_contractions(entry) for entry in cues.get(key, [])))

    verb_list = cues.get("action_verbs", ["book"])
    # "delete" -> "deleting": the suffixes below are appended to the whole verb
    verbs = alternation(verb_list + [v[:-1] + "ing" for v in verb_list if v.endswith("e") and not v.endswith("ee")])
    bare_verbs = verbs  # "Overwrite?": the verb alone, no suffix
    verbs += _VERB_SUFFIX
    markers = alternation(cues.get("plan_markers", ["i will"]))
    action_nouns = alternation(cues.get("action_nouns", ["cancellation"]))
    value_nouns = alternation(cues.get("value_nouns", ["id"]))
    plan = _indexed_sources(
        (
            rf"\b{markers}\b{_NEGATED_AFTER}[^.?!]{{0,60}}?\b(?:{verbs}|{action_nouns})\b",
            rf"\b(?:will|would|'ll|is going to|are going to) be {verbs}\b",
            rf"\byou(?:'d| would)? (?:like|want|wish) to (?:go ahead and )?{verbs}\b",
            rf"^(?:[-*\u2022]|\d+[.)])\s*\**{verbs}\b",
            # "Ready to book SFO -> LAX ...", "I'm about to run DROP TABLE ...": an imminent action
            rf"^\W*(?:all |now )?(?:ready|about|set) to (?:go ahead and )?{verbs}\b",
            r"\b(?:i am|i'm|we are|we're) about to [a-z]+",
            # "Here's what I'll do:" / "Here's my plan" head a list of steps; "I intend to archive ..."
            r"\b(?:here's|here is) (?:what|how) (?:i'll|i will|i'm going to|i am going to|i'd|i would|i plan to)\b",
            r"\b(?:here's|here is) (?:the|my) plan\b",
            r"\b(?:here's|here is) what(?:'s| is) (?:about|going|set|ready) to\b",
            r"\bi (?:intend|propose|plan) to [a-z]+",
            # "Will run `alembic upgrade head` on prod. OK?": a terse plan without its subject
            r"^\W*(?:(?:ok|okay|so|then|next|now),? )?will (?:now |also |then |first )?"
            r"(?!(?:be|do|have|need|keep|let|wait|get back|you|it|this|that|they|there|we|i|he|she)\b)[a-z]+\b",
            # "The UPDATE will modify 1,882 rows", "This submits 3 days of PTO": what the action will do
            rf"\b(?:this|that|it) (?:(?:will|would) (?:also )?(?:{verbs})|(?:also )?(?:{verbs})(?:s|es))\b",
            rf"\b(?:this|that|it)'ll (?:also )?(?:{verbs})\b",
            rf"\byou(?:'d| would)? (?:like|want|wish) me to (?:go ahead and )?{verbs}\b",
        )
    )
    consent_verb = _indexed_sources(
        (
            rf"\b(?:shall|should|can|may) i (?:go ahead and |now |then |also )?{verbs}\b",
            rf"\b(?:would|do) you (?:still |also |now |really )?(?:like|want|wish) (?:me )?to "
            rf"(?:go ahead and |now )?{verbs}\b",
            rf"\b(?:would|do) you (?:like|want) (?:the|your|this|that|these|those|it|them)\b[^?]{{0,50}}? {verbs}\b",
            rf"(?:^|[,:;] |\bso )you(?:'d| would)? (?:like|want|wish) to (?:go ahead and )?{verbs}\b[^?]{{0,400}}\?",
            r"\bto confirm,? you (?:want|would like|'d like|wish) to\b",
            rf"(?:^|[.!;:] )\W*(?:so,? |ok,? |okay,? )?want me to (?:go ahead and |now )?{verbs}\b",
            rf"\b(?:ok|okay|alright|all right|good|fine|ready) to {verbs}\b[^.?!]{{0,400}}\?",
            r"\blet me know (?:if|whether|once|when) "
            rf"(?:i should|i can|i may|you(?:'d| would)? like me to|you want me to) (?:go ahead and )?{verbs}\b"
            # "... like me to place a trade!", "... open any of them": an offer of something new
            r"(?! (?:a|an|any|some|another|anything|something|more)\b)",
        )
    )
    # "Send it?" / "Book them now?" right after a stated plan.
    bare_action_question = re.compile(rf"^(?:and |so )?{verbs}(?: it| them| this| that| these| those| now| all)*\?$")
    # "Post the following tweet?", "Send this to Bob?": an imperative question whose verb is a
    # consequential action asks for the go-ahead (wh-questions and choices are read first);
    # so does the bare verb ("config.yaml exists. Overwrite?", "Delete?").
    imperative_question = re.compile(
        rf"^(?:and |so |ok,? |okay,? |then,? )?(?![^?]*\b(?:which|what|where|when|who|whom|whose|how)\b)"
        rf"(?:{verbs} [^\s?][^?]{{0,300}}|{bare_verbs})\?$"
    )
    return _Patterns(
        markers=tuple(m.lower() for m in cues.get("syntax_markers", [])),
        refuse=phrases("refuse"),
        refuse_exceptions=phrases("refuse_exceptions"),
        ask=phrases("ask"),
        consent=phrases("consent"),
        consent_if_plan=phrases("consent_if_plan"),
        offer=phrases("offer"),
        completion=phrases("completion"),
        note=(
            re.compile(r"^(?:also,? |and |just |but )?(?:please )?" + alternation(cues["note_markers"]) + r"\b")
            if cues.get("note_markers")
            else None
        ),
        user_action=phrases("user_action"),
        bare_action_question=bare_action_question,
        imperative_question=imperative_question,
        action_verb=re.compile(verbs),
        action_statement=re.compile(rf"\b(?:{verbs})(?:s|es|ing)?\b"),
        plan=plan,
        consent_verb=consent_verb,
        blocked=re.compile(
            r"(?:\b(?:without|until|unless|(?:because|since|as) (?=i do not know\b|i do not have (?:the|your)\b"
            rf"|{_NOT_TOLD}))|[\u2014\u2013:] (?={_NOT_TOLD}))"
            r"(?P<tail>[^.?!;]{0,80})"
        ),
        capability=re.compile(r"\b" + alternation(cues.get("capability_nouns", ["function"])) + r"\b"),
        consent_noun=re.compile(
            r"\byour (?:explicit |express )?" + alternation(cues.get("consent_nouns", ["confirmation"])) + r"\b"
        ),
        info=re.compile(r"\b" + alternation(list(_INFO_WORDS) + cues.get("value_nouns", [])) + r"\b"),
        action_noun=re.compile(r"\b" + action_nouns + r"\b"),
        value_noun=re.compile(r"\b" + value_nouns + r"\b"),
    )


def _indexed(entries: tuple[str, ...]) -> IndexedCues | None:
    """A cue list (phrases and ``re:`` entries) behind a word index; ``None`` when empty."""
    if not entries:
        return None
    return _indexed_sources(tuple(entry_pattern(entry) for entry in entries))


@lru_cache(maxsize=512)
def _indexed_sources(sources: tuple[str, ...]) -> IndexedCues:
    """Built once per distinct list (every classifier shares the built-in lists)."""
    return IndexedCues(sources, _alternation_of(sources))


def _alternation_of(sources: Sequence[str]) -> re.Pattern[str]:
    """One regex matching what any source matches, for ``sub`` and match objects.

    ``re`` factors a common leading ``\\b`` out of an alternation; an entry without
    it ("(y/n)") defeats that for the whole list, so such entries go into a second
    group.
    """
    bounded = [src for src in sources if src.startswith((r"\b", r"(?:\b"))]
    others = [src for src in sources if not src.startswith((r"\b", r"(?:\b"))]
    return re.compile("|".join(f"(?:{'|'.join(group)})" for group in (bounded, others) if group))


def _search(cues: IndexedCues | None, text: str, words: frozenset[Key]) -> bool:
    return cues is not None and cues.search(text, words)


_CONTRACTIONS = (
    ("can't", "cannot"),
    ("won't", "will not"),
    ("shan't", "shall not"),
    ("isn't", "is not"),
    ("aren't", "are not"),
    ("wasn't", "was not"),
    ("weren't", "were not"),
    ("doesn't", "does not"),
    ("don't", "do not"),
    ("didn't", "did not"),
    ("haven't", "have not"),
    ("hasn't", "has not"),
    ("hadn't", "had not"),
    ("couldn't", "could not"),
    ("wouldn't", "would not"),
    ("shouldn't", "should not"),
    ("mustn't", "must not"),
)
_CONTRACTION_RE = re.compile("|".join(re.escape(short) for short, _ in _CONTRACTIONS))
_EXPANSION = dict(_CONTRACTIONS)


def expand_contractions(text: str) -> str:
    """ "isn't" -> "is not", "can't" -> "cannot"...: one spelling for the cues to match.

    Applied to folded text and to every cue entry (plain or regex) alike, so a cue
    written either way matches both spellings.
    """
    if "n't" not in text:  # every contraction has it
        return text
    return _CONTRACTION_RE.sub(lambda m: _EXPANSION[m.group(0)], text)


#: Longer texts are read as their first 40,000 and last 20,000 characters (a refusal
#: usually opens an emission, a question closes it); keeps time linear and bounded.
MAX_ANALYSED_CHARS = 60_000
#: The characters :func:`fold_quotes` rewrites: most non-ASCII emissions hold none of them.
_FOLDABLE_QUOTE = re.compile("[" + "".join(re.escape(chr(code)) for code in QUOTE_FOLD) + "]")


def clean_for_cues(text: str) -> list[str]:
    """Sentences of ``text`` with code, URLs, block quotes and long quoted echoes removed, folded."""
    if len(text) > MAX_ANALYSED_CHARS:
        text = text[:40_000] + "\n" + text[-20_000:]
    if not text.isascii():
        if any(opener in text for opener in _OTHER_QUOTE_OPENERS):
            text = _OTHER_QUOTE_SPAN.sub(_mask_long_quote, text)
        if _FOLDABLE_QUOTE.search(text):  # a C-level scan; str.translate walks every character in Python objects
            text = fold_quotes(text)
    # Each rewrite runs only when its trigger character is present: most emissions are
    # one or two plain sentences, and every skipped scan is time saved.
    if "*" in text or "_" in text or "~" in text:
        text = _EMPHASIS.sub("", text)
    if "<" in text:
        text = REASONING_BLOCK.sub(" ", text)
    if "`" in text:
        text = _INLINE_CODE.sub(" code ", _CODE_FENCE.sub(" ", text))
    if "http" in text or "www." in text:
        text = _URL.sub(" link ", text)
    if ">" in text:
        text = _mask_blockquotes(text)
    if ":" in text and _REPORTED_SPEECH_HINT.search(text):
        text = _REPORTED_SPEECH.sub(_mask_reported_speech, text)
    if '"' in text:
        text = _QUOTED.sub(_mask_long_quote, text)
    if "'" in text:
        text = _SINGLE_QUOTED.sub(_mask_long_quote, text)
    text = expand_contractions(text.lower())
    if "\n" in text and (":" in text or "/" in text):
        text = _mask_drafted_lines(text)
    if _irregular_spaces(text):
        text = _SPACES_IN_LINE.sub(" ", text)
    sentences = (part.strip() for line in text.split("\n") for part in _split_line(line))
    return [s for s in sentences if s]


def _irregular_spaces(text: str) -> bool:
    """Could collapsing runs of in-line whitespace to one space change ``text``?

    The rewrite replaces every single space by itself too, and that costs more than
    these ``in`` tests on ASCII text; other text gets one scan for what the rewrite changes
    (a space other than " " and "\n", or two in a row).
    """
    if not text.isascii():
        return _IRREGULAR_SPACE.search(text) is not None
    if "  " in text:
        return True
    return any(space in text for space in _OTHER_ASCII_SPACES)


def _split_line(line: str) -> list[str]:
    if line.isascii():
        if "." not in line and "?" not in line and "!" not in line:
            return [line]  # no sentence break without one of them
        parts = _SENTENCE_BREAK.split(line)
    else:
        parts = (_SENTENCE_OR_EMOJI_BREAK if _EMOJI_CHAR.search(line) else _SENTENCE_BREAK).split(line)
    if len(parts) > 1:
        if _LIST_NUMBER.fullmatch(parts[0].strip()):
            parts[:2] = [parts[0] + " " + parts[1]]
        if "." in line:
            parts = _glue_abbreviations(parts)
    return parts


def _glue_abbreviations(parts: list[str]) -> list[str]:
    """Join a part that ends in an abbreviation ("... with dr.") to the part after it."""
    glued: list[str] = []
    carry = ""
    for part in parts:
        part = carry + part if carry else part
        if part.endswith(".") and _ends_in_abbreviation(part):
            carry = part + " "
            continue
        carry = ""
        glued.append(part)
    if carry:
        glued.append(carry.rstrip())
    return glued


def _ends_in_abbreviation(part: str) -> bool:
    words = part[:-1].rsplit(None, 1)
    return bool(words) and words[-1].lstrip("([{\"'") in _ABBREVIATIONS


#: The longest closing question read as a consent check after a statement naming an action.
_SHORT_CHECK_CHARS = 40


class _Reading:
    """One emission being classified: its sentences, their words, and emission-wide facts
    (a stated plan, a completed action), each computed once and only when a rule asks."""

    __slots__ = ("_action", "_completion", "_plan", "_plans", "p", "sentences", "words")

    def __init__(self, p: _Patterns, sentences: list[str]) -> None:
        self.p = p
        self.sentences = sentences
        self.words = [indexed_keys(sentence) for sentence in sentences]
        self._plans: list[bool | None] = [None] * len(sentences)
        self._plan: bool | None = None
        self._completion: bool | None = None
        self._action: bool | None = None

    def plan_in(self, index: int) -> bool:
        """Does this sentence state an action the agent is about to take?"""
        known = self._plans[index]
        if known is None:
            known = self._plans[index] = self.p.plan.search(self.sentences[index], self.words[index])
        return known

    @property
    def plan(self) -> bool:
        """Does any sentence state a plan? (Cached: asked once per sentence, linear overall.)"""
        if self._plan is None:
            self._plan = any(self.plan_in(index) for index in range(len(self.sentences)))
        return self._plan

    def consent_context(self, sentence: str) -> bool:
        """May a plan-dependent consent cue in ``sentence`` ask consent? After a plan, always; after
        a statement naming an action, only a short closing check ("OK?", "Sound okay?"), so that
        "I can confirm that your address was saved" stays a statement."""
        return self.plan or (len(sentence) <= _SHORT_CHECK_CHARS and self.plan_or_action)

    @property
    def plan_or_action(self) -> bool:
        """A plan, or a statement naming a consequential action ("Delete notes.txt. Execute?",
        "Moving the appointment to 3pm. OK?"): the context in which a bare "OK?" asks consent."""
        if self._action is None:
            self._action = self.plan or any(
                "?" not in sentence and self.p.action_statement.search(sentence) is not None
                for sentence in self.sentences
            )
        return self._action

    @property
    def completion(self) -> bool:
        """Does the emission report an action as done ("has been cancelled", "I've posted")?"""
        if self._completion is None:
            self._completion = any(
                _search(self.p.completion, sentence, words) for sentence, words in zip(self.sentences, self.words)
            )
        return self._completion


class _LanguageRulesOnDemand:
    """Each language's rules, compiled when the first text in that language arrives.

    Compiling the seven built-in languages costs about 0.4 s of CPU, which every command
    paid at start even on English-only input (``bench/cli_latency.py``); a language
    nobody writes in is now never compiled. Two threads that race compile it twice, harmlessly.
    """

    def __init__(self, cues: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
        self._cues = cues
        self._compiled: dict[str, LanguageRules] = {}

    def get(self, code: str) -> LanguageRules | None:
        rules = self._compiled.get(code)
        if rules is None and code in self._cues:
            rules = self._compiled[code] = LanguageRules(code, self._cues[code])
        return rules


class DefaultClassifier:
    """Callable ``(text, has_calls) -> ActionClass`` with tooldiag's default rules."""

    name = "default"

    def __init__(self, extra_cue_files: Sequence[Path] = (), *, learned: bool = False) -> None:
        #: Whether the learned text model may override weak rule findings (:meth:`learned_decision`).
        #: Off in the registered scheme: on batches c and d it raised accuracy but lowered the
        #: recall of ``other`` and broke pinned phrasings (docs/diagnostic.md, "A learned model ...").
        #: A user's ``--cues`` extension has the last word: with extension files the model stays off.
        self.learned = learned and not extra_cue_files
        if self.learned:
            self.name = "default+learned"  # reports and provenance name the combination (and its weights)
        base = load_builtin("default")
        #: The extension files, named in reports (and hashed into their cue digest).
        self.cue_files: tuple[str, ...] = tuple(str(path) for path in extra_cue_files)
        extensions = [read_extension(Path(path), base.keys()) for path in extra_cue_files]
        self.cues = merge_cues(base, extensions)
        self._p = _compile(self.cues)
        # Other languages: cues/lang/<code>.json plus the extensions' "languages" (docs: "Languages").
        builtin = {code: load_builtin_language(code) for code in builtin_languages()}
        self.language_cues = merge_language_cues(builtin, extensions)
        self._language_rules = _LanguageRulesOnDemand(self.language_cues)
        self.languages: frozenset[str] = frozenset({"en", *self.language_cues})

    # -- public --------------------------------------------------------------
    def __call__(self, text: Any, has_calls: bool) -> ActionClass:
        return highest_priority(self.signals(text, has_calls))

    def signals(self, text: Any, has_calls: bool = False) -> frozenset[ActionClass]:
        """Every class the emission shows evidence of (multi-label; ``{}`` means other).

        ``classify`` keeps the highest-priority one; callers that need to know
        whether, say, a consent request sits beside a partial refusal read this set.
        """
        if has_calls:
            return frozenset({ActionClass.TOOL_CALL})
        if isinstance(text, (list, dict)):  # a raw BFCL emission that was never decoded
            if structured_call_names(text):
                return frozenset({ActionClass.TOOL_CALL})
            return frozenset()
        if text is None:
            return frozenset()
        if not isinstance(text, str):
            text = str(text)
        if not text.strip():
            return frozenset()
        if text_holds_tool_call(text, self._p.markers):
            return frozenset({ActionClass.TOOL_CALL})
        found = self.rule_signals(text)
        decision = self.learned_decision(text, found) if self.learned else None
        if decision is not None:
            return frozenset() if decision[0] is ActionClass.OTHER else frozenset({decision[0]})
        return found

    def rule_signals(self, text: str) -> frozenset[ActionClass]:
        """What the hand-written rules alone find in a text emission that holds no tool call."""
        language = detect_language(text)
        if language != "en" and language != UNDETERMINED:
            rules = self._language_rules.get(language)
            # no cue data for this language: structural rules only (a "?" outside quotes asks)
            return rules.signals(text) if rules else structural_signals(text)
        return self._text_signals(clean_for_cues(text))

    def learned_decision(self, text: str, found: frozenset[ActionClass]) -> tuple[ActionClass, float] | None:
        """The learned model's class and probability where it overrides the rules, else ``None``.

        The rules are weakest when they find nothing (other) or only a question (ask): on
        unseen rows most of their misses are refusals and consent requests read that way
        (docs/diagnostic.md, "A learned model beside the rules"). There, and only there, a
        different class the model gives at least :data:`LEARNED_THRESHOLD` probability wins;
        explicit refuse and confirm findings of the rules stand.
        """
        rule_class = highest_priority(found)
        if rule_class is not ActionClass.OTHER and rule_class is not ActionClass.ASK:
            return None
        label, probability = shipped_model().predict(text)
        if label == rule_class.value or probability < LEARNED_THRESHOLD:
            return None
        return ActionClass(label), probability

    def explain(self, text: Any, has_calls: bool = False) -> Explanation:
        """Why this emission gets its class: rule, cue, sentence, language (:mod:`tooldiag.classify.explain`).

        The label is ``self(text, has_calls)``; the reason comes from a separate traced pass
        (:mod:`tooldiag.classify.default_explain`), so classifying pays nothing for it.
        """
        from tooldiag.classify.default_explain import explain_default

        return explain_default(self, text, has_calls)

    def language_of(self, text: str) -> str:
        """ISO 639-1 code of ``text``'s language (``"und"``: too little evidence, read as English)."""
        return detect_language(text)

    # -- internals -----------------------------------------------------------
    def _text_signals(self, sentences: list[str]) -> frozenset[ActionClass]:
        r = _Reading(self._p, sentences)
        found: set[ActionClass] = set()
        generic_blocks = 0
        reported = False  # an earlier sentence stated a result (no question, no request, no plan)
        for index in range(len(sentences)):
            kind = self._refusal(r, index)
            if kind == "generic":
                generic_blocks += 1
            elif isinstance(kind, ActionClass):
                found.add(kind)
            request = self._request(r, index, reported)
            found |= request
            if not reported and kind is None and not request and "?" not in sentences[index]:
                reported = not r.plan_in(index)
        if generic_blocks:
            # "I can't proceed." asks when the emission requests information, else refuses.
            found.add(ActionClass.ASK if ActionClass.ASK in found else ActionClass.REFUSE)
        return frozenset(found)

    def _refusal(self, r: _Reading, index: int) -> ActionClass | str | None:
        p, sentence, words = r.p, r.sentences[index], r.words[index]
        if not _search(p.refuse, sentence, words):
            return None
        scrubbed = sentence
        if p.refuse_exceptions is not None and p.refuse_exceptions.search(sentence, words):
            scrubbed = p.refuse_exceptions.pattern.sub(" ", sentence)
            words = indexed_keys(scrubbed)
            if not _search(p.refuse, scrubbed, words):
                return None
        if r.completion and self._policy_note(p, scrubbed, words):
            return None
        if self._third_party_inability(p, scrubbed):
            return None
        blocked = p.blocked.search(scrubbed)
        if blocked:
            tail = blocked.group("tail")
            if p.consent_noun.search(tail) or _CONSENT_TAIL.search(tail):
                return ActionClass.CONFIRM
            if not p.capability.search(tail) and not _POLICY.search(tail):
                # blocked on something the user can supply: ask when it names information,
                # and otherwise ask only if the emission asks for it ("... Which card?")
                return ActionClass.ASK if p.info.search(tail) else "generic"
        if (
            _GENERIC_BLOCK.search(scrubbed)
            and not p.capability.search(scrubbed)
            and not _POLICY.search(scrubbed)
            and not (p.refuse and p.refuse.pattern.search(_GENERIC_BLOCK.sub(" ", scrubbed)))
        ):
            return "generic"
        return ActionClass.REFUSE

    def _policy_note(self, p: _Patterns, sentence: str, words: frozenset[Key]) -> bool:
        """A general rule stated beside a completed action ("Note: orders can't be cancelled once
        shipped"): information about the policy, not a refusal of the request that just succeeded.

        Impersonal (no first person, no apology) and either introduced by a note marker or
        about a bare plural ("Items that have shipped can't be cancelled, but this one ...").
        """
        if _FIRST_PERSON_OR_REGRET.search(sentence):
            return False
        return bool((p.note and p.note.search(sentence)) or _GENERIC_PLURAL_SUBJECT.match(sentence))

    def _third_party_inability(self, p: _Patterns, sentence: str) -> bool:
        """ "New hires can't overhear conversations": a general statement of what a group cannot do
        (content of a summary or an explanation), not the agent declining anything.

        Impersonal, about a bare plural, and the verb is active and not a consequential action:
        "Basic economy tickets can't be changed" and "Customers can't cancel after 24 hours"
        stay policy refusals.
        """
        if _FIRST_PERSON_OR_REGRET.search(sentence):
            return False
        if not _GENERIC_PLURAL_SUBJECT.match(_LEAD_LABEL.sub("", sentence, count=1)):
            return False
        inability = _ACTIVE_INABILITY.search(sentence)
        if inability is None or p.action_verb.fullmatch(inability.group("verb")):
            return False
        rest = sentence[: inability.start()] + " " + sentence[inability.end() :]
        return not (p.refuse is not None and p.refuse.pattern.search(rest))

    def _request(self, r: _Reading, index: int, reported: bool) -> set[ActionClass]:
        """Ask / consent evidence in one sentence."""
        p, sentence, words = r.p, r.sentences[index], r.words[index]
        out: set[ActionClass] = set()
        question = "?" in sentence
        if question and _BARE_CONSENT.match(sentence):
            return {ActionClass.CONFIRM}
        # "Would you like me to set another reminder as well?" offers more even with no result before it
        additional = _ADDITIONAL.search(sentence) if question else None
        if (
            question
            and (reported or (additional and " or " not in sentence))
            and _OFFER_SHAPED.search(sentence)
            and not _search(p.consent, sentence, words)
        ):
            # After a result, "Would you like the forecast too?" is an offer; after a completed
            # action, so is "Would you like to check metrics or schedule another post?".
            if r.completion or additional:
                return out
            if not (p.consent_verb.search(sentence, words) or _CHOICE_QUESTION.search(sentence)):
                return out
        # A wh-question or a choice between options asks, even when it names an
        # action ("Which flight would you like to change?"): no consent evidence.
        choice = question and bool(_CHOICE_QUESTION.search(sentence)) and not _CONSENT_OR_HOLD.match(sentence)
        open_question = question and bool(_WH_QUESTION.search(sentence) or choice or _CHOICE_AMONG.search(sentence))
        if not question and index == len(r.sentences) - 1 and unmarked_question(sentence):
            out.add(ActionClass.ASK)
        confirm_kind = self._confirm_object(r, index) if "confirm" in sentence else None
        if confirm_kind is not None:
            out.add(confirm_kind)
        offer = question and _search(p.offer, sentence, words)
        conditional_offer = "if you" in sentence and bool(_CONDITIONAL_OFFER.search(sentence))
        if open_question:
            if not offer or choice or _WHICH.search(sentence):
                out.add(ActionClass.ASK)
        elif not conditional_offer and (
            _search(p.consent, sentence, words)
            or p.consent_verb.search(sentence, words)
            or (confirm_kind is None and _search(p.consent_if_plan, sentence, words) and r.consent_context(sentence))
            or (p.bare_action_question.search(sentence) and r.plan_or_action)
            or (question and p.imperative_question.match(sentence))
        ):
            out.add(ActionClass.CONFIRM)
        if _search(p.ask, sentence, words):
            out.add(ActionClass.ASK)
        if (
            question
            and not open_question
            and not out
            and not offer
            and not conditional_offer
            and not self_answered(r.sentences, index)
        ):
            out.add(ActionClass.ASK)
        if out and not question and _search(p.user_action, sentence, words):
            out.clear()  # "Please confirm the payment in your app": the user acts, the agent waits for nothing
        return out

    def _confirm_object(self, r: _Reading, index: int) -> ActionClass | None:
        """ "Confirm X": a value to check (ask) or an action to approve (consent)."""
        p, sentence, plan = r.p, r.sentences[index], r.plan
        match = _CONFIRM_REQUEST.search(sentence)
        if not match:
            return None
        opener = _RECAP_OPENER.match(sentence)
        if opener and match.start() < opener.end():
            return None  # "Just to confirm before I book: ...": a recap; other rules read the sentence
        if _STATED_CONFIRMATION.search(sentence):
            return None  # "This email is to confirm that your line has been reactivated": a notice
        tail = match.group("tail")
        if _CONSENT_OBJECT.match(tail):
            return ActionClass.CONFIRM
        if _FACT_CHECK.search(sentence):
            return ActionClass.ASK  # "confirm that the line you wish to modify is the one ending in 2287"
        first_word = tail.split(maxsplit=1)[0] if tail.strip() else ""
        if first_word in _OPEN_CONFIRM_WORDS:
            return ActionClass.ASK  # "Could you confirm which order has the broken item?": a question
        if first_word.endswith("ing") and p.action_verb.fullmatch(first_word):
            return ActionClass.CONFIRM  # "confirm returning the lamp": approve an action
        if p.value_noun.search(tail):
            return ActionClass.ASK
        if p.action_noun.search(tail):
            return ActionClass.CONFIRM
        if not tail.strip():
            # "Please confirm." / "Can you confirm?": consent after an action plan; else the
            # question rule (if any) decides.
            return ActionClass.CONFIRM if plan else None
        if plan or _search(p.consent, sentence, r.words[index]):
            return ActionClass.CONFIRM  # "Before I issue the refund, please confirm: $23.50 back to ...": the action
        return ActionClass.ASK


@lru_cache(maxsize=32)
def _default_with(cue_files: tuple[str, ...]) -> DefaultClassifier:
    return DefaultClassifier([Path(path) for path in cue_files])


@scheme("default")
def default_scheme(options: SchemeOptions) -> DefaultClassifier:
    """tooldiag's rules extended by ``options.cue_files``; built once per set of cue files."""
    return _default_with(tuple(str(path) for path in options.cue_files))


@lru_cache(maxsize=1)
def _default_learned() -> DefaultClassifier:
    return DefaultClassifier(learned=True)


@scheme("default+learned")
def default_learned_scheme(options: SchemeOptions) -> DefaultClassifier:
    """The rules with the learned text model deciding weak ask/other readings (docs/diagnostic.md,
    "A learned model beside the rules"): more accurate on never-tuned text, slower, and it takes
    no cue extensions, since the model would override what the user's cues decide."""
    if options.cue_files:
        raise UserError(
            "--scheme default+learned takes no --cues files (the learned model would override them)",
            hint="use --scheme default with --cues, or drop --cues",
        )
    return _default_learned()
