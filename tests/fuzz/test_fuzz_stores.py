"""Crafted run stores: a corrupt grade, trajectory blob, column or config, then report, cases, show, export.

A store is tooldiag's own file, but a copied, hand-edited or half-synced one reaches
the inspection commands too; each must answer with one ``error:`` line naming the case
(or succeed), never a traceback.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import zlib
from pathlib import Path

import pytest
from hypothesis import given, reject
from hypothesis import strategies as st

from tests.fuzz.harness import run_cli
from tests.fuzz.hostile import HOSTILE_VALUES, dumps, mutated
from tests.fuzz.profiles import fuzz_settings

RESULTS = Path(__file__).resolve().parents[1] / "data" / "bfcl_results" / "api_fc"
COMMANDS = [
    ["report", "{run}"],
    ["cases", "{run}"],
    ["show", "{run}", "{case}", "--format", "json"],
    ["show", "{run}", "{case}"],
    ["export", "{run}"],
]


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory) -> tuple[Path, dict]:
    """An imported run (a few graded cases) and one of its rows, decoded: the seed of every corruption."""
    run = tmp_path_factory.mktemp("store") / "run"
    outcome = run_cli(["import", "bfcl", str(RESULTS), "--model-name", "m", "--run-dir", str(run), "-q"])
    assert outcome.code == 0, outcome.explain()
    with sqlite3.connect(run / "run.sqlite") as conn:
        case_id, grade, blob = conn.execute("SELECT case_id, grade, trajectory FROM cases ORDER BY case_id").fetchone()
        config = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0]
    seed = {"case_id": case_id, "grade": json.loads(grade), "trajectory": json.loads(zlib.decompress(blob))}
    return run, {**seed, "config": json.loads(config)}


@st.composite
def corruptions(draw: st.DrawFn, seed: dict) -> tuple[str, tuple]:
    """One SQL update that damages the store as a hostile editor might, and its parameters."""
    where = draw(st.sampled_from(["grade", "trajectory", "column", "config", "raw_trajectory"]))
    if where == "grade":
        return "UPDATE cases SET grade = ? WHERE case_id = ?", (dumps(draw(mutated(seed["grade"]))), seed["case_id"])
    if where == "trajectory":
        text = dumps(draw(mutated(seed["trajectory"]))).encode("utf-8")
        return "UPDATE cases SET trajectory = ? WHERE case_id = ?", (zlib.compress(text), seed["case_id"])
    if where == "raw_trajectory":
        raw = draw(st.sampled_from([b"", b"\x00\x01", b"not zlib", zlib.compress(b"\xff\xfe"), zlib.compress(b"[]")]))
        return "UPDATE cases SET trajectory = ? WHERE case_id = ?", (raw, seed["case_id"])
    if where == "column":
        column = draw(st.sampled_from(["category", "passed", "error_type", "grade"]))
        value = draw(st.one_of(st.integers(-5, 5), st.text(max_size=5), st.binary(max_size=5), st.floats()))
        if column != "category" and draw(st.booleans()):
            value = None  # category is NOT NULL: SQLite itself refuses that damage
        return f"UPDATE cases SET {column} = ? WHERE case_id = ?", (value, seed["case_id"])
    value = draw(st.one_of(mutated(seed["config"]).map(dumps), HOSTILE_VALUES.map(dumps)))
    return "UPDATE meta SET value = ? WHERE key = 'config'", (value,)


@fuzz_settings(25)
@given(data=st.data(), command=st.sampled_from(COMMANDS))
def test_inspection_of_a_corrupt_store_never_crashes(tmp_path_factory, stored_run, data, command) -> None:
    source, seed = stored_run
    run = tmp_path_factory.mktemp("corrupt") / "run"
    shutil.copytree(source, run)
    statement, parameters = data.draw(corruptions(seed))
    try:
        with sqlite3.connect(run / "run.sqlite") as conn:
            conn.execute(statement, parameters)
    except sqlite3.IntegrityError:  # damage SQLite itself refuses (a NaN category is stored as NULL)
        reject()
    finally:
        conn.close()
    outcome = run_cli([part.format(run=run, case=seed["case_id"]) for part in command])
    assert outcome.clean, outcome.explain()
