"""The ``paper`` scheme: paper 001's released classifier, rule for rule.

Reproduces ``bfcl_calibration/analysis/action_classifier.py`` and
``emission_normalization`` at commit ``5c9ec3df`` (notes ``action-classes.md`` §1-2):
normalise whole-emission call structures, decide tool_call from syntax, then text
classes by case-insensitive substring cues after folding typographic quotes, with the
priority refuse > ask (``?`` or an ask cue) > confirm (completion claims) > other.

Deliberate differences, none of which changes a label the original produces:
the original raises on inputs its parsers choke on (``ast.literal_eval`` TypeError,
deep nesting) and on non-string, non-list emissions; here those inputs get a class.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tooldiag.classify.classes import ActionClass
from tooldiag.classify.cues import fold_quotes, load_builtin
from tooldiag.classify.explain import Explanation, unattributed
from tooldiag.classify.registry import SchemeOptions, scheme
from tooldiag.classify.syntax import paper_normalize, paper_text_is_tool_call, structured_call_names


@dataclass(frozen=True)
class PaperCues:
    ask: tuple[str, ...]
    refuse: tuple[str, ...]
    confirm: tuple[str, ...]

    @classmethod
    def builtin(cls) -> PaperCues:
        data = load_builtin("paper")
        return cls(ask=tuple(data["ask"]), refuse=tuple(data["refuse"]), confirm=tuple(data["confirm"]))


class PaperClassifier:
    """Callable ``(text, has_calls) -> ActionClass`` with the paper's rules."""

    name = "paper"
    #: The paper's cue lists are English only; other languages are read by the same rules.
    languages: frozenset[str] = frozenset({"en"})

    def __init__(self, cues: PaperCues | None = None) -> None:
        self.cues = cues or PaperCues.builtin()

    def classify_text(self, text: str | None) -> ActionClass:
        """The original ``classify_emission`` on one (already normalised) string."""
        if text is None:
            return ActionClass.OTHER
        if paper_text_is_tool_call(text):
            return ActionClass.TOOL_CALL
        normalized = fold_quotes(text)
        lower = normalized.lower()
        if any(cue in lower for cue in self.cues.refuse):
            return ActionClass.REFUSE
        if "?" in normalized or any(cue in lower for cue in self.cues.ask):
            return ActionClass.ASK
        if any(cue in lower for cue in self.cues.confirm):
            return ActionClass.CONFIRM
        return ActionClass.OTHER

    def classify_raw(self, emission: Any) -> ActionClass | None:
        """The original ``gar.emission_action``: a raw BFCL emission, ``None`` when it holds nothing.

        Strings are normalised then classified (whitespace-only: ``None``); lists and
        dicts are tool_call when they carry tool names (``[]``: ``None``).
        """
        normalized = paper_normalize(emission)
        if isinstance(normalized, str):
            return self.classify_text(normalized) if normalized.strip() else None
        if isinstance(emission, (list, dict)):
            return ActionClass.TOOL_CALL if structured_call_names(emission) else None
        return None

    def explain(self, text: Any, has_calls: bool = False) -> Explanation:
        """Which of the paper's rules gave the label: syntax, or the first cue of the list that won.

        The label is ``self(text, has_calls)``; the trace re-reads the same normalised text
        (a separate pass: classifying pays nothing for it).
        """
        label = self(text, has_calls)

        def because(rule: str, cue: str | None = None, sentence: str | None = None) -> Explanation:
            return Explanation(label=label, rule=rule, cue=cue, sentence=sentence, scheme=self.name)

        if has_calls:
            return because("structured_call")
        if text is None:
            return because("other:empty")
        normalized = paper_normalize(text)
        if not isinstance(normalized, str):
            names = structured_call_names(text) if isinstance(text, (list, dict)) else []
            return (
                because("structured_call", ", ".join(names))
                if label is ActionClass.TOOL_CALL
                else because("other:empty")
            )
        if not normalized.strip():
            return because("other:empty")
        if label is ActionClass.TOOL_CALL:
            return because("text_call:paper_normalized" if normalized != text else "text_call:paper_syntax")
        lower = fold_quotes(normalized).lower()
        found: dict[ActionClass, tuple[str, str]] = {}
        for cue in self.cues.refuse:
            if cue in lower:
                found.setdefault(ActionClass.REFUSE, ("refuse:refuse_cue", cue))
        if "?" in normalized:
            found.setdefault(ActionClass.ASK, ("ask:question_mark", "?"))
        for cue in self.cues.ask:
            if cue in lower:
                found.setdefault(ActionClass.ASK, ("ask:ask_cue", cue))
        for cue in self.cues.confirm:
            if cue in lower:
                found.setdefault(ActionClass.CONFIRM, ("confirm:completion_claim", cue))
        if label is ActionClass.OTHER:
            return because("other:no_cue")
        if label not in found:
            return unattributed(label, self.name)
        rule, cue = found[label]
        return because(rule, cue, _sentence_around(lower, cue))

    def __call__(self, text: Any, has_calls: bool) -> ActionClass:
        if has_calls:
            return ActionClass.TOOL_CALL
        if text is None:
            return ActionClass.OTHER
        label = self.classify_raw(text)
        return label if label is not None else ActionClass.OTHER


def _sentence_around(text: str, cue: str) -> str:
    """The sentence (between ``.``/``!``/``?``/newlines) holding the first occurrence of ``cue``."""
    at = text.find(cue)
    if at < 0:
        return text[:200]
    start = max(text.rfind(mark, 0, at) for mark in (".", "!", "?", "\n")) + 1
    ends = [end for end in (text.find(mark, at + len(cue)) for mark in (".", "!", "?", "\n")) if end >= 0]
    end = min(ends) + 1 if ends else len(text)
    return text[start:end].strip()


@scheme("paper")
def paper_scheme(options: SchemeOptions) -> PaperClassifier:
    """Paper 001's released rules; cue extensions do not apply (the paper's tables stay reproducible)."""
    return _builtin_paper()


@lru_cache(maxsize=1)
def _builtin_paper() -> PaperClassifier:
    return PaperClassifier()
