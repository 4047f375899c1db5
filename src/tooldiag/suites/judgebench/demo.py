"""The offline judge-reliability demo: predict -> judge -> analyze with reference models.

Two perturbing generators plan the 36 built-in records at three difficulties; four reference
judges with known behaviour (exact, lenient, reference-anchored, flaky) score the plans with and
without the reference. The result shows the paper's Table 2 layout on data whose right answers
are known: the exact judge aligns 100 %, the lenient one drops with difficulty, the anchored one
gains from the reference (positive GT lift), the flaky one leaves nulls that are reported apart.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tooldiag.models import resolve_model
from tooldiag.suites.judgebench.analysis import AnalysisSettings, JudgeBenchReport
from tooldiag.suites.judgebench.evaluations import load_evaluations
from tooldiag.suites.judgebench.generate import predict
from tooldiag.suites.judgebench.judge import judge_predictions
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.suites.judgebench.report import analyze, summary_markdown, write_report
from tooldiag.suites.judgebench.store import JudgeBenchStore

DEMO_GENERATORS = ("ref/jb-perturb", "ref/jb-sloppy")
DEMO_JUDGES = ("ref/jb-exact", "ref/jb-lenient", "ref/jb-anchored", "ref/jb-flaky")
DEMO_CONDITIONS = ("with_gt", "without_gt")


def demo_report(out_dir: Path) -> JudgeBenchReport:
    """Run (or resume) the demo study under ``out_dir / "run"`` and analyse it (nothing written but the run).

    Separate from :func:`run_demo` so that a combined report (BFCL runs beside the judges) can take
    the analysis without the judgebench report folder.
    """
    out_dir = Path(out_dir)
    records = load_records()
    with JudgeBenchStore(out_dir / "run") as store:
        for generator in DEMO_GENERATORS:
            asyncio.run(predict(store, records, generator, resolve_model(generator)))
        for judge in DEMO_JUDGES:
            asyncio.run(judge_predictions(store, judge, resolve_model(judge), conditions=DEMO_CONDITIONS))
        data = load_evaluations(store)
    return analyze(data, AnalysisSettings())


def run_demo(out_dir: Path, report: JudgeBenchReport | None = None) -> str:
    """Run (or resume) the demo study under ``out_dir``; returns a short markdown summary.

    ``report``: the study's analysis when the caller already made it (:func:`demo_report`), so
    that ``tooldiag demo`` analyses once for its text report and its HTML page.
    """
    out_dir = Path(out_dir)
    report = report if report is not None else demo_report(out_dir)
    # No report.html here: ``tooldiag demo`` draws the judges into its one combined page (demo_report).
    title = "Judge reliability demo (reference models, built-in records)"
    write_report(report, out_dir / "report", ("md", "csv", "json", "parquet"), title=title)
    return summary_markdown(report) + f"\nFull report (md, csv, json): {out_dir / 'report'}\n"
