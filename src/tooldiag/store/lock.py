"""One writer per run directory: an exclusive lock held for the life of the writing process.

Without it a second process on the same directory silently overwrote 192 of 200 graded rows with
its own error rows, and two processes creating a run at the same instant both opened it (issue
20, defect 3). The lock is ``flock`` on ``RUN_DIR/.tooldiag.lock``: the kernel releases it when
the holder exits for any reason, ``kill -9`` included, so a lock left by a dead process is never
stale: the next writer simply takes it. The file's content (pid and start time) is only
there to name the holder in the error a second writer gets; it may be stale, the lock never is.

Readers (``report``, ``cases``, ``show``, ``export``, ``analyze``) do not lock: SQLite's WAL
journal lets them read while the writer commits. On a platform without ``fcntl`` (Windows) the
lock is not taken and the docstring of :func:`acquire_run_lock` says so.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from tooldiag.errors import StoreError

LOCK_FILE = ".tooldiag.lock"


class RunLock:
    """A held lock; :meth:`release` (or process exit) frees it."""

    def __init__(self, path: Path, handle: IO[str] | None) -> None:
        self.path = path
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the descriptor drops the flock
            self._handle = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder_text(path: Path) -> str:
    try:
        holder = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return "another process"
    pid, started = holder.get("pid"), holder.get("started_at")
    text = f"pid {pid}" if pid is not None else "another process"
    return text + (f" (started {started})" if started else "")


def acquire_run_lock(run_dir: Path) -> RunLock:
    """Take the run directory's lock at once, or raise a :class:`StoreError` naming the holder.

    ``run_dir`` must exist. Without ``fcntl`` (Windows) no lock is taken: one writer per run
    is then the user's business.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux or macOS
        return RunLock(run_dir / LOCK_FILE, None)
    path = run_dir / LOCK_FILE
    try:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held open for the run's life
    except OSError as exc:
        raise StoreError(f"cannot create the lock file {path} ({exc.strerror})", hint="check the folder") from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise StoreError(
            f"{run_dir} is in use by {_holder_text(path)}",
            hint="wait for that run to finish (or stop it); one process writes a run directory at a time",
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"pid": os.getpid(), "started_at": datetime.now(UTC).isoformat(timespec="seconds")}))
    handle.flush()
    return RunLock(path, handle)
