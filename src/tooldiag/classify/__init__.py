"""Action classes of model emissions (paper 001 §3.1).

>>> from tooldiag.classify import ActionClass, classify
>>> classify("Shall I proceed with the booking for $350?")
<ActionClass.CONFIRM: 'confirm'>
>>> classify("Shall I proceed with the booking for $350?", scheme="paper")
<ActionClass.ASK: 'ask'>
>>> classify(None, tool_calls=[{"type": "function", "function": {"name": "ls", "arguments": "{}"}}])
<ActionClass.TOOL_CALL: 'tool_call'>

Schemes: ``paper`` reproduces the paper's released classifier (its tables are
reproducible with it); ``default`` is tooldiag's, measured in docs/diagnostic.md;
``llm`` asks a judge model (``TOOLDIAG_CLASSIFY_MODEL``), for audits. Cue lists are
data (``cues/*.json``); extend the default ones with ``TOOLDIAG_CUES`` or ``--cues``.
Schemes are registered in :mod:`tooldiag.classify.registry`; callers resolve a
classifier once (:func:`get_classifier`) and pass the object down. Reports wrap it in
:class:`tooldiag.classify.provenance.CountingClassifier` so that they can say which
classifier gave their classes (judge, prompt, fallbacks, languages without cue data).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.classify.classes import (
    DECISION_CLASSES,
    PRIORITY,
    ActionClass,
    highest_priority,
    parse_action_class,
)
from tooldiag.classify.cues import CUES_ENV, cue_files_from_env
from tooldiag.classify.explain import Explanation, explain, explain_many
from tooldiag.classify.registry import Classifier, SchemeOptions, check_scheme, resolve_classifier, scheme, scheme_names

if TYPE_CHECKING:
    from tooldiag.models.base import ModelOptions

__all__ = [
    "CUES_ENV",
    "DECISION_CLASSES",
    "PRIORITY",
    "SCHEMES",
    "ActionClass",
    "Classifier",
    "Explanation",
    "SchemeOptions",
    "classify",
    "classify_batch",
    "classify_message",
    "classify_signals",
    "content_text",
    "explain",
    "explain_many",
    "get_classifier",
    "has_tool_calls",
    "highest_priority",
    "message_parts",
    "parse_action_class",
    "resolve_classifier",
    "scheme",
]

#: Scheme names accepted by :func:`classify` and the ``--scheme`` options.
SCHEMES: tuple[str, ...] = scheme_names()


def has_tool_calls(tool_calls: Any) -> bool:
    """True for any non-empty list of calls (ToolCall objects, OpenAI dicts, even malformed ones)."""
    if isinstance(tool_calls, (list, tuple)):
        return len(tool_calls) > 0
    return isinstance(tool_calls, dict) and bool(tool_calls)


def get_classifier(
    scheme: str = "default",
    *,
    cue_files: Sequence[Path | str] = (),
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> Classifier:
    """The classifier of ``scheme``, resolved once by the caller and passed down.

    This is the edge where the documented environment variables count: cue files in
    :data:`CUES_ENV` extend the default rules before ``cue_files`` (for the ``llm``
    scheme, the rules it falls back on); the ``llm`` scheme's judge is ``judge``, else
    ``TOOLDIAG_CLASSIFY_MODEL``. Rule-based classifiers are cached, so calling this per
    emission is cheap. ``executor="ray"`` (``--executor ray``, the ``llm`` scheme only) asks the
    judge from Ray tasks on the cluster at ``ray_address`` (``None``: a local Ray).
    """
    check_scheme(scheme)
    if scheme != "llm" and (executor != "local" or ray_address is not None):
        from tooldiag.errors import UserError

        raise UserError(
            "--executor and --ray-address apply to --scheme llm only", hint="drop them, or use --scheme llm"
        )
    if scheme == "llm":
        from tooldiag.classify.llm import judge_from_env

        judge = judge_from_env(judge)
    cues = tuple(Path(path) for path in (*cue_files_from_env(), *cue_files))
    chosen = SchemeOptions(
        cue_files=cues, judge=judge, judge_options=judge_options, executor=executor, ray_address=ray_address
    )
    return resolve_classifier(scheme, chosen)


def classify_batch(classifier: Classifier, items: Sequence[tuple[Any, bool]]) -> list[ActionClass]:
    """Labels for ``(text, has_calls)`` pairs; batched when the classifier supports it (llm)."""
    many = getattr(classifier, "classify_many", None)
    if many is not None:
        return list(many(items))
    return [classifier(text, has_calls) for text, has_calls in items]


def classify(text: str | None, tool_calls: list | None = None, scheme: str = "default") -> ActionClass:
    """The action class of one emission (paper 001 §3.1).

    Any non-empty ``tool_calls`` list makes it ``tool_call``; otherwise the text is
    classified (calls written inside the text, e.g. ``[f(a=1)]`` or ``<tool_call>``
    blocks, also count as ``tool_call``). Never raises for odd input: empty, huge or
    binary-looking text and malformed call payloads all get a class.
    """
    return get_classifier(scheme)(text, has_tool_calls(tool_calls))


def classify_signals(text: str | None, tool_calls: list | None = None) -> frozenset[ActionClass]:
    """Every class the ``default`` scheme sees evidence of, not only the top one.

    Useful where two signals matter together, e.g. a consent request that follows a
    partial refusal ("I can't refund to the gift card, but I can refund your Visa.
    Shall I proceed?" gives ``{refuse, confirm}``; :func:`classify` says refuse).
    """
    from tooldiag.classify.default import DefaultClassifier

    classifier = get_classifier("default")
    assert isinstance(classifier, DefaultClassifier)
    return classifier.signals(text, has_tool_calls(tool_calls))


def message_parts(message: dict[str, Any]) -> tuple[Any, bool]:
    """``(text, has_calls)`` of an OpenAI-format assistant message: its ``content`` (text parts
    joined) and whether it carries ``tool_calls`` or a legacy ``function_call``."""
    calls = has_tool_calls(message.get("tool_calls")) or has_tool_calls(message.get("function_call"))
    return content_text(message.get("content")), calls


def classify_message(message: Any, classifier: Classifier | None = None) -> ActionClass:
    """Classify one OpenAI-format assistant message (dict) or a ``tooldiag`` Message/Emission."""
    classifier = classifier or get_classifier("default")
    if isinstance(message, dict):
        return classifier(*message_parts(message))
    text = getattr(message, "text", None)
    if text is None:
        text = getattr(message, "content", None)
    return classifier(text, has_tool_calls(getattr(message, "tool_calls", None)))


def content_text(content: Any) -> Any:
    """OpenAI content may be a list of parts; join their text."""
    if isinstance(content, list) and content and all(isinstance(part, dict) and "type" in part for part in content):
        texts = [str(part.get("text", "")) for part in content if part.get("type", "text") in ("text", "output_text")]
        return "\n".join(texts) if texts else None
    return content
