"""The ``corrected_rates`` table of the judgebench analysis (Rogan-Gladen corrected pass rates)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tooldiag.suites.judgebench.analysis import AnalysisSettings, corrected_rates
from tooldiag.suites.judgebench.evaluations import L_COLS, P_COLS, EvaluationData
from tooldiag.suites.judgebench.report import analyze, render_markdown

FAST = AnalysisSettings(n_resamples=300, workers=1)
PASS, FAIL = [1.0, 1.0, 0.5, 0.5], [0.0, 0.5, 0.0, 0.5]  # means 0.75 and 0.25


def frame_of(rows: list[list[object]]) -> pd.DataFrame:
    columns = ["judge", "generator", "difficulty", "condition", "record_id", "dag_type", *P_COLS, *L_COLS]
    return pd.DataFrame(rows, columns=columns)


def study(n: int = 800, seed: int = 0) -> pd.DataFrame:
    """A reference passing ~40 % of outputs; ``exact`` copies it, ``lenient`` passes 90 % of true passes and
    35 % of true fails, ``coin`` ignores the output (a chance judge)."""
    rng = np.random.default_rng(seed)
    rows: list[list[object]] = []
    for r in range(n):
        true_pass = bool(rng.random() < 0.4)
        p = PASS if true_pass else FAIL
        lenient = PASS if rng.random() < (0.9 if true_pass else 0.35) else FAIL
        coin = PASS if rng.random() < 0.5 else FAIL
        for judge, ell in (("exact", p), ("lenient", lenient), ("coin", coin)):
            rows.append([judge, "G1", "easy", "with_gt", f"r{r}", "linear", *p, *ell])
    return frame_of(rows)


def test_exact_judge_is_left_as_it_is() -> None:
    table = corrected_rates(study(), FAST).set_index("judge")
    row = table.loc["exact"]
    assert row["tpr"] == 100.0 and row["tnr"] == 100.0
    assert row["corrected_pass"] == row["observed_pass"] == row["reference_pass"]
    assert row["n_labelled"] + row["n_judged"] == 800 and 300 < row["n_labelled"] < 500  # a hashed half


def test_lenient_judge_is_corrected_toward_the_reference() -> None:
    row = corrected_rates(study(), FAST).set_index("judge").loc["lenient"]
    assert 80 < row["tpr"] < 97 and 57 < row["tnr"] < 73
    assert row["observed_pass"] > row["reference_pass"] + 10  # over-credits (expected +17 pp)
    assert abs(row["corrected_pass"] - row["reference_pass"]) < 6
    assert row["ci_low"] <= row["reference_pass"] <= row["ci_high"]


def test_chance_judge_has_no_corrected_rate() -> None:
    frame = study()
    frame = frame[frame["judge"] == "coin"].copy()
    frame[L_COLS] = PASS  # always "pass": TPR 1, TNR 0, Youden's J = 0
    row = corrected_rates(frame, FAST).iloc[0]
    assert row["tpr"] == 100.0 and row["tnr"] == 0.0
    assert np.isnan(row["corrected_pass"]) and np.isnan(row["ci_low"])
    assert "no better than chance" in row["note"]


def test_threshold_is_inclusive_and_missing_metric_counts_zero() -> None:
    rows: list[list[object]] = []
    for r in range(40):
        p = [0.5, 0.5, 0.5, 0.5] if r % 2 else [0.0, 0.0, 0.5, 0.5]  # mean exactly 0.5 passes; 0.25 fails
        ell = [1.0, 1.0, np.nan, 0.0] if r % 2 else [1.0, np.nan, 0.0, 0.0]  # means 0.5 and 0.25 with NaN as 0
        rows.append(["J", "G", "easy", "with_gt", f"r{r}", "linear", *p, *ell])
    row = corrected_rates(frame_of(rows), FAST).iloc[0]
    assert row["tpr"] == 100.0 and row["tnr"] == 100.0


def test_analyze_serves_the_table_markdown_and_guide_column() -> None:
    frame = study(n=200)
    data = EvaluationData(
        frame=frame,
        predictions=frame[["generator", "record_id", "difficulty", "dag_type"]].drop_duplicates().assign(status="ok"),
        judgements=frame[["judge", "generator", "record_id", "difficulty", "condition"]].assign(status="ok", missing=0),
    )
    report = analyze(data, FAST)
    table = report.tables["corrected_rates"]
    assert list(table["judge"]) == ["coin", "exact", "lenient"]
    guide = report.tables["decision_guide"].iloc[0]
    assert guide["best_judge"] == "exact"
    assert guide["corrected_pass_rate"] == table.set_index("judge").loc["exact", "corrected_pass"]
    text = render_markdown(report)
    assert "## Prevalence-corrected pass rates (Rogan-Gladen)" in text and "corrected_pass_rate" in text
    again = analyze(data, FAST).tables["corrected_rates"]
    pd.testing.assert_frame_equal(table, again)
