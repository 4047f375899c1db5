"""judgebench as DataFrames: load_judgebench and ``analyze --formats parquet``, against the report they come from."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import tooldiag
from tooldiag.cli.main import main
from tooldiag.errors import UserError
from tooldiag.suites.judgebench.evaluations import JUDGEMENT_COLUMNS, L_COLS, P_COLS


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("jb") / "run"
    main(["judgebench", "predict", "-g", "ref/jb-perturb", "--run-dir", str(run), "--limit", "8",
          "--difficulties", "easy,hard", "-q"])  # fmt: skip
    main(["judgebench", "judge", "-j", "ref/jb-exact", "-j", "ref/jb-anchored", "--run-dir", str(run), "-q",
          "--conditions", "with_gt,without_gt"])  # fmt: skip
    return run


def test_judgements_frame(judged_run):
    frame = tooldiag.load_judgebench(judged_run)
    assert list(frame.columns) == JUDGEMENT_COLUMNS
    # 2 judges x 2 conditions x (8 records x 2 difficulties) usable plans at most
    assert 0 < len(frame) <= 2 * 2 * 16
    assert set(frame["status"]) <= {"ok", "null", "error"} and set(frame["difficulty"]) == {"easy", "hard"}
    ok = frame[frame["status"] == "ok"]
    assert ok["dag_type"].notna().all() and ok["alignment"].between(0, 1).all()
    # the exact judge reproduces the programmatic scores: alignment 1 on every verdict it gave
    exact = ok[ok["judge"] == "ref/jb-exact"]
    assert np.allclose(exact[L_COLS].to_numpy(), exact[P_COLS].to_numpy()) and (exact["alignment"] == 1).all()


def test_alignment_and_tables_agree_with_the_report(judged_run, tmp_path, capsys):
    out = tmp_path / "report"
    main(["judgebench", "analyze", "--run-dir", str(judged_run), "--resamples", "50", "--out", str(out),
          "--formats", "json,parquet"])  # fmt: skip
    capsys.readouterr()
    report = json.loads((out / "report.json").read_text())
    cells = tooldiag.load_judgebench(judged_run, "alignment", resamples=50)
    assert list(cells.columns) == [
        "judge",
        "generator",
        "difficulty",
        "condition",
        "n",
        "alignment",
        "ci_low",
        "ci_high",
    ]
    assert cells["alignment"].tolist() == pytest.approx([r["alignment"] for r in report["tables"]["cells"]])
    # a cell's alignment is the mean alignment of its parsed verdicts (in percent)
    frame = tooldiag.load_judgebench(judged_run)
    first = cells.iloc[0]
    mask = (frame[["judge", "generator", "difficulty", "condition"]] == first[:4].to_numpy()).all(axis=1)
    assert 100 * frame[mask & (frame["status"] == "ok")]["alignment"].mean() == pytest.approx(first["alignment"])
    for name in report["tables"]:
        parquet = pd.read_parquet(out / "tables" / f"{name}.parquet")
        assert len(parquet) == len(report["tables"][name]), name
    lift = pd.read_parquet(out / "tables" / "contrasts.parquet")
    gt = lift[lift["contrast"] == "gt_lift"].set_index("judge")["delta_pp"]
    assert gt["ref/jb-exact"] == 0 and gt["ref/jb-anchored"] > 0
    table2 = tooldiag.load_judgebench(judged_run, "table2", resamples=50)
    assert table2.equals(pd.read_parquet(out / "tables" / "table2.parquet"))


def test_bad_table_names(judged_run, tmp_path):
    with pytest.raises(UserError, match="unknown judgebench table 'verdicts'"):
        tooldiag.load_judgebench(judged_run, "verdicts")
    with pytest.raises(UserError, match="holds no judgebench run"):
        tooldiag.load_judgebench(tmp_path / "nothing")
    with pytest.raises(UserError, match="--scorer must be released or schema_aware"):
        tooldiag.load_judgebench(judged_run, scorer="lenient")
