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
a look-around, a word with no boundary before it) leaves the entry unkeyed. An unkeyed
entry whose every match starts with one of a few literal strings (``(?:desea|quiere) que``,
a CJK phrase: no word boundary to key on) is searched only when one of those strings
occurs in the sentence (a C-level ``in`` test, see :func:`literal_starts`); the rest are
searched on every sentence, never missed.
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
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
_ASSERTS = (_sre_constants.ASSERT, _sre_constants.ASSERT_NOT)
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
#: ``bytes.translate`` table: every ASCII character ``WORD`` does not match becomes a space
#: (bytes tables run several times faster than ``str.translate`` with a dict).
_ASCII_NON_WORD = bytes(code if code < 128 and WORD.match(chr(code)) else 32 for code in range(256))
#: The same for UTF-8 bytes of text whose non-ASCII characters are all word characters: bytes >= 128 kept.
_UTF8_NON_WORD = bytes(code if code >= 128 or WORD.match(chr(code)) else 32 for code in range(256))
_WORD_CHAR = re.compile(r"\w")
#: A non-ASCII character that is not a word character ("¿", "«", "’", a no-break space, lone surrogates).
_NON_ASCII_NON_WORD = re.compile(r"[^\w\x00-\x7f]")


class _NoKey(Exception):
    """The walk met something it cannot reason about: the entry stays unkeyed."""


#: One word ("could") or two consecutive words joined by a space ("could you"): words are
#: ``\w+`` runs, so the space is unambiguous, and a string hashes faster than a tuple.
Key = str
_Words = tuple[str, ...]


def _walk(items: Sequence[Any], done: _Words, partial: str, bounded: bool, want: int) -> frozenset[_Words]:
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


def _union(parts: Iterable[frozenset[Any]]) -> frozenset[Any]:
    keys: set[Any] = set()
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
            return frozenset(" ".join(key) for key in keys)
    return None


#: Literal starts longer than this are cut (a shorter start is still one every match has).
_MAX_START = 12


def literal_starts(pattern: str) -> frozenset[str] | None:
    """Literal strings one of which begins every match of ``pattern``; ``None`` when unknown.

    The gate for entries :func:`key_words` cannot key: ``(?:desea|quiere) que`` may match
    inside a longer word and CJK text has no word boundaries, but a match still has to
    start with "desea" or "quiere", so a sentence containing neither cannot match.
    Zero-width elements (boundaries, look-arounds) are stepped over; case-insensitive
    patterns give ``None`` (a literal then matches more than itself).
    """
    try:
        parsed = _sre_parser.parse(pattern)
    except (re.error, RecursionError, TypeError, ValueError, OverflowError):
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    try:
        starts = _starts(list(parsed), "")
    except (_NoKey, RecursionError, TypeError, ValueError, OverflowError):
        return None
    # a start that extends another is implied by it: testing the shorter one is enough
    return frozenset(s for s in starts if not any(o != s and s.startswith(o) for o in starts))


def _starts(items: Sequence[Any], prefix: str) -> frozenset[str]:
    for index, (op, av) in enumerate(items):
        if len(prefix) >= _MAX_START:
            break
        if op is _AT or op in _ASSERTS:
            continue  # zero-width: consumes no character
        if op is _LITERAL:
            prefix += chr(av)
            continue
        rest = list(items[index + 1 :])
        if op is _SUBPATTERN:
            if av[1] or av[2]:
                break  # scoped flags, e.g. (?i:...): a literal may match other characters
            return _starts(list(av[-1]) + rest, prefix)
        if op is _BRANCH:
            return _union(_starts(list(alt) + rest, prefix) for alt in av[1])
        if op in _REPEATS and av[0] == 0 and av[1] == 1:
            return _union((_starts(rest, prefix), _starts(list(av[2]) + rest, prefix)))
        break
    if not prefix:
        raise _NoKey
    return frozenset({prefix})


#: A source that opens with a word boundary and a literal word ("\\bje\\s+ne", "\\bcannot\\b").
_BOUNDED_WORD_START = re.compile(r"\\b(\w+)")


def literal_first(source: str) -> str:
    """``source`` with its leading ``\\b`` moved behind a literal: the same matches, found faster.

    ``re`` finds a pattern fast when it opens with a literal (it scans for that character
    or string in C, and an alternation whose branches all open with one skips by their
    first characters); a leading ``\\b`` hides the literal, so each search of a cue entry
    tried the whole pattern at every position. ``\\b<word>`` becomes ``<word>(?<!\\w.{n})``:
    after the word's ``n`` characters, the look-behind asserts what the boundary did (no
    word character right before the word; the word's characters are word characters, so
    the boundary held there exactly when the character before is not one).
    (``\\b(?:est|sont|c'est)``, the same look-behind in each alternative, measured slower.) An entry
    wrapped whole in ``(?:...)`` is unwrapped first (``"a|b"`` is ``"(?:a|b)"``). Word
    characters in a source are literal; a quantifier after the run ("\\bcould?") keeps
    its character out of the moved word. Anything else is returned as it is.
    """
    inner = _unwrapped(source)
    match = _BOUNDED_WORD_START.match(inner)
    if match is None:
        return source
    word, rest = match.group(1), inner[match.end() :]
    if rest[:1] in ("?", "*", "+", "{"):
        word, rest = word[:-1], word[-1:] + rest
    if not word:
        return source
    return f"{word}(?<!\\w.{{{len(word)}}}){rest}"


def _compiled_literal_first(source: str) -> re.Pattern[str]:
    """:func:`literal_first` of ``source``, compiled (``source`` itself should the rewrite not compile)."""
    try:
        return re.compile(literal_first(source))
    except (re.error, RecursionError, OverflowError):  # pragma: no cover - the rewrite keeps a valid source valid
        return re.compile(source)


def _unwrapped(source: str) -> str:
    """``X`` for a source that is one ``(?:X)`` group as a whole, else ``source``.

    The group's closing parenthesis is found by a scan that steps over escapes and
    character classes; comments (which may hold any character) are left as they are.
    """
    if not (source.startswith("(?:") and source.endswith(")")) or "(?#" in source:
        return source  # (a verbose pattern opens with its "(?x)" flag, so it never starts with "(?:")
    depth, index, in_class = 0, 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += 1
            if source[index : index + 1] == "^":
                index += 1
            if source[index : index + 1] == "]":  # "[]...]", "[^]...]": a leading "]" is literal
                index += 1
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return _unwrapped(source[3:-1]) if index == len(source) - 1 else source
        index += 1
    return source


@lru_cache(maxsize=8192)
def required_literal(pattern: str) -> str:
    """The longest run of literal characters every match of ``pattern`` holds; ``""`` when unknown.

    Read from the pattern's top-level sequence (an element there is matched once by every
    match, and consecutive literal elements match consecutive characters): ``^\\W*[a-z]+,?
    please\\W*$`` gives " please". An entry searched on every sentence is then searched only
    where that string occurs (a C-level ``in`` test). Case-insensitive patterns give ``""``.
    Cached: an entry keyed by many words is gated once per key.
    """
    try:
        parsed = _sre_parser.parse(pattern)
    except (re.error, RecursionError, TypeError, ValueError, OverflowError):
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    best, run = "", ""
    for op, av in parsed:
        if op is _LITERAL:
            run += chr(av)
            best = max(best, run, key=len)
        elif op is _AT or op in _ASSERTS:
            continue  # zero-width: the characters on either side are still consecutive
        else:
            run = ""
    return best


def trie_pattern(literals: Iterable[str]) -> re.Pattern[str]:
    """A regex matching exactly the ``literals``, the longest one where several start at a position.

    The literals are factored into a trie (``je (?:peux|vais)``): an alternation of the
    literals themselves makes the engine try every one at every position, while the trie
    tries one branch per distinct next character. An optional tail (``je(?: peux)?``) is
    greedy, so the match is the longest literal beginning where it starts.
    """
    trie: dict[str, Any] = {}
    for literal in literals:
        node = trie
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = {}  # a literal ends here
    return re.compile(_trie_source(trie))


def _trie_source(node: dict[str, Any]) -> str:
    branches = [re.escape(char) + _trie_source(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in node else body


#: Characters from here on (CJK radicals, kana, Han, Hangul, full-width forms) are CJK.
_CJK_START = "\u2e80"


class CueIndex:
    """A list of regex sources; ``search`` is ``any(entry matches)`` at a fraction of its cost.

    Entries are keyed by word (:func:`key_words`), else gated by literal starts
    (:func:`literal_starts`), else searched on every sentence. With ``leave_unkeyed``
    the last kind, and entries whose starts are CJK, are not searched here but listed in
    ``left_out`` (their positions in ``sources``): for CJK text one alternation of them
    lets the regex engine skip positions by first characters that are rarely there,
    which beats any gate written in Python, so the caller scans them itself.
    """

    def __init__(self, sources: Sequence[str], *, leave_unkeyed: bool = False) -> None:
        #: (a literal every match holds, or "" when none is known; the entry)
        self._unkeyed: list[tuple[str, re.Pattern[str]]] = []
        keyed: dict[Key, list[re.Pattern[str]]] = {}
        self.left_out: list[int] = []
        by_start: dict[str, list[re.Pattern[str]]] = {}
        for position, source in enumerate(sources):
            keys = key_words(source)
            if keys is not None:
                compiled = _compiled_literal_first(source)
                for key in keys:
                    keyed.setdefault(key, []).append(compiled)
                continue
            starts = literal_starts(source)
            if leave_unkeyed and (not starts or any(start[0] >= _CJK_START for start in starts)):
                self.left_out.append(position)
            elif not starts:
                self._unkeyed.append((required_literal(source), re.compile(source)))
            else:
                compiled = re.compile(source)
                for start in starts:
                    by_start.setdefault(start, []).append(compiled)
        #: key -> (a literal every match holds, or ""; entries): see :func:`_gated`
        self._by_key: dict[Key, list[tuple[str, re.Pattern[str]]]] = {
            key: _gated(key, patterns) for key, patterns in keyed.items()
        }
        self._keys = frozenset(self._by_key)
        _register(self._keys)
        # One C-level scan finds the literal starts a sentence holds: a list holds up to ~200 of
        # them ("je peux", "je vais", ...), and one ``in`` test each (even grouped by their first
        # characters) cost several times that scan. The scan's pattern is a trie (see
        # :func:`trie_pattern`): at each position it tries one branch per distinct next
        # character, never one per start. It finds the longest start at each position it
        # stops at; the starts that are prefixes of that one begin there too, so each found
        # start brings the entries of all its prefixes (``_by_found``).
        self._start_scan = trie_pattern(by_start) if by_start else None
        self._by_found: dict[str, tuple[re.Pattern[str], ...]] = {
            start: tuple(
                dict.fromkeys(
                    compiled
                    for prefix, patterns in by_start.items()
                    if start.startswith(prefix)
                    for compiled in patterns
                )
            )
            for start in by_start
        }

    def search(self, sentence: str, keys: frozenset[Key]) -> bool:
        """Does any entry match ``sentence``? ``keys``: :func:`indexed_keys` (or :func:`sentence_keys`) of it."""
        for needed, compiled in self._unkeyed:
            if needed in sentence and compiled.search(sentence):  # ("" is in every sentence)
                return True
        by_key = self._by_key
        for key in self._keys.intersection(keys):  # a C-level walk over the smaller set
            for needed, compiled in by_key[key]:
                if needed in sentence and compiled.search(sentence):  # ("" is in every sentence)
                    return True
        scan = self._start_scan
        if scan is not None:
            found = scan.search(sentence)
            if found is not None:
                return self._search_started(sentence, found, scan)
        return False

    def _search_started(self, sentence: str, found: re.Match[str], scan: re.Pattern[str]) -> bool:
        """The entries of every literal start ``scan`` finds in ``sentence``, from ``found`` on."""
        tried: set[re.Pattern[str]] = set()
        by_found = self._by_found
        at: re.Match[str] | None = found
        while at is not None:
            for compiled in by_found[at.group()]:
                if compiled not in tried:
                    if compiled.search(sentence):
                        return True
                    tried.add(compiled)
            at = scan.search(sentence, at.start() + 1)
        return False

    @property
    def empty(self) -> bool:
        """True when every entry was left out (``leave_unkeyed``): ``search`` can never match."""
        return not self._unkeyed and not self._by_key and self._start_scan is None

    @property
    def unkeyed(self) -> int:
        """How many entries are searched on every sentence (neither a key word nor a literal start)."""
        return len(self._unkeyed)


#: Group references: their numbers and names would change (or clash) in a merged alternation.
_GROUP_REFERENCE = re.compile(r"\\[1-9]|\(\?P[<=]|\(\?<[^=!]")


#: A required literal shorter than this is too common to be worth its ``in`` test.
_MIN_REQUIRED = 3


def _gated(key: Key, patterns: list[re.Pattern[str]]) -> list[tuple[str, re.Pattern[str]]]:
    """The entries of one key, each behind a literal every match of it holds (:func:`required_literal`).

    A key word says where a match may start, not whether the rest is there: "ist" keys
    ``\\b(?:ist|sind)\\b[^.?!]{0,80}\\bausgeschlossen\\b``, and most sentences with "ist"
    lack "ausgeschlossen", which one ``in`` test tells for a fraction of a search. Entries
    with such a literal (at least :data:`_MIN_REQUIRED` characters, not inside the key
    itself) are searched apart, each only where its literal occurs; the others are merged
    into one alternation (:func:`_merged`) and searched whenever the key is there.
    """
    gated: list[tuple[str, re.Pattern[str]]] = []
    rest: list[re.Pattern[str]] = []
    for compiled in patterns:
        needed = required_literal(_unwrapped(compiled.pattern)) if compiled.flags == _PLAIN_FLAGS else ""
        if len(needed) >= _MIN_REQUIRED and needed not in key:
            gated.append((needed, compiled))
        else:
            rest.append(compiled)
    return gated + [("", compiled) for compiled in _merged(rest)]


#: The flags of a pattern compiled without any (``re`` adds UNICODE to every str pattern).
_PLAIN_FLAGS = re.compile("").flags


def _merged(patterns: list[re.Pattern[str]]) -> list[re.Pattern[str]]:
    """The entries of one key as one alternation (one scan of the sentence instead of one each).

    "je ne" keys a dozen French refusals; a sentence holding it was scanned once per entry.
    An alternation matches where any of its branches does, so the answer is the same; lists
    whose entries carry their own flags or group references stay as they are.
    """
    if len(patterns) < 2:
        return patterns
    # entries that open with a literal are merged apart from the rest: one branch without a
    # literal start would hide the others' from the engine (see literal_first)
    literal = [pattern for pattern in patterns if _WORD_CHAR.match(pattern.pattern)]
    if literal and len(literal) < len(patterns):
        return _merged(literal) + _merged([pattern for pattern in patterns if pattern not in literal])
    flags = {pattern.flags for pattern in patterns}
    if len(flags) != 1 or any(_GROUP_REFERENCE.search(pattern.pattern) for pattern in patterns):
        return patterns
    try:
        # no "(?:...)" around each entry: "a|b" is "(?:a)|(?:b)" (alternation binds loosest), and a
        # branch that opens with a literal (:func:`literal_first`) lets the engine skip by it
        return [re.compile("|".join(pattern.pattern for pattern in patterns), flags.pop())]
    except (re.error, RecursionError, OverflowError):
        return patterns


class IndexedCues(CueIndex):
    """A :class:`CueIndex` with ``pattern``, the plain alternation of every entry, for callers
    that need a match object or ``sub``; ``search`` goes through the index."""

    def __init__(self, sources: Sequence[str], pattern: re.Pattern[str]) -> None:
        super().__init__(sources)
        self.pattern = pattern


class _Registry:
    """Every key some :class:`CueIndex` was built with (all lists of all schemes together)."""

    keys: frozenset[Key] = frozenset()


def _register(keys: frozenset[Key]) -> None:
    if not keys <= _Registry.keys:
        _Registry.keys = _Registry.keys | keys
        indexed_keys.cache_clear()  # a cut made before these keys existed would miss them


@lru_cache(maxsize=512)
def indexed_keys(sentence: str) -> frozenset[Key]:
    """:func:`sentence_keys` cut to the keys some index uses: what callers hand to ``search``.

    A sentence has some 40 words and pairs, of which a handful key any entry; cutting them
    once lets each of the dozen lists that look at the sentence intersect a handful of keys
    instead of all 40 (``search`` gives the same answer: the keys it drops key nothing).
    Cached: the English and the other-language paths look at one sentence many times.
    """
    words = _words(sentence)  # (no frozenset of all 40 in between: the cut reads the words and pairs directly)
    return _Registry.keys.intersection(itertools.chain(words, map(" ".join, itertools.pairwise(words))))


def sentence_keys(sentence: str) -> frozenset[Key]:
    """Every word and every pair of consecutive words of ``sentence``: what the index looks up."""
    words = _words(sentence)
    return frozenset(itertools.chain(words, map(" ".join, itertools.pairwise(words))))


def _words(sentence: str) -> list[str]:
    """The ``WORD`` matches of ``sentence``, in order."""
    # ASCII text: non-word characters to spaces (as bytes) and a split, several times faster than findall
    if sentence.isascii():
        return sentence.encode("ascii").translate(_ASCII_NON_WORD).decode("ascii").split()
    if _NON_ASCII_NON_WORD.search(sentence) is None:
        # accented Latin (and CJK runs) with no non-ASCII mark or space: every non-ASCII character is
        # a word character, so the same split on the UTF-8 bytes gives the same words (bytes >= 128
        # pass through the table untouched)
        return sentence.encode("utf-8").translate(_UTF8_NON_WORD).decode("utf-8").split()
    return WORD.findall(sentence)
