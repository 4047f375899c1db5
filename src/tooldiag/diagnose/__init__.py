"""Diagnose any agent's conversations, not only BFCL runs.

``diagnose_log`` reads an agent log (:mod:`tooldiag.diagnose.log` documents the
format), classifies every assistant message and produces the same
:class:`~tooldiag.report.RunReport` as ``tooldiag report`` does for a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tooldiag.classify import Classifier, classify_batch, get_classifier
from tooldiag.classify.classes import ActionClass
from tooldiag.classify.provenance import CountingClassifier
from tooldiag.diagnose.log import (
    AssistantMessage,
    Conversation,
    InvalidLine,
    conversations_from_objects,
    read_agent_log,
)
from tooldiag.metrics.gar import CaseObservation, Thresholds
from tooldiag.report.build import build_report
from tooldiag.report.model import RunReport

__all__ = [
    "AssistantMessage",
    "Conversation",
    "InvalidLine",
    "conversations_from_objects",
    "diagnose_conversations",
    "diagnose_log",
    "observations_from_conversations",
    "read_agent_log",
    "text_channel_of",
]


def observations_from_conversations(
    conversations: Sequence[Conversation], classifier: Classifier
) -> list[CaseObservation]:
    """One :class:`CaseObservation` per conversation; injected messages excluded."""
    counted = [(c, m) for c in conversations for m in c.assistant if not m.injected]
    labels = iter(classify_batch(classifier, [(m.text, m.has_calls) for _, m in counted]))
    per_case: dict[str, list[list[ActionClass]]] = {c.id: [[] for _ in range(max(c.n_turns, 1))] for c in conversations}
    for conversation, message in counted:
        per_case[conversation.id][message.turn].append(next(labels))
    observations = []
    for conversation in conversations:
        emissions = tuple(tuple(classes) for classes in per_case[conversation.id])
        turns = tuple(frozenset(classes) - {ActionClass.OTHER} for classes in emissions)
        observations.append(
            CaseObservation(
                case_id=conversation.id,
                category=conversation.category,
                gold=conversation.gold,
                passed=conversation.passed,
                turns=turns,
                gold_turns=conversation.gold_turns,
                emissions=emissions,
            )
        )
    return observations


def diagnose_log(
    path: Path,
    classifier: Classifier | None = None,
    *,
    thresholds: Thresholds = Thresholds(),
    invalid: list[InvalidLine] | None = None,
) -> RunReport:
    """The calibration report of an agent log (Table 1 / 14 / 5 of paper 001).

    ``classifier`` (resolved by the caller, e.g. ``get_classifier("paper")``) defaults
    to the ``default`` scheme; the report names it (:class:`~tooldiag.classify.provenance.ClassifierSummary`).
    ``invalid``: a list to skip bad lines into instead of refusing the log (the report notes them).
    """
    conversations = read_agent_log(Path(path), invalid=invalid)
    return diagnose_conversations(
        conversations, Path(path).stem, str(path), classifier, thresholds=thresholds, invalid=invalid
    )


def diagnose_conversations(
    conversations: Sequence[Conversation],
    name: str,
    source: str,
    classifier: Classifier | None = None,
    *,
    thresholds: Thresholds = Thresholds(),
    invalid: Sequence[InvalidLine] | None = None,
) -> RunReport:
    """The calibration report of conversations from any source (an agent log, an imported trace).

    ``name`` titles the report and ``source`` says where the conversations came from;
    ``invalid`` lists what was skipped (the report notes it). When any assistant message has
    ``content_missing`` (a trace recorded without its text), the run has no text channel: GAR of
    the text classes is "not computable", as for a BFCL handler that drops text, never 0.
    """
    classifier = classifier or get_classifier("default")
    counting = CountingClassifier(classifier)
    cases = observations_from_conversations(conversations, counting)
    notes = []
    if invalid:
        shown = ", ".join(str(bad.line) for bad in invalid[:5]) + (", ..." if len(invalid) > 5 else "")
        notes.append(f"{len(invalid)} invalid line(s) skipped (line {shown})")
    if all(c.passed is None for c in conversations):
        notes.append("no conversation has 'passed': Acc and Delta are not available")
    text_channel, missing_note = text_channel_of(conversations)
    if missing_note:
        notes.append(missing_note)
    return build_report(
        name,
        cases,
        scheme=classifier.name,
        source=source,
        thresholds=thresholds,
        notes=notes,
        classifier=counting.summary(),
        text_channel=text_channel,
    )


def text_channel_of(conversations: Sequence[Conversation]) -> tuple[bool, str | None]:
    """Whether the conversations have a text channel, and a note on messages whose text was not captured.

    As for BFCL handlers that drop text: when messages are marked ``content_missing`` and no
    assistant message without calls has any text, ask/refuse/confirm GAR cannot be measured and is
    reported "not computable", never 0. When only some text is missing, the rest is measured and
    the note says how many messages count as ``other`` for want of text.
    """
    counted = [m for c in conversations for m in c.assistant if not m.injected]
    missing = sum(m.content_missing for m in counted)
    if not missing:
        return True, None
    if not any(not m.has_calls and isinstance(m.text, str) and m.text.strip() for m in counted):
        return False, (
            f"{missing} assistant message(s) have no captured text (content_missing) and none has any: "
            "ask/refuse/confirm GAR is not computable"
        )
    return True, f"{missing} assistant message(s) have no captured text (content_missing): they count as 'other'"
