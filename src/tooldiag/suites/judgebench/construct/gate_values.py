"""The text rules the quality gates share: how a value is "stated" in a query and what counts as one.

Two gates ask the same question from opposite sides. Argument sufficiency asks whether each argument
value is stated in the query (or produced earlier); grounding asks whether each value the query
states is used by some argument. Both need one definition of "the same value" that survives the
ordinary ways a person writes it: case (``High`` = ``high``), thousands separators and currency
signs (``$12,500`` = 12500), trailing zeros (``642.30`` = 642.3), percentages (``15%`` = 15 or
0.15), number words (``twenty-five`` = 25, ``a dozen`` = 12, ``two hundred`` = 200) and dates
(``November 18, 2025`` = ``2025-11-18``). Everything here is a pure function of its text, so the
gates are deterministic and need no model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"thousand": 1_000, "million": 1_000_000}
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"

#: Digits as people write them: 12500, 12,500, $12,500.00, 1.5k, 15%. Not inside a word or id
#: (``v2.14.1`` and ``E-20417`` hold no free-standing number for grounding; ids are values of their own).
_NUMBER = re.compile(r"(?<![\w.])(-?)\$?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(k\b|%)?", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?)?\b")
_MONTH_DAY_YEAR = re.compile(_MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.IGNORECASE)
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+(\d{4})\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r"\s+(\d{4})\b", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_QUOTED = (
    re.compile(r'"([^"\n]+)"'),
    re.compile(r"\u201c([^\u201d\n]+)\u201d"),
    re.compile(r"\u2018([^\u2019\n]+)\u2019"),
    re.compile(r"(?<!\w)'([^'\n]+)'(?!\w)"),
)
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-._/:#][A-Za-z0-9]+)*")
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$", re.IGNORECASE)
_NUMBER_WITH_UNIT = re.compile(r"^\d+(?:\.\d+)?[a-z]{1,3}$", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+(?:[-._@][a-z0-9]+)*")

#: Words that carry no content: a free-text argument is judged by the others.
_STOPWORD_TEXT = (
    "a an the and or but of to for in on at by with from as into onto is are was were be been being it its this "
    "that these those has have had will would can could should please we our us your you my i me he she him her "
    "his they them their not no so than then there here if up out about over via per"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def fold(text: str) -> str:
    """Casefolded, straight quotes, single spaces: the form every comparison uses."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.casefold().split())


def contains_phrase(folded_text: str, folded_phrase: str) -> bool:
    """Whether ``folded_phrase`` occurs in ``folded_text`` as whole words (``high`` in ``high-priority``)."""
    if not folded_phrase:
        return False
    return re.search(r"(?<!\w)" + re.escape(folded_phrase) + r"(?!\w)", folded_text) is not None


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def same_number(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def numbers_in(text: str) -> list[float]:
    """Every number ``text`` states, in digits or in words (see the module docstring)."""
    found: list[float] = []
    for match in _NUMBER.finditer(text):
        sign, digits, suffix = match.group(1), match.group(2), (match.group(3) or "").lower()
        value = float(digits.replace(",", "")) * (-1 if sign else 1)
        if suffix == "k":
            value *= 1000
        found.append(value)
        if suffix == "%":
            found.append(value / 100)
    found.extend(_word_numbers(fold(text)))
    return found


def _word_numbers(folded: str) -> list[float]:
    """Numbers written in words; a word that cannot continue the number before it starts a new one."""
    out: list[float] = []
    total, current, last = 0, 0, ""
    follows = {
        "unit": ("", "tens", "hundred", "scale"),
        "tens": ("", "hundred", "scale"),
        "hundred": ("unit", "tens", "dozen"),
        "dozen": ("", "unit", "tens"),
        "scale": ("unit", "tens", "hundred", "dozen"),
    }

    def flush() -> None:
        nonlocal total, current, last
        if last:
            out.append(float(total + current))
        total, current, last = 0, 0, ""

    for token in re.findall(r"[a-z]+|[,.;:!?()]", folded.replace("-", " ")):
        kind = (
            "unit"
            if token in _UNITS
            else "tens"
            if token in _TENS
            else "hundred"
            if token == "hundred"
            else "dozen"
            if token == "dozen"
            else "scale"
            if token in _SCALES
            else ""
        )
        if token == "and" and last:
            continue
        if not kind:
            flush()
            continue
        if last not in follows[kind]:
            flush()
        if kind in ("unit", "tens"):
            current += _UNITS.get(token, 0) + _TENS.get(token, 0)
        elif kind in ("hundred", "dozen"):
            current = (current or 1) * (100 if kind == "hundred" else 12)
        else:
            total, current = total + (current or 1) * _SCALES[token], 0
        last = kind
    flush()
    return out


def dates_in(text: str) -> set[str]:
    """The dates ``text`` states, as ISO strings (``YYYY-MM-DD``, ``YYYY-MM``, ``YYYY-MM-DDTHH:MM``)."""
    found = {m.group(0).replace(" ", "T") for m in _ISO_DATE.finditer(text)}
    for m in _MONTH_DAY_YEAR.finditer(text):
        found.add(f"{m.group(3)}-{_MONTHS[m.group(1).lower()]:02d}-{int(m.group(2)):02d}")
    for m in _DAY_MONTH_YEAR.finditer(text):
        found.add(f"{m.group(3)}-{_MONTHS[m.group(2).lower()]:02d}-{int(m.group(1)):02d}")
    rest = _DAY_MONTH_YEAR.sub(" ", _MONTH_DAY_YEAR.sub(" ", text))
    for m in _MONTH_YEAR.finditer(rest):
        found.add(f"{m.group(2)}-{_MONTHS[m.group(1).lower()]:02d}")
    return found


def words_in(text: str) -> set[str]:
    """Content-bearing tokens of ``text`` (folded; ids and emails stay whole)."""
    return {w for w in _WORD.findall(fold(text)) if w not in STOPWORDS}


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (schemas in user files may be anything)."""
    return value if isinstance(value, dict) else {}


def leaves(value: Any) -> Iterator[Any]:
    """The scalar values inside a JSON value (list elements and object field values, recursively)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item)
    else:
        yield value


@dataclass(frozen=True)
class Candidate:
    """One value a query states: what grounding requires some argument to use."""

    kind: str  # quoted | email | date | id | number
    text: str
    numbers: tuple[float, ...] = ()


def candidate_values(query: str) -> list[Candidate]:
    """The values ``query`` states, most specific first; each span is claimed by one kind only.

    Quoted strings, then emails, dates, ids (a token with a digit and a letter, or digits joined
    by ``-/:``, such as ``E-20417``, ``us-east-1``, ``1-800-555``), then free-standing numbers
    (``18.5``, ``$1,200``, ``15%``, ``220MW``). Ordinals (``3rd``) and number words are language,
    not values, and are not candidates.
    """
    found: list[Candidate] = []
    rest = query

    def claim(pattern: re.Pattern[str], kind: str, group: int = 0) -> None:
        nonlocal rest
        for match in pattern.finditer(rest):
            found.append(Candidate(kind, match.group(group)))
        rest = pattern.sub(" ", rest)

    for pattern in _QUOTED:
        claim(pattern, "quoted", 1)
    claim(_EMAIL, "email")
    for pattern in (_MONTH_DAY_YEAR, _DAY_MONTH_YEAR, _ISO_DATE):
        for match in pattern.finditer(rest):
            found.append(Candidate("date", match.group(0)))
        rest = pattern.sub(" ", rest)
    ids: list[str] = []
    for match in _TOKEN.finditer(rest):
        token = match.group(0)
        if not any(c.isdigit() for c in token) or _ORDINAL.match(token):
            continue
        if _NUMBER_WITH_UNIT.match(token):
            found.append(Candidate("number", token, tuple(numbers_in(token))))
            ids.append(token)
        elif any(c.isalpha() for c in token) or re.search(r"\d[-/:]\d", token):
            found.append(Candidate("id", token))
            ids.append(token)
    for token in ids:
        rest = re.sub(r"(?<![\w.-])" + re.escape(token) + r"(?![\w-])", " ", rest)
    for match in _NUMBER.finditer(rest):
        if rest[match.end() : match.end() + 1].isalpha():
            continue  # an ordinal (3rd) or a number glued to a word: language, not a value
        found.append(Candidate("number", match.group(0), tuple(numbers_in(match.group(0)))))
    return found
