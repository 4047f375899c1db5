"""A case encoded in a worker and inserted by the writer (``--workers``) is stored exactly as
:meth:`RunStore.put_case` stores it, error rows and session counts included."""

from __future__ import annotations

import sqlite3

from tooldiag.store import RunStore
from tooldiag.store.rundb import encode_case
from tooldiag.trajectory import CaseTrajectory, Grade, RunConfig


def _rows(run_dir) -> list[tuple]:
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        return conn.execute(
            "SELECT case_id, category, status, passed, error_type, grade, trajectory FROM cases ORDER BY case_id"
        ).fetchall()


def test_an_encoded_case_is_the_row_put_case_writes(tmp_path):
    config = RunConfig(suite="bfcl", model="ref/oracle")
    cases = [
        (CaseTrajectory(case_id="a", category="base", notes={"k": 1}), Grade(passed=True)),
        (CaseTrajectory(case_id="b", category="miss_func"), Grade(passed=False, error_type="multi_turn:x")),
        (CaseTrajectory(case_id="c", category="base", inference_error="timeout"), None),
    ]
    sessions = []
    for name, encoded in (("direct", False), ("encoded", True)):
        store = RunStore.create_or_resume(tmp_path / name, config, writer={"tooldiag": "test"})
        for trajectory, grade in cases:
            if encoded:
                store.put_encoded_case(encode_case(trajectory, grade))
            else:
                store.put_case(trajectory, grade)
        sessions.append([(s["cases"], s["errors"]) for s in store.sessions()])
        assert store.get_case("c").status == "error" and store.get_case("b").grade == cases[1][1]
        store.close()
    assert _rows(tmp_path / "encoded") == _rows(tmp_path / "direct")
    assert sessions == [[(3, 1)], [(3, 1)]]
