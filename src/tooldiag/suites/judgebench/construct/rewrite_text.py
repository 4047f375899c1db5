"""Text rules shared by the reference rewriter and the reference meta-judge (``ref/rewrite``, ``ref/metajudge``).

Why rules and not a model: the offline pipeline needs rewrites and votes with known properties.
The rewriter only *removes or adds* words from fixed alphabetic lists (openers, politeness,
sequencing words, leading verbs), and turns parameter names into plain words, so it can never
drop a number, an id or an e-mail address; the meta-judge checks exactly those facts. Both are
deterministic: a template is chosen by a hash of the query (hashlib, never ``hash()``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

#: Numbers (``18.5``, ``1,250``, the digits of ``ORD-77120``), e-mail addresses and URLs: the facts
#: a rewrite must keep for the calls to stay derivable.
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://\S+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_IDENTIFIER = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b|\b[a-z]+(?:[A-Z][a-z0-9]*)+\b")
_WORD = re.compile(r"[A-Za-z']+")

#: Verbs a tool-style instruction starts a clause with; the hard rewrite drops them (vaguer).
LEADING_VERBS = (
    "look up",
    "pull up",
    "check",
    "get",
    "find",
    "list",
    "fetch",
    "retrieve",
    "open",
    "create",
    "book",
    "send",
    "notify",
    "update",
    "cancel",
    "schedule",
    "assign",
    "escalate",
    "calculate",
    "estimate",
    "reroute",
    "allocate",
    "submit",
    "issue",
    "approve",
    "reserve",
    "add",
    "set",
    "generate",
    "verify",
    "search",
    "compute",
    "run",
    "make",
    "tell",
    "let",
    "see",
    "give",
    "put",
    "change",
    "file",
    "log",
    "record",
    "register",
    "request",
    "transfer",
)
#: Explicit step words: an easy query spells the plan out with them.
STEP_WORDS = ("then", "first", "next", "finally", "afterwards", "after that", "in parallel", "before", "once")

_MEDIUM_OPENERS = (
    "Hi! Could you {q}? Thanks a lot.",
    "Hey, I need a hand: can you {q}?",
    "Quick favour, please {q}.",
    "When you get a chance, would you {q}? Appreciate it.",
)
_HARD_ENDINGS = ("— you know what to do.", "— sort that out.", "; handle it.", ", whatever it takes.")
_CONVERSATIONAL = (
    (re.compile(r",?\s*\band then\b", re.I), ", and once that's done,"),
    (re.compile(r",\s*then\b", re.I), ", and once that's done,"),
    (re.compile(r"\bthen\b", re.I), "and once that's done"),
    (re.compile(r"\bin parallel\b", re.I), "at the same time"),
    (re.compile(r"\blook up\b", re.I), "find"),
)
_POLITE = re.compile(
    r"\b(hi|hey|please|thanks a lot|thanks|appreciate it|quick favour|when you get a chance|"
    r"could you|can you|would you|i need a hand|and once that's done|at the same time|"
    r"and then|then|first|next|finally|after that)\b[!:,.?]?",
    re.I,
)


def _pick(options: tuple[str, ...], text: str, salt: str) -> str:
    digest = hashlib.sha256(f"{salt}\n{text}".encode()).digest()
    return options[digest[0] % len(options)]


def facts(text: str) -> set[str]:
    """Numbers (separators dropped), e-mail addresses and URLs in ``text``, lower-cased."""
    found = {m.group(0).lower().rstrip(".") for m in _EMAIL.finditer(text)}
    found |= {m.group(0).lower().rstrip(".,") for m in _URL.finditer(text)}
    rest = _URL.sub(" ", _EMAIL.sub(" ", text))
    found |= {m.group(0).replace(",", "") for m in _NUMBER.finditer(rest)}
    return found


def numbers(text: str) -> set[str]:
    """The numbers of ``text`` as digit strings (``1,250`` -> ``1250``), e-mail addresses included as they are."""
    return {f for f in facts(text) if f[0].isdigit()}


def missing_facts(source: str, rewrite: str) -> list[str]:
    """Facts of ``source`` absent from ``rewrite`` (an e-mail may appear anywhere, a number as a number)."""
    kept = facts(rewrite)
    return sorted(f for f in facts(source) if f not in kept)


def parameter_mentions(text: str, parameter_names: Iterable[str]) -> list[str]:
    """Parameter names written as such in ``text``: an identifier (``employee_id``, ``dueDate``) of the
    schemas, or any parameter name followed by ``=`` or ``:`` (``priority: high``)."""
    names = set(parameter_names)
    hits = {m.group(0) for m in _IDENTIFIER.finditer(text) if m.group(0) in names}
    for name in names:
        if re.search(rf"\b{re.escape(name)}\s*[=:]", text):
            hits.add(name)
    return sorted(hits)


def specificity(text: str, parameter_names: Iterable[str] = ()) -> int:
    """How explicitly ``text`` spells out a plan: step words, leading tool verbs, parameter names, quotes."""
    lowered = f" {text.lower()} "
    score = sum(len(re.findall(rf"\b{re.escape(w)}\b", lowered)) for w in STEP_WORDS)
    for clause in re.split(r"[,;.!?]|\band\b", lowered):
        words = clause.strip()
        score += any(words.startswith(v + " ") for v in LEADING_VERBS)
    score += len(parameter_mentions(text, parameter_names))
    score += len(re.findall(r"'[^']+'|\"[^\"]+\"", text))
    return score


def word_count(text: str) -> int:
    return len(_WORD.findall(text)) + len(_NUMBER.findall(text))


def normalized(text: str) -> str:
    """Case, spacing and final punctuation folded: two texts equal here are the same query."""
    return re.sub(r"\s+", " ", text.casefold()).strip().rstrip(".!?").strip()


def _plain_parameter_names(text: str, parameter_names: Iterable[str]) -> str:
    names = sorted(set(parameter_names), key=len, reverse=True)
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}\s*[=:]\s*", "", text)
    for name in names:
        words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").lower()
        text = re.sub(rf"\b{re.escape(name)}\b", words, text) if ("_" in name or words != name) else text
    return text


def _lower_first_verb(text: str) -> str:
    first = text.split(" ", 1)[0].lower()
    if any(v.split(" ")[0] == first for v in LEADING_VERBS) and text[:1].isupper():
        return text[:1].lower() + text[1:]
    return text


def medium_rewrite(query: str, parameter_names: Iterable[str] = ()) -> str:
    """A conversational paraphrase: parameter names as plain words, step words softened, a friendly frame."""
    text = _plain_parameter_names(query.strip(), parameter_names)
    for pattern, replacement in _CONVERSATIONAL:
        text = pattern.sub(replacement, text)
    text = re.sub(r",\s*,", ",", re.sub(r"\s+", " ", text)).strip().rstrip(".!?")
    return _pick(_MEDIUM_OPENERS, query, "medium").format(q=_lower_first_verb(text))


def hard_rewrite(query: str, parameter_names: Iterable[str] = ()) -> str:
    """A vaguer request: politeness, step words and each clause's leading verb dropped, every number kept."""
    text = _plain_parameter_names(query.strip(), parameter_names)
    text = _POLITE.sub(" ", text)
    clauses = [c.strip() for c in re.split(r"[,;]\s|\band\b|\.\s", text) if c.strip(" .!?")]
    kept: list[str] = []
    for clause in clauses:
        body = clause.strip(" .!?")
        lowered = body.lower()
        for verb in sorted(LEADING_VERBS, key=len, reverse=True):
            if lowered.startswith(verb + " "):
                body = body[len(verb) + 1 :]
                break
        body = re.sub(r"^(for|to|up|out|me|him|her|them|us|it)\b\s*", "", body, flags=re.I).strip()
        if body:
            kept.append(body)
    core = ", ".join(kept) or query.strip().rstrip(".!?")
    core = core[:1].upper() + core[1:]
    ending = _pick(_HARD_ENDINGS, query, "hard")
    return f"{core.rstrip(' ,;')}{'' if ending[0] in ',;' else ' '}{ending}"
