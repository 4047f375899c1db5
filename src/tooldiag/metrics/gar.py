"""Gold Action Recall beside accuracy: paper 001's calibration profile, as pure functions.

The inputs are plain data (:class:`CaseObservation`: a category, a gold class, a
pass flag, per turn the set of classes the model emitted, and the gold turns), so the
same functions serve BFCL run stores, imported result files and arbitrary agent logs.
Which class is gold, and at which turns, is the benchmark's business: each suite
supplies it as data (BFCL's in :mod:`tooldiag.suites.bfcl.gold`). Percentages are on
0..100 throughout.

* case-level GAR: paper 001 Eq. 1, §3.2;
* turn-level GAR: paper 001 App. E (Table 14);
* Acc and the bound Acc <= GAR, Delta = GAR - Acc: §3.2 and Table 1;
* flags: Table 1 caption (execution failure Delta >= 60 pp on tool-call categories,
  masking Delta <= -15 pp on missing-info categories) and §3.2 (bound violation);
* capability counts with T_cap = 10: App. A, Table 5;
* overall Acc: BFCL's "Multi Turn Overall Acc", the unweighted mean of categories.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooldiag.classify.classes import ActionClass
from tooldiag.metrics.intervals import wilson_interval_pct

#: Column order of the capability table (paper 001 Table 5).
CAPABILITY_CLASSES: tuple[ActionClass, ...] = (
    ActionClass.TOOL_CALL,
    ActionClass.ASK,
    ActionClass.REFUSE,
    ActionClass.CONFIRM,
)

FLAG_BOUND_VIOLATION = "bound_violation"
FLAG_MASKING = "masking"
FLAG_EXECUTION_FAILURE = "execution_failure"
FLAG_NOT_COMPUTABLE = "gar_not_computable"
FLAG_ERRORS_EXCLUDED = "errors_excluded"


@dataclass(frozen=True)
class Thresholds:
    """Where the paper draws its lines (Table 1 caption, App. A); all configurable."""

    #: Delta at or below this (pp) on a non-tool-call category flags masking.
    masking_pp: float = -15.0
    #: Delta at or above this (pp) on a tool-call category flags execution failure.
    execution_failure_pp: float = 60.0
    #: A class counts as within a model's capability when emitted in >= t_cap cases.
    t_cap: int = 10
    #: Coverage of the Wilson intervals.
    confidence: float = 0.95
    #: ``--noise-aware``: in a run with repeats, keep a masking / execution-failure /
    #: bound-violation flag only when it survives the between-draw noise floor
    #: (:func:`tooldiag.metrics.repeats.surviving_flags`); no effect on a one-draw run.
    noise_aware: bool = False


@dataclass(frozen=True)
class CaseObservation:
    """What the diagnostic needs from one case (conversation)."""

    case_id: str
    category: str
    gold: ActionClass
    #: The benchmark's verdict; ``None`` when the case was not graded.
    passed: bool | None
    #: Per turn, the classes of the model's own emissions (injected text excluded).
    turns: tuple[frozenset[ActionClass], ...] = ()
    #: Indices of the turns where the gold class is due; ``None``: every turn.
    gold_turns: tuple[int, ...] | None = None
    #: ``True`` when inference failed for infrastructure reasons: not graded, not counted.
    errored: bool = False
    #: Per turn, the class of every counted emission in order, ``other`` included (the
    #: evidence rows of :mod:`tooldiag.metrics.cases`); ``None`` when the adapter kept only ``turns``.
    emissions: tuple[tuple[ActionClass, ...], ...] | None = None
    #: The grader's own error type (BFCL: ``multi_turn:instance_state_mismatch``), if any.
    error_type: str | None = None
    #: Suite-specific evidence columns (tau2: the write event), carried into the case rows.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def emitted(self) -> frozenset[ActionClass]:
        """E(case): the classes emitted at any turn (paper 001 §3.2)."""
        out: frozenset[ActionClass] = frozenset()
        for classes in self.turns:
            out |= classes
        return out


@dataclass(frozen=True)
class CategorySummary:
    """One cell group of Table 1 / Table 14 (percentages on 0..100)."""

    category: str
    gold: ActionClass
    n: int
    gar: float | None
    gar_ci: tuple[float, float] | None
    turn_gar: float | None
    turn_gar_ci: tuple[float, float] | None
    acc: float | None
    acc_ci: tuple[float, float] | None
    delta_pp: float | None
    flags: tuple[str, ...]
    gar_hits: int = 0
    acc_passed: int = 0
    acc_n: int = 0
    turn_gar_n: int = 0
    n_errors: int = 0


def emitted_gold(case: CaseObservation) -> bool:
    """Did the case emit its gold class at any turn? The indicator inside Eq. 1."""
    return case.gold in case.emitted


def case_gar(cases: Sequence[CaseObservation]) -> tuple[int, int]:
    """Case-level GAR as (hits, n): Pr_case[a*_cat in E(case)] (paper 001 Eq. 1, §3.2).

    Any-turn aggregation: a case counts when its gold class appears at any turn.
    """
    hits = sum(1 for case in cases if emitted_gold(case))
    return hits, len(cases)


def case_turn_rate(case: CaseObservation) -> float | None:
    """Share of a case's gold turns whose emissions include the gold class (App. E)."""
    indices = range(len(case.turns)) if case.gold_turns is None else case.gold_turns
    gold_turns = [i for i in indices if 0 <= i < len(case.turns)]
    if case.gold_turns is not None:
        # a gold turn the model never reached (force-terminated run) counts as a miss
        missing = [i for i in case.gold_turns if i >= len(case.turns)]
        total = len(gold_turns) + len(missing)
    else:
        total = len(gold_turns)
    if total == 0:
        return None
    hits = sum(1 for i in gold_turns if case.gold in case.turns[i])
    return hits / total


def turn_gar(cases: Sequence[CaseObservation]) -> tuple[float | None, int]:
    """Turn-level GAR (paper 001 App. E): the gold-class emission rate over each case's
    gold turns, averaged over cases. Returns (rate in 0..1 or ``None``, cases averaged);
    cases without any gold turn are left out.
    """
    rates = [rate for rate in (case_turn_rate(case) for case in cases) if rate is not None]
    if not rates:
        return None, 0
    return sum(rates) / len(rates), len(rates)


def accuracy(cases: Sequence[CaseObservation]) -> tuple[int, int]:
    """Conversation accuracy as (passed, graded): the grader's verdict (paper 001 §3.2)."""
    graded = [case for case in cases if case.passed is not None]
    return sum(1 for case in graded if case.passed), len(graded)


def overall_accuracy(category_acc: Iterable[float | None]) -> float | None:
    """BFCL's multi-turn overall accuracy: the unweighted mean of category accuracies."""
    values = [value for value in category_acc if value is not None]
    return sum(values) / len(values) if values else None


def delta_pp(gar: float | None, acc: float | None) -> float | None:
    """Delta = GAR - Acc in percentage points (paper 001 Table 1)."""
    if gar is None or acc is None:
        return None
    return gar - acc


def calibration_flags(
    gold: ActionClass, gar: float | None, acc: float | None, thresholds: Thresholds = Thresholds()
) -> list[str]:
    """Flags of one category (paper 001 §3.2 and Table 1 caption).

    ``bound_violation``: Acc > GAR, the grader passed cases that never emitted the gold
    class (masking of a miscalibration). ``masking``: Delta <= masking_pp on a category
    whose gold is not tool_call (the paper's missing-info categories; we apply it to
    every non-call gold, e.g. consent). ``execution_failure``: Delta >= execution_failure_pp
    on a tool_call category (the right class fired, execution failed downstream).
    """
    delta = delta_pp(gar, acc)
    if delta is None:
        return []
    flags = []
    if delta < -1e-9:
        flags.append(FLAG_BOUND_VIOLATION)
    if gold is ActionClass.TOOL_CALL:
        if delta >= thresholds.execution_failure_pp - 1e-9:
            flags.append(FLAG_EXECUTION_FAILURE)
    elif delta <= thresholds.masking_pp + 1e-9:
        flags.append(FLAG_MASKING)
    return flags


def summarize_category(
    category: str,
    cases: Sequence[CaseObservation],
    *,
    text_channel: bool = True,
    thresholds: Thresholds = Thresholds(),
) -> CategorySummary:
    """Every Table 1 / Table 14 number of one category.

    Errored cases (infrastructure failures) are excluded from n and flagged
    ``errors_excluded``. Without a text channel (``text_channel=False``: the run kept no
    text of non-call replies) GAR of a non-tool_call gold class cannot be measured: it
    is reported as ``None`` with ``gar_not_computable``, never as 0 or as a violation.
    """
    errors = [case for case in cases if case.errored]
    cases = [case for case in cases if not case.errored]
    golds = {case.gold for case in cases} or {case.gold for case in errors}
    if len(golds) > 1:
        raise ValueError(f"category {category!r} mixes gold classes {sorted(map(str, golds))}")
    gold = next(iter(golds)) if golds else ActionClass.OTHER
    flags: list[str] = []
    hits, n = case_gar(cases)
    measurable = text_channel or gold is ActionClass.TOOL_CALL
    gar = 100.0 * hits / n if n and measurable else None
    gar_ci = wilson_interval_pct(hits, n, thresholds.confidence) if measurable else None
    rate, turn_n = turn_gar(cases)
    t_gar = 100.0 * rate if rate is not None and measurable else None
    t_ci = (
        wilson_interval_pct(rate * turn_n, turn_n, thresholds.confidence)
        if t_gar is not None and rate is not None
        else None
    )
    passed, graded = accuracy(cases)
    acc = 100.0 * passed / graded if graded else None
    acc_ci = wilson_interval_pct(passed, graded, thresholds.confidence)
    if not measurable:
        flags.append(FLAG_NOT_COMPUTABLE)
    flags.extend(calibration_flags(gold, gar, acc, thresholds))
    if errors:
        flags.append(FLAG_ERRORS_EXCLUDED)
    return CategorySummary(
        category=category,
        gold=gold,
        n=n,
        gar=gar,
        gar_ci=gar_ci,
        turn_gar=t_gar,
        turn_gar_ci=t_ci,
        acc=acc,
        acc_ci=acc_ci,
        delta_pp=delta_pp(gar, acc),
        flags=tuple(flags),
        gar_hits=hits,
        acc_passed=passed,
        acc_n=graded,
        turn_gar_n=turn_n,
        n_errors=len(errors),
    )


@dataclass(frozen=True)
class CapabilityCounts:
    """Paper 001 App. A / Table 5: in how many cases each decision class was emitted."""

    n: int
    counts: Mapping[ActionClass, int] = field(default_factory=dict)
    t_cap: int = 10

    def capable(self, action: ActionClass) -> bool:
        """The class clears the threshold (emitted in at least ``t_cap`` cases)."""
        return self.counts.get(action, 0) >= self.t_cap

    @property
    def below_threshold(self) -> list[ActionClass]:
        return [action for action in CAPABILITY_CLASSES if not self.capable(action)]


def capability_counts(cases: Iterable[CaseObservation], thresholds: Thresholds = Thresholds()) -> CapabilityCounts:
    """Cases (over all categories) in which each non-other class was emitted at least once.

    Paper 001 App. A: "raw emission counts for each action class across N = 800 cases";
    counts are per case (xLAM-2-8b's tool_call count equals N), ``other`` excluded.
    A class emitted in fewer than T_cap cases is outside the model's demonstrated
    capability, so a low GAR for it says little about calibration.
    """
    counted = [case for case in cases if not case.errored]
    counts = {action: sum(1 for case in counted if action in case.emitted) for action in CAPABILITY_CLASSES}
    return CapabilityCounts(n=len(counted), counts=counts, t_cap=thresholds.t_cap)
