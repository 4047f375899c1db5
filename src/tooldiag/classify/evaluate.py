"""Per-class precision and recall, accuracy and Cohen's kappa of a classifier on a labelled set.

Used by ``tooldiag classify --evaluate`` and ``bench/classifier_eval.py`` to produce
the scheme comparison in docs/diagnostic.md, and by a user who wants to know whether
an LLM judge (``--scheme llm``) agrees with their own labels before trusting it. The
metric arithmetic is scikit-learn's definition (precision = TP / predicted, recall =
TP / gold; kappa as ``sklearn.metrics.cohen_kappa_score``), written out here because
scikit-learn is only a dev dependency (and :mod:`tooldiag.metrics` sits above this layer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

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

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa of the predictions against the gold labels (:func:`cohen_kappa`)."""
        return cohen_kappa(self.confusion)

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


def cohen_kappa(confusion: Mapping[tuple[Any, Any], int]) -> float | None:
    """Unweighted Cohen's kappa of a confusion table ``{(gold, predicted): count}``.

    kappa = (p_o - p_e) / (1 - p_e), with p_o the share of agreeing pairs and
    p_e = sum_k (gold share of k) * (predicted share of k), the agreement expected by
    chance (Cohen 1960, "A coefficient of agreement for nominal scales"; the same value
    as ``sklearn.metrics.cohen_kappa_score`` and :func:`tooldiag.metrics.agreement.kappa_from_confusion`).
    ``None`` for an empty table; when both sides use one and the same class (p_e = 1),
    1.0 if they always agree, else ``None``.
    """
    n = sum(confusion.values())
    if n == 0:
        return None
    rows: dict[Any, int] = {}
    cols: dict[Any, int] = {}
    agree = 0
    for (gold, predicted), count in confusion.items():
        rows[gold] = rows.get(gold, 0) + count
        cols[predicted] = cols.get(predicted, 0) + count
        if gold == predicted:
            agree += count
    p_o = agree / n
    p_e = sum(rows[k] * cols.get(k, 0) for k in rows) / (n * n)
    if p_e >= 1.0:
        return 1.0 if p_o == 1.0 else None
    return (p_o - p_e) / (1.0 - p_e)


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


class Coefficient(NamedTuple):
    """A kappa cell in a rate column: printed as a coefficient (0.912), not as a percentage."""

    value: float


def _rate_text(value: float | Coefficient) -> str:
    return f"{value.value:.3f}" if isinstance(value, Coefficient) else f"{100 * value:.1f}"


def _rate(name: str) -> Column:
    """A precision / recall / accuracy column: a fraction shown as a percentage, one decimal
    (a :class:`Coefficient` cell as a coefficient)."""
    return Column(name, missing="–", format=_rate_text)


def evaluation_table(evaluations: Sequence[Evaluation]) -> Table:
    """Precision / recall per class, one column pair per scheme, plus accuracy, kappa and macro-F1 rows.

    The accuracy, kappa and macro-F1 rows fill the P column of each scheme and leave R blank
    (kappa is a coefficient in [-1, 1], printed with three decimals, not a percentage).
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
    kappas = [None if e.kappa is None else Coefficient(e.kappa) for e in evaluations]
    table.add("kappa", n, *(value for kappa in kappas for value in (kappa, BLANK)))
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
