"""The SQLite helper every store and the cache open their files with."""

import re
import sqlite3
import threading
import time

import pytest

from tooldiag import sqlite


def test_connect_sets_wal_synchronous_normal_and_the_busy_timeout(tmp_path):
    conn = sqlite.connect(tmp_path / "a.sqlite")
    assert sqlite.journal_mode(conn) == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert sqlite.busy_timeout_ms(conn) == 30_000 == int(sqlite.BUSY_TIMEOUT_S * 1000)
    conn.close()
    assert sqlite.busy_timeout_ms(sqlite.connect(tmp_path / "b.sqlite", busy_timeout_s=1.5)) == 1500


def test_autocommit_and_deferred_transactions(tmp_path):
    path = tmp_path / "a.sqlite"
    auto = sqlite.connect(path, autocommit=True)
    auto.execute(sqlite.META_TABLE)
    auto.execute("INSERT INTO meta VALUES ('a', '1')")
    assert not auto.in_transaction  # committed at once, visible to every reader
    assert sqlite.connect(path).execute("SELECT value FROM meta").fetchall() == [("1",)]

    deferred = sqlite.connect(path)
    deferred.execute("INSERT INTO meta VALUES ('b', '2')")
    assert deferred.in_transaction
    assert sqlite.read_meta(sqlite.connect(path)) == {"a": "1"}  # not yet committed
    deferred.commit()
    assert sqlite.read_meta(sqlite.connect(path)) == {"a": "1", "b": "2"}


def test_thread_sharing_is_asked_for(tmp_path):
    own = sqlite.connect(tmp_path / "a.sqlite")
    shared = sqlite.connect(tmp_path / "a.sqlite", shared_across_threads=True)
    errors = []

    def use(conn):
        try:
            conn.execute("SELECT 1").fetchone()
        except sqlite3.ProgrammingError as exc:
            errors.append(exc)

    for conn in (own, shared):
        thread = threading.Thread(target=use, args=(conn,))
        thread.start()
        thread.join()
    assert len(errors) == 1  # only the connection that did not ask to be shared refuses


def test_a_locked_file_waits_for_the_busy_timeout_then_fails(tmp_path):
    path = tmp_path / "a.sqlite"
    writer = sqlite.connect(path, autocommit=True)
    writer.execute(sqlite.META_TABLE)
    writer.execute("BEGIN IMMEDIATE")
    impatient = sqlite.connect(path, autocommit=True, busy_timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        impatient.execute("INSERT INTO meta VALUES ('k', 'v')")
    assert 0.25 <= time.monotonic() - started < 5
    writer.execute("ROLLBACK")


def test_a_lock_released_within_the_timeout_is_waited_for(tmp_path):
    path = tmp_path / "a.sqlite"
    writer = sqlite.connect(path, autocommit=True, shared_across_threads=True)
    writer.execute(sqlite.META_TABLE)
    writer.execute("BEGIN IMMEDIATE")
    releaser = threading.Timer(0.3, lambda: writer.execute("COMMIT"))
    releaser.start()
    patient = sqlite.connect(path, autocommit=True)  # the default 30 s
    patient.execute("INSERT INTO meta VALUES ('k', 'v')")
    releaser.join()
    assert sqlite.meta_value(patient, "k") == "v"


def test_a_file_that_is_not_sqlite_raises_database_error(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"not a database at all " * 100)
    with pytest.raises(sqlite3.DatabaseError):
        sqlite.connect(path)
    assert path.read_bytes() == b"not a database at all " * 100


def test_header_rows_are_decimal_text_under_each_kind_of_file_keys():
    header = sqlite.Header(format_key="suite", format="judgebench", version_key="store_version", version=1)
    assert header.items() == {"suite": "judgebench", "store_version": "1"}


def test_meta_read_write_and_add_missing(tmp_path):
    conn = sqlite.connect(tmp_path / "a.sqlite", autocommit=True)
    with pytest.raises(sqlite3.DatabaseError):
        sqlite.read_meta(conn)  # no meta table yet
    conn.execute(sqlite.META_TABLE)
    assert sqlite.read_meta(conn) == {} and sqlite.meta_value(conn, "format") is None
    sqlite.write_meta(conn, {"format": "x", "schema_version": "1"})
    sqlite.add_missing_meta(conn, {"format": "y", "schema_version": "2", "created_at": "3"})
    assert sqlite.read_meta(conn) == {"format": "x", "schema_version": "1", "created_at": "3"}
    sqlite.write_meta(conn, {"format": "z"})
    assert sqlite.meta_value(conn, "format") == "z"


def test_add_missing_meta_takes_no_write_lock_when_nothing_is_missing(tmp_path):
    path = tmp_path / "a.sqlite"
    conn = sqlite.connect(path, autocommit=True)
    conn.execute(sqlite.META_TABLE)
    sqlite.write_meta(conn, {"format": "x"})
    writer = sqlite.connect(path, autocommit=True)
    writer.execute("BEGIN IMMEDIATE")
    reader = sqlite.connect(path, autocommit=True, busy_timeout_s=0.1)
    sqlite.add_missing_meta(reader, {"format": "x"})  # would raise "locked" if it wrote
    writer.execute("ROLLBACK")


@pytest.mark.parametrize("text, number", [("1", 1), ("12", 12), (" 3 ", 3), (None, None)])
def test_parse_version_reads_the_text_every_store_wrote(text, number):
    assert sqlite.parse_version(text) == number


@pytest.mark.parametrize("text", ["x", "1.0", "", "v1"])
def test_parse_version_refuses_anything_else(text):
    with pytest.raises(ValueError):
        sqlite.parse_version(text)


def test_an_integer_written_into_the_text_column_reads_back_as_text(tmp_path):
    """Old files hold ``"1"``; a hand-written integer 1 is stored as text by the column's affinity."""
    conn = sqlite.connect(tmp_path / "a.sqlite", autocommit=True)
    conn.execute(sqlite.META_TABLE)
    conn.execute("INSERT INTO meta VALUES ('schema_version', 1)")
    assert sqlite.read_meta(conn) == {"schema_version": "1"}
    assert sqlite.parse_version(sqlite.meta_value(conn, "schema_version")) == 1


def test_timestamps():
    before = time.time()
    assert before <= sqlite.unix_time() <= time.time()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", sqlite.iso_time())


def test_table_names(tmp_path):
    conn = sqlite.connect(tmp_path / "a.sqlite", autocommit=True)
    assert sqlite.table_names(conn) == set()
    conn.execute(sqlite.META_TABLE)
    assert sqlite.table_names(conn) == {"meta"}
