"""``tooldiag report --format html``: one self-contained page over BFCL runs (and probe runs).

The page is a list of :class:`~tooldiag.report.html.Section` objects, built in one place,
:func:`report_sections`, in the order a reader meets them. The sections of the other parts
of the report (the joint summary, the case browser, the judge section) slot in there,
each at its marked place. This module names suites (like :mod:`tooldiag.suites.cases`), so
it lives above them; the front door (:func:`tooldiag.api.html_report`) calls it.

With ``baseline`` the run directories are probe runs: the page then holds the probe
section (shifts against the baselines) and the calibration section of the baselines and
the probe runs together, so that a probe's effect shows in the scatter too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.metrics.gar import Thresholds
from tooldiag.report.html import Section, render_page
from tooldiag.report.html.calibration import calibration_section

if TYPE_CHECKING:
    from tooldiag.classify import Classifier
    from tooldiag.report.model import RunReport
    from tooldiag.suites.bfcl.probes.report import ProbeReport

TITLE = "tooldiag report"


def report_sections(reports: Sequence[RunReport], probe_report: ProbeReport | None = None) -> list[Section]:
    """The page's sections, in order. Every section of the report is added here and nowhere else."""
    sections: list[Section] = []
    # 1. joint summary (calibration + judge side by side): added here, first, by the joint view;
    #    it quotes tooldiag.report.html.calibration.calibration_summary(reports).
    sections.append(calibration_section(reports))
    if probe_report is not None:
        from tooldiag.suites.bfcl.probes.html import probe_section

        sections.append(probe_section(probe_report))
    # 3. case browser (tooldiag.report.html.cases): added here, after the numbers it explains.
    # 4. judge section (`--judgebench DIR`, tooldiag.report.html.judge): added here, last.
    return sections


def subtitle(reports: Sequence[RunReport]) -> str:
    """``Runs: ref/oracle (runs/oracle), ...``: what the page is about."""
    runs = [f"{r.name} ({r.source})" if r.source and r.source != r.name else r.name for r in reports]
    return "Runs: " + ", ".join(runs) if runs else "No run"


def footer(reports: Sequence[RunReport]) -> str:
    """Provenance: tooldiag version(s), classifier(s) and when the numbers were made."""
    provenance: list[dict[str, Any]] = [r.provenance for r in reports if r.provenance]
    versions = list(dict.fromkeys(str(p.get("tooldiag")) for p in provenance if p.get("tooldiag")))
    if not versions:
        from tooldiag.versions import tooldiag_version

        versions = [tooldiag_version()]
    classifiers = list(dict.fromkeys(r.classifier.scheme if r.classifier is not None else r.scheme for r in reports))
    created = next(
        (str(p["report_created_at"]) for p in provenance if p.get("report_created_at")),
        datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return (
        f"tooldiag {', '.join(versions)} · classifier {', '.join(classifiers) or 'default'} · created {created} · "
        "one self-contained file: open it in any browser, offline"
    )


def html_page(reports: Sequence[RunReport], probe_report: ProbeReport | None = None) -> str:
    """The whole document for ``reports`` (and the probe report, when there is one)."""
    return render_page(
        TITLE, report_sections(reports, probe_report), subtitle=subtitle(reports), footer=footer(reports)
    )


def html_report(
    run_dirs: Sequence[str | Path],
    classifier: Classifier | None = None,
    *,
    baseline: Sequence[str | Path] | None = None,
    thresholds: Thresholds = Thresholds(),
) -> str:
    """The page over run directories; with ``baseline``, ``run_dirs`` are probe runs of the same models."""
    from tooldiag.suites.bfcl.diagnostic import reports_from_run_dirs

    probe_report = None
    dirs = [Path(d) for d in run_dirs]
    if baseline:
        from tooldiag.suites.bfcl.probes.report import probe_report_from_dirs

        probe_report = probe_report_from_dirs(dirs, list(baseline), classifier)
        dirs = [Path(d) for d in baseline] + dirs
    reports = reports_from_run_dirs(dirs, classifier, thresholds=thresholds)
    return html_page(reports, probe_report)
