"""Cue lists matched through a word index: the speed of the ``default`` scheme.

Python's ``re`` tries every branch of an alternation at every word boundary, so one
search of a 70-entry cue list over a short sentence costs several microseconds, and
the default scheme runs a dozen lists over every sentence. Almost every entry can only
match where a particular word stands ("could", "can", "would" for ``\\b(?:could|can|
would) you ...``), so :class:`IndexedCues` keys each entry by the words a match must
start with and, for a sentence, searches only the entries whose key words occur in it
(plus the few entries no key could be derived for). The answer is the same as one
search of the whole alternation; ``tests/classify/test_fuzz.py`` checks that.

Key words come from the parsed regex (``re._parser``, the parser ``re`` itself uses):
the literal word a match must begin with, through groups, alternations and optional
parts, after a word boundary. Anything the walk does not understand (a character class,
a look-around, a word with no boundary before it) leaves the entry unkeyed: always
searched, never missed.
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any


def _sre_module(name: str, legacy: str) -> Any:
    """``re._parser`` / ``re._constants`` (Python >= 3.11), else the older top-level modules."""
    try:
        return importlib.import_module(f"re.{name}")
    except ImportError:  # pragma: no cover - Python < 3.11
        return importlib.import_module(legacy)


_sre_parser = _sre_module("_parser", "sre_parse")
_sre_constants = _sre_module("_constants", "sre_constants")

_AT = _sre_constants.AT
_AT_BOUNDARY = _sre_constants.AT_BOUNDARY
_AT_STARTS = (_sre_constants.AT_BEGINNING, _sre_constants.AT_BEGINNING_STRING)
_LITERAL = _sre_constants.LITERAL
_SUBPATTERN = _sre_constants.SUBPATTERN
_BRANCH = _sre_constants.BRANCH
_REPEATS = tuple(
    getattr(_sre_constants, name)
    for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    if hasattr(_sre_constants, name)
)

#: A word of a sentence as the index sees it (``\w+``: "what's" gives "what" and "s").
WORD = re.compile(r"\w+")
_MAX_KEYS = 64
_WORD_CHAR = re.compile(r"\w")


class _NoKey(Exception):
    """The walk met something it cannot reason about: the entry stays unkeyed."""


Key = tuple[str, ...]


def _walk(items: Sequence[Any], done: Key, partial: str, bounded: bool, want: int) -> frozenset[Key]:
    """The first ``want`` words a match of ``items`` can begin with (fewer where unknowable).

    ``done`` holds the words already read, ``partial`` the word being read, ``bounded``
    whether a word may start here (after a boundary or a non-word character).
    """
    for index, (op, av) in enumerate(items):
        rest = list(items[index + 1 :])
        if op is _AT and (av is _AT_BOUNDARY or av in _AT_STARTS):
            if partial:
                if av is not _AT_BOUNDARY:
                    break
                done, partial = (*done, partial), ""  # the word ended at a boundary
                if len(done) == want:
                    return frozenset({done})
            bounded = True
            continue
        if op is _LITERAL and _WORD_CHAR.match(chr(av)):
            if not partial and not bounded:
                break  # a word with no boundary before it may sit inside a longer one
            partial += chr(av)
            continue
        if op is _SUBPATTERN:
            return _walk(list(av[-1]) + rest, done, partial, bounded, want)
        if op is _BRANCH:
            return _union(_walk(list(alt) + rest, done, partial, bounded, want) for alt in av[1])
        if op in _REPEATS and av[0] == 0 and av[1] == 1:
            return _union(
                (_walk(rest, done, partial, bounded, want), _walk(list(av[2]) + rest, done, partial, bounded, want))
            )
        if _only_non_word(op, av, allow_empty=not partial):
            if partial:
                done, partial = (*done, partial), ""  # "please\s+provide": the word ends at the space
                if len(done) == want:
                    return frozenset({done})
            bounded = True
            continue
        break  # an element the walk does not reason about
    else:
        if not partial and done:
            return frozenset({done})
    if done:
        return frozenset({done})
    raise _NoKey


def _only_non_word(op: Any, av: Any, *, allow_empty: bool) -> bool:
    """Does this element match only non-word characters (at least one unless ``allow_empty``)?"""
    if op in _REPEATS:
        low, _high, body = av
        return (
            (low >= 1 or allow_empty) and bool(body) and all(_only_non_word(o, a, allow_empty=False) for o, a in body)
        )
    if op is _sre_constants.IN:
        return bool(av) and all(_non_word_member(kind, value) for kind, value in av)
    return op is _LITERAL and not _WORD_CHAR.match(chr(av))


def _non_word_member(kind: Any, value: Any) -> bool:
    if kind is _sre_constants.CATEGORY:
        return value in (_sre_constants.CATEGORY_SPACE, _sre_constants.CATEGORY_NOT_WORD)
    return kind is _LITERAL and not _WORD_CHAR.match(chr(value))


def _union(parts: Iterable[frozenset[Key]]) -> frozenset[Key]:
    keys: set[Key] = set()
    for part in parts:
        keys |= part
        if len(keys) > _MAX_KEYS:
            raise _NoKey
    return frozenset(keys)


def key_words(pattern: str, want: int = 2) -> frozenset[Key] | None:
    """Word sequences (up to ``want`` words) one of which starts every match; ``None`` when unknown.

    A one-word key is a word of the sentence; a two-word key two consecutive words. When
    the pairs are too many to list ("^(?:paste|upload|...) (?:the|your|...)" gives one pair
    per combination) the entry is keyed by fewer words rather than searched on every sentence.
    """
    try:
        parsed = list(_sre_parser.parse(pattern))
    except (re.error, RecursionError, TypeError, ValueError, OverflowError):
        return None
    for words in range(want, 0, -1):
        try:
            keys = _walk(parsed, (), "", False, words)
        except (_NoKey, RecursionError, TypeError, ValueError, OverflowError):
            continue
        if keys:
            return keys
    return None


class IndexedCues:
    """A list of regex sources searched together; ``search`` is ``any(entry matches)``.

    ``pattern`` is the plain alternation of every entry, for callers that need a match
    object or ``sub``; ``search`` goes through the word index.
    """

    def __init__(self, sources: Sequence[str], pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self._unkeyed: list[re.Pattern[str]] = []
        self._by_key: dict[Key, list[re.Pattern[str]]] = {}
        for source in sources:
            compiled = re.compile(source)
            keys = key_words(source)
            if keys is None:
                self._unkeyed.append(compiled)
                continue
            for key in keys:
                self._by_key.setdefault(key, []).append(compiled)
        self._keys = frozenset(self._by_key)

    def search(self, sentence: str, keys: frozenset[Key]) -> bool:
        """Does any entry match ``sentence``? ``keys`` is :func:`sentence_keys` of it."""
        for compiled in self._unkeyed:
            if compiled.search(sentence):
                return True
        by_key = self._by_key
        for key in self._keys.intersection(keys):  # a C-level walk over the smaller set
            for compiled in by_key[key]:
                if compiled.search(sentence):
                    return True
        return False

    @property
    def unkeyed(self) -> int:
        """How many entries are searched on every sentence (no key word could be derived)."""
        return len(self._unkeyed)


def sentence_keys(sentence: str) -> frozenset[Key]:
    """Every word and every pair of consecutive words of ``sentence``: what the index looks up."""
    words = WORD.findall(sentence)
    return frozenset([(word,) for word in words] + list(itertools.pairwise(words)))
