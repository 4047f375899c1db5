"""A run on disk: one directory holding one SQLite database (WAL).

Why SQLite: every finished case is committed in one transaction, so a run killed at
any moment (``kill -9`` included) holds exactly the cases that finished, each whole;
re-running the same command skips them and redoes the rest. Cases that ended in an
infrastructure error are stored as explicit ``error`` rows (never dropped) and are
retried on resume.

Layout of ``<run_dir>/run.sqlite``:

* ``meta(key, value)``: ``format = tooldiag-run``, ``schema_version``, ``config``
  (the :class:`~tooldiag.trajectory.RunConfig` as JSON), ``created_at`` (Unix seconds as text);
* ``cases(case_id, category, status, passed, error_type, grade, trajectory, updated_at)``:
  ``status`` is ``done`` or ``error``; ``grade`` is JSON; ``trajectory`` is
  zlib-compressed JSON of :class:`~tooldiag.trajectory.CaseTrajectory`.

The store knows no suite: :meth:`RunStore.iter_cases` yields cases in plain ``case_id``
string order unless the caller gives a ``sort_key`` (a suite that numbers its cases
passes its own id order, so that case 2 comes before case 10). Files are opened through
:mod:`tooldiag.sqlite`.
"""

from __future__ import annotations

import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldiag import sqlite
from tooldiag.errors import StoreError
from tooldiag.trajectory import SCHEMA_VERSION, CaseTrajectory, Grade, RunConfig

DB_NAME = "run.sqlite"
FORMAT = "tooldiag-run"
HEADER = sqlite.Header(format_key="format", format=FORMAT, version_key="schema_version", version=SCHEMA_VERSION)

#: Orders case ids for :meth:`RunStore.iter_cases`: any function of one id returning a sortable value.
SortKey = Callable[[str], Any]

_SCHEMA = f"""
{sqlite.META_TABLE};
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


@dataclass
class CaseRecord:
    """One stored case."""

    case_id: str
    category: str
    status: str
    passed: bool | None
    error_type: str | None
    grade: Grade | None
    trajectory: CaseTrajectory


def _config_diff(old: dict, new: dict, prefix: str = "") -> list[str]:
    diffs = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            diffs.extend(_config_diff(a, b, f"{prefix}{key}."))
        elif a != b:
            diffs.append(f"{prefix}{key}: stored {a!r}, asked {b!r}")
    return diffs


class RunStore:
    """Read and write one run directory."""

    def __init__(
        self, run_dir: Path, conn: sqlite3.Connection, config: RunConfig, sort_key: SortKey | None = None
    ) -> None:
        self.run_dir = run_dir
        self._conn = conn
        self._lock = threading.Lock()
        self.config = config
        #: The default order of :meth:`iter_cases` (``None``: plain string order of the ids).
        self.sort_key = sort_key

    # -- opening -----------------------------------------------------------------
    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        return sqlite.connect(path, shared_across_threads=True)

    @classmethod
    def _read_meta(cls, path: Path, conn: sqlite3.Connection) -> dict[str, str]:
        try:
            meta = sqlite.read_meta(conn)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{path} is not a tooldiag run store ({exc})",
                hint="point --run-dir at a new folder, or at a folder written by tooldiag",
            ) from None
        if meta.get(HEADER.format_key) != HEADER.format:
            raise StoreError(
                f"{path} is not a tooldiag run store (no tooldiag header)",
                hint="point --run-dir at a new folder, or at a folder written by tooldiag",
            )
        try:
            version = sqlite.parse_version(meta.get(HEADER.version_key)) or 0
        except ValueError:
            raise StoreError(
                f"{path} has an unreadable schema version {meta['schema_version']!r}", hint="the store is damaged"
            ) from None
        if "cases" not in sqlite.table_names(conn):
            raise StoreError(f"{path} has no cases table", hint="the store is damaged; point --run-dir at a new folder")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path} was written by a newer tooldiag (store schema {version}, this one reads {SCHEMA_VERSION})",
                hint="upgrade tooldiag to read it",
            )
        return meta

    @classmethod
    def open(cls, run_dir: str | Path, *, sort_key: SortKey | None = None) -> RunStore:
        """Open an existing run (read and write); ``sort_key`` orders :meth:`iter_cases`."""
        run_dir = Path(run_dir)
        path = run_dir / DB_NAME
        if not path.is_file():
            raise StoreError(
                f"{run_dir} holds no tooldiag run (no {DB_NAME})",
                hint="give the --run-dir of a finished or started run",
            )
        try:
            conn = cls._connect(path)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{path} is not a tooldiag run store ({exc})",
                hint="point --run-dir at a new folder, or at a folder written by tooldiag",
            ) from None
        meta = cls._read_meta(path, conn)
        try:
            config = RunConfig.model_validate_json(meta["config"])
        except Exception as exc:  # noqa: BLE001
            raise StoreError(f"{path} has an unreadable run config ({exc})", hint="the store is damaged") from None
        return cls(run_dir, conn, config, sort_key)

    @classmethod
    def create_or_resume(cls, run_dir: str | Path, config: RunConfig, *, sort_key: SortKey | None = None) -> RunStore:
        """Start a run in ``run_dir``, or resume the one there if its config matches."""
        run_dir = Path(run_dir)
        path = run_dir / DB_NAME
        if path.exists():
            store = cls.open(run_dir, sort_key=sort_key)
            diffs = _config_diff(store.config.identity(), config.identity())
            if diffs:
                store.close()
                raise StoreError(
                    f"{run_dir} holds a different run ({'; '.join(diffs[:4])})",
                    hint="use a new --run-dir, or repeat the original command to resume",
                )
            if config != store.config:
                store._set_meta("config", config.model_dump_json())
                store.config = config
            return store
        if run_dir.exists() and not run_dir.is_dir():
            raise StoreError(f"{run_dir} is a file, not a folder", hint="give a folder path for --run-dir")
        run_dir.mkdir(parents=True, exist_ok=True)
        try:
            conn = cls._connect(path)
            with conn:
                conn.executescript(_SCHEMA)
                sqlite.write_meta(
                    conn,
                    {
                        **HEADER.items(),
                        "config": config.model_dump_json(),
                        "created_at": str(sqlite.unix_time()),
                    },
                )
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot create a run store at {path} ({exc})", hint="check the folder") from None
        return cls(run_dir, conn, config, sort_key)

    def _set_meta(self, key: str, value: str) -> None:
        with self._lock, self._conn:
            sqlite.write_meta(self._conn, {key: value})

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------
    def put_case(self, trajectory: CaseTrajectory, grade: Grade | None) -> None:
        """Commit one case atomically; ``grade=None`` stores an infrastructure error row."""
        status = "error" if grade is None else "done"
        blob = zlib.compress(trajectory.model_dump_json().encode("utf-8"), 6)
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO cases(case_id, category, status, "
                "passed, error_type, grade, trajectory, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    trajectory.case_id,
                    trajectory.category,
                    status,
                    None if grade is None else int(grade.passed),
                    None if grade is None else grade.error_type,
                    None if grade is None else grade.model_dump_json(),
                    blob,
                    sqlite.unix_time(),
                ),
            )

    # -- reading -----------------------------------------------------------------
    def finished_ids(self) -> set[str]:
        """Ids of graded cases (``error`` rows are not finished: they are retried)."""
        with self._lock:
            return {row[0] for row in self._conn.execute("SELECT case_id FROM cases WHERE status = 'done'")}

    def status_counts(self) -> dict[str, dict[str, int]]:
        """Per category: ``done``, ``passed`` and ``error`` counts."""
        out: dict[str, dict[str, int]] = {}
        with self._lock:
            rows = self._conn.execute(
                "SELECT category, status, COALESCE(passed, 0), COUNT(*) FROM cases GROUP BY category, status, passed"
            ).fetchall()
        for category, status, passed, count in rows:
            entry = out.setdefault(category, {"done": 0, "passed": 0, "error": 0})
            if status == "done":
                entry["done"] += count
                entry["passed"] += count if passed else 0
            else:
                entry["error"] += count
        return out

    def _record(self, row: tuple) -> CaseRecord:
        case_id, category, status, passed, error_type, grade, blob = row
        try:
            trajectory = CaseTrajectory.model_validate_json(zlib.decompress(blob))
        except Exception as exc:  # noqa: BLE001
            raise StoreError(
                f"case {case_id} in {self.run_dir} is unreadable ({exc})", hint="the store is damaged"
            ) from None
        return CaseRecord(
            case_id=case_id,
            category=category,
            status=status,
            passed=None if passed is None else bool(passed),
            error_type=error_type,
            grade=None if grade is None else Grade.model_validate_json(grade),
            trajectory=trajectory,
        )

    def iter_cases(self, sort_key: SortKey | None = None) -> Iterator[CaseRecord]:
        """Every stored case, ordered by ``sort_key``, else the store's own, else plain id order."""
        key = sort_key or self.sort_key
        with self._lock:
            ids = [row[0] for row in self._conn.execute("SELECT case_id FROM cases")]
        for case_id in sorted(ids, key=key):
            record = self.get_case(case_id)
            if record is not None:
                yield record

    def get_case(self, case_id: str) -> CaseRecord | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT case_id, category, status, passed, error_type, grade, trajectory FROM cases WHERE case_id = ?",
                (case_id,),
            ).fetchone()
        return None if row is None else self._record(row)

    def count(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
