"""Tables of a classifier evaluation (:mod:`tooldiag.metrics.classification`): per-class
precision / recall beside accuracy, kappa and macro-F1, and the confusion matrix.

Printed by ``tooldiag classify --evaluate``, the audit report and ``bench/classifier_eval.py``
with the shared :class:`~tooldiag.report.table.Table`, so every renderer (md, csv, json, latex) applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from tooldiag.metrics.classification import CLASS_ORDER, Evaluation
from tooldiag.report.table import BLANK, Column, Table, no_escape, to_markdown

if TYPE_CHECKING:
    import pandas as pd


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


#: The table ``classify --evaluate --format parquet --out FILE.parquet`` writes; a folder gets both frames.
MAIN_EVALUATION_TABLE = "classifier_evaluation"


def evaluation_frames(evaluations: Sequence[Evaluation]) -> dict[str, pd.DataFrame]:
    """The evaluation as tidy DataFrames, rates as fractions (0..1), ``None`` where undefined.

    ``classifier_evaluation``: one row per scheme and class (``scheme, class, support,
    predicted, true_positive, precision, recall, f1``) with the scheme's ``n, accuracy,
    kappa, macro_f1`` repeated on each of its rows; ``confusion``: one row per scheme, gold
    and predicted class with its ``count`` (every pair, zeros included).
    """
    from tooldiag.report.frames import records_frame

    scores = [
        {
            "scheme": e.scheme,
            "class": s.action.value,
            "support": s.support,
            "predicted": s.predicted,
            "true_positive": s.true_positive,
            "precision": s.precision,
            "recall": s.recall,
            "f1": s.f1,
            "n": e.n,
            "accuracy": e.accuracy,
            "kappa": e.kappa,
            "macro_f1": e.macro_f1,
        }
        for e in evaluations
        for s in e.scores
    ]
    confusion = [
        {"scheme": e.scheme, "gold": g.value, "predicted": p.value, "count": e.confusion.get((g, p), 0)}
        for e in evaluations
        for g in CLASS_ORDER
        for p in CLASS_ORDER
    ]
    score_columns = ["scheme", "class", "support", "predicted", "true_positive", "precision", "recall", "f1", "n",
                     "accuracy", "kappa", "macro_f1"]  # fmt: skip
    return {
        MAIN_EVALUATION_TABLE: records_frame(scores, score_columns),
        "confusion": records_frame(confusion, ["scheme", "gold", "predicted", "count"]),
    }
