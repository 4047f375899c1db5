"""The one way tooldiag opens an SQLite file: run stores, judgebench stores and the response cache.

Why one helper: every file the project writes must survive ``kill -9`` mid-write, let
readers run while a writer commits, and wait (not fail) when another process holds the
write lock. That is WAL journalling, ``synchronous=NORMAL`` (a commit survives a process
crash; only a power cut can lose the last few) and one busy timeout, set here once instead
of three slightly different times.

Each file names itself in a ``meta(key, value)`` table, both as TEXT. A :class:`Header`
says which two keys a kind of file uses for its name and its version, so files written
before this helper existed keep their exact keys: run stores write ``format`` and
``schema_version``, judgebench stores ``suite`` and ``store_version``, the cache
``format`` and ``schema_version``. Versions are integers in code and decimal text on disk
(``"1"``); :func:`parse_version` reads that text, whitespace around it allowed.

Timestamps: REAL columns hold :func:`unix_time` (run cases, cache rows); the judgebench
rows hold :func:`iso_time` text. Both forms stay as they were on disk, because changing a
column's form would mix two forms inside files that already exist.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: Seconds a connection waits for another writer's lock before ``database is locked``.
BUSY_TIMEOUT_S = 30.0

META_TABLE = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


class ForeignDatabaseError(sqlite3.DatabaseError):
    """An existing SQLite file that is not the kind of file the caller opens (no matching header)."""


def _probe(target: Path, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one read-only query on ``target``, written to as little as SQLite allows.

    A read-only connection first; a database in WAL mode whose shared-memory index must be
    rebuilt (a writer was killed) cannot be read that way ("attempt to write a readonly
    database"), so then a plain connection reads it: that rebuilds the index, as any reader
    would, but changes neither the journal mode nor the schema.
    """
    for uri in (f"{target.resolve().as_uri()}?mode=ro", f"{target.resolve().as_uri()}?mode=rw"):
        probe = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
        try:
            return probe.execute(query, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc) or uri.endswith("rw"):
                raise
        finally:
            probe.close()
    raise AssertionError("unreachable")  # pragma: no cover


def is_blank_database(path: str | Path) -> bool:
    """``path`` is an empty file, or an SQLite database with no schema at all: what a kill while a
    store was being created leaves (its creating transaction never committed)."""
    target = Path(path)
    try:
        if target.stat().st_size == 0:
            return True
        return _probe(target, "SELECT COUNT(*) FROM sqlite_master")[0][0] == 0
    except (OSError, sqlite3.Error):
        return False


def check_header(path: str | Path, header: Header) -> None:
    """Refuse an existing, non-empty ``path`` whose meta table does not name ``header``'s format.

    Read as :func:`_probe` reads, so a foreign file is refused as it was found: no journal-mode
    switch to WAL, no tables of ours created in it (issue 20, defect 14).
    """
    target = Path(path)
    try:
        if not target.is_file() or target.stat().st_size == 0:
            return
    except OSError:
        return
    try:
        rows = _probe(target, "SELECT value FROM meta WHERE key = ?", (header.format_key,))
    except sqlite3.DatabaseError as exc:
        if "no such table" in str(exc):
            raise ForeignDatabaseError(f"no {header.format} header (no meta table)") from None
        raise
    if not rows or str(rows[0][0]) != header.format:
        found = "no" if not rows else f"a {str(rows[0][0])!r}"
        raise ForeignDatabaseError(f"{found} header where a {header.format!r} file has one")


def connect(
    path: str | Path,
    *,
    autocommit: bool = False,
    shared_across_threads: bool = False,
    busy_timeout_s: float = BUSY_TIMEOUT_S,
    header: Header | None = None,
) -> sqlite3.Connection:
    """An open connection to ``path`` in WAL mode with the project's busy timeout.

    With ``header``, an existing file must already carry it (:func:`check_header`), checked
    before anything is written to the file; a new or empty file is created as usual.

    ``autocommit`` runs each statement in its own transaction (explicit ``BEGIN`` still
    groups several); otherwise Python's sqlite3 opens a transaction before the first write
    and ``with conn:`` commits it. ``shared_across_threads`` lets several threads use the
    connection; the caller then serialises them (a lock, or one connection per thread).
    Raises :class:`sqlite3.DatabaseError` when ``path`` is not an SQLite file (the journal
    pragma is the first statement that reads it); the connection is closed then.
    """
    if header is not None:
        check_header(path, header)
    conn = sqlite3.connect(
        path,
        timeout=busy_timeout_s,
        isolation_level=None if autocommit else "DEFERRED",  # a plain BEGIN is deferred too
        check_same_thread=not shared_across_threads,
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def journal_mode(conn: sqlite3.Connection) -> str:
    """The connection's journal mode (``wal`` for every file opened by :func:`connect`)."""
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()


def busy_timeout_ms(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA busy_timeout").fetchone()[0])


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


# -- the meta table ----------------------------------------------------------------------
@dataclass(frozen=True)
class Header:
    """How one kind of file names itself and its version in ``meta`` (see the module docstring)."""

    format_key: str
    format: str
    version_key: str
    version: int

    def items(self) -> dict[str, str]:
        """The two meta rows, in their on-disk form."""
        return {self.format_key: self.format, self.version_key: str(self.version)}


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """Every meta row; :class:`sqlite3.DatabaseError` when there is no meta table (or no database)."""
    return {str(key): str(value) for key, value in conn.execute("SELECT key, value FROM meta")}


def meta_value(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def write_meta(conn: sqlite3.Connection, items: Mapping[str, str]) -> None:
    """Set (or replace) meta rows; the caller decides the transaction."""
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(items.items()))


def add_missing_meta(conn: sqlite3.Connection, items: Mapping[str, str]) -> None:
    """Write the rows of ``items`` whose key is absent; rows already there are kept as they are.

    Reads first, so a file that already has them (the common case) takes no write lock.
    """
    stored = read_meta(conn)
    missing = {key: value for key, value in items.items() if key not in stored}
    if missing:
        conn.executemany("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", list(missing.items()))


def parse_version(text: str | None) -> int | None:
    """The integer a version row holds (``"1"``, ``" 1 "``), ``None`` when the row is absent.

    Raises :class:`ValueError` for anything else (``"x"``, ``"1.0"``); each store turns that
    into its own error message.
    """
    if text is None:
        return None
    return int(text)


# -- timestamps --------------------------------------------------------------------------
def unix_time() -> float:
    """Seconds since the epoch, for REAL timestamp columns and the run store's ``created_at``."""
    return time.time()


def iso_time() -> str:
    """UTC ISO-8601 to the second (``2026-01-31T12:00:00+00:00``), for the judgebench rows."""
    return datetime.now(UTC).isoformat(timespec="seconds")
