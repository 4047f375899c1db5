"""Per-class precision and recall, accuracy and Cohen's kappa of a classifier on a labelled set.

Used by ``tooldiag classify --evaluate``, ``tooldiag audit report`` and
``bench/classifier_eval.py``, and by a user who wants to know whether an LLM judge
(``--scheme llm``) agrees with their own labels before trusting it. The arithmetic is
scikit-learn's definition (precision = TP / predicted, recall = TP / gold), written out
because scikit-learn is only a dev dependency; kappa is :mod:`tooldiag.metrics.agreement`'s
(the one Cohen's kappa of the package). The tables are :mod:`tooldiag.report.classification`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tooldiag.classify.classes import ActionClass
from tooldiag.metrics.agreement import kappa_from_confusion

#: Row order of the tables: the paper's priority order.
CLASS_ORDER: tuple[ActionClass, ...] = (
    ActionClass.TOOL_CALL,
    ActionClass.ASK,
    ActionClass.REFUSE,
    ActionClass.CONFIRM,
    ActionClass.OTHER,
)


@dataclass(frozen=True)
class ClassScore:
    action: ActionClass
    support: int
    predicted: int
    true_positive: int

    @property
    def precision(self) -> float | None:
        return self.true_positive / self.predicted if self.predicted else None

    @property
    def recall(self) -> float | None:
        return self.true_positive / self.support if self.support else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None if p is None or r is None else 0.0
        return 2 * p * r / (p + r)


@dataclass(frozen=True)
class Evaluation:
    scheme: str
    scores: tuple[ClassScore, ...]
    accuracy: float
    n: int
    confusion: dict[tuple[ActionClass, ActionClass], int]

    @property
    def macro_f1(self) -> float:
        values = [s.f1 or 0.0 for s in self.scores if s.support]
        return sum(values) / len(values) if values else 0.0

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa of the predictions against the gold labels; ``None`` for no labels, and
        where both sides used one class throughout and still disagree (undefined)."""
        matrix = [[self.confusion.get((g, p), 0) for p in CLASS_ORDER] for g in CLASS_ORDER]
        if not self.n:
            return None
        value = kappa_from_confusion(matrix)  # type: ignore[arg-type]
        return None if math.isnan(value) else value

    def to_json(self) -> dict[str, Any]:
        """``{"scheme", "n", "accuracy", "kappa", "macro_f1", "classes": {...}, "confusion": {...}}``:
        rates as fractions (0..1) rounded to 4 decimals, ``null`` where undefined; the
        confusion matrix as ``{gold: {predicted: count}}`` over every class."""
        return {
            "scheme": self.scheme,
            "n": self.n,
            "accuracy": _round(self.accuracy),
            "kappa": _round(self.kappa),
            "macro_f1": _round(self.macro_f1),
            "classes": {
                s.action.value: {
                    "precision": _round(s.precision),
                    "recall": _round(s.recall),
                    "support": s.support,
                    "predicted": s.predicted,
                }
                for s in self.scores
            },
            "confusion": {g.value: {p.value: self.confusion.get((g, p), 0) for p in CLASS_ORDER} for g in CLASS_ORDER},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def evaluate(scheme: str, gold: Sequence[ActionClass], predicted: Sequence[ActionClass]) -> Evaluation:
    """Per-class counts, accuracy and the confusion matrix of ``predicted`` against ``gold``."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted labels differ in length")
    confusion: dict[tuple[ActionClass, ActionClass], int] = {}
    for g, p in zip(gold, predicted):
        confusion[(g, p)] = confusion.get((g, p), 0) + 1
    scores = tuple(
        ClassScore(
            action=action,
            support=sum(1 for g in gold if g is action),
            predicted=sum(1 for p in predicted if p is action),
            true_positive=confusion.get((action, action), 0),
        )
        for action in CLASS_ORDER
    )
    correct = sum(1 for g, p in zip(gold, predicted) if g is p)
    return Evaluation(
        scheme=scheme, scores=scores, accuracy=correct / len(gold) if gold else 0.0, n=len(gold), confusion=confusion
    )
