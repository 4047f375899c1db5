"""Cue lists as data: loading, user extension, text folding and phrase matching.

The cue vocabularies live in ``cues/*.json`` next to this module so that users can
read and extend them without touching code. ``paper.json`` is frozen (it reproduces
the paper's released classifier); ``default.json`` can be extended by files given
with ``--cues FILE`` or the environment variable :data:`CUES_ENV`
(``os.pathsep``-separated paths). An extension file is a JSON object whose keys are
cue-list names of ``default.json``; its lists are appended, and an optional
``"remove"`` object lists entries to delete.

Other languages' lists live in ``cues/lang/<code>.json``. An extension file reaches
them under ``"languages"``: ``{"languages": {"es": {"refuse": [...], "remove": {...}},
"nl": {...}}}``, each value an object of the same form as the top level, keyed by the
lists of :data:`tooldiag.classify.multilingual.LANGUAGE_LISTS`. A code without a
built-in file adds a language: it must define at least the lists of
:data:`~tooldiag.classify.multilingual.REQUIRED_LISTS`. ``"en"`` there means the
top-level (English) lists.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError

#: Environment variable naming extra cue files for the ``default`` scheme.
CUES_ENV = "TOOLDIAG_CUES"

#: Typographic quotes folded to ASCII before matching (notes §1; the paper folds the same set).
QUOTE_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u00b4": "'",
        "\u02bc": "'",
    }
)

_SPACES = re.compile(r"\s+")


def fold_quotes(text: str) -> str:
    """Typographic apostrophes and quotes to ASCII (so "can’t" matches "can't")."""
    return text.translate(QUOTE_FOLD)


def fold(text: str) -> str:
    """Quotes folded, lower-cased, runs of whitespace collapsed to one space."""
    return _SPACES.sub(" ", fold_quotes(text).lower())


def load_builtin(name: str) -> dict[str, Any]:
    """A cue file shipped with tooldiag (``paper`` or ``default``), as parsed JSON."""
    text = resources.files("tooldiag.classify").joinpath("cues", f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)


_LANG_DIR = "lang"
_LANGUAGE_CODE = re.compile(r"[a-z]{2}")


@lru_cache(maxsize=1)
def builtin_languages() -> tuple[str, ...]:
    """Codes of the shipped per-language cue files (``cues/lang/<code>.json``), sorted."""
    folder = resources.files("tooldiag.classify").joinpath("cues", _LANG_DIR)
    return tuple(sorted(entry.name[:-5] for entry in folder.iterdir() if entry.name.endswith(".json")))


def load_builtin_language(code: str) -> dict[str, Any]:
    """One shipped per-language cue file, as parsed JSON."""
    folder = resources.files("tooldiag.classify").joinpath("cues", _LANG_DIR)
    return json.loads(folder.joinpath(f"{code}.json").read_text(encoding="utf-8"))


def cue_files_from_env() -> list[Path]:
    """Paths listed in :data:`CUES_ENV` (empty entries ignored)."""
    raw = os.environ.get(CUES_ENV, "")
    return [Path(part) for part in raw.split(os.pathsep) if part.strip()]


def read_extension(
    path: Path, known_keys: Iterable[str], *, languages: Collection[str] | None = None
) -> dict[str, Any]:
    """Read and validate one extension file; a bad file is a :class:`UserError`.

    Returns ``{"add": {list: [...]}, "remove": {...}, "languages": {code: {"add", "remove"}}}``.
    ``languages`` are the codes with built-in cue files (default: the shipped ones).
    """
    known = {key for key in known_keys if not key.startswith("_")}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"cue file {path} does not exist", hint=f"check --cues or {CUES_ENV}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(
            f"cue file {path} is not valid JSON: {exc}", hint="see docs/diagnostic.md, 'Extending the cues'"
        ) from None
    if not isinstance(data, dict):
        raise UserError(f"cue file {path} must hold a JSON object", hint='e.g. {"refuse": ["not in my toolbox"]}')
    per_language = data.get("languages", {})
    sections = _sections(path, {k: v for k, v in data.items() if k != "languages"}, known, "")
    if not isinstance(per_language, dict):
        raise UserError(
            f"cue file {path}: 'languages' must be an object keyed by language code",
            hint='e.g. {"languages": {"es": {"refuse": ["no me es posible"]}}}',
        )
    sections["languages"] = {}
    for code, content in per_language.items():
        english = code == "en"
        _check_language(path, code, content)
        if english:
            nested = _sections(path, content, known, "languages.en: ")
            for part in ("add", "remove"):
                for key, values in nested[part].items():
                    sections[part].setdefault(key, []).extend(values)
            continue
        from tooldiag.classify.multilingual import LANGUAGE_LISTS, REQUIRED_LISTS

        nested = _sections(path, content, set(LANGUAGE_LISTS), f"language {code!r}: ")
        builtin = builtin_languages() if languages is None else languages
        missing = [key for key in REQUIRED_LISTS if not nested["add"].get(key)]
        if code not in builtin and missing:
            raise UserError(
                f"cue file {path}: language {code!r} has no built-in cue data and the file does not define "
                + ", ".join(repr(key) for key in missing),
                hint="a new language needs at least the lists "
                + ", ".join(REQUIRED_LISTS)
                + " (see docs/diagnostic.md, 'Languages')",
            )
        sections["languages"][code] = nested
    return sections


def _check_language(path: Path, code: object, content: object) -> None:
    if not isinstance(code, str) or not _LANGUAGE_CODE.fullmatch(code):
        raise UserError(
            f"cue file {path}: {code!r} is not a language code",
            hint="use an ISO 639-1 code: two lowercase letters such as 'es', 'nl', 'ko'",
        )
    if not isinstance(content, dict):
        raise UserError(
            f"cue file {path}: languages.{code} must be an object of cue lists",
            hint='e.g. {"languages": {"' + code + '": {"refuse": ["..."]}}}',
        )


def _sections(path: Path, data: dict[str, Any], known: set[str], where: str) -> dict[str, Any]:
    """``data``'s additions and removals, each list checked against ``known``."""
    sections: dict[str, Any] = {"add": {k: v for k, v in data.items() if k != "remove" and not k.startswith("_")}}
    remove = data.get("remove", {})
    if not isinstance(remove, dict):
        raise UserError(
            f"cue file {path}: {where}'remove' must be an object of lists",
            hint='e.g. {"remove": {"refuse": ["cannot"]}}',
        )
    sections["remove"] = remove
    for section, content in sections.items():
        for key, values in content.items():
            if key not in known:
                raise UserError(
                    f"cue file {path}: {where}unknown cue list {key!r}",
                    hint="known lists: " + ", ".join(sorted(known)),
                )
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise UserError(f"cue file {path}: {where}{section} list {key!r} must be a list of strings")
            for value in values:
                _check_entry(path, where, section, key, value)
    return sections


def _check_entry(path: Path, where: str, section: str, key: str, value: str) -> None:
    if section == "add" and not (value[3:] if value.startswith("re:") else value).strip():
        # an empty phrase matches every text: every emission would get this class
        raise UserError(f"cue file {path}: {where}empty entry in list {key!r}", hint="remove it, or write the phrase")
    if value.startswith("re:"):
        try:
            compiled = re.compile(value[3:])
        except re.error as exc:
            raise UserError(f"cue file {path}: {where}bad regular expression {value!r}: {exc}") from None
        if section == "add" and compiled.search("") is not None:
            raise UserError(
                f"cue file {path}: {where}regular expression {value!r} in list {key!r} matches empty text",
                hint="it would match every emission; require at least one character",
            )


def merge_cues(base: dict[str, Any], extensions: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """``base`` lists with every extension's additions appended and removals applied."""
    merged = {key: list(value) for key, value in base.items() if isinstance(value, list)}
    for extension in extensions:
        for key, values in extension.get("add", {}).items():
            merged.setdefault(key, []).extend(v for v in values if v not in merged[key])
        for key, values in extension.get("remove", {}).items():
            drop = set(values)
            merged[key] = [v for v in merged.get(key, []) if v not in drop]
    return merged


def merge_language_cues(
    base: dict[str, dict[str, Any]], extensions: Sequence[dict[str, Any]]
) -> dict[str, dict[str, list[str]]]:
    """Per-language lists: ``base`` (code -> parsed cue file) with the extensions' ``languages`` applied."""
    merged = {code: merge_cues(cues, []) for code, cues in base.items()}
    for extension in extensions:
        for code, sections in extension.get("languages", {}).items():
            merged[code] = merge_cues(merged.get(code, {}), [sections])
    return merged


def _entry_pattern(entry: str) -> str:
    if entry.startswith("re:"):
        return f"(?:{entry[3:]})"
    words = [re.escape(word) for word in fold(entry).split(" ") if word]
    body = r"\s+".join(words)
    # word boundaries only where the phrase starts/ends with a word character
    left = r"\b" if re.match(r"\w", entry) else ""
    right = r"\b" if re.search(r"\w$", entry) else ""
    return f"{left}{body}{right}"


@lru_cache(maxsize=512)
def compile_phrases(entries: tuple[str, ...]) -> re.Pattern[str] | None:
    """One alternation regex for a cue list (``None`` for an empty list)."""
    if not entries:
        return None
    return re.compile("|".join(_entry_pattern(entry) for entry in entries))


def alternation(words: Iterable[str]) -> str:
    """``(?:a|b|c)`` of escaped words, longest first so that ``zip code`` beats ``zip``."""
    ordered = sorted({fold(w) for w in words if w.strip()}, key=lambda w: (-len(w), w))  # ties by text, not hash
    return "(?:" + "|".join(r"\s+".join(map(re.escape, w.split(" "))) for w in ordered) + ")"
