"""The closed vocabulary of action classes (paper 001, §3.1).

Every model emission gets exactly one class. ``other`` is residual: GAR ignores it.
The order of :data:`PRIORITY` is the paper's fixed tie-break when one emission
carries cues of several classes (tool_call > refuse > ask > confirm > other).
"""

from __future__ import annotations

import enum


class ActionClass(str, enum.Enum):
    """What an emission chose to do."""

    TOOL_CALL = "tool_call"
    """At least one tool call: a structured call, or a parseable call in the text."""

    ASK = "ask"
    """Requests information the agent needs to proceed: a missing value, a choice
    between options, an identifier, or a check of a value the user gave."""

    REFUSE = "refuse"
    """Declines, or says it cannot do the request or a part of it (missing function
    or capability, policy, impossibility), including partial refusals."""

    CONFIRM = "confirm"
    """Seeks explicit consent for a consequential action the agent is about to take
    ("Shall I proceed with the booking for $350?"). In the ``paper`` scheme this class
    holds the paper's completion claims instead (see docs/diagnostic.md)."""

    OTHER = "other"
    """Results, summaries, greetings, offers of further help, pleasantries; also empty
    emissions. Ignored by GAR."""

    def __str__(self) -> str:  # so f-strings and CSV cells print "ask", not "ActionClass.ASK"
        return self.value


#: Tie-break order when an emission carries cues of several classes (paper §3.1).
PRIORITY: tuple[ActionClass, ...] = (
    ActionClass.TOOL_CALL,
    ActionClass.REFUSE,
    ActionClass.ASK,
    ActionClass.CONFIRM,
    ActionClass.OTHER,
)

#: The classes GAR and the capability check count (paper §3.1: ``other`` is residual).
DECISION_CLASSES: tuple[ActionClass, ...] = PRIORITY[:-1]


def highest_priority(classes: set[ActionClass] | frozenset[ActionClass]) -> ActionClass:
    """The class :data:`PRIORITY` puts first among ``classes`` (``other`` if empty)."""
    for candidate in PRIORITY:
        if candidate in classes:
            return candidate
    return ActionClass.OTHER


def parse_action_class(value: object, *, where: str = "input") -> ActionClass:
    """Read a class name written by a user ("ask", "ASK", "tool_call"); raise UserError."""
    from tooldiag.errors import UserError

    if isinstance(value, ActionClass):
        return value
    if isinstance(value, str):
        key = value.strip().lower().replace("-", "_").replace(" ", "_")
        for member in ActionClass:
            if key == member.value:
                return member
    raise UserError(
        f"{where}: {value!r} is not an action class",
        hint="use one of: " + ", ".join(member.value for member in ActionClass),
    )
