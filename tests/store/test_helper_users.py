"""The judgebench store and the response cache open their files through the SQLite helper,
and still read the files they wrote before it."""

import sqlite3

import pytest

from tooldiag import sqlite
from tooldiag.errors import StoreError
from tooldiag.models.cache import CACHE_FORMAT, ResponseCache
from tooldiag.suites.judgebench.store import STORE_FILE, JudgeBenchStore
from tooldiag.trajectory import Emission


# -- judgebench store ---------------------------------------------------------------------
def test_judgebench_store_is_wal_autocommit_with_the_busy_timeout(tmp_path):
    with JudgeBenchStore(tmp_path / "jb") as store:
        assert sqlite.journal_mode(store.db) == "wal"
        assert sqlite.busy_timeout_ms(store.db) == 30_000
        assert store.db.isolation_level is None
        store.put_prediction("g", "r1", "easy", "ok", [])
        assert not store.db.in_transaction  # every row committed on its own
    meta = sqlite.read_meta(sqlite3.connect(tmp_path / "jb" / STORE_FILE))
    assert meta == {"suite": "judgebench", "store_version": "2"}


def test_judgebench_rows_keep_iso_timestamps(tmp_path):
    with JudgeBenchStore(tmp_path / "jb") as store:
        store.put_prediction("g", "r1", "easy", "ok", [])
        (created,) = store.db.execute("SELECT created_at FROM predictions").fetchone()
    assert isinstance(created, str) and created.endswith("+00:00") and "T" in created


#: What the judgebench store wrote before it used the helper (its meta rows, as text).
def _write_pre_helper_judgebench(run_dir, version="1", suite="judgebench"):
    run_dir.mkdir(parents=True)
    conn = sqlite3.connect(run_dir / STORE_FILE, isolation_level=None)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute(
        "CREATE TABLE predictions (generator TEXT NOT NULL, record_id TEXT NOT NULL, difficulty TEXT NOT NULL,"
        " status TEXT NOT NULL, calls TEXT, raw TEXT, error TEXT, latency_s REAL, created_at TEXT NOT NULL,"
        " PRIMARY KEY (generator, record_id, difficulty))"
    )
    conn.execute("INSERT INTO meta VALUES ('store_version', ?)", (version,))
    conn.execute("INSERT INTO meta VALUES ('suite', ?)", (suite,))
    conn.execute("INSERT INTO meta VALUES ('records_fingerprint', 'abc')")
    conn.execute(
        "INSERT INTO predictions VALUES ('g', 'r1', 'easy', 'ok', '[{\"name\": \"f\"}]', NULL, NULL, 0.5,"
        " '2026-01-31T12:00:00+00:00')"
    )
    conn.close()


def test_a_judgebench_store_written_before_the_helper_opens_and_reads_identically(tmp_path):
    _write_pre_helper_judgebench(tmp_path / "jb")
    with JudgeBenchStore(tmp_path / "jb", create=False) as store:
        assert store.meta("records_fingerprint") == "abc"
        assert store.predictions() == [
            {
                "generator": "g",
                "record_id": "r1",
                "difficulty": "easy",
                "status": "ok",
                "calls": [{"name": "f"}],
                "error": None,
            }
        ]
        assert store.finished_predictions("g") == {("r1", "easy")}
    meta = sqlite.read_meta(sqlite3.connect(tmp_path / "jb" / STORE_FILE))
    # the version-1 store is migrated (judgements gain sample/variant keys); other meta rows are untouched
    assert meta == {"store_version": "2", "suite": "judgebench", "records_fingerprint": "abc"}


@pytest.mark.parametrize("version, suite", [("3", "judgebench"), ("x", "judgebench")])
def test_an_incompatible_judgebench_store_is_refused(tmp_path, version, suite):
    _write_pre_helper_judgebench(tmp_path / "jb", version=version, suite=suite)
    with pytest.raises(StoreError, match=f"written by an incompatible tooldiag \\(store version {version}\\)"):
        JudgeBenchStore(tmp_path / "jb")


def test_a_store_of_another_suite_is_refused_and_left_as_it_was(tmp_path):
    _write_pre_helper_judgebench(tmp_path / "jb", suite="other")
    before = (tmp_path / "jb" / STORE_FILE).read_bytes()
    with pytest.raises(StoreError, match=r"is not a readable judgebench store .*'other' header"):
        JudgeBenchStore(tmp_path / "jb")
    assert (tmp_path / "jb" / STORE_FILE).read_bytes() == before  # no WAL switch, no tables of ours


def test_a_judgebench_file_that_is_not_sqlite_is_refused(tmp_path):
    (tmp_path / STORE_FILE).write_bytes(b"junk " * 300)
    with pytest.raises(StoreError, match="is not a readable judgebench store"):
        JudgeBenchStore(tmp_path)


# -- response cache -----------------------------------------------------------------------
def test_the_cache_is_wal_with_the_busy_timeout_and_names_itself(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    conn = cache._connect()
    assert sqlite.journal_mode(conn) == "wal" and sqlite.busy_timeout_ms(conn) == 30_000
    assert conn.isolation_level is None
    assert sqlite.read_meta(conn) == {"format": "tooldiag-response-cache", "schema_version": str(CACHE_FORMAT)}
    cache.close()


def test_a_cache_written_before_the_meta_table_still_hits(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, emission TEXT NOT NULL,"
        " created_at REAL NOT NULL)"
    )
    emission = Emission(text="hello", latency_s=0.25)
    conn.execute("INSERT INTO responses VALUES ('k', 'openai/m', ?, 1767225600.5)", (emission.model_dump_json(),))
    conn.close()
    cache = ResponseCache(path)
    hit = cache.get("k")
    assert hit is not None and hit.text == "hello" and hit.cached and hit.latency_s == 0.25
    assert len(cache) == 1
    cache.put("k2", "openai/m", emission)
    cache.close()
    with sqlite3.connect(path) as conn:
        assert {type(v) for (v,) in conn.execute("SELECT created_at FROM responses")} == {float}
        assert dict(conn.execute("SELECT key, value FROM meta"))["format"] == "tooldiag-response-cache"


def test_a_cache_keeps_a_header_it_did_not_write(tmp_path):
    """The header is informative: a file named by another cache format is opened, not rewritten."""
    path = tmp_path / "c.sqlite"
    conn = sqlite.connect(path, autocommit=True)
    conn.execute(sqlite.META_TABLE)
    sqlite.write_meta(conn, {"format": "tooldiag-response-cache", "schema_version": "99"})
    conn.close()
    cache = ResponseCache(path)
    assert sqlite.read_meta(cache._connect())["schema_version"] == "99"
    cache.close()
