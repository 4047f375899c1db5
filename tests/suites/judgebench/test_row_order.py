"""The analysis does not depend on the physical order of stored rows (issue 20, defect 11: after a
kill and resume, identical verdicts gave different soft-jury CIs)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pandas as pd

import tooldiag
from tooldiag.suites.judgebench.report import render_markdown
from tooldiag.suites.judgebench.store import STORE_FILE


def _reverse_physical_order(run: Path, table: str) -> None:
    """Rewrite ``table`` with its rows inserted in reverse rowid order (what a resume can produce)."""
    db = sqlite3.connect(run / STORE_FILE, isolation_level=None)
    db.execute("BEGIN")
    db.execute(f"CREATE TEMP TABLE shuffled AS SELECT * FROM {table} ORDER BY rowid DESC")
    db.execute(f"DELETE FROM {table}")
    db.execute(f"INSERT INTO {table} SELECT * FROM shuffled")
    db.execute("COMMIT")
    db.close()


def test_analyze_is_identical_whatever_order_the_rows_were_stored_in(tmp_path):
    run = tmp_path / "run"
    tooldiag.judgebench_predict(run, ["ref/jb-perturb", "ref/jb-sloppy"], limit=10)
    tooldiag.judgebench_judge(run, ["ref/jb-exact", "ref/jb-lenient", "ref/jb-flaky"], conditions=["with_gt"])
    other = tmp_path / "reordered"
    shutil.copytree(run, other)
    for table in ("judgements", "predictions", "records"):
        _reverse_physical_order(other, table)
    first = (
        sqlite3.connect(run / STORE_FILE)
        .execute("SELECT judge, generator, record_id, difficulty FROM judgements ORDER BY rowid")
        .fetchall()
    )
    again = (
        sqlite3.connect(other / STORE_FILE)
        .execute("SELECT judge, generator, record_id, difficulty FROM judgements ORDER BY rowid")
        .fetchall()
    )
    assert first != again and sorted(first) == sorted(again)  # same rows, another physical order
    a = tooldiag.judgebench_analyze(run, resamples=200, workers=1)
    b = tooldiag.judgebench_analyze(other, resamples=200, workers=1)
    assert render_markdown(a) == render_markdown(b)
    assert a.tables.keys() == b.tables.keys()
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name], check_exact=True)
