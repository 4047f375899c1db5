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
from tooldiag.report.table import BLANK, Column, Table, no_escape, to_markdown

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
    return Evaluation(
        scheme=scheme, scores=scores, accuracy=correct / len(gold) if gold else 0.0, n=len(gold), confusion=confusion
    )


def _rate(name: str) -> Column:
    """A precision / recall / accuracy column: a fraction shown as a percentage, one decimal."""
    return Column(name, decimals=1, percent=True, missing="–")


def evaluation_table(evaluations: Sequence[Evaluation]) -> Table:
    """Precision / recall per class, one column pair per scheme, plus accuracy and macro-F1 rows.

    The accuracy and macro-F1 rows fill the P column of each scheme and leave R blank.
    """
    columns = [Column("class"), Column("support")]
    for e in evaluations:
        columns += [_rate(f"{e.scheme} P"), _rate(f"{e.scheme} R")]
    table = Table(columns=columns, key="classifier_evaluation")
    for i, action in enumerate(CLASS_ORDER):
        support = evaluations[0].scores[i].support if evaluations else 0
        cells = [value for e in evaluations for value in (e.scores[i].precision, e.scores[i].recall)]
        table.add(action.value, support, *cells)
    n = evaluations[0].n if evaluations else 0
    table.add("accuracy", n, *(value for e in evaluations for value in (e.accuracy, BLANK)))
    table.add("macro-F1", n, *(value for e in evaluations for value in (e.macro_f1, BLANK)))
    return table


def evaluation_markdown(evaluations: Sequence[Evaluation]) -> str:
    """Precision / recall per class, one column pair per scheme, plus accuracy and macro-F1."""
    return to_markdown(evaluation_table(evaluations), escape=no_escape, trailing_blanks="tight")


def confusion_table(evaluation: Evaluation) -> Table:
    """Rows gold, columns predicted."""
    columns = [Column(f"gold \\ {evaluation.scheme}", key="gold"), *(Column(a.value) for a in CLASS_ORDER)]
    table = Table(columns=columns, key=f"confusion_{evaluation.scheme}")
    for g in CLASS_ORDER:
        table.add(g.value, *(evaluation.confusion.get((g, p), 0) for p in CLASS_ORDER))
    return table


def confusion_markdown(evaluation: Evaluation) -> str:
    """Rows gold, columns predicted."""
    return to_markdown(confusion_table(evaluation), escape=no_escape)
