"""The run store: opening, version checks, atomic rows, the caller's case order, old files."""

import json
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from tooldiag import sqlite
from tooldiag.errors import StoreError
from tooldiag.store import RunStore
from tooldiag.store.rundb import DB_NAME
from tooldiag.trajectory import SCHEMA_VERSION, CaseTrajectory, Emission, GenerationConfig, Grade, RunConfig, Step, Turn

CONFIG = RunConfig(suite="demo", model="ref/x", categories=["a", "b"])


def _trajectory(case_id: str, category: str = "a", text: str = "hi") -> CaseTrajectory:
    return CaseTrajectory(
        case_id=case_id, category=category, turns=[Turn(index=0, steps=[Step(emission=Emission(text=text))])]
    )


def _fill(store: RunStore, ids: list[str]) -> None:
    for case_id in ids:
        store.put_case(_trajectory(case_id), Grade(passed=True))


# -- writing and reading ------------------------------------------------------------------
def test_cases_round_trip_with_grades_and_error_rows(tmp_path):
    with RunStore.create_or_resume(tmp_path / "r", CONFIG) as store:
        store.put_case(_trajectory("a_1"), Grade(passed=True))
        store.put_case(_trajectory("a_2"), Grade(passed=False, error_type="wrong"))
        store.put_case(_trajectory("b_1", "b").model_copy(update={"inference_error": "HTTP 503"}), None)
        assert store.count() == 3
        assert store.finished_ids() == {"a_1", "a_2"}  # error rows are retried on resume
        assert store.status_counts() == {
            "a": {"done": 2, "passed": 1, "error": 0},
            "b": {"done": 0, "passed": 0, "error": 1},
        }
        failed = store.get_case("a_2")
        assert (failed.status, failed.passed, failed.error_type, failed.grade.error_type) == (
            "done",
            False,
            "wrong",
            "wrong",
        )
        errored = store.get_case("b_1")
        assert (errored.status, errored.passed, errored.grade) == ("error", None, None)
        assert errored.trajectory.inference_error == "HTTP 503"
        assert store.get_case("nope") is None
        store.put_case(_trajectory("b_1", "b"), Grade(passed=True))  # the retry replaces the error row
        assert store.count() == 3 and store.get_case("b_1").status == "done"
    with RunStore.open(tmp_path / "r") as again:
        assert again.config == CONFIG and again.get_case("a_1").trajectory == _trajectory("a_1")


def test_files_are_wal_with_the_helper_busy_timeout(tmp_path):
    RunStore.create_or_resume(tmp_path / "r", CONFIG).close()
    with RunStore.open(tmp_path / "r") as store:
        assert sqlite.journal_mode(store._conn) == "wal"
        assert sqlite.busy_timeout_ms(store._conn) == 30_000
    meta = sqlite.read_meta(sqlite3.connect(tmp_path / "r" / DB_NAME))
    assert meta["format"] == "tooldiag-run" and meta["schema_version"] == str(SCHEMA_VERSION)
    assert abs(float(meta["created_at"]) - time.time()) < 60  # Unix seconds as text, as before
    assert RunConfig.model_validate_json(meta["config"]) == CONFIG


def test_resume_accepts_a_moved_endpoint_and_longer_timeout(tmp_path):
    base = RunConfig(suite="bfcl", model="openai/m", categories=["base"], base_url="http://127.0.0.1:8000/v1")
    RunStore.create_or_resume(tmp_path / "r", base).close()
    moved = base.model_copy(
        update={"base_url": "http://127.0.0.1:9000/v1", "generation": GenerationConfig(timeout_s=600)}
    )
    store = RunStore.create_or_resume(tmp_path / "r", moved)
    assert store.config.base_url == "http://127.0.0.1:9000/v1"
    store.close()
    assert RunStore.open(tmp_path / "r").config.base_url == "http://127.0.0.1:9000/v1"


def test_resume_with_a_different_run_is_refused(tmp_path):
    RunStore.create_or_resume(tmp_path / "r", CONFIG).close()
    with pytest.raises(StoreError, match=r"holds a different run .*model: stored 'ref/x', asked 'ref/y'"):
        RunStore.create_or_resume(tmp_path / "r", CONFIG.model_copy(update={"model": "ref/y"}))
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="is a file, not a folder"):
        RunStore.create_or_resume(tmp_path / "file", CONFIG)


# -- case order ---------------------------------------------------------------------------
IDS = ["b_10", "a_2", "b_9", "a_10", "a_1", "c"]


def test_default_order_is_plain_id_order_whatever_the_write_order(tmp_path):
    with RunStore.create_or_resume(tmp_path / "r", CONFIG) as store:
        _fill(store, IDS)
        assert [r.case_id for r in store.iter_cases()] == sorted(IDS) == ["a_1", "a_10", "a_2", "b_10", "b_9", "c"]


def _number_then_prefix(case_id: str) -> tuple[int, str]:
    prefix, _, number = case_id.rpartition("_")
    return (int(number) if number.isdigit() else -1, prefix)


def test_the_caller_gives_the_order_at_open_or_per_call(tmp_path):
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, sort_key=_number_then_prefix) as store:
        _fill(store, IDS)
        assert [r.case_id for r in store.iter_cases()] == ["c", "a_1", "a_2", "b_9", "a_10", "b_10"]
    with RunStore.open(tmp_path / "r", sort_key=lambda case_id: case_id[::-1]) as store:
        assert [r.case_id for r in store.iter_cases()] == ["a_10", "b_10", "a_1", "a_2", "b_9", "c"]
        # a key given to the call wins over the store's
        assert [r.case_id for r in store.iter_cases(sort_key=_number_then_prefix)] == [
            "c",
            "a_1",
            "a_2",
            "b_9",
            "a_10",
            "b_10",
        ]
    with RunStore.open(tmp_path / "r") as store:
        assert store.sort_key is None
        assert next(r.case_id for r in store.iter_cases(sort_key=_number_then_prefix)) == "c"


def test_the_store_knows_no_suite():
    """No suite's id format (or name) in the store's code; importing it loads no suite."""
    package = Path(__file__).parents[2] / "src" / "tooldiag" / "store"
    for path in package.glob("*.py"):
        text = path.read_text(encoding="utf-8").lower()
        assert "bfcl" not in text and "tooldiag.suites" not in text, path.name
    code = "import sys, tooldiag.store; print(sorted(m for m in sys.modules if m.startswith('tooldiag.suites')))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


# -- opening: one clear StoreError per kind of bad folder ----------------------------------
def _run_db(tmp_path: Path) -> Path:
    RunStore.create_or_resume(tmp_path / "r", CONFIG).close()
    return tmp_path / "r" / DB_NAME


def _edit(db: Path, statement: str, *params: object) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(statement, params)


def test_a_folder_without_a_store(tmp_path):
    with pytest.raises(StoreError, match=r"holds no tooldiag run \(no run\.sqlite\)"):
        RunStore.open(tmp_path)


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"garbage " * 200)
    with pytest.raises(StoreError, match="is not a tooldiag run store"):
        RunStore.open(tmp_path)
    assert (tmp_path / DB_NAME).read_bytes() == b"garbage " * 200


def test_a_foreign_sqlite_file_is_refused_untouched(tmp_path):
    """Issue 20, defect 14: a foreign file was switched to WAL mode before it was refused."""
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        conn.execute("CREATE TABLE other (x)")
    before = (tmp_path / DB_NAME).read_bytes()
    with pytest.raises(StoreError, match="is not a tooldiag run store \\(no tooldiag-run header \\(no meta table"):
        RunStore.open(tmp_path)
    assert (tmp_path / DB_NAME).read_bytes() == before  # still in rollback-journal mode, no table added
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    _edit(tmp_path / DB_NAME, "CREATE TABLE meta (key TEXT, value TEXT)")
    _edit(tmp_path / DB_NAME, "INSERT INTO meta VALUES ('format', 'something-else')")
    before = (tmp_path / DB_NAME).read_bytes()
    with pytest.raises(StoreError, match="a 'something-else' header where a 'tooldiag-run' file has one"):
        RunStore.open(tmp_path)
    assert (tmp_path / DB_NAME).read_bytes() == before


def test_a_newer_schema_is_refused_with_both_versions(tmp_path):
    db = _run_db(tmp_path)
    _edit(db, "UPDATE meta SET value = ? WHERE key = 'schema_version'", str(SCHEMA_VERSION + 1))
    with pytest.raises(
        StoreError, match=f"newer tooldiag \\(store schema {SCHEMA_VERSION + 1}, this one reads {SCHEMA_VERSION}\\)"
    ):
        RunStore.open(tmp_path / "r")


@pytest.mark.parametrize("value", ["x", "1.0", ""])
def test_an_unreadable_schema_version_is_refused(tmp_path, value):
    db = _run_db(tmp_path)
    _edit(db, "UPDATE meta SET value = ? WHERE key = 'schema_version'", value)
    with pytest.raises(StoreError, match=f"has an unreadable schema version {value!r}"):
        RunStore.open(tmp_path / "r")


def test_a_missing_schema_version_reads_as_the_oldest(tmp_path):
    db = _run_db(tmp_path)
    _edit(db, "DELETE FROM meta WHERE key = 'schema_version'")
    with RunStore.open(tmp_path / "r") as store:
        assert store.config == CONFIG


def test_a_damaged_body_is_refused(tmp_path):
    db = _run_db(tmp_path)
    _edit(db, "UPDATE meta SET value = '{' WHERE key = 'config'")
    with pytest.raises(StoreError, match="has an unreadable run config"):
        RunStore.open(tmp_path / "r")
    db = _run_db(tmp_path / "other")
    _edit(db, "DROP TABLE cases")
    with pytest.raises(StoreError, match="has no cases table"):
        RunStore.open(tmp_path / "other" / "r")


def test_an_unreadable_case_is_one_store_error(tmp_path):
    with RunStore.create_or_resume(tmp_path / "r", CONFIG) as store:
        _fill(store, ["a_1"])
    _edit(tmp_path / "r" / DB_NAME, "UPDATE cases SET trajectory = ?", b"not zlib")
    with RunStore.open(tmp_path / "r") as store, pytest.raises(StoreError, match=r"case a_1 in .* is unreadable"):
        list(store.iter_cases())


# -- files written before the SQLite helper -----------------------------------------------
#: The schema and rows exactly as the run store wrote them before it used tooldiag.sqlite.
PRE_HELPER_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cases (
    case_id TEXT PRIMARY KEY,
    category TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'error')),
    passed INTEGER,
    error_type TEXT,
    grade TEXT,
    trajectory BLOB NOT NULL,
    updated_at REAL NOT NULL
);
"""


def _write_pre_helper_run(run_dir: Path, rows: list[tuple[CaseTrajectory, Grade | None]]) -> None:
    run_dir.mkdir(parents=True)
    conn = sqlite3.connect(run_dir / DB_NAME)  # rollback journal: WAL is switched on when opened
    with conn:
        conn.executescript(PRE_HELPER_SCHEMA)
        conn.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            [
                ("format", "tooldiag-run"),
                ("schema_version", "1"),
                ("config", CONFIG.model_dump_json()),
                ("created_at", "1767225600.25"),
            ],
        )
        for trajectory, grade in rows:
            conn.execute(
                "INSERT OR REPLACE INTO cases(case_id, category, status, "
                "passed, error_type, grade, trajectory, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    trajectory.case_id,
                    trajectory.category,
                    "error" if grade is None else "done",
                    None if grade is None else int(grade.passed),
                    None if grade is None else grade.error_type,
                    None if grade is None else grade.model_dump_json(),
                    zlib.compress(trajectory.model_dump_json().encode("utf-8"), 6),
                    1767225600.5,
                ),
            )
    conn.close()


def test_a_run_written_before_the_helper_opens_and_reads_identically(tmp_path):
    rows = [
        (_trajectory("b_2", "b", "two"), Grade(passed=False, error_type="wrong", details={"k": [1]})),
        (_trajectory("a_1", "a", "one"), Grade(passed=True)),
        (_trajectory("a_3", "a").model_copy(update={"inference_error": "timeout"}), None),
    ]
    _write_pre_helper_run(tmp_path / "old", rows)
    with RunStore.open(tmp_path / "old") as store:
        assert store.config == CONFIG
        assert [r.case_id for r in store.iter_cases()] == ["a_1", "a_3", "b_2"]
        got = {r.case_id: (r.status, r.passed, r.error_type, r.grade, r.trajectory) for r in store.iter_cases()}
        assert got == {
            "a_1": ("done", True, None, Grade(passed=True), rows[1][0]),
            "a_3": ("error", None, None, None, rows[2][0]),
            "b_2": ("done", False, "wrong", rows[0][1], rows[0][0]),
        }
        assert store.finished_ids() == {"a_1", "b_2"}
        assert store.status_counts() == {
            "a": {"done": 1, "passed": 1, "error": 1},
            "b": {"done": 1, "passed": 0, "error": 0},
        }
        assert sqlite.journal_mode(store._conn) == "wal"
    # resuming it keeps the old header and adds rows in the same forms
    with RunStore.create_or_resume(tmp_path / "old", CONFIG) as store:
        store.put_case(_trajectory("a_3"), Grade(passed=True))
    with sqlite3.connect(tmp_path / "old" / DB_NAME) as conn:
        assert dict(conn.execute("SELECT key, value FROM meta"))["created_at"] == "1767225600.25"
        assert {type(v) for (v,) in conn.execute("SELECT updated_at FROM cases")} == {float}


def test_a_store_written_now_has_the_pre_helper_schema(tmp_path):
    """Same tables, same columns: older tooldiag versions read what this one writes."""
    RunStore.create_or_resume(tmp_path / "new", CONFIG).close()
    _write_pre_helper_run(tmp_path / "old", [])

    def shape(db: Path) -> list[tuple]:
        with sqlite3.connect(db) as conn:
            return [
                (table, conn.execute(f"PRAGMA table_info({table})").fetchall())
                for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            ]

    assert shape(tmp_path / "new" / DB_NAME) == shape(tmp_path / "old" / DB_NAME)
    with sqlite3.connect(tmp_path / "new" / DB_NAME) as conn:
        assert sorted(dict(conn.execute("SELECT key, value FROM meta"))) == [
            "config",
            "created_at",
            "format",
            "schema_version",
        ]
    assert json.loads(sqlite.read_meta(sqlite3.connect(tmp_path / "new" / DB_NAME))["config"])["suite"] == "demo"
