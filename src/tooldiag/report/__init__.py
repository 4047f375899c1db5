"""Calibration-profile reports (paper 001 Tables 1, 14 and 5) of runs and agent logs.

>>> from tooldiag.report import write_reports
>>> table = write_reports([Path("runs/oracle"), Path("runs/halt")], Path("reports"))  # doctest: +SKIP

``build`` turns stored runs into typed :class:`RunReport` objects, ``render`` formats
them (md, csv, json, latex), ``model.to_json`` is the stable JSON schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tooldiag.report.build import build_report, report_from_run_dir, reports_from_run_dirs
from tooldiag.report.model import RunReport, to_json
from tooldiag.report.render import FORMATS, render, table1_markdown

__all__ = [
    "FORMATS",
    "REPORT_FILES",
    "RunReport",
    "build_report",
    "render",
    "report_from_run_dir",
    "reports_from_run_dirs",
    "table1_markdown",
    "to_json",
    "write_report_files",
    "write_reports",
]

#: File written for each format by :func:`write_reports`.
REPORT_FILES = {"md": "report.md", "csv": "report.csv", "json": "report.json", "latex": "report.tex"}


def write_report_files(reports: Sequence[RunReport], out_dir: Path) -> dict[str, Path]:
    """Write every format of ``reports`` into ``out_dir``; returns format -> path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for fmt, filename in REPORT_FILES.items():
        path = out_dir / filename
        path.write_text(render(reports, fmt), encoding="utf-8")
        written[fmt] = path
    return written


def write_reports(run_dirs: list[Path], out_dir: Path, *, scheme: str = "default") -> str:
    """Report ``run_dirs`` in every format under ``out_dir``; return Table 1 as markdown.

    This is what ``tooldiag demo`` calls at its end.
    """
    reports = reports_from_run_dirs([Path(d) for d in run_dirs], scheme=scheme)
    write_report_files(reports, out_dir)
    return table1_markdown(reports)
