"""The run directory of a judge-reliability study: one SQLite file, one committed row per unit.

A unit of work is one generator call ``(generator, record, difficulty)`` or one judge verdict
``(judge, generator, record, difficulty, condition, sample, variant)``; each is committed as soon as it
finishes (WAL journal), so a run killed at any moment loses at most the units in flight,
and re-running the same command skips what is stored: nothing is lost or duplicated (the
primary keys forbid duplicates). A local judge run groups its verdicts (:meth:`JudgeBenchStore.begin_batch`,
at most 64 rows or 0.2 s per commit), so a kill also loses the verdicts of at most the last 0.2 s,
which the next run judges again. Rows with status ``error`` (the model call failed for
infrastructure reasons) are retried on resume; ``empty``/``unparseable`` predictions and
``null`` judgements are final outcomes and are reported, not retried.

The store keeps the records it was run on (with a content fingerprint) and the settings of
every model and condition; resuming with different records or settings is refused.

The file is opened through :mod:`tooldiag.sqlite` (autocommit: each row is its own
transaction unless a batch is open). Its header is ``meta(suite = judgebench, store_version = 2)``, the keys the
first stores were written with; row timestamps are ISO-8601 text.

Version 2 added two keys to a judgement: ``sample`` (the draw index, 0 for the first draw, so a
judge can be asked for K independent verdicts of one plan) and ``variant`` (``""`` for the plan
as generated, otherwise the name of a bias probe that re-judged a rewritten but structurally
identical plan, such as ``order``). A version-1 store is migrated in place when opened: its
judgements become sample 0, variant ``""``, and the header says 2.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tooldiag import sqlite
from tooldiag.errors import StoreError
from tooldiag.suites.judgebench.records import JudgeBenchRecord
from tooldiag.trajectory import dump_json_repaired, repair_value


def _utf8_safe(*row: Any) -> tuple[Any, ...]:
    """A row whose text UTF-8 can hold: lone surrogates (``"\\ud800"`` in a model's reply) become
    U+FFFD, so a judge's or generator's odd text is stored instead of aborting the write (issue 20).

    The row is walked only when one of its strings cannot be encoded as it is (a lone surrogate is
    the one thing that UTF-8 refuses): every other row is returned as it came, which is what the
    walk would return for it, without paying for the walk on every verdict (issue 16)."""
    for item in row:
        if isinstance(item, str) and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return repair_value(row)[0]
    return row


def _json_repaired(value: Any, **dumps: Any) -> str:
    """``json.dumps(repair_value(value)[0], **dumps)``: the JSON text of ``value`` with lone surrogates
    as U+FFFD, walking ``value`` only when its text shows one.

    ``json.dumps`` (``ensure_ascii``, the default here) writes every surrogate as a ``\\udXXX``
    escape, so text without ``\\ud`` came from strings without any, and repairing them would change
    nothing; text with it (a surrogate, a Hangul syllable, an escaped backslash before ``ud``) takes
    the walk, which yields the same text as before for all of them."""
    text = json.dumps(value, **dumps)
    if "\\ud" not in text:
        return text
    return json.dumps(repair_value(value)[0], **dumps)


STORE_FILE = "judgebench.sqlite"
STORE_VERSION = 2
HEADER = sqlite.Header(format_key="suite", format="judgebench", version_key="store_version", version=STORE_VERSION)

_JUDGEMENTS_TABLE = """CREATE TABLE IF NOT EXISTS judgements (
    judge TEXT NOT NULL, generator TEXT NOT NULL, record_id TEXT NOT NULL, difficulty TEXT NOT NULL,
    condition TEXT NOT NULL, status TEXT NOT NULL,
    tool_selection REAL, parameter_structure REAL, sequence REAL, coverage REAL,
    verdict TEXT, raw TEXT, attempts INTEGER NOT NULL, error TEXT, prompt TEXT, created_at TEXT NOT NULL,
    sample INTEGER NOT NULL DEFAULT 0, variant TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (judge, generator, record_id, difficulty, condition, sample, variant))"""

_SCHEMA = f"""
{sqlite.META_TABLE};
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY, dag_type TEXT NOT NULL, fingerprint TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS settings (
    role TEXT NOT NULL, model TEXT NOT NULL, scope TEXT NOT NULL, config TEXT NOT NULL,
    PRIMARY KEY (role, model, scope));
CREATE TABLE IF NOT EXISTS predictions (
    generator TEXT NOT NULL, record_id TEXT NOT NULL, difficulty TEXT NOT NULL,
    status TEXT NOT NULL, calls TEXT, raw TEXT, error TEXT, latency_s REAL, created_at TEXT NOT NULL,
    PRIMARY KEY (generator, record_id, difficulty));
{_JUDGEMENTS_TABLE};
"""

#: Human / audit labels (``tooldiag judgebench labels import``, :mod:`tooldiag.suites.judgebench.labels`): one row
#: per generator output x metric x rater. ``label`` is ``agree``/``disagree`` (with the programmatic score) or NULL
#: for a plain score; ``score`` is the human's score in [0, 1] (for agree/disagree derived by the paper 000 App. G
#: rule from ``programmatic``, the released scorer's value the label was made against, pinned at import).
#: A separate statement with IF NOT EXISTS, so stores written before labels existed open unchanged.
_LABELS_SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (
    record_id TEXT NOT NULL, generator TEXT NOT NULL, difficulty TEXT NOT NULL, metric TEXT NOT NULL,
    rater TEXT NOT NULL, label TEXT, score REAL NOT NULL, programmatic REAL NOT NULL, source TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (record_id, generator, difficulty, metric, rater));
"""
LABEL_COLUMNS = ("record_id", "generator", "difficulty", "metric", "rater", "label", "score", "programmatic", "source")

PREDICTION_STATUSES = ("ok", "empty", "unparseable", "error")
JUDGEMENT_STATUSES = ("ok", "null", "error")


class JudgeBenchStore:
    """SQLite-backed results of predict and judge runs in ``run_dir``."""

    def __init__(self, run_dir: str | Path, *, create: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_FILE
        if not self.path.exists():
            if not create:
                raise StoreError(
                    f"{self.run_dir} holds no judgebench run ({STORE_FILE} missing)",
                    hint="run `tooldiag judgebench predict --run-dir DIR` first, or point --run-dir at an existing run",
                )
            if self.run_dir.exists() and not self.run_dir.is_dir():
                raise StoreError(f"{self.run_dir} is not a directory", hint="choose another --run-dir")
            self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite.connect(self.path, autocommit=True, header=HEADER)
            self.db.executescript(_SCHEMA)
            self.db.executescript(_LABELS_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path} is not a readable judgebench store ({exc})", hint="use a fresh --run-dir"
            ) from None
        version = self._meta(HEADER.version_key)
        if version is None:
            sqlite.write_meta(self.db, HEADER.items())
            return
        number = self._compatible_version(version)
        if number is None:
            raise StoreError(
                f"{self.path} was written by an incompatible tooldiag (store version {version})",
                hint="use a fresh --run-dir",
            )
        if number == 1:
            self._migrate_from_v1()

    def _compatible_version(self, version: str) -> int | None:
        """The stored version (text, as every judgebench store wrote it) when it is 1 or 2 in a judgebench file."""
        try:
            number = sqlite.parse_version(version)
        except ValueError:
            return None
        if number not in (1, HEADER.version) or self._meta(HEADER.format_key) != HEADER.format:
            return None
        return number

    def _migrate_from_v1(self) -> None:
        """Give a version-1 judgements table the ``sample`` and ``variant`` keys, in one transaction.

        SQLite cannot change a primary key in place, so the table is rebuilt; every old row
        becomes the first draw (sample 0) of the plan as generated (variant ``""``).
        """
        columns = [row[1] for row in self.db.execute("PRAGMA table_info(judgements)")]
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            if "sample" not in columns:
                self.db.execute("ALTER TABLE judgements RENAME TO judgements_v1")
                self.db.execute(_JUDGEMENTS_TABLE)
                old = ", ".join(columns)
                self.db.execute(f"INSERT INTO judgements ({old}) SELECT {old} FROM judgements_v1")
                self.db.execute("DROP TABLE judgements_v1")
            self.db.execute("UPDATE meta SET value = ? WHERE key = ?", (str(HEADER.version), HEADER.version_key))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> JudgeBenchStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ meta

    def _meta(self, key: str) -> str | None:
        return sqlite.meta_value(self.db, key)

    def _set_meta(self, key: str, value: str) -> None:
        sqlite.write_meta(self.db, {key: value})

    def pin_meta(self, key: str, value: str, what: str) -> None:
        """Record ``value`` under ``key`` once; refuse a different value later."""
        old = self._meta(key)
        if old is None:
            self._set_meta(key, value)
        elif old != value:
            raise StoreError(
                f"this run used {what} {old}, not {value}",
                hint=f"re-run with the same {what}, or use a fresh --run-dir",
            )

    def meta(self, key: str) -> str | None:
        return self._meta(key)

    # ------------------------------------------------------------------ records

    def add_records(self, records: Iterable[JudgeBenchRecord]) -> None:
        """Store new records; a stored id with different content is refused."""
        known = {rid: fp for rid, fp in self.db.execute("SELECT id, fingerprint FROM records")}
        new = []
        for record in records:
            fp = record.fingerprint()
            if record.id in known:
                if known[record.id] != fp:
                    raise StoreError(
                        f"record {record.id!r} differs from the one this run directory was started with",
                        hint="use the same --records, or a fresh --run-dir",
                    )
                continue
            new.append(_utf8_safe(record.id, record.dag_type, fp, dump_json_repaired(record)[0]))
        if new:
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany("INSERT INTO records (id, dag_type, fingerprint, body) VALUES (?, ?, ?, ?)", new)

    def records(self) -> dict[str, JudgeBenchRecord]:
        return {
            rid: JudgeBenchRecord.model_validate_json(body)
            for rid, body in self.db.execute("SELECT id, body FROM records ORDER BY id")
        }

    # ------------------------------------------------------------------ settings

    def pin_settings(self, role: str, model: str, scope: str, config: dict[str, Any]) -> None:
        """Remember how ``model`` ran in ``role``/``scope``; refuse a resume with other settings."""
        text = json.dumps(config, sort_keys=True)
        row = self.db.execute(
            "SELECT config FROM settings WHERE role = ? AND model = ? AND scope = ?", (role, model, scope)
        ).fetchone()
        if row is None:
            self.db.execute(
                "INSERT INTO settings (role, model, scope, config) VALUES (?, ?, ?, ?)", (role, model, scope, text)
            )
            return
        if row[0] != text:
            old, new = json.loads(row[0]), config
            diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            where = f" for condition {scope}" if scope else ""
            raise StoreError(
                f"{role} {model}{where} ran with different settings before ({', '.join(diff)})",
                hint="re-run with the original settings, or use a fresh --run-dir",
            )

    def settings(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        return [(r, m, s, json.loads(c)) for r, m, s, c in self.db.execute("SELECT * FROM settings ORDER BY 1, 2, 3")]

    # ------------------------------------------------------------------ predictions

    def finished_predictions(self, generator: str) -> set[tuple[str, str]]:
        rows = self.db.execute(
            "SELECT record_id, difficulty FROM predictions WHERE generator = ? AND status != 'error'", (generator,)
        )
        return {(r, d) for r, d in rows}

    def put_prediction(
        self,
        generator: str,
        record_id: str,
        difficulty: str,
        status: str,
        calls: list[dict[str, Any]] | None,
        raw: Any = None,
        error: str | None = None,
        latency_s: float | None = None,
    ) -> None:
        if status not in PREDICTION_STATUSES:
            raise ValueError(f"unknown prediction status {status!r}")
        self.db.execute(
            "INSERT OR REPLACE INTO predictions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _utf8_safe(
                generator,
                record_id,
                difficulty,
                status,
                _json_repaired(calls) if calls is not None else None,
                _json_repaired(raw, default=str) if raw is not None else None,
                error,
                latency_s,
                sqlite.iso_time(),
            ),
        )

    def predictions(self, generators: Iterable[str] | None = None, status: str | None = "ok") -> list[dict[str, Any]]:
        query = "SELECT generator, record_id, difficulty, status, calls, error FROM predictions"
        clauses, params = [], []
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        gens = list(generators) if generators is not None else None
        if gens:
            clauses.append(f"generator IN ({','.join('?' * len(gens))})")
            params.extend(gens)
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        query += " ORDER BY generator, record_id, difficulty"
        return [
            {
                "generator": g,
                "record_id": r,
                "difficulty": d,
                "status": s,
                "calls": json.loads(c) if c is not None else None,
                "error": e,
            }
            for g, r, d, s, c, e in self.db.execute(query, params)
        ]

    # ------------------------------------------------------------------ judgements

    def finished_judgements(self, judge: str) -> set[tuple[str, str, str, str, int, str]]:
        """Keys ``(generator, record_id, difficulty, condition, sample, variant)`` of ``judge``'s final verdicts."""
        rows = self.db.execute(
            "SELECT generator, record_id, difficulty, condition, sample, variant FROM judgements "
            "WHERE judge = ? AND status != 'error'",
            (judge,),
        )
        return {(g, r, d, c, int(s), v) for g, r, d, c, s, v in rows}

    def put_judgement(
        self,
        judge: str,
        generator: str,
        record_id: str,
        difficulty: str,
        condition: str,
        status: str,
        values: dict[str, float | None] | None,
        verdict: dict[str, Any] | None,
        raw: Any,
        attempts: int,
        error: str | None,
        prompt: str,
        *,
        sample: int = 0,
        variant: str = "",
    ) -> None:
        if status not in JUDGEMENT_STATUSES:
            raise ValueError(f"unknown judgement status {status!r}")
        v = values or {}
        self.db.execute(
            "INSERT OR REPLACE INTO judgements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _utf8_safe(
                judge,
                generator,
                record_id,
                difficulty,
                condition,
                status,
                v.get("tool_selection"),
                v.get("parameter_structure"),
                v.get("sequence"),
                v.get("coverage"),
                _json_repaired(verdict) if verdict is not None else None,
                _json_repaired(raw, default=str) if raw is not None else None,
                attempts,
                error,
                prompt,
                sqlite.iso_time(),
                sample,
                variant,
            ),
        )

    def begin_batch(self) -> None:
        """Open a transaction that the following writes join, until :meth:`commit_batch` (a judge run
        commits its verdicts in groups: a commit per verdict cost as much as the rest of storing it)."""
        if not self.db.in_transaction:
            self.db.execute("BEGIN")

    def commit_batch(self) -> None:
        """Commit the writes since :meth:`begin_batch`; nothing when no batch is open."""
        if self.db.in_transaction:
            self.db.execute("COMMIT")

    #: Columns of :meth:`judgement_rows`, in order.
    JUDGEMENT_ROW_COLUMNS = (
        "judge", "generator", "record_id", "difficulty", "condition", "sample", "variant", "status",
        "tool_selection", "parameter_structure", "sequence", "coverage",
    )  # fmt: skip

    def judgement_rows(self, *, variant: str | None = "") -> list[tuple]:
        """Stored judgements as :attr:`JUDGEMENT_ROW_COLUMNS` tuples, in key order.

        ``variant`` picks the plans as generated (``""``, the default: what every analysis table
        reads), one bias probe's variant, or all rows (``None``).
        """
        where, params = ("", ()) if variant is None else (" WHERE variant = ?", (variant,))
        return self.db.execute(
            f"SELECT {', '.join(self.JUDGEMENT_ROW_COLUMNS)} FROM judgements{where} "
            "ORDER BY judge, generator, record_id, difficulty, condition, sample, variant",
            params,
        ).fetchall()

    def count(self, table: str) -> int:
        if table not in ("predictions", "judgements", "records"):
            raise ValueError(table)
        return self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

    # ------------------------------------------------------------------ human / audit labels

    def put_labels(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Insert label rows (:data:`LABEL_COLUMNS` order) in one transaction: all or none.

        The caller checks conflicts first; a duplicate key still fails here (primary key) rather
        than silently replacing a stored label.
        """
        stamped = [(*row, sqlite.iso_time()) for row in rows]
        if not stamped:
            return
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(f"INSERT INTO labels VALUES ({', '.join('?' * (len(LABEL_COLUMNS) + 1))})", stamped)

    def labels(self) -> list[dict[str, Any]]:
        """Every stored label as a dict of :data:`LABEL_COLUMNS`, in key order."""
        query = (
            f"SELECT {', '.join(LABEL_COLUMNS)} FROM labels ORDER BY record_id, generator, difficulty, metric, rater"
        )
        return [dict(zip(LABEL_COLUMNS, row, strict=True)) for row in self.db.execute(query)]

    # ------------------------------------------------------------------ imports

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group many writes into one commit: an import of a whole file lands entirely or not at all
        (a kill mid-file loses only that file, and re-running the import redoes it)."""
        with self.db:
            self.db.execute("BEGIN")
            yield

    def stored_verdicts(self, judge: str) -> dict[tuple[str, str, str, str], tuple[str, tuple[float | None, ...]]]:
        """``(generator, record_id, difficulty, condition) -> (status, four values)`` of one judge's
        first draws of the plans as generated (what an import writes), so an import can tell a verdict
        it already stored from a conflicting one."""
        rows = self.db.execute(
            "SELECT generator, record_id, difficulty, condition, status, tool_selection, parameter_structure, "
            "sequence, coverage FROM judgements WHERE judge = ? AND sample = 0 AND variant = ''",
            (judge,),
        )
        return {(g, r, d, c): (s, (t, p, q, v)) for g, r, d, c, s, t, p, q, v in rows}
