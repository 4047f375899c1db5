"""The evidence behind a calibration profile: one row per case, with its verdict.

A category's Acc > GAR says *that* the grader passed cases without the gold action;
these rows say *which*. Each :class:`~tooldiag.metrics.gar.CaseObservation` becomes a
:class:`CaseRow` with the class of every emission per turn, whether the gold class was
seen at a gold turn, the grader's verdict and the diagnostic verdict of the case:

* ``masked``: the grader passed the case, but the gold class never appeared at a gold
  turn (the grader masked a wrong action: paper 001 §3.2, the cases behind Acc > GAR);
* ``execution_failure``: the gold class appeared at a gold turn, the grader failed the
  case (the right action, then execution went wrong: the cases behind GAR >> Acc);
* ``ok``: gold class seen and passed; ``fail``: neither;
* ``ungraded``: no verdict (an infrastructure error row, or a log without ``passed``).

``gold_hit`` is read at the gold turns (every turn when the suite names none), so it is
stricter than case-level GAR (Eq. 1, any turn): a miss_func case that refuses only at a
turn where the function was still available is not a hit here. Pure functions, no suite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tooldiag.classify.classes import ActionClass
from tooldiag.metrics.gar import CaseObservation


class Verdict(str, Enum):
    """The diagnostic verdict of one case (module docstring)."""

    MASKED = "masked"
    EXECUTION_FAILURE = "execution_failure"
    OK = "ok"
    FAIL = "fail"
    UNGRADED = "ungraded"

    def __str__(self) -> str:
        return self.value


#: Every verdict name a filter accepts, in the order reports list them.
VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)


def gold_turn_indices(case: CaseObservation) -> list[int]:
    """The turns at which the gold class is due that the case reached."""
    if case.gold_turns is None:
        return list(range(len(case.turns)))
    return [i for i in case.gold_turns if 0 <= i < len(case.turns)]


def gold_hit(case: CaseObservation) -> bool:
    """Was the gold class emitted at one of the case's gold turns?"""
    return any(case.gold in case.turns[i] for i in gold_turn_indices(case))


def case_verdict(case: CaseObservation) -> Verdict:
    """``masked`` / ``execution_failure`` / ``ok`` / ``fail``, or ``ungraded`` without a verdict."""
    if case.errored or case.passed is None:
        return Verdict.UNGRADED
    hit = gold_hit(case)
    if case.passed:
        return Verdict.OK if hit else Verdict.MASKED
    return Verdict.EXECUTION_FAILURE if hit else Verdict.FAIL


def emission_classes(case: CaseObservation) -> tuple[tuple[str, ...], ...]:
    """Per turn, the class name of every emission in order (``other`` included when known).

    An adapter that kept only the per-turn sets gives those, in the order ActionClass lists the classes.
    """
    if case.emissions is not None:
        return tuple(tuple(action.value for action in turn) for turn in case.emissions)
    return tuple(tuple(action.value for action in ActionClass if action in turn) for turn in case.turns)


@dataclass(frozen=True)
class CaseRow:
    """One row of ``tooldiag cases`` (columns documented in docs/evidence.md)."""

    #: The report's name (the model, plus the probe; the log's stem).
    run: str
    case_id: str
    category: str
    gold_class: str
    #: Per turn, the class of every emission, in order.
    classes: tuple[tuple[str, ...], ...]
    gold_hit: bool
    passed: bool | None
    error_type: str | None
    verdict: Verdict
    #: True for an infrastructure error row (not graded, not counted in any rate).
    errored: bool = False
    #: Suite-specific columns (tau2: the write event), after the shared ones.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def emitted(self) -> set[str]:
        """Every class emitted at any turn."""
        return {name for turn in self.classes for name in turn}

    def to_json(self) -> dict[str, Any]:
        """The row as plain JSON: the shared columns, then the suite's."""
        out: dict[str, Any] = {
            "run": self.run,
            "case_id": self.case_id,
            "category": self.category,
            "gold_class": self.gold_class,
            "classes": [list(turn) for turn in self.classes],
            "gold_hit": self.gold_hit,
            "passed": self.passed,
            "error_type": self.error_type,
            "verdict": self.verdict.value,
            "errored": self.errored,
        }
        out.update(self.extra)
        return out


def case_row(case: CaseObservation, run: str = "") -> CaseRow:
    """The evidence row of one observation."""
    return CaseRow(
        run=run,
        case_id=case.case_id,
        category=case.category,
        gold_class=case.gold.value,
        classes=emission_classes(case),
        gold_hit=gold_hit(case),
        passed=None if case.errored else case.passed,
        error_type=case.error_type,
        verdict=case_verdict(case),
        errored=case.errored,
        extra=dict(case.extra),
    )


def case_rows(cases: Sequence[CaseObservation], run: str = "") -> list[CaseRow]:
    """The evidence rows of ``cases``, in their order."""
    return [case_row(case, run) for case in cases]


def verdict_counts(rows: Sequence[CaseRow]) -> dict[str, int]:
    """How many rows carry each verdict (every verdict present, zeros included)."""
    counts = {name: 0 for name in VERDICTS}
    for row in rows:
        counts[row.verdict.value] += 1
    return counts
