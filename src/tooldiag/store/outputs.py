"""Outputs never overwrite a run: one check for every ``--out`` a command writes.

``export RUN --out RUN/run.sqlite`` once truncated the store to 0 bytes, and ``report RUN --out
RUN/run.sqlite`` replaced it with Markdown and exited 0. A run directory is recognised by what
it holds, not by a suite's file names (this layer knows no suite): a folder with a SQLite
database in it. Inside such a folder a command may add a new file but never replace an existing
one, and no command ever writes over a SQLite database (or its ``-wal``/``-shm`` journal), wherever it is.
"""

from __future__ import annotations

from pathlib import Path

from tooldiag.errors import UserError

_SQLITE_MAGIC = b"SQLite format 3\x00"
_JOURNAL_SUFFIXES = ("-wal", "-shm", "-journal")


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a SQLite database, by its 16-byte header."""
    try:
        with path.open("rb") as handle:
            return handle.read(16) == _SQLITE_MAGIC
    except OSError:
        return False


def run_directory_of(path: Path) -> Path | None:
    """The run directory ``path`` lies in (its folder, when that holds a SQLite database), else ``None``."""
    folder = path.parent
    try:
        entries = list(folder.iterdir())
    except OSError:
        return None
    return (
        folder
        if any(e.is_file() and not e.name.endswith(_JOURNAL_SUFFIXES) and is_sqlite_file(e) for e in entries)
        else None
    )


def check_output_path(out: Path, flag: str = "--out") -> None:
    """Refuse ``out`` when writing it would replace a database or an existing file of a run directory."""
    out = Path(out)
    if out.name.endswith(_JOURNAL_SUFFIXES) and is_sqlite_file(out.with_name(out.name.rsplit("-", 1)[0])):
        raise UserError(
            f"{flag} {out} is the journal name of a SQLite database; SQLite would read it as the database's journal",
            hint=f"give {flag} another file name",
        )
    if not out.exists() or out.is_dir():
        return
    if is_sqlite_file(out):
        raise UserError(
            f"{flag} {out} is a SQLite database (a run's store?); refusing to overwrite it",
            hint=f"give {flag} a new file name outside the run directory",
        )
    run_dir = run_directory_of(out.resolve())
    if run_dir is not None:
        raise UserError(
            f"{flag} {out} already exists inside the run directory {run_dir}; refusing to overwrite a run's files",
            hint=f"give {flag} a path outside {run_dir}, or a new file name",
        )
