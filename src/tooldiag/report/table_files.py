"""Commands with several tables and one ``--format parquet --out``: one file, or a folder of files.

A Parquet file holds one table. A command that prints several (the audit report, the
classifier evaluation, the judge-reliability analysis) writes, for ``--out X.parquet``,
its *main* tidy table to that file, and for any other ``--out`` (a folder, existing or
not) every table as ``<table key>.parquet`` inside it: the file form for the one number a
script wants, the folder form for everything. :func:`check_parquet_out` is called before
the command computes anything, so a missing ``--out`` costs no work.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from tooldiag.errors import UserError
from tooldiag.report.frames import check_parquet_out

if TYPE_CHECKING:
    import pandas as pd

PARQUET_SUFFIX = ".parquet"


def is_single_file(out: Path) -> bool:
    """Whether ``out`` names one Parquet file (``.parquet``, not an existing folder) rather than a folder."""
    return out.suffix.lower() == PARQUET_SUFFIX and not out.is_dir()


def write_parquet_tables(frames: Mapping[str, pd.DataFrame], out: Path | None, *, main: str) -> list[Path]:
    """``frames[main]`` to the file ``out`` (``*.parquet``), or every frame to ``out/<key>.parquet``."""
    from tooldiag.report.frames import write_parquet

    target = check_parquet_out(out)
    if is_single_file(target):
        write_parquet(frames[main], target)
        return [target]
    if target.exists() and not target.is_dir():
        raise UserError(
            f"--out {target} is a file; --format parquet writes a folder of tables here",
            hint="give a folder, or a FILE.parquet for the main table alone",
        )
    written = []
    for key, frame in frames.items():
        path = target / f"{key}{PARQUET_SUFFIX}"
        write_parquet(frame, path)
        written.append(path)
    return written
