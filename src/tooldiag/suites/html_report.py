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

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.metrics.gar import Thresholds
from tooldiag.report.html import Section, render_page
from tooldiag.report.html.calibration import calibration_section
from tooldiag.store.outputs import check_output_path

if TYPE_CHECKING:
    from tooldiag.classify import Classifier
    from tooldiag.report.model import RunReport
    from tooldiag.report.transcript import Transcript
    from tooldiag.suites.bfcl.probes.report import ProbeReport
    from tooldiag.suites.judgebench.analysis import JudgeBenchReport

TITLE = "tooldiag report"


def report_sections(
    reports: Sequence[RunReport],
    probe_report: ProbeReport | None = None,
    *,
    transcripts: Mapping[tuple[str, str], Transcript] | None = None,
    judge_report: JudgeBenchReport | None = None,
) -> list[Section]:
    """The page's sections, in order. Every section of the report is added here and nowhere else.

    1. the joint summary: the agent's calibration flags beside the judges' guide;
    2. the calibration profile (paper 001 Tables 1, 14, 5 and the GAR vs Acc scatter);
    3. the probe shifts, with ``--baseline``;
    4. the case browser (every case, its verdict, its transcript), after the numbers it explains;
    5. the judge study (paper 000), with ``--judgebench``.
    """
    from tooldiag.report.html.calibration import calibration_summary
    from tooldiag.report.html.cases import case_browser_section
    from tooldiag.report.html.joint import joint_section

    judge_lines: list[str] = []
    judge = None
    if judge_report is not None:
        from tooldiag.suites.judgebench.html import judge_section, judge_summary

        judge_lines = judge_summary(judge_report)
        judge = judge_section(judge_report)
    sections = [joint_section(calibration_summary(reports) if reports else [], judge_lines)]
    if reports:
        sections.append(calibration_section(reports))
    if probe_report is not None:
        from tooldiag.suites.bfcl.probes.html import probe_section

        sections.append(probe_section(probe_report))
    if reports:
        sections.append(case_browser_section(reports, transcripts or {}))
    if judge is not None:
        sections.append(judge)
    return sections


def subtitle(reports: Sequence[RunReport], judge_report: JudgeBenchReport | None = None) -> str:
    """``Runs: ref/oracle (runs/oracle), ...; judge study: ...``: what the page is about."""
    runs = [f"{r.name} ({r.source})" if r.source and r.source != r.name else r.name for r in reports]
    text = "Runs: " + ", ".join(runs) if runs else "No run"
    cells = judge_report.tables.get("cells") if judge_report is not None else None
    if cells is not None and "judge" in cells:
        text += "; judges: " + ", ".join(str(j) for j in dict.fromkeys(cells["judge"]))
    return text


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


def html_page(
    reports: Sequence[RunReport],
    probe_report: ProbeReport | None = None,
    *,
    transcripts: Mapping[tuple[str, str], Transcript] | None = None,
    judge_report: JudgeBenchReport | None = None,
) -> str:
    """The whole document for ``reports`` (and the probe report, the transcripts, the judge study)."""
    sections = report_sections(reports, probe_report, transcripts=transcripts, judge_report=judge_report)
    return render_page(TITLE, sections, subtitle=subtitle(reports, judge_report), footer=footer(reports))


def bfcl_transcript_map(
    reports: Sequence[RunReport], run_dirs: Sequence[str | Path], classifier: Classifier
) -> dict[tuple[str, str], Transcript]:
    """Every case's transcript of every run, keyed by the report's (possibly renamed) run name."""
    from tooldiag.report.html.cases import transcript_map
    from tooldiag.suites.bfcl.transcript import bfcl_transcripts

    out: dict[tuple[str, str], Transcript] = {}
    for report, run_dir in zip(reports, run_dirs, strict=True):
        out.update(transcript_map(bfcl_transcripts(run_dir, classifier, run=report.name)))
    return out


def html_report(
    run_dirs: Sequence[str | Path],
    classifier: Classifier | None = None,
    *,
    baseline: Sequence[str | Path] | None = None,
    thresholds: Thresholds = Thresholds(),
    judge_report: JudgeBenchReport | None = None,
) -> str:
    """The page over run directories; with ``baseline``, ``run_dirs`` are probe runs of the same models;
    with ``judge_report`` (a judgebench store's analysis), the judge study joins the page and its summary."""
    from tooldiag.classify import get_classifier
    from tooldiag.suites.bfcl.diagnostic import reports_from_run_dirs

    classifier = classifier or get_classifier("default")
    probe_report = None
    dirs = [Path(d) for d in run_dirs]
    if baseline:
        from tooldiag.suites.bfcl.probes.report import probe_report_from_dirs

        probe_report = probe_report_from_dirs(dirs, list(baseline), classifier)
        dirs = [Path(d) for d in baseline] + dirs
    reports = reports_from_run_dirs(dirs, classifier, thresholds=thresholds)
    transcripts = bfcl_transcript_map(reports, dirs, classifier)
    return html_page(reports, probe_report, transcripts=transcripts, judge_report=judge_report)


#: The page ``tooldiag demo`` writes beside the text reports.
HTML_REPORT_FILE = "report.html"


def write_html_report(
    path: str | Path,
    run_dirs: Sequence[str | Path],
    classifier: Classifier | None = None,
    *,
    reports: Sequence[RunReport] | None = None,
    judge_report: JudgeBenchReport | None = None,
) -> Path:
    """Write the page over ``run_dirs`` (and a judge study already analysed) to ``path``; return it.

    ``reports``: the runs' reports when the caller already built them (with ``classifier``), so
    that the stores are not read and classified twice (``tooldiag demo`` writes its text reports first).
    """
    from tooldiag.classify import get_classifier
    from tooldiag.suites.bfcl.diagnostic import reports_from_run_dirs

    classifier = classifier or get_classifier("default")
    dirs = [Path(d) for d in run_dirs]
    reports = list(reports) if reports is not None else reports_from_run_dirs(dirs, classifier)
    path = Path(path)
    check_output_path(path)
    page = html_page(reports, transcripts=bfcl_transcript_map(reports, dirs, classifier), judge_report=judge_report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
