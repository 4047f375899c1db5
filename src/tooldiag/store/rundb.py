"""A run on disk: one directory holding one SQLite database (WAL).

Why SQLite: every finished case is committed in one transaction, so a run killed at
any moment (``kill -9`` included) holds exactly the cases that finished, each whole;
re-running the same command skips them and redoes the rest. Cases that ended in an
infrastructure error are stored as explicit ``error`` rows (never dropped) and are
retried on resume.

Layout of ``<run_dir>/run.sqlite``:

* ``meta(key, value)``: ``format = tooldiag-run``, ``schema_version``, ``config``
  (the :class:`~tooldiag.trajectory.RunConfig` as JSON), ``created_at`` (Unix seconds as text),
  ``writers`` and ``sessions`` (JSON lists, below);
* ``cases(case_id, category, status, passed, error_type, grade, trajectory, updated_at)``:
  ``status`` is ``done`` or ``error``; ``grade`` is JSON; ``trajectory`` is
  zlib-compressed JSON of :class:`~tooldiag.trajectory.CaseTrajectory`;
* ``samples(case_id, sample, category, ...)``, only in a run with ``--repeats`` above 1: the
  further draws (``sample`` 1, 2, ...) of each case, the same columns as ``cases``, keyed by
  ``(case_id, sample)``. Draw 0 stays in ``cases``.

Why a second table rather than a ``sample`` column in ``cases``: a one-draw run keeps exactly
the schema and rows tooldiag always wrote (older versions read what this one writes, and a
store from before repeats needs no migration); a tooldiag that predates repeats reads a repeats
store as its first draw. ``samples`` is created by the first write of a draw above 0, under the
writer lock (:mod:`tooldiag.store.lock`), so raising ``--repeats`` on resume only adds rows.

Text no UTF-8 can hold (a lone surrogate such as ``"\ud800"``, which JSON allows) never
aborts a write: :meth:`RunStore.put_case` stores it as U+FFFD and counts the replacements in
the case's ``notes["text_repaired"]``.

Who wrote it: a process that writes (``run``, its resume, ``import``) passes its
``writer`` versions to :meth:`RunStore.create_or_resume` (``{"tooldiag": "0.1.0",
"python": "3.11.9", ...}`` plus the suite's own package: the store knows
none). ``writers`` lists each distinct set once, in the order they first wrote, with
``first_written_at`` (ISO time); a store from before the key reads as one
:data:`UNKNOWN_WRITER`, kept first when a newer tooldiag resumes it. ``sessions`` lists
every writing invocation: ``started_at`` (ISO), ``wall_s``, ``cases`` (rows it stored),
``errors`` (error rows among them) and ``writer`` (an index into ``writers``). A session
is updated in the same transaction as each case it stores and once more on
:meth:`RunStore.close`, so after ``kill -9`` it holds the wall time up to its last stored
case; a session killed before it stored anything keeps ``cases = 0``.

The store knows no suite: :meth:`RunStore.iter_cases` yields cases in plain ``case_id``
string order unless the caller gives a ``sort_key`` (a suite that numbers its cases
passes its own id order, so that case 2 comes before case 10). Files are opened through
:mod:`tooldiag.sqlite`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from tooldiag import sqlite
from tooldiag.errors import StoreError
from tooldiag.store.lock import RunLock, acquire_run_lock
from tooldiag.trajectory import (
    SCHEMA_VERSION,
    CaseTrajectory,
    Grade,
    RunConfig,
    dump_json_repaired,
    repair_text,
)

DB_NAME = "run.sqlite"
FORMAT = "tooldiag-run"
HEADER = sqlite.Header(format_key="format", format=FORMAT, version_key="schema_version", version=SCHEMA_VERSION)

#: Orders case ids for :meth:`RunStore.iter_cases`: any function of one id returning a sortable value.
SortKey = Callable[[str], Any]

#: Meta keys of the writer record (module docstring).
WRITERS_KEY = "writers"
SESSIONS_KEY = "sessions"
#: The writer of a store written before tooldiag recorded writers.
UNKNOWN_WRITER: dict[str, Any] = {"unknown": True}
#: A writer's versions: ``{"tooldiag": "0.1.0", "python": "3.11.9", ...}`` (``None``: not installed).
WriterVersions = Mapping[str, str | None]
#: The case note that counts lone surrogates replaced by U+FFFD when the case was stored
#: (text no UTF-8 can hold; issue 20, defect 2). Absent on a clean case.
TEXT_REPAIRED_NOTE = "text_repaired"

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

#: The draws above 0 of a repeats run (module docstring); created on their first write.
_SAMPLES_TABLE = """
CREATE TABLE IF NOT EXISTS samples (
    case_id TEXT NOT NULL,
    sample INTEGER NOT NULL CHECK (sample >= 1),
    category TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'error')),
    passed INTEGER,
    error_type TEXT,
    grade TEXT,
    trajectory BLOB NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (case_id, sample)
)
"""
_COLUMNS = "case_id, category, status, passed, error_type, grade, trajectory"


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
    #: Which draw of the case this is (``--repeats``): 0 for the first (and a one-draw run's only) one.
    sample: int = 0


class StoredDraw(NamedTuple):
    """One stored draw read without the models (:meth:`RunStore.iter_stored_trajectories`)."""

    case_id: str
    sample: int
    status: str
    trajectory: dict[str, Any]


@dataclass(frozen=True)
class EncodedCase:
    """One case as :meth:`RunStore.put_case` stores it, already encoded.

    Why: with ``--workers`` the worker that ran a case encodes it (JSON, zlib) and the one
    writer, the parent, only inserts the row (:meth:`RunStore.put_encoded_case`), instead of
    rebuilding the pydantic objects from a pickle and encoding them again on its one core.
    """

    case_id: str
    category: str
    status: str
    passed: int | None
    error_type: str | None
    grade: str | None
    trajectory: bytes
    #: The draw (``--repeats``); 0 goes to ``cases``, above 0 to ``samples``.
    sample: int = 0


def encode_case(trajectory: CaseTrajectory, grade: Grade | None, sample: int = 0) -> EncodedCase:
    """The row :meth:`RunStore.put_case` writes for draw ``sample`` of ``trajectory`` (``grade=None``: an error row).

    Text no UTF-8 can hold (a lone surrogate) is stored as U+FFFD and the case's notes say how
    much was repaired, so a worker process that encodes a case writes what one process would.
    """
    text, repaired = dump_json_repaired(trajectory)
    if repaired:
        fixed = trajectory.model_validate_json(text)
        fixed.notes[TEXT_REPAIRED_NOTE] = repaired
        text = fixed.model_dump_json()
    return EncodedCase(
        sample=sample,
        case_id=repair_text(trajectory.case_id)[0],
        category=repair_text(trajectory.category)[0],
        status="error" if grade is None else "done",
        passed=None if grade is None else int(grade.passed),
        error_type=None if grade is None or grade.error_type is None else repair_text(grade.error_type)[0],
        grade=None if grade is None else dump_json_repaired(grade)[0],
        trajectory=zlib.compress(text.encode("utf-8"), 6),
    )


def _row_values(case: EncodedCase) -> tuple[Any, ...]:
    """``case``'s columns in table order (case_id, category, status, passed, error_type, grade, trajectory)."""
    return (case.case_id, case.category, case.status, case.passed, case.error_type, case.grade, case.trajectory)


def _json_list(text: str | None) -> list[dict[str, Any]]:
    """A meta row holding a JSON list of objects; anything else (absent, damaged) reads as empty."""
    if text is None:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _versions_of(writer: Mapping[str, Any]) -> dict[str, Any]:
    """A writer entry without its time: what makes two writers the same."""
    return {key: value for key, value in writer.items() if key != "first_written_at"}


@dataclass
class _Session:
    """The writing session of this process: its index in ``sessions`` and what it stored so far."""

    index: int
    started: float
    cases: int = 0
    errors: int = 0


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
        self._session: _Session | None = None
        #: The run directory's writer lock (:mod:`tooldiag.store.lock`), held by create_or_resume's stores.
        self._run_lock: RunLock | None = None

    # -- opening -----------------------------------------------------------------
    @staticmethod
    def _connect(path: Path, *, new: bool = False) -> sqlite3.Connection:
        """A connection to the store; an existing one must carry our header (``new``: a blank file we create in)."""
        return sqlite.connect(path, shared_across_threads=True, header=None if new else HEADER)

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
    def create_or_resume(
        cls,
        run_dir: str | Path,
        config: RunConfig,
        *,
        sort_key: SortKey | None = None,
        writer: WriterVersions | None = None,
    ) -> RunStore:
        """Start a run in ``run_dir``, or resume the one there if its config matches.

        ``writer`` (the writing process's versions, :func:`tooldiag.versions.writer_versions`)
        is added to ``writers`` when new and starts a session (module docstring); without it
        the store records no writer.
        """
        store, created = cls._create_or_resume(Path(run_dir), config, sort_key)
        if writer is not None:
            try:
                store._begin_session(writer, created=created)
            except sqlite3.Error as exc:
                store.close()
                raise StoreError(
                    f"cannot write to {store.run_dir / DB_NAME} ({exc})", hint="check the folder"
                ) from None
        return store

    @classmethod
    def _create_or_resume(cls, run_dir: Path, config: RunConfig, sort_key: SortKey | None) -> tuple[RunStore, bool]:
        """The store and whether it was created now; the run directory's lock is held from here to :meth:`close`."""
        if run_dir.exists() and not run_dir.is_dir():
            raise StoreError(f"{run_dir} is a file, not a folder", hint="give a folder path for --run-dir")
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = acquire_run_lock(run_dir)
        try:
            store, created = cls._create_or_resume_locked(run_dir, config, sort_key)
        except BaseException:
            lock.release()
            raise
        store._run_lock = lock
        return store, created

    @classmethod
    def _create_or_resume_locked(
        cls, run_dir: Path, config: RunConfig, sort_key: SortKey | None
    ) -> tuple[RunStore, bool]:
        path = run_dir / DB_NAME
        if path.exists() and not sqlite.is_blank_database(path):
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
            return store, False
        try:
            conn = cls._connect(path, new=True)
            # Schema and header in one transaction: a kill at any moment leaves either a complete
            # store or a blank file, which the next run treats as absent (issue 20, defect 4).
            conn.execute("BEGIN IMMEDIATE")
            for statement in filter(str.strip, _SCHEMA.split(";")):
                conn.execute(statement)
            sqlite.write_meta(
                conn,
                {
                    **HEADER.items(),
                    "config": config.model_dump_json(),
                    "created_at": str(sqlite.unix_time()),
                },
            )
            conn.commit()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot create a run store at {path} ({exc})", hint="check the folder") from None
        return cls(run_dir, conn, config, sort_key), True

    def _set_meta(self, key: str, value: str) -> None:
        with self._lock, self._conn:
            sqlite.write_meta(self._conn, {key: value})

    @contextmanager
    def _write_transaction(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction: a read-modify-write of meta no other writer interleaves."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.rollback()
                raise
            self._conn.commit()

    def _begin_session(self, writer: WriterVersions, *, created: bool) -> None:
        """Record ``writer`` (when new) and open this process's session; a store not ``created``
        now that has no ``writers`` row was written before writers were recorded."""
        now = sqlite.iso_time()
        with self._write_transaction():
            meta = sqlite.read_meta(self._conn)
            writers = _json_list(meta.get(WRITERS_KEY))
            if WRITERS_KEY not in meta and not created:
                writers = [dict(UNKNOWN_WRITER)]
            versions = dict(writer)
            index = next((i for i, known in enumerate(writers) if _versions_of(known) == versions), None)
            if index is None:
                writers.append({**versions, "first_written_at": now})
                index = len(writers) - 1
            sessions = _json_list(meta.get(SESSIONS_KEY))
            sessions.append({"started_at": now, "wall_s": 0.0, "cases": 0, "errors": 0, "writer": index})
            sqlite.write_meta(self._conn, {WRITERS_KEY: json.dumps(writers), SESSIONS_KEY: json.dumps(sessions)})
        self._session = _Session(index=len(sessions) - 1, started=time.perf_counter())

    def _update_session(self) -> None:
        """Write this session's counts and wall time so far; the caller holds a write transaction."""
        session = self._session
        if session is None:
            return
        sessions = _json_list(sqlite.meta_value(self._conn, SESSIONS_KEY))
        if session.index >= len(sessions):
            return  # the row was replaced under us: nothing sensible to update
        sessions[session.index].update(
            wall_s=round(time.perf_counter() - session.started, 3), cases=session.cases, errors=session.errors
        )
        sqlite.write_meta(self._conn, {SESSIONS_KEY: json.dumps(sessions)})

    def save_session(self) -> None:
        """Write this session's wall time up to now (also done by :meth:`close`); a no-op
        without a session, and never fatal: the time up to the last stored case is on disk."""
        if self._session is None:
            return
        try:
            with self._write_transaction():
                self._update_session()
        except sqlite3.Error:
            pass

    def close(self) -> None:
        self.save_session()
        self._session = None
        self._conn.close()
        if self._run_lock is not None:
            self._run_lock.release()
            self._run_lock = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------
    def put_case(self, trajectory: CaseTrajectory, grade: Grade | None, sample: int = 0) -> None:
        """Commit one case atomically; ``grade=None`` stores an infrastructure error row.

        ``sample`` above 0 stores a further draw of the case (``--repeats``) in ``samples``.
        """
        self.put_encoded_case(encode_case(trajectory, grade, sample))

    def put_encoded_case(self, case: EncodedCase) -> None:
        """Commit one case encoded by :func:`encode_case` (elsewhere): the same row, the same
        one transaction with the session update, as :meth:`put_case`."""
        if case.sample:
            self._put_sample(case)
            return
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO cases(case_id, category, status, "
                "passed, error_type, grade, trajectory, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*_row_values(case), sqlite.unix_time()),
            )
            self._count_in_session(case)

    def _count_in_session(self, case: EncodedCase) -> None:
        """Count ``case`` in this process's session, in the case's own transaction (a kill leaves them consistent)."""
        if self._session is not None:
            self._session.cases += 1
            self._session.errors += int(case.status == "error")
            self._update_session()

    def _put_sample(self, case: EncodedCase) -> None:
        """A draw above 0: the ``samples`` row (the table made on first use), in one transaction."""
        with self._lock, self._conn:
            self._conn.execute(_SAMPLES_TABLE)
            self._conn.execute(
                "INSERT OR REPLACE INTO samples(case_id, sample, category, status, "
                "passed, error_type, grade, trajectory, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (case.case_id, case.sample, *_row_values(case)[1:], sqlite.unix_time()),
            )
            self._count_in_session(case)

    # -- reading -----------------------------------------------------------------
    def _has_samples(self) -> bool:
        """Does the store hold draws above 0 (a ``samples`` table)? The caller holds ``_lock``."""
        return "samples" in sqlite.table_names(self._conn)

    def finished_units(self) -> set[tuple[str, int]]:
        """``(case_id, sample)`` of every graded draw (``error`` rows are retried, as in :meth:`finished_ids`)."""
        with self._lock:
            units = {(row[0], 0) for row in self._conn.execute("SELECT case_id FROM cases WHERE status = 'done'")}
            if self._has_samples():
                units.update(self._conn.execute("SELECT case_id, sample FROM samples WHERE status = 'done'"))
        return units

    def sample_counts(self) -> dict[str, int]:
        """Per case id, how many draws are stored (done or error): 1 everywhere in a one-draw run."""
        with self._lock:
            counts = {row[0]: 1 for row in self._conn.execute("SELECT case_id FROM cases")}
            if self._has_samples():
                for case_id, count in self._conn.execute("SELECT case_id, COUNT(*) FROM samples GROUP BY case_id"):
                    counts[case_id] = counts.get(case_id, 0) + count
        return counts

    def iter_samples(self, sort_key: SortKey | None = None) -> Iterator[CaseRecord]:
        """Every stored draw of every case: cases as :meth:`iter_cases` orders them, each case's
        draws by sample (0 first). In a one-draw run the same records as :meth:`iter_cases`."""
        key = sort_key or self.sort_key
        with self._lock:
            units = [(row[0], 0) for row in self._conn.execute("SELECT case_id FROM cases")]
            if self._has_samples():
                units.extend(self._conn.execute("SELECT case_id, sample FROM samples"))
        ordered = sorted(units, key=lambda unit: unit[1])
        ordered.sort(key=lambda unit: unit[0] if key is None else key(unit[0]))  # stable: samples stay in order
        for case_id, sample in ordered:
            record = self.get_case(case_id, sample)
            if record is not None:
                yield record

    def iter_stored_trajectories(self) -> Iterator[StoredDraw]:
        """Every stored draw with its trajectory as plain JSON (:class:`StoredDraw`), in no set order.

        Why not :meth:`iter_samples`: a reader of a few fields of every case (the run summary,
        :mod:`tooldiag.store.usage`; the notes a resume checks) skips rebuilding each trajectory
        as pydantic models, most of the cost of reading a store. A row that is not
        zlib-compressed JSON of an object is a :class:`StoreError` naming the case, as in
        :meth:`get_case`.
        """
        with self._lock:
            rows = self._conn.execute("SELECT case_id, 0, status, trajectory FROM cases").fetchall()
            if self._has_samples():
                rows += self._conn.execute("SELECT case_id, sample, status, trajectory FROM samples").fetchall()
        for case_id, sample, status, blob in rows:
            try:
                trajectory = json.loads(zlib.decompress(blob))
                if not isinstance(trajectory, dict):
                    raise ValueError("the trajectory is not a JSON object")
            except Exception as exc:  # noqa: BLE001 - whatever the damage, one line naming the case
                detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
                raise StoreError(
                    f"case {case_id} in {self.run_dir} is unreadable ({detail})", hint="the store is damaged"
                ) from None
            yield StoredDraw(case_id, sample, status, trajectory)

    def finished_ids(self) -> set[str]:
        """Ids of graded cases (``error`` rows are not finished: they are retried)."""
        with self._lock:
            return {row[0] for row in self._conn.execute("SELECT case_id FROM cases WHERE status = 'done'")}

    def status_counts(self) -> dict[str, dict[str, int]]:
        """Per category: ``done``, ``passed`` and ``error`` counts, over every stored draw (``--repeats``)."""
        out: dict[str, dict[str, int]] = {}
        query = "SELECT category, status, COALESCE(passed, 0), COUNT(*) FROM {} GROUP BY category, status, passed"
        with self._lock:
            rows = self._conn.execute(query.format("cases")).fetchall()
            if self._has_samples():
                rows += self._conn.execute(query.format("samples")).fetchall()
        for category, status, passed, count in rows:
            entry = out.setdefault(category, {"done": 0, "passed": 0, "error": 0})
            if status == "done":
                entry["done"] += count
                entry["passed"] += count if passed else 0
            else:
                entry["error"] += count
        return out

    def _record(self, row: tuple, sample: int = 0) -> CaseRecord:
        """One row (of draw ``sample``) as a :class:`CaseRecord`; a row no tooldiag wrote (a corrupt grade,
        trajectory or column) is a :class:`StoreError` naming the case, never a traceback half-way through a report."""
        case_id, category, status, passed, error_type, grade, blob = row
        try:
            if not isinstance(category, str) or not isinstance(error_type, (str, type(None))):
                raise ValueError("a column of the wrong type")
            if not isinstance(passed, (int, type(None))):
                raise ValueError(f"passed is {passed!r}")
            trajectory = CaseTrajectory.model_validate_json(zlib.decompress(blob))
            parsed_grade = None if grade is None else Grade.model_validate_json(grade)
        except Exception as exc:  # noqa: BLE001 - whatever the damage, one line naming the case
            detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise StoreError(
                f"case {case_id} in {self.run_dir} is unreadable ({detail})", hint="the store is damaged"
            ) from None
        return CaseRecord(
            case_id=case_id,
            category=category,
            status=status,
            passed=None if passed is None else bool(passed),
            error_type=error_type,
            grade=parsed_grade,
            trajectory=trajectory,
            sample=sample,
        )

    def iter_cases(self, sort_key: SortKey | None = None) -> Iterator[CaseRecord]:
        """Every stored case, ordered by ``sort_key``, else the store's own, else plain id order.

        One record per case: its first draw (sample 0); :meth:`iter_samples` yields every draw.
        """
        key = sort_key or self.sort_key
        with self._lock:
            ids = [row[0] for row in self._conn.execute("SELECT case_id FROM cases")]
        for case_id in sorted(ids, key=key):
            record = self.get_case(case_id)
            if record is not None:
                yield record

    def get_case(self, case_id: str, sample: int = 0) -> CaseRecord | None:
        """One stored draw of a case (``sample`` 0: the first), ``None`` when absent."""
        with self._lock:
            if sample == 0:
                row = self._conn.execute(f"SELECT {_COLUMNS} FROM cases WHERE case_id = ?", (case_id,)).fetchone()
            elif self._has_samples():
                row = self._conn.execute(
                    f"SELECT {_COLUMNS} FROM samples WHERE case_id = ? AND sample = ?", (case_id, sample)
                ).fetchone()
            else:
                row = None
        return None if row is None else self._record(row, sample)

    def writers(self) -> list[dict[str, Any]]:
        """Who wrote this store (module docstring); ``[UNKNOWN_WRITER]`` when none was recorded
        (a store from before the key, or one created without a ``writer``)."""
        with self._lock:
            writers = _json_list(sqlite.meta_value(self._conn, WRITERS_KEY))
        return writers or [dict(UNKNOWN_WRITER)]

    def sessions(self) -> list[dict[str, Any]]:
        """Every writing invocation (module docstring); empty for a store from before the key."""
        with self._lock:
            return _json_list(sqlite.meta_value(self._conn, SESSIONS_KEY))

    def created_at(self) -> float | None:
        """When the store was created (Unix seconds), ``None`` if the row is unreadable."""
        with self._lock:
            text = sqlite.meta_value(self._conn, "created_at")
        try:
            return None if text is None else float(text)
        except ValueError:
            return None

    def count(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
