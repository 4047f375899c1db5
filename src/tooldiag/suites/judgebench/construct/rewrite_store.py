"""The resumable store of the rewrite and meta-judge steps: one SQLite file, one committed row per unit.

Why a file of its own and not new tables in the study store (``judgebench.sqlite``): a rewrite
run belongs to a records *file* being built, not to a judge study, and a study directory must
not change meaning when someone rewrites records next to it. The file kind is
``meta(format = judgebench-construct, schema_version = 1)``; it is opened through
:mod:`tooldiag.sqlite` (WAL, autocommit: each row is its own transaction), so a run killed at any
moment loses only the units in flight and the same command resumes.

``rewrites``: one row per (record, transition) with the source text it was rewritten from; a
row is reused only while its source is unchanged (a medium query redone on resume makes its
hard row stale) and its status is not ``error`` (infrastructure failures are retried).
``metajudge_votes``: one row per (judge, record, transition), reused under the same rule with
the (source, rewrite) pair. The settings of a run (model, prompt tags, generation config) are
pinned in ``meta``; resuming with other settings is refused.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tooldiag import sqlite
from tooldiag.errors import StoreError

HEADER = sqlite.Header(format_key="format", format="judgebench-construct", version_key="schema_version", version=1)

_SCHEMA = f"""
{sqlite.META_TABLE};
CREATE TABLE IF NOT EXISTS rewrites (
    record_id TEXT NOT NULL, transition TEXT NOT NULL, status TEXT NOT NULL,
    source TEXT NOT NULL, rewrite TEXT, raw TEXT, error TEXT, attempts INTEGER NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (record_id, transition));
CREATE TABLE IF NOT EXISTS metajudge_votes (
    judge TEXT NOT NULL, record_id TEXT NOT NULL, transition TEXT NOT NULL, status TEXT NOT NULL,
    preserved INTEGER, hardened INTEGER, source TEXT NOT NULL, rewrite TEXT NOT NULL,
    reason TEXT, raw TEXT, error TEXT, attempts INTEGER NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (judge, record_id, transition));
"""

#: ``ok``: a usable rewrite; ``identical``/``empty``/``unparseable``: final failures (FAILED in the
#: output); ``error``: the model call failed (FAILED in the output, retried on the next run).
REWRITE_STATUSES = ("ok", "identical", "empty", "unparseable", "error")
#: ``ok``: both votes read; ``null``: no readable vote after the retries; ``error``: retried on resume.
VOTE_STATUSES = ("ok", "null", "error")


class ConstructStore:
    """Rows of one rewrite run or one meta-judge run, in ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.parent.exists() and not self.path.parent.is_dir():
            raise StoreError(f"{self.path.parent} is not a directory", hint="choose another run directory")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite.connect(self.path, autocommit=True, header=HEADER)
            self.db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path} is not a readable tooldiag store ({exc})", hint="use a fresh run directory"
            ) from None
        stored = sqlite.meta_value(self.db, HEADER.format_key)
        if stored is None:
            sqlite.write_meta(self.db, HEADER.items())
        elif stored != HEADER.format or sqlite.meta_value(self.db, HEADER.version_key) != str(HEADER.version):
            self.db.close()
            raise StoreError(f"{self.path} was written by another tool or version", hint="use a fresh run directory")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> ConstructStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pin(self, key: str, value: dict[str, Any], what: str) -> None:
        """Remember the settings ``value`` under ``key``; refuse a resume with other ones."""
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        old = sqlite.meta_value(self.db, key)
        if old is None:
            sqlite.write_meta(self.db, {key: text})
            return
        if old != text:
            before = json.loads(old)
            diff = sorted(k for k in set(before) | set(value) if before.get(k) != value.get(k))
            raise StoreError(
                f"this {what} ran with different settings before ({', '.join(diff)})",
                hint="re-run with the original settings, or use a fresh run directory",
            )

    # ------------------------------------------------------------------ rewrites

    def rewrites(self) -> dict[tuple[str, str], dict[str, Any]]:
        rows = self.db.execute(
            "SELECT record_id, transition, status, source, rewrite, error, attempts FROM rewrites ORDER BY 1, 2"
        )
        return {
            (r, t): {"status": s, "source": src, "rewrite": rw, "error": e, "attempts": a}
            for r, t, s, src, rw, e, a in rows
        }

    def put_rewrite(
        self,
        record_id: str,
        transition: str,
        status: str,
        source: str,
        rewrite: str | None,
        raw: list[str | None] | None,
        error: str | None,
        attempts: int,
    ) -> None:
        if status not in REWRITE_STATUSES:
            raise ValueError(f"unknown rewrite status {status!r}")
        self.db.execute(
            "INSERT OR REPLACE INTO rewrites VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record_id,
                transition,
                status,
                source,
                rewrite,
                json.dumps(raw, ensure_ascii=False) if raw is not None else None,
                error,
                attempts,
                sqlite.iso_time(),
            ),
        )

    # ------------------------------------------------------------------ votes

    def votes(self) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT judge, record_id, transition, status, preserved, hardened, source, rewrite, reason, error, "
            "attempts FROM metajudge_votes ORDER BY judge, record_id, transition"
        )
        return [
            {
                "judge": j,
                "record_id": r,
                "transition": t,
                "status": s,
                "preserved": None if p is None else bool(p),
                "hardened": None if h is None else bool(h),
                "source": src,
                "rewrite": rw,
                "reason": why,
                "error": e,
                "attempts": a,
            }
            for j, r, t, s, p, h, src, rw, why, e, a in rows
        ]

    def put_vote(
        self,
        judge: str,
        record_id: str,
        transition: str,
        status: str,
        preserved: bool | None,
        hardened: bool | None,
        source: str,
        rewrite: str,
        reason: str | None,
        raw: list[str | None] | None,
        error: str | None,
        attempts: int,
    ) -> None:
        if status not in VOTE_STATUSES:
            raise ValueError(f"unknown vote status {status!r}")
        self.db.execute(
            "INSERT OR REPLACE INTO metajudge_votes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                judge,
                record_id,
                transition,
                status,
                None if preserved is None else int(preserved),
                None if hardened is None else int(hardened),
                source,
                rewrite,
                reason,
                json.dumps(raw, ensure_ascii=False) if raw is not None else None,
                error,
                attempts,
                sqlite.iso_time(),
            ),
        )

    def count(self, table: str) -> int:
        if table not in ("rewrites", "metajudge_votes"):
            raise ValueError(table)
        return int(self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
