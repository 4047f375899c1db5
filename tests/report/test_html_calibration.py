"""The calibration section of report.html, and `tooldiag report --format html`, on real reference runs."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tooldiag
from tooldiag.cli.main import main
from tooldiag.metrics.gar import Thresholds
from tooldiag.report.html.calibration import calibration_section, calibration_summary, region_labels, scatter_table
from tooldiag.suites.bfcl.probes.html import probe_section, shift_points
from tooldiag.suites.html_report import html_page

POLICIES = ("oracle", "overcall", "halt")
CATEGORIES = ["base", "miss_func"]


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("html-calibration")
    dirs = []
    for policy in POLICIES:
        tooldiag.run_bfcl(f"ref/{policy}", base / policy, categories=CATEGORIES, limit=4)
        dirs.append(base / policy)
    return dirs


@pytest.fixture(scope="module")
def reports(run_dirs: list[Path]) -> list:
    return tooldiag.report_runs(run_dirs)


def html_table(page: str, table_id: str) -> list[list[str]]:
    """The cell texts of the table ``table_id`` (rows of the body), read from the page."""
    match = re.search(rf'<table class="sortable" id="{re.escape(table_id)}">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert match, f"no table {table_id}"
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", match.group(1))]


def figure_svg(page: str, figure_id: str) -> str:
    match = re.search(rf'<figure id="{re.escape(figure_id)}">(.*?)</figure>', page, re.S)
    assert match, f"no figure {figure_id}"
    return match.group(1)


def test_section_has_every_figure_and_table(reports):
    section = calibration_section(reports)
    assert section.id == "calibration" and section.title == "Calibration"
    for figure_id in ("cal-scatter", "cal-table1-figure", "cal-table14-figure", "cal-table5-figure"):
        assert "<svg" in figure_svg(section.body, figure_id)
    for table_id in ("cal-points", "cal-table1", "cal-table14", "cal-table5", "cal-verdicts", "cal-usage"):
        assert len(html_table(section.body, table_id)) >= len(reports)
    assert section.body.count("<svg") == 4
    assert "T_cap = 10" in figure_svg(section.body, "cal-table5-figure")  # the capability line, labelled
    # flags in words, as warnings: overcall masks on miss_func, halt fails to execute on base
    warnings = re.findall(r'<p class="warn">(.*?)</p>', section.body)
    assert any(w.startswith("ref/overcall, miss_func") and "masking" in w for w in warnings)
    assert any(w.startswith("ref/halt, base") and "execution failure" in w for w in warnings)
    assert not any(w.startswith("ref/oracle") for w in warnings)


def test_summary_says_what_each_run_does(reports):
    oracle, overcall, halt = calibration_summary(reports)
    miss_func = reports[1].categories["miss_func"]
    assert oracle == "ref/oracle: no calibration flag (Acc within GAR in every category)"
    assert f"masking on miss_func (GAR {miss_func.gar:.1f} vs Acc {miss_func.acc:.1f})" in overcall
    assert halt.startswith("ref/halt: execution failure on base (GAR 100.0 vs Acc")
    body = calibration_section(reports).body
    assert all(f">{line}</li>" in body for line in (oracle, overcall, halt))  # at the top of the section


def test_scatter_points_are_at_each_runs_gar_and_acc(reports):
    table = scatter_table(reports)
    columns = [table.column(name) for name in ("Run", "Category", "GAR", "Acc")]
    rows = {(run, category): (gar, acc) for run, category, gar, acc in zip(*columns, strict=True)}
    expected = {(r.name, c): (s.gar, s.acc) for r in reports for c, s in r.categories.items()}
    assert rows == expected and len(rows) == len(POLICIES) * len(CATEGORIES)
    # the page shows the same numbers: run, category, gold, n, GAR, lo, hi, Acc, ...
    cells = {(row[0], row[1]): (row[4], row[7]) for row in html_table(calibration_section(reports).body, "cal-points")}
    assert cells == {key: (f"{gar:.1f}", f"{acc:.1f}") for key, (gar, acc) in expected.items()}
    assert cells[("ref/overcall", "miss_func")][0] == "0.0" and cells[("ref/halt", "base")][0] == "100.0"


def test_regions_carry_the_configured_thresholds(reports, run_dirs, tmp_path):
    moved = Thresholds(masking_pp=-20.0, execution_failure_pp=50.0)
    relabelled = [dataclasses.replace(r, thresholds=moved) for r in reports]
    scatter = figure_svg(calibration_section(relabelled).body, "cal-scatter")
    labels = region_labels(moved)
    assert "Δ ≤ -20 pp" in labels["masking"] and "≥ 50 pp" in labels["execution_failure"]
    for label in labels.values():  # drawn on the figure (text stays text in the SVG), split at ": "
        assert all(part in scatter for part in label.split(": "))
    assert "Δ ≤ -15 pp" not in scatter
    # through the command line: --masking-pp reaches the figure
    out = tmp_path / "report.html"
    main(["report", *map(str, run_dirs), "--format", "html", "--out", str(out), "--masking-pp", "-25"])
    page = out.read_text(encoding="utf-8")
    assert "Δ ≤ -25 pp" in figure_svg(page, "cal-scatter") and "Δ ≤ -15 pp" not in page


def test_page_has_no_url_and_escapes_run_names(reports):
    hostile = [dataclasses.replace(reports[0], name="<b>evil</b> & co"), *reports[1:]]
    page = html_page(hostile)
    assert not re.search(r"https?://", page)
    assert "<b>evil</b>" not in page and "&lt;b&gt;evil&lt;/b&gt; &amp; co" in page
    assert page.startswith("<!DOCTYPE html>") and "<title>tooldiag report</title>" in page
    footer = re.search(r'<footer class="page">(.*?)</footer>', page, re.S)
    assert footer and f"tooldiag {tooldiag.__version__}" in footer.group(1) and "classifier default" in footer.group(1)


def test_html_needs_out_and_md_still_works(run_dirs):
    cmd = [sys.executable, "-m", "tooldiag", "report", str(run_dirs[0])]
    proc = subprocess.run([*cmd, "--format", "html"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error: --format html") and "--out" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0 and "| ref/oracle |" in proc.stdout


def test_probe_section_from_a_baseline_and_an_sri_run(tmp_path):
    base, sri = tmp_path / "base", tmp_path / "sri"
    tooldiag.run_bfcl("ref/halt-recoverable", base, categories=CATEGORIES, limit=3)
    tooldiag.run_bfcl("ref/halt-recoverable", sri, categories=CATEGORIES, limit=3, probe="sri")
    probe_report = tooldiag.probe_report([sri], [base])
    section = probe_section(probe_report)
    assert section.id == "probes" and "<svg" in figure_svg(section.body, "probe-shifts")
    points = {(p.category, p.metric): p for p in shift_points(probe_report)}
    comp = probe_report.comparisons[0]
    for cat in comp.categories:
        assert points[(cat.category, "Acc")].shift == cat.acc_shift
        assert points[(cat.category, "GAR")].shift == cat.gar_shift
    assert points[("base", "Acc")].shift > 0  # SRI recovers a recoverable halt: a real bar
    rows = html_table(section.body, "probe-shift-points")
    first = rows[0]
    assert first[:3] == ["ref/halt-recoverable +sri", "base", "Acc"]
    assert first[5] == f"{comp.categories[0].acc_shift:+.1f}"
    for table in probe_report.tables:  # the probe report's own tables (shifts, 4, 6, 9 here)
        assert html_table(section.body, f"probe-{table.key}")
    # the whole page through the front door: the calibration section of baseline and probe run, then the probes
    page = tooldiag.html_report([sri], baseline=[base])
    assert page.index('<section id="calibration">') < page.index('<section id="probes">')
    names = {row[0] for row in html_table(page, "cal-points")}
    assert names == {"ref/halt-recoverable", "ref/halt-recoverable +sri"}
    assert not re.search(r"https?://", page)
