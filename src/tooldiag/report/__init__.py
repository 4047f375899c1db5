"""Calibration-profile reports (paper 001 Tables 1, 14 and 5) of runs and agent logs.

>>> from tooldiag.report import build_report, render
>>> print(render([build_report("my-agent", observations, scheme="default")], "md"))  # doctest: +SKIP

``build`` turns case observations into typed :class:`RunReport` objects, ``render``
formats them (md, csv, json, latex), ``model.to_json`` is the stable JSON schema.
This layer knows no suite: BFCL run directories are reported through
:mod:`tooldiag.suites.bfcl.diagnostic`, agent logs through :mod:`tooldiag.diagnose`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tooldiag.report.build import build_report
from tooldiag.report.model import RunReport, to_json
from tooldiag.report.render import FORMATS, render, table1_markdown

__all__ = [
    "FORMATS",
    "REPORT_FILES",
    "RunReport",
    "build_report",
    "render",
    "table1_markdown",
    "to_json",
    "write_report_files",
]

#: File written for each format by :func:`write_report_files`.
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
