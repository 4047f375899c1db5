"""The analysis on evaluation tables whose answers can be worked out by hand."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from tooldiag.metrics.agreement import (
    bin_verdicts,
    cell_rng,
    percentile_interval,
    split_by_codes,
    stratified_resample_means,
)
from tooldiag.suites.judgebench.analysis import AnalysisSettings
from tooldiag.suites.judgebench.evaluations import L_COLS, P_COLS, EvaluationData
from tooldiag.suites.judgebench.report import analyze, render_markdown, summary_markdown, write_report

FAST = AnalysisSettings(n_resamples=300, workers=2)
DAGS = ["linear", "fan_in", "diamond"]


def frame_from(rows):
    return pd.DataFrame(
        rows, columns=["judge", "generator", "difficulty", "condition", "record_id", "dag_type", *P_COLS, *L_COLS]
    )


def synthetic(
    seed=0, n_records=30, judges=("J1", "J2", "J3"), generators=("G1", "G2"), conditions=("with_gt", "without_gt")
):
    rng = np.random.default_rng(seed)
    rows = []
    for g in generators:
        for d in ("easy", "medium", "hard"):
            for r in range(n_records):
                p = rng.choice([0.0, 0.3333, 0.5, 0.6667, 1.0], size=4)
                for j in judges:
                    for c in conditions:
                        ell = np.clip(np.round((p + rng.normal(0, 0.3, 4)) * 2) / 2, 0, 1)
                        rows.append([j, g, d, c, f"r{r}", DAGS[r % 3], *p, *ell])
    return frame_from(rows)


def data_of(frame, predictions=None, judgements=None):
    if predictions is None:
        predictions = frame[["generator", "record_id", "difficulty", "dag_type"]].drop_duplicates().assign(status="ok")
    if judgements is None:
        judgements = frame[["judge", "generator", "record_id", "difficulty", "condition"]].assign(
            status="ok", missing=0
        )
    return EvaluationData(frame=frame, predictions=predictions, judgements=judgements)


def test_cells_table2_and_lift_by_hand():
    rows = []
    # J1: with GT exact on every record; without GT off by 0.5 on one metric of every record
    for d in ("easy", "hard"):
        for r in range(4):
            p = [1.0, 0.5, 0.0, 1.0]
            rows.append(["J1", "G1", d, "with_gt", f"r{r}", DAGS[r % 3], *p, *p])
            rows.append(["J1", "G1", d, "without_gt", f"r{r}", DAGS[r % 3], *p, 1.0, 1.0, 0.0, 1.0])
    report = analyze(data_of(frame_from(rows)), FAST)
    cells = report.tables["cells"]
    assert set(cells["alignment"][cells["condition"] == "with_gt"]) == {100.0}
    assert np.allclose(cells["alignment"][cells["condition"] == "without_gt"], 87.5)  # 1 - 0.5/4
    t2 = report.tables["table2"]
    assert list(t2.columns) == [
        "generator",
        "judge",
        "with_gt:easy",
        "with_gt:hard",
        "without_gt:easy",
        "without_gt:hard",
        "gt_lift",
    ]
    assert t2["gt_lift"].iloc[0] == pytest.approx(12.5)
    lift = report.tables["contrasts"]
    row = lift[lift["contrast"] == "gt_lift"].iloc[0]
    assert row["delta_pp"] == pytest.approx(12.5) and row["n_cells"] == 2
    # every record moves by exactly 12.5 pp, so the paired bootstrap has no spread
    assert row["ci_low"] == pytest.approx(12.5) and row["ci_high"] == pytest.approx(12.5)


def test_missing_metric_counts_zero_and_nulls_are_not_rows():
    rows = [["J1", "G1", "easy", "with_gt", "r0", "linear", 1, 1, 1, 1, 1, 1, np.nan, 1]]
    judgements = pd.DataFrame(
        [
            ["J1", "G1", "r0", "easy", "with_gt", "ok", 1],
            ["J1", "G1", "r1", "easy", "with_gt", "null", 0],
        ],
        columns=["judge", "generator", "record_id", "difficulty", "condition", "status", "missing"],
    )
    report = analyze(data_of(frame_from(rows), judgements=judgements), FAST)
    assert report.tables["cells"]["alignment"].iloc[0] == pytest.approx(75.0)
    nulls = report.tables["nulls"].iloc[0]
    assert (nulls["ok"], nulls["null"], nulls["replies_missing_a_metric"]) == (1, 1, 1)
    assert nulls["null_pct"] == pytest.approx(50.0)


def test_cell_cis_are_the_stratified_bootstrap_of_each_cell():
    frame = synthetic(1)
    report = analyze(data_of(frame), FAST)
    cells = report.tables["cells"]
    first = cells.iloc[0]
    keys = ["judge", "generator", "difficulty", "condition"]
    sub = frame[(frame[keys] == first[keys].to_numpy()).all(axis=1)].sort_values("record_id")
    mu = (1 - np.abs(sub[P_COLS].to_numpy() - sub[L_COLS].to_numpy())).mean(axis=1)
    groups = split_by_codes(mu, pd.factorize(sub["dag_type"], sort=True)[0])
    rng = cell_rng(42, "|".join(first[["judge", "generator", "difficulty"]]))
    lo, hi = percentile_interval(stratified_resample_means(groups, 300, rng))
    assert first["alignment"] == pytest.approx(100 * mu.mean())
    assert (first["ci_low"], first["ci_high"]) == pytest.approx((100 * lo, 100 * hi), abs=1e-9)
    assert (cells["ci_low"] <= cells["alignment"]).all() and (cells["alignment"] <= cells["ci_high"]).all()


def test_decision_guide_names_the_leader_and_says_when_cis_overlap():
    rows = []
    rng = np.random.default_rng(4)
    for r in range(60):
        p = rng.choice([0.0, 0.5, 1.0], size=4)
        noisy = np.clip(p + rng.choice([-0.5, 0, 0.5], size=4), 0, 1)
        for g in ("G1", "G2"):
            rows.append(["best", g, "hard", "with_gt", f"r{r}", DAGS[r % 3], *p, *p])
            rows.append(["twin", g, "hard", "with_gt", f"r{r}", DAGS[r % 3], *p, *(p if r else noisy)])
            rows.append(["noisy", g, "hard", "with_gt", f"r{r}", DAGS[r % 3], *p, *noisy])
    guide = analyze(data_of(frame_from(rows)), FAST).tables["decision_guide"].iloc[0]
    assert guide["best_judge"] == "best" and guide["alignment"] == 100.0
    assert guide["runner_up"] == "twin"
    assert "overlaps twin" in guide["verdict"] and "noisy" not in guide["verdict"]


def test_inter_judge_kappa_matches_sklearn_on_pooled_bins():
    frame = synthetic(2)
    report = analyze(data_of(frame), FAST)
    table = report.tables["inter_judge"]
    row = table[(table["condition"] == "with_gt") & (table["judge_a"] == "J1") & (table["judge_b"] == "J2")].iloc[0]
    sub = frame[frame["condition"] == "with_gt"].sort_values(["generator", "record_id", "difficulty"])
    a = bin_verdicts(sub[sub["judge"] == "J1"][L_COLS].to_numpy()).ravel()
    b = bin_verdicts(sub[sub["judge"] == "J2"][L_COLS].to_numpy()).ravel()
    assert row["n_verdicts"] == len(a)
    assert row["kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2]), abs=1e-9)
    assert row["exact_agreement_pct"] == pytest.approx(100 * np.mean(a == b))
    assert len(table) == 2 * 3  # two conditions x three pairs
    matrices = report.extras["confusion_matrices"]["matrices"]
    assert np.sum(matrices["with_gt|J1|J2"]) == len(a)
    confusion = report.tables["confusion"]
    pair = confusion[
        (confusion["condition"] == "with_gt") & (confusion["judge_a"] == "J1") & (confusion["judge_b"] == "J2")
    ]
    assert pair.filter(regex=r"^a.*_b").to_numpy().sum() == len(a)
    assert pair["a0.5_b1"].item() == int(np.sum((a == 1) & (b == 2)))


def test_binary_collapse_jury_and_reweighting_by_hand():
    rows = []
    for r in range(6):
        p = [0.3333, 1.0, 0.6667, 0.0]
        rows.append(["half", "G1", "easy", "with_gt", f"r{r}", DAGS[r % 3], *p, 0.5, 0.5, 0.5, 0.5])
        rows.append(["exact", "G1", "easy", "with_gt", f"r{r}", DAGS[r % 3], *p, *p])
    report = analyze(data_of(frame_from(rows)), FAST)
    binary = report.tables["binary_collapse"].set_index("judge")
    # half: |p - 0.5| = (0.1667, 0.5, 0.1667, 0.5) -> 66.67;
    # collapsed to (0, 1, 1, 0) -> (0.3333, 0, 0.3333, 0) -> 83.33
    assert binary.loc["half", "standard"] == pytest.approx(100 * (1 - (0.1667 + 0.5 + 0.1667 + 0.5) / 4), abs=1e-9)
    assert binary.loc["half", "binary"] == pytest.approx(100 * (1 - (0.3333 + 0 + 0.3333 + 0) / 4), abs=1e-9)
    assert binary.loc["half", "middle_verdict_pct"] == 100.0
    assert binary.loc["exact", "delta_pp"] < 0  # collapsing 0.3333/0.6667 into bins costs the exact judge
    jury = report.tables["soft_jury"].iloc[0]
    # jury values: mean(0.5, p) per metric; |p - jury| = |p - 0.5| / 2
    assert jury["jury_alignment"] == pytest.approx(100 * (1 - (0.1667 + 0.5 + 0.1667 + 0.5) / 8), abs=1e-9)
    assert jury["best_judge"] == "exact" and jury["best_judge_alignment"] == pytest.approx(100)
    weights = report.tables["reweighting"]
    assert set(weights["spearman_vs_equal"]) == {1.0}
    assert weights["ranking"].iloc[0] == "exact > half"


def test_self_preference_check_flags_a_judge_judging_itself():
    rows = []
    for g, bias in (("M", 0.5), ("G1", 0.0), ("G2", 0.1)):
        for r in range(5):
            p = [0.0, 0.0, 0.0, 0.0]
            rows.append(["M", g, "easy", "with_gt", f"r{r}", "linear", *p, bias, bias, bias, bias])
    report = analyze(data_of(frame_from(rows)), FAST)
    selfp = report.tables["self_preference"]
    overall = selfp[selfp["metric"] == "all"].iloc[0]
    assert overall["judge"] == "M" and overall["self_bias"] == pytest.approx(0.5)
    assert (overall["others_min"], overall["others_max"]) == pytest.approx((0.0, 0.1))
    assert overall["outside_others_range"]


def test_attrition_table_and_wilson():
    preds = pd.DataFrame(
        [["G1", f"r{i}", "hard", "linear", s] for i, s in enumerate(["ok"] * 7 + ["empty", "unparseable", "error"])],
        columns=["generator", "record_id", "difficulty", "dag_type", "status"],
    )
    frame = synthetic(3, n_records=3, judges=("J1",), generators=("G1",), conditions=("with_gt",))
    att = analyze(data_of(frame, predictions=preds), FAST).tables["attrition"].iloc[0]
    assert (att["ok"], att["empty"], att["unparseable"], att["error"], att["inputs"]) == (7, 1, 1, 1, 10)
    assert att["attrition_pct"] == pytest.approx(100 * 2 / 9)  # errors are retried, not attrition
    assert 0 <= att["ci_low"] < att["attrition_pct"] < att["ci_high"] <= 100


def test_reports_in_every_format(tmp_path):
    report = analyze(data_of(synthetic(5)), FAST)
    written = write_report(report, tmp_path / "out")
    names = {p.name for p in written}
    assert {"report.md", "report.json", "table2.csv", "decision_guide.csv", "cells.csv", "inter_judge.csv"} <= names
    payload = json.loads((tmp_path / "out" / "report.json").read_text())
    assert payload["extras"]["bootstrap"]["resamples"] == 300
    assert len(payload["tables"]["cells"]) == 3 * 2 * 3 * 2
    md = (tmp_path / "out" / "report.md").read_text()
    for heading in ("paper Table 2 layout", "Decision guide", "Inter-judge agreement", "Soft jury", "Judge nulls"):
        assert heading in md
    assert md == render_markdown(report)
    summary = summary_markdown(report)
    assert summary.startswith("Alignment (%)") and "[" not in summary  # safe for rich markup
    assert pd.read_csv(tmp_path / "out" / "tables" / "cells.csv").shape[0] == 36
