"""Why an emission got its class: the rule, the cue and the sentence behind one label.

A transcript that says "tool_call" or "ask" invites the question "why?", and a user who
disagrees with a label has to see which rule to argue with. :func:`explain` answers it
for any classifier: a scheme that can say more implements ``explain(text, has_calls)``
(the ``default``, ``paper`` and ``llm`` schemes do), any other classifier gets the
plain "the scheme said so" (rule ``scheme:<name>``).

The one promise: ``explain(c, text, has_calls).label == c(text, has_calls)`` on every
input. The rule-based schemes keep it by taking the label from their own ``__call__``
and tracing the rules in a second, slower pass, so classifying (which reports do for
every emission of a run) pays nothing for explanations; a trace that cannot attribute
the label says so (rule ``<class>:unattributed``) instead of inventing a reason.

Rule names are short and stable (``family:rule``, docs/evidence.md lists them):
``structured_call``, ``text_call:<format>``, ``refuse:missing_function``,
``ask:wh_question``, ``confirm:consent_request``, ``other:no_cue``, ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tooldiag.classify.classes import ActionClass

__all__ = ["Explanation", "explain", "explain_many", "unattributed"]


@dataclass(frozen=True)
class Explanation:
    """The reason behind one label."""

    label: ActionClass
    #: A short stable rule name, ``family:rule`` (``ask:wh_question``) or ``structured_call``.
    rule: str
    #: The cue phrase or the text the rule's pattern matched, when there is one.
    cue: str | None = None
    #: The sentence it matched in, as the rules read it (folded: lower case, quotes and code masked).
    sentence: str | None = None
    #: The language the rules read the text as (ISO 639-1; ``und``: too little evidence, read as English).
    language: str | None = None
    #: The scheme that gave the label.
    scheme: str = ""
    #: Anything else that decided it: the judge model and prompt, or why the judge was not used.
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (the ``explanation`` object of ``tooldiag show --format json``)."""
        return {
            "label": self.label.value,
            "rule": self.rule,
            "cue": self.cue,
            "sentence": self.sentence,
            "language": self.language,
            "scheme": self.scheme,
            "detail": self.detail,
        }


def unattributed(label: ActionClass, scheme: str, language: str | None = None) -> Explanation:
    """The honest answer of a trace that found no rule for ``label`` (never a made-up reason)."""
    return Explanation(label=label, rule=f"{label.value}:unattributed", language=language, scheme=scheme)


def _explaining(classifier: Any) -> Any:
    """The classifier itself, or the one a wrapper (``CountingClassifier.inner``) holds, if only that explains."""
    target = classifier
    while getattr(target, "explain", None) is None and getattr(target, "inner", None) is not None:
        target = target.inner
    return target if getattr(target, "explain", None) is not None else classifier


def explain(classifier: Any, text: Any, has_calls: bool) -> Explanation:
    """Why ``classifier`` gives ``(text, has_calls)`` its class (see the module docstring)."""
    target = _explaining(classifier)
    method = getattr(target, "explain", None)
    if method is not None:
        result: Explanation = method(text, has_calls)
        return result
    name = str(getattr(classifier, "name", type(classifier).__name__))
    return Explanation(label=classifier(text, has_calls), rule=f"scheme:{name}", scheme=name)


def explain_many(classifier: Any, items: Sequence[tuple[Any, bool]]) -> list[Explanation]:
    """:func:`explain` for ``(text, has_calls)`` pairs, in order; batched where the classifier batches (llm)."""
    target = _explaining(classifier)
    many = getattr(target, "explain_many", None)
    if many is not None:
        return list(many(items))
    if getattr(target, "explain", None) is None and getattr(classifier, "classify_many", None) is not None:
        from tooldiag.classify import classify_batch

        name = str(getattr(classifier, "name", type(classifier).__name__))
        labels = classify_batch(classifier, items)
        return [Explanation(label=label, rule=f"scheme:{name}", scheme=name) for label in labels]
    return [explain(classifier, text, has_calls) for text, has_calls in items]
