"""Which classifier produced a report's classes, and how far its labels can be trusted.

Every GAR tooldiag prints stands on the action class of each emission, so a report
must say which classifier gave them: the scheme, the judge model and prompt version of
the ``llm`` scheme, how many judge answers fell back to the rules, and how many text
emissions were written in a language the classifier has no cue data for (those are
classed by the structural rules only, so their ask / refuse / confirm labels are
guesses). A report builder wraps the classifier it was given in a
:class:`CountingClassifier` and stores :meth:`CountingClassifier.summary` in the report;
nothing here changes a label.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from tooldiag.classify.classes import ActionClass
from tooldiag.classify.language import SUPPORTED_LANGUAGES, detect_language, is_supported
from tooldiag.classify.registry import Classifier

#: A share of text emissions outside the supported languages at or above this is material.
MATERIAL_SHARE = 0.05
#: ... and so is this many such emissions, whatever the share.
MATERIAL_COUNT = 10


#: The shipped cue files each built-in scheme reads (``classify/cues/``; a trailing ``/`` is a folder of
#: ``*.json``). The ``llm`` scheme's are its fallback rules': the default scheme's.
BUILTIN_CUE_FILES: dict[str, tuple[str, ...]] = {
    "default": ("default.json", "lang/"),
    # the default rules with the learned text model on (DefaultClassifier(learned=True)); its
    # weights file is hashed in too, so a report names the model version (see cue_digest)
    "default+learned": ("default.json", "lang/"),
    "llm": ("default.json", "lang/"),
    "paper": ("paper.json",),
}


def _builtin_cue_texts(scheme: str) -> list[tuple[str, bytes]]:
    folder = resources.files("tooldiag.classify").joinpath("cues")
    out: list[tuple[str, bytes]] = []
    for name in BUILTIN_CUE_FILES.get(scheme, ()):
        if name.endswith("/"):
            sub = folder.joinpath(name.rstrip("/"))
            entries = sorted((e for e in sub.iterdir() if e.name.endswith(".json")), key=lambda e: e.name)
            out += [(name + entry.name, entry.read_bytes()) for entry in entries]
        else:
            out.append((name, folder.joinpath(name).read_bytes()))
    return out


def cue_digest(scheme: str, cue_files: Sequence[str | Path] = ()) -> str | None:
    """SHA-256 (hex) of the cue data behind a scheme's labels: its shipped cue files (by name and
    content) plus the ``--cues`` extension files (by content, in order, wherever they lie).

    Two reports with the same digest classified with the same cue lists; ``None`` for a scheme
    with neither shipped cue files nor extensions (one registered outside tooldiag)."""
    builtin = _builtin_cue_texts(scheme)
    if not builtin and not cue_files:
        return None
    digest = hashlib.sha256()
    for name, data in builtin:
        digest.update(name.encode("utf-8") + b"\0" + data + b"\0")
    if scheme == "default+learned":
        from tooldiag.classify.learned import MODEL_FILE, model_bytes

        digest.update(b"model/" + MODEL_FILE.encode("utf-8") + b"\0" + model_bytes() + b"\0")
    for path in cue_files:
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = b"unreadable:" + str(path).encode("utf-8")
        digest.update(b"extension\0" + data + b"\0")
    return digest.hexdigest()


@dataclass
class ClassifierSummary:
    """The provenance of a set of labels: who classified, and what could not be classified well."""

    scheme: str
    #: The ``llm`` scheme's judge model (``provider/model``); ``None`` for rule-based schemes.
    judge: str | None = None
    #: The judge prompt's version tag (``action-class-judge-v2``); ``None`` without a judge.
    prompt_version: str | None = None
    #: Cue files that extended the rules (``--cues`` / ``TOOLDIAG_CUES``).
    cue_files: list[str] = field(default_factory=list)
    #: Emissions classified.
    emissions: int = 0
    #: Emissions with text and no structured tool call (the ones cues and judges read).
    text_emissions: int = 0
    #: Text emissions the judge did not label (garbled answer, failed request): the rules did.
    fallbacks: int = 0
    #: Text emissions per detected language that has no cue data in this classifier.
    outside_languages: dict[str, int] = field(default_factory=dict)
    #: The first failed judge request (the endpoint was down, refused the key, ...), if any.
    judge_error: str | None = None
    #: :func:`cue_digest` of the scheme's cue data and :attr:`cue_files` (``None``: no cue data known).
    cue_digest: str | None = None

    @property
    def outside(self) -> int:
        """Text emissions in languages without cue data."""
        return sum(self.outside_languages.values())

    @property
    def outside_share(self) -> float:
        """:attr:`outside` as a share of :attr:`text_emissions` (0 when there is no text)."""
        return self.outside / self.text_emissions if self.text_emissions else 0.0

    @property
    def outside_is_material(self) -> bool:
        """True when enough text sits outside the cue languages to move a GAR: at least
        :data:`MATERIAL_SHARE` of the text emissions, or at least :data:`MATERIAL_COUNT` of them."""
        return self.outside > 0 and (self.outside >= MATERIAL_COUNT or self.outside_share >= MATERIAL_SHARE)

    def to_json(self) -> dict[str, Any]:
        """The ``"classifier"`` object of the JSON report (docs/diagnostic.md, "Report formats")."""
        return {
            "scheme": self.scheme,
            "judge": self.judge,
            "prompt": self.prompt_version,
            "cue_files": list(self.cue_files),
            "emissions": self.emissions,
            "text_emissions": self.text_emissions,
            "fallbacks": self.fallbacks,
            "outside_languages": dict(sorted(self.outside_languages.items(), key=lambda kv: (-kv[1], kv[0]))),
            "judge_error": self.judge_error,
        }

    def describe(self) -> str:
        """One line for people: ``llm (judge openai/x, prompt action-class-judge-v2): 120 emissions ...``."""
        details = []
        if self.judge:
            details.append(f"judge {self.judge}")
        if self.prompt_version:
            details.append(f"prompt {self.prompt_version}")
        if self.cue_files:
            details.append("cues " + ", ".join(self.cue_files))
        head = self.scheme + (f" ({'; '.join(details)})" if details else "")
        parts = [f"{self.emissions} emission{'' if self.emissions == 1 else 's'} ({self.text_emissions} with text)"]
        if self.judge:
            parts.append(f"{self.fallbacks} fell back to the default rules")
        parts.append(f"{self.outside} outside the supported languages" + self._languages_text())
        return f"{head}: " + ", ".join(parts)

    def _languages_text(self) -> str:
        if not self.outside_languages:
            return ""
        ranked = sorted(self.outside_languages.items(), key=lambda kv: (-kv[1], kv[0]))
        return " (" + ", ".join(f"{code} {count}" for code, count in ranked) + ")"

    def fallback_warning(self) -> str | None:
        """The warning every command prints when judge answers fell back to the rules."""
        if not self.fallbacks:
            return None
        why = f" (first failure: {self.judge_error})" if self.judge_error else " (unparseable answers)"
        return (
            f"{self.fallbacks} of {self.text_emissions} text emissions fell back to the default rules: "
            f"the judge {self.judge} did not label them{why}"
        )

    def warnings(self) -> list[str]:
        """Every warning a command should print about these labels (stderr, ``warning:`` lines)."""
        return [text for text in (self.fallback_warning(), self.outside_warning()) if text]

    def outside_warning(self) -> str | None:
        """The warning ``diagnose`` prints when :attr:`outside_is_material`; ``None`` otherwise."""
        if not self.outside_is_material:
            return None
        return (
            f"{self.outside} of {self.text_emissions} text emissions ({100 * self.outside_share:.1f}%) are in "
            f"languages without cue data{self._languages_text()}: the {self.scheme} scheme classed them by "
            "structural rules only, so their ask/refuse/confirm labels are unreliable "
            "(add cues with --cues, or use --scheme llm)"
        )


def classifier_languages(classifier: Any) -> Collection[str] | None:
    """The languages ``classifier`` has cue data for; ``None`` means any (a judge reads them all).

    Every classifier carries ``languages`` (``frozenset[str] | None``); one that does not
    is taken to know the default scheme's languages.
    """
    return getattr(classifier, "languages", SUPPORTED_LANGUAGES)


class CountingClassifier:
    """Wraps a classifier; labels pass through unchanged, and it counts what
    :class:`ClassifierSummary` reports (emissions, text emissions, judge fallbacks,
    languages without cue data)."""

    def __init__(self, inner: Classifier) -> None:
        self.inner = inner
        self.name = inner.name
        self.languages = classifier_languages(inner)
        self.emissions = 0
        self.text_emissions = 0
        self.fallbacks = 0
        self.outside_languages: dict[str, int] = {}

    def _count(self, items: Sequence[tuple[Any, bool]]) -> None:
        self.emissions += len(items)
        for text, has_calls in items:
            if has_calls or not isinstance(text, str) or not text.strip():
                continue
            self.text_emissions += 1
            code = detect_language(text)
            if not is_supported(code, self.languages):
                self.outside_languages[code] = self.outside_languages.get(code, 0) + 1

    def _fallbacks_now(self) -> int:
        return int(getattr(self.inner, "fallbacks", 0) or 0)

    def classify_many(self, items: Sequence[tuple[Any, bool]]) -> list[ActionClass]:
        """Labels of ``items`` from the wrapped classifier (batched when it batches)."""
        from tooldiag.classify import classify_batch

        before = self._fallbacks_now()
        labels = classify_batch(self.inner, items)
        self.fallbacks += self._fallbacks_now() - before
        self._count(items)
        return labels

    def __call__(self, text: Any, has_calls: bool) -> ActionClass:
        before = self._fallbacks_now()
        label = self.inner(text, has_calls)
        self.fallbacks += self._fallbacks_now() - before
        self._count([(text, has_calls)])
        return label

    def summary(self) -> ClassifierSummary:
        """What was counted so far, with the wrapped classifier's identity."""
        model = getattr(self.inner, "model", None)
        error = getattr(self.inner, "judge_error", None)
        cue_files = [str(path) for path in getattr(self.inner, "cue_files", ()) or ()]
        return ClassifierSummary(
            scheme=self.name,
            judge=model if isinstance(model, str) else None,
            prompt_version=getattr(self.inner, "prompt_version", None),
            cue_files=cue_files,
            cue_digest=cue_digest(self.name, cue_files),
            emissions=self.emissions,
            text_emissions=self.text_emissions,
            fallbacks=self.fallbacks,
            outside_languages=dict(self.outside_languages),
            judge_error=error if isinstance(error, str) else None,
        )


def summarize(classifier: Classifier, items: Sequence[tuple[Any, bool]]) -> tuple[list[ActionClass], ClassifierSummary]:
    """Labels of ``items`` and the summary of how they were produced (one counting pass)."""
    counting = CountingClassifier(classifier)
    labels = counting.classify_many(items)
    return labels, counting.summary()
