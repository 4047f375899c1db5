"""Report content as typed data, kept apart from rendering.

A :class:`RunReport` holds every number of paper 001's Table 1 (calibration profile),
Table 14 (case- vs turn-level GAR) and Table 5 (capability counts) for one run; the
renderers in :mod:`tooldiag.report.render` only format it. :func:`to_json` is the
stable JSON schema documented in docs/diagnostic.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tooldiag.classify.provenance import ClassifierSummary
from tooldiag.metrics.cases import CaseRow
from tooldiag.metrics.gar import CAPABILITY_CLASSES, CapabilityCounts, CategorySummary, Thresholds
from tooldiag.metrics.repeats import RepeatSummary
from tooldiag.store.usage import UsageSummary


@dataclass
class RunReport:
    """The diagnostic of one run (or one agent log)."""

    name: str
    source: str
    scheme: str
    categories: dict[str, CategorySummary]
    capability: CapabilityCounts
    overall_acc: float | None
    thresholds: Thresholds = field(default_factory=Thresholds)
    notes: list[str] = field(default_factory=list)
    #: The suite's column order (BFCL: the paper's); categories not in it follow alphabetically.
    category_order: tuple[str, ...] = ()
    #: Which classifier produced the classes (judge, prompt, fallbacks, languages without cue data).
    classifier: ClassifierSummary | None = None
    #: The evidence: one row per case, in the suite's case order (:mod:`tooldiag.metrics.cases`).
    cases: list[CaseRow] = field(default_factory=list)
    #: Who and what wrote the numbers (versions, classifier, run config without secrets);
    #: filled by the suite's adapter, ``None`` when it knows nothing.
    provenance: dict[str, Any] | None = None
    #: What the run cost (requests, retries, cache hits, tokens, latency, wall time), from the
    #: store; ``None`` for inputs that are not run stores (agent logs).
    usage: UsageSummary | None = None
    #: Per category, the summary over draws of a run with ``--repeats`` above 1
    #: (:mod:`tooldiag.metrics.repeats`); ``None`` for a one-draw run. The tables describe draw 0.
    repeats: dict[str, RepeatSummary] | None = None


def ordered_categories(names: Sequence[str] | set[str], order: Sequence[str] = ()) -> list[str]:
    """``names`` in the suite's ``order`` first, then the rest alphabetically."""
    known = [name for name in dict.fromkeys(order) if name in names]
    return known + sorted(name for name in names if name not in known)


def report_order(reports: Sequence[RunReport]) -> tuple[str, ...]:
    """The column order shared by ``reports``: their suites' orders, first seen first."""
    return tuple(dict.fromkeys(name for report in reports for name in report.category_order))


def _num(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _pair(values: tuple[float, float] | None) -> list[float] | None:
    return None if values is None else [round(values[0], 4), round(values[1], 4)]


def category_json(summary: CategorySummary) -> dict[str, Any]:
    return {
        "n": summary.n,
        "gold_class": summary.gold.value,
        "gar": _num(summary.gar),
        "gar_ci": _pair(summary.gar_ci),
        "turn_gar": _num(summary.turn_gar),
        "acc": _num(summary.acc),
        "acc_ci": _pair(summary.acc_ci),
        "delta_pp": _num(summary.delta_pp),
        "flags": list(summary.flags),
    }


def run_json(report: RunReport) -> dict[str, Any]:
    """One entry of ``"runs"``; ``"classifier"`` comes last and only when the report knows it."""
    run: dict[str, Any] = {
        "name": report.name,
        "overall_acc": _num(report.overall_acc),
        "categories": {
            name: category_json(report.categories[name])
            for name in ordered_categories(list(report.categories), report.category_order)
        },
        "capability_counts": {
            action.value: int(report.capability.counts.get(action, 0)) for action in CAPABILITY_CLASSES
        },
    }
    if report.classifier is not None:
        run["classifier"] = report.classifier.to_json()
    if report.provenance is not None:
        run["provenance"] = report.provenance
    if report.usage is not None:
        run["usage"] = report.usage.to_json()
    run["cases"] = [row.to_json() for row in report.cases]
    if report.repeats:
        from tooldiag.report.repeats import repeat_json

        run["repeats"] = {name: repeat_json(summary) for name, summary in report.repeats.items()}
    return run


#: Writer keys that are not versions, or whose differences do not change a number (a Python patch release).
_NOT_COMPARED = frozenset({"first_written_at", "python", "unknown"})
UNKNOWN_VERSION = "unknown"


def mixed_versions(reports: Sequence[RunReport]) -> dict[str, list[str]] | None:
    """Package -> the distinct versions that wrote the runs of ``reports``, for every package
    written by more than one (``None`` when all agree).

    Reads ``provenance["writers"]`` (the run store's writer list). A writer from before
    writers were recorded counts as version ``"unknown"`` of every package; a package a
    writer did not have installed counts as ``"absent"``.
    """
    writers = [w for r in reports if r.provenance for w in r.provenance.get("writers") or [] if isinstance(w, dict)]
    keys = list(dict.fromkeys(k for w in writers if not w.get("unknown") for k in w if k not in _NOT_COMPARED))
    mixed: dict[str, list[str]] = {}
    for key in keys:
        values = [
            UNKNOWN_VERSION if w.get("unknown") else "absent" if w.get(key) is None else str(w[key]) for w in writers
        ]
        distinct = list(dict.fromkeys(values))
        if len(distinct) > 1:
            mixed[key] = distinct
    return mixed or None


def mixed_versions_note(mixed: dict[str, list[str]]) -> str:
    """The report note naming the versions (``written by different versions: tooldiag 0.1.0, 0.2.0``)."""
    parts = "; ".join(f"{key} {', '.join(values)}" for key, values in mixed.items())
    return f"runs written by different versions ({parts}): numbers may not be comparable across them"


def to_json(reports: Sequence[RunReport]) -> dict[str, Any]:
    """``{"runs": [{"name", "overall_acc", "categories": {...}, "capability_counts": {...}, "classifier"}]}``.

    Percentages on 0..100, rounded to 4 decimals; ``null`` where a number is not
    defined (no graded case, GAR not computable). The keys of the issue's schema are
    unchanged; the one addition, ``"classifier"`` (which classifier produced the
    classes: docs/diagnostic.md, "Report formats"), is a separate object a strict
    consumer of the old schema can drop.
    """
    data: dict[str, Any] = {"runs": [run_json(report) for report in reports]}
    mixed = mixed_versions(reports)
    if mixed:
        data["mixed_versions"] = mixed
    return data
