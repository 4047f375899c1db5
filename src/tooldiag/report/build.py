"""From case observations to :class:`RunReport` objects.

The report layer knows no suite: a suite's adapter (BFCL's is
:mod:`tooldiag.suites.bfcl.diagnostic`, agent logs' is :mod:`tooldiag.diagnose`)
turns its stored cases into plain :class:`~tooldiag.metrics.gar.CaseObservation`
objects, with the gold class and gold turns the benchmark fixes, and names its column
order; this module hands them to the pure metric functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tooldiag.classify.provenance import ClassifierSummary
from tooldiag.metrics.cases import case_rows
from tooldiag.metrics.gar import CaseObservation, Thresholds, capability_counts, overall_accuracy, summarize_category
from tooldiag.report.model import RunReport, ordered_categories


def build_report(
    name: str,
    cases: Sequence[CaseObservation],
    *,
    scheme: str,
    source: str = "",
    text_channel: bool = True,
    thresholds: Thresholds = Thresholds(),
    notes: Iterable[str] = (),
    category_order: Sequence[str] = (),
    classifier: ClassifierSummary | None = None,
) -> RunReport:
    """Every Table 1 / 14 / 5 number of one run from its case observations.

    ``category_order`` is the suite's column order (BFCL: the paper's); other
    categories follow alphabetically. ``classifier`` is what the adapter's
    :class:`~tooldiag.classify.provenance.CountingClassifier` counted while it classified.
    """
    by_category: dict[str, list[CaseObservation]] = {}
    for case in cases:
        by_category.setdefault(case.category, []).append(case)
    categories = {
        category: summarize_category(category, by_category[category], text_channel=text_channel, thresholds=thresholds)
        for category in ordered_categories(list(by_category), category_order)
    }
    return RunReport(
        name=name,
        source=source,
        scheme=scheme,
        categories=categories,
        capability=capability_counts(cases, thresholds),
        overall_acc=overall_accuracy(summary.acc for summary in categories.values()),
        thresholds=thresholds,
        notes=list(notes),
        category_order=tuple(category_order),
        classifier=classifier,
        cases=case_rows(cases, name),
    )
