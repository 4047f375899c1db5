"""A version-1 judgebench store (one verdict per judge x condition x plan) opens as version 2:
every old verdict becomes draw 0 of the plan as generated, and new draws can join it."""

import sqlite3

from tooldiag import sqlite
from tooldiag.suites.judgebench.store import STORE_FILE, JudgeBenchStore

_V1_JUDGEMENTS = (
    "CREATE TABLE judgements (judge TEXT NOT NULL, generator TEXT NOT NULL, record_id TEXT NOT NULL,"
    " difficulty TEXT NOT NULL, condition TEXT NOT NULL, status TEXT NOT NULL, tool_selection REAL,"
    " parameter_structure REAL, sequence REAL, coverage REAL, verdict TEXT, raw TEXT, attempts INTEGER NOT NULL,"
    " error TEXT, prompt TEXT, created_at TEXT NOT NULL,"
    " PRIMARY KEY (judge, generator, record_id, difficulty, condition))"
)


def _write_v1(run_dir):
    run_dir.mkdir(parents=True)
    conn = sqlite3.connect(run_dir / STORE_FILE, isolation_level=None)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('suite', 'judgebench'), ('store_version', '1')")
    conn.execute(_V1_JUDGEMENTS)
    conn.execute(
        "INSERT INTO judgements VALUES ('j', 'g', 'r1', 'easy', 'with_gt', 'ok', 1.0, 0.5, 0.0, 1.0,"
        " NULL, NULL, 1, NULL, 'p1', '2026-01-31T12:00:00+00:00')"
    )
    conn.execute(
        "INSERT INTO judgements VALUES ('j', 'g', 'r2', 'easy', 'with_gt', 'error', NULL, NULL, NULL, NULL,"
        " NULL, NULL, 0, 'boom', 'p1', '2026-01-31T12:00:01+00:00')"
    )
    conn.close()


def test_a_version_1_store_is_migrated_and_keeps_every_verdict(tmp_path):
    _write_v1(tmp_path / "jb")
    with JudgeBenchStore(tmp_path / "jb", create=False) as store:
        assert store.judgement_rows() == [
            ("j", "g", "r1", "easy", "with_gt", 0, "", "ok", 1.0, 0.5, 0.0, 1.0),
            ("j", "g", "r2", "easy", "with_gt", 0, "", "error", None, None, None, None),
        ]
        assert store.finished_judgements("j") == {("g", "r1", "easy", "with_gt", 0, "")}
        # a second draw and a probe variant of the same plan are new rows, not replacements
        store.put_judgement("j", "g", "r1", "easy", "with_gt", "ok", None, None, None, 1, None, "p1", sample=1)
        store.put_judgement("j", "g", "r1", "easy", "with_gt", "ok", None, None, None, 1, None, "p1", variant="order")
        assert store.count("judgements") == 4
        assert len(store.judgement_rows()) == 3  # the default reads the plans as generated only
        assert len(store.judgement_rows(variant=None)) == 4
    meta = sqlite.read_meta(sqlite3.connect(tmp_path / "jb" / STORE_FILE))
    assert meta["store_version"] == "2"
    with JudgeBenchStore(tmp_path / "jb", create=False) as again:  # opening a migrated store changes nothing
        assert again.count("judgements") == 4
