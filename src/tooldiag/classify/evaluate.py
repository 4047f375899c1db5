"""Per-class precision and recall of a classifier scheme on a labelled set.

Used by ``tooldiag classify --evaluate`` and ``bench/classifier_eval.py`` to produce
the scheme comparison in docs/diagnostic.md. The metric arithmetic is scikit-learn's
definition (precision = TP / predicted, recall = TP / gold), written out here because
scikit-learn is only a dev dependency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tooldiag.classify.classes import ActionClass

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
    return Evaluation(scheme=scheme, scores=scores, accuracy=correct / len(gold) if gold else 0.0, n=len(gold), confusion=confusion)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def evaluation_markdown(evaluations: Sequence[Evaluation]) -> str:
    """Precision / recall per class, one column pair per scheme, plus accuracy and macro-F1."""
    header = "| class | support | " + " | ".join(f"{e.scheme} P | {e.scheme} R" for e in evaluations) + " |"
    lines = [header, "|---|---|" + "---|---|" * len(evaluations)]
    for i, action in enumerate(CLASS_ORDER):
        support = evaluations[0].scores[i].support if evaluations else 0
        cells = " | ".join(f"{_pct(e.scores[i].precision)} | {_pct(e.scores[i].recall)}" for e in evaluations)
        lines.append(f"| {action.value} | {support} | {cells} |")
    n = evaluations[0].n if evaluations else 0
    lines.append(f"| accuracy | {n} | " + " | ".join(f"{100 * e.accuracy:.1f} | " for e in evaluations) + "|")
    lines.append(f"| macro-F1 | {n} | " + " | ".join(f"{100 * e.macro_f1:.1f} | " for e in evaluations) + "|")
    return "\n".join(lines) + "\n"


def confusion_markdown(evaluation: Evaluation) -> str:
    """Rows gold, columns predicted."""
    lines = [f"| gold \\ {evaluation.scheme} | " + " | ".join(a.value for a in CLASS_ORDER) + " |", "|---|" + "---|" * len(CLASS_ORDER)]
    for g in CLASS_ORDER:
        lines.append(f"| {g.value} | " + " | ".join(str(evaluation.confusion.get((g, p), 0)) for p in CLASS_ORDER) + " |")
    return "\n".join(lines) + "\n"
