"""The probe section of the HTML report: Acc and GAR shifts of SRI / CRI runs (paper 001 Fig. 2, Tables 4, 6-11).

A :class:`~tooldiag.suites.bfcl.probes.report.ProbeReport` becomes plain
:class:`~tooldiag.report.html.calibration.ShiftPoint` rows (one per probe run, category and
metric, on the paired cases), drawn as one panel per metric by the suite-agnostic
:func:`~tooldiag.report.html.calibration.shift_panels`; the points table beside the panels
holds every bar, and the probe report's own tables follow. CRI-bypass GAR is not a model
measurement (reading A, App. C.2), so it is neither drawn nor tabled as GAR.
"""

from __future__ import annotations

from tooldiag.report.html import Section, figure_html, note_html, table_html
from tooldiag.report.html.calibration import ShiftPoint, shift_panels, shift_table
from tooldiag.suites.bfcl.probes.report import ProbeReport

METRICS = ("Acc", "GAR")


def shift_points(report: ProbeReport) -> list[ShiftPoint]:
    """Every Acc and GAR shift of ``report``'s comparisons (GAR left out for CRI-bypass)."""
    points = []
    for comp in report.comparisons:
        label = f"{comp.model} +{comp.probe}"
        for cat in comp.categories:
            points.append(ShiftPoint(label, cat.category, "Acc", cat.baseline.acc, cat.probe.acc))
            if comp.probe != "cri-bypass":
                points.append(ShiftPoint(label, cat.category, "GAR", cat.baseline.gar, cat.probe.gar))
    return points


def probe_section(report: ProbeReport, *, section_id: str = "probes") -> Section:
    """Shift panels (one per metric), their numbers, then Tables 4, 6-11 as the probe report lays them out."""
    points = shift_points(report)
    body = ["<h3>Acc and GAR shift per probe and category</h3>"]
    if points:
        metrics = [m for m in METRICS if any(p.metric == m and p.shift is not None for p in points)]
        body.append(
            figure_html(
                shift_panels(points, metrics),
                "Shift of each probe run against the baseline of its model, per category, on the cases graded in "
                "both (pp; one panel per metric, one bar per probe run). GAR is reading A (injected text left "
                "out), so CRI-bypass has no GAR bar.",
                figure_id="probe-shifts",
            )
        )
        body.append(table_html(shift_table(points), table_id="probe-shift-points"))
    else:
        body.append(note_html("No paired case to compare."))
    for table in report.tables:
        body.append(table_html(table, table_id=f"probe-{table.key}"))
    body.append(
        note_html(
            "GAR is reading A of paper 001 App. C.2 throughout: text the harness injected (the CRI-bypass "
            "placeholder) is never counted as a model emission."
        )
    )
    return Section(section_id, "Probe shifts", "".join(body))
