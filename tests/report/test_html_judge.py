"""The judge section of the HTML report on the judgebench demo pipeline (reference judges, built-in records)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import tooldiag
from tests.support.html_tables import parse_html
from tooldiag.cli.main import main
from tooldiag.suites.judgebench.analysis import AnalysisSettings, JudgeBenchReport
from tooldiag.suites.judgebench.demo import DEMO_CONDITIONS, DEMO_GENERATORS, DEMO_JUDGES
from tooldiag.suites.judgebench.evaluations import L_COLS, P_COLS, EvaluationData
from tooldiag.suites.judgebench.html import judge_section, judge_summary, judgebench_page
from tooldiag.suites.judgebench.report import analyze

#: Figure id -> the table id holding the numbers it draws, and the report frame behind that table.
FIGURES = {
    "jb-fig-difficulty": ("jb-cells", "cells"),
    "jb-fig-metric": ("jb-per-metric", "per_metric"),
    "jb-fig-dag": ("jb-per-dag", "per_dag"),
    "jb-fig-lift": ("jb-contrasts", "contrasts"),
    "jb-fig-kappa": ("jb-kappa", "inter_judge"),
    "jb-fig-confusion": ("jb-confusion", "confusion"),
}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> tuple[object, JudgeBenchReport]:
    """The demo's pipeline (two generators, four reference judges, with and without the reference), 200 resamples."""
    run_dir = tmp_path_factory.mktemp("jb") / "run"
    tooldiag.judgebench_predict(run_dir, list(DEMO_GENERATORS))
    tooldiag.judgebench_judge(run_dir, list(DEMO_JUDGES), conditions=list(DEMO_CONDITIONS))
    return run_dir, tooldiag.judgebench_analyze(run_dir, resamples=200)


@pytest.fixture(scope="module")
def page(demo_run) -> str:
    return judgebench_page(demo_run[1])


def _same(cell_value: float | None, frame_value: object) -> bool:
    if frame_value is None or (isinstance(frame_value, float) and math.isnan(frame_value)):
        return cell_value is None
    return cell_value is not None and cell_value == pytest.approx(float(frame_value), abs=1e-9)  # type: ignore[arg-type]


def test_every_figure_sits_above_the_table_of_its_numbers(page):
    tables, ids = parse_html(page)
    for figure_id, (table_id, _) in FIGURES.items():
        assert figure_id in ids and table_id in tables
        assert ids.index(figure_id) < ids.index(table_id)
        start = page.index(f'id="{figure_id}"')
        assert page.index("<svg", start) < page.index("</figure>", start)
    assert {"jb-guide", "jb-table2"} <= set(tables)
    assert page.count("<svg") == len(FIGURES)
    assert "http://" not in page and "https://" not in page


@pytest.mark.parametrize(("table_id", "name"), [*FIGURES.values(), ("jb-table2", "table2")])
def test_numbers_in_the_tables_are_the_report_frames(page, demo_run, table_id, name):
    frame: pd.DataFrame = demo_run[1].tables[name]
    table = parse_html(page)[0][table_id]
    assert table.header == [str(c) for c in frame.columns]
    assert len(table.rows) == len(frame) > 0
    for column in frame.columns:
        cells = table.column(str(column))
        if frame[column].dtype.kind in "if":
            assert all(_same(c.value, v) for c, v in zip(cells, frame[column], strict=True)), column
        else:
            assert [c.text for c in cells] == [str(v) if v is not None else "" for v in frame[column]], column


def test_decision_guide_table_holds_every_verdict(page, demo_run):
    guide = demo_run[1].tables["decision_guide"]
    table = parse_html(page)[0]["jb-guide"]
    assert table.column("verdict") and [c.text for c in table.column("verdict")] == list(guide["verdict"])
    assert [c.text for c in table.column("best_judge")] == list(guide["best_judge"])
    assert all(_same(c.value, v) for c, v in zip(table.column("alignment"), guide["alignment"], strict=True))


def test_summary_names_the_best_judges_of_the_guide(demo_run):
    report = demo_run[1]
    sentences = judge_summary(report)
    guide = report.tables["decision_guide"]
    assert sentences[0].startswith("With the reference, trust ref/jb-exact at every difficulty")
    assert sentences[1].startswith("Without the reference, trust ref/jb-exact")
    for sentence, condition in zip(sentences, ("with_gt", "without_gt"), strict=False):
        assert set(guide[guide["condition"] == condition]["best_judge"]) <= {
            j for j in DEMO_JUDGES if f"trust {j}" in sentence
        }
    assert sentences[-1].startswith("The reference helps ref/jb-anchored most: GT lift +")
    section = judge_section(report)
    assert all(s.replace("'", "&#x27;") in section.body for s in sentences)


def _guide_row(condition, difficulty, best, alignment, runner_up, verdict):
    return {"condition": condition, "difficulty": difficulty, "best_judge": best, "alignment": alignment,
            "ci_low": alignment - 1, "ci_high": alignment + 1, "runner_up": runner_up,
            "runner_up_alignment": alignment - 2, "verdict": verdict}  # fmt: skip


def test_summary_splits_difficulties_between_judges_and_flags_overlaps():
    guide = pd.DataFrame(
        [
            _guide_row("without_gt", "easy", "A", 90.0, "B", "A leads; CI clear of every other judge"),
            _guide_row("without_gt", "medium", "A", 80.0, "B", "A leads; its CI overlaps B: not a clear winner"),
            _guide_row("without_gt", "hard", "B", 70.0, "A", "B leads; CI clear of every other judge"),
            _guide_row("corrupted_gt", "hard", "C", 60.0, None, "C is the only judge run"),
        ]
    )
    sentences = judge_summary(JudgeBenchReport(tables={"decision_guide": guide}))
    assert sentences == [
        "Without the reference, trust A at easy and medium; trust B at hard "
        "(alignment 90.0 % at easy, 80.0 % at medium, 70.0 % at hard); "
        "not a clear winner at medium its CI overlaps B.",
        "Under corrupted_gt, trust C at hard (alignment 60.0 % at hard).",
    ]


def test_names_from_data_are_escaped():
    """A judge named like markup shows as text in tables, notes and figures (SVG text is escaped too)."""
    rows = []
    for judge, noise in (("<b>J1</b>", 0.0), ("J&2", 0.5)):
        for difficulty in ("easy", "hard"):
            for r in range(6):
                p = [1.0, 0.5, 0.0, 1.0]
                ell = [min(1.0, v + noise * (r % 2)) for v in p]
                for condition in ("with_gt", "without_gt"):
                    rows.append([judge, "G<1>", difficulty, condition, f"r{r}", "linear", *p, *ell])
    frame = pd.DataFrame(
        rows, columns=["judge", "generator", "difficulty", "condition", "record_id", "dag_type", *P_COLS, *L_COLS]
    )
    predictions = frame[["generator", "record_id", "difficulty", "dag_type"]].drop_duplicates().assign(status="ok")
    judgements = frame[["judge", "generator", "record_id", "difficulty", "condition"]].assign(status="ok", missing=0)
    report = analyze(EvaluationData(frame=frame, predictions=predictions, judgements=judgements),
                     AnalysisSettings(n_resamples=50, workers=1))  # fmt: skip
    page = judgebench_page(report)
    assert "<b>J1" not in page and "G<1>" not in page
    assert "&lt;b&gt;J1&lt;/b&gt;" in page and "J&amp;2" in page
    assert "http://" not in page and "https://" not in page


def test_analyze_formats_html_writes_the_page(demo_run, tmp_path, capsys):
    run_dir = demo_run[0]
    main(["judgebench", "analyze", "--run-dir", str(run_dir), "--resamples", "50", "--formats", "md,html",
          "--out", str(tmp_path / "out")])  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.html", "report.md"]
    page = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and '<section id="judges">' in page
    assert all(f'id="{figure_id}"' in page for figure_id in FIGURES)
    assert "2 files in" in capsys.readouterr().out
