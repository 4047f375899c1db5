"""Tables of a classifier evaluation (:mod:`tooldiag.metrics.classification`): per-class
precision / recall beside accuracy, kappa and macro-F1, and the confusion matrix.

Printed by ``tooldiag classify --evaluate``, the audit report and ``bench/classifier_eval.py``
with the shared :class:`~tooldiag.report.table.Table`, so every renderer (md, csv, json, latex) applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from tooldiag.metrics.classification import CLASS_ORDER, Evaluation
from tooldiag.report.table import BLANK, Column, Table, no_escape, to_markdown


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
