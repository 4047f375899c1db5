"""Tables as pandas DataFrames, and DataFrames as Parquet files.

Every table command of tooldiag can write ``--format parquet``; the Python API's
``load_*`` functions return the same frames. pandas and pyarrow are imported inside the
functions that need them, so that a command which prints markdown never pays for them
(the CLI must start in well under a second and a half: ``bench/cli_latency.py``).

Why Parquet: a typed, compressed, columnar file that pandas, polars, DuckDB and R read
as they are, so a grid of runs can be pooled without parsing text. pyarrow writes it
(a regular dependency: pandas' own Parquet engine).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.errors import UserError
from tooldiag.report.table import BLANK, Table, json_value

if TYPE_CHECKING:
    import pandas as pd

    from tooldiag.metrics.cases import CaseRow
    from tooldiag.report.model import RunReport

_SCALARS = (str, int, float, bool)


def _cell(column_text: Any, value: Any) -> Any:
    if value is BLANK or value is None:
        return None
    value = json_value(value)
    if value is None or isinstance(value, _SCALARS):
        return value
    return column_text(value)  # a composite cell (a value with its interval): its display text


def table_frame(table: Table) -> pd.DataFrame:
    """``table`` as a DataFrame: one column per column key, numbers as numbers.

    A composite cell (a value with its interval, a count with its flag) becomes its
    display text; tables that need the parts as numbers give them as separate columns
    (the tidy tables of every report do).
    """
    import pandas as pd

    keys = [column.id for column in table.columns]
    rows = [[_cell(column.text, value) for column, value in zip(table.columns, row, strict=True)] for row in table.rows]
    return pd.DataFrame(rows, columns=keys)


def records_frame(records: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Plain records (dicts) as a DataFrame; ``columns`` fixes the order (and keeps an empty frame typed by name)."""
    import pandas as pd

    rows = list(records)
    if columns is None:
        keys: dict[str, None] = {}
        for row in rows:
            keys.update(dict.fromkeys(row))
        columns = list(keys)
    return pd.DataFrame([{key: row.get(key) for key in columns} for row in rows], columns=list(columns))


def check_parquet_out(out: Path | None, what: str = "--format parquet", flag: str = "--out") -> Path:
    """``out``, or one clear error: a Parquet file cannot go to the terminal (``flag``: the command's name
    for its output option). Commands call it before they compute anything, so a missing ``--out`` costs no work."""
    if out is None:
        raise UserError(f"{what} writes a binary file", hint=f"add {flag} FILE.parquet")
    from tooldiag.store.outputs import check_output_path

    check_output_path(out, flag)
    return out


def write_parquet(frame: pd.DataFrame, out: Path | None, *, what: str = "--format parquet") -> None:
    """Write ``frame`` to the Parquet file ``out`` (its folder created); a clear error without ``--out``.

    Nested cells (lists of lists, such as the per-turn classes of a case) are stored as
    Parquet lists; a mapping cell is stored as JSON text, since a struct column would
    have to share one key set across rows.
    """
    out = check_parquet_out(out, what)
    import json

    frame = frame.copy()
    for name in frame.columns:
        if frame[name].map(lambda v: isinstance(v, Mapping)).any():
            frame[name] = frame[name].map(lambda v: json.dumps(v, ensure_ascii=False) if isinstance(v, Mapping) else v)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(out, engine="pyarrow", index=False)
    except ImportError:  # pragma: no cover - pyarrow is a regular dependency
        raise UserError("writing Parquet needs pyarrow", hint="pip install pyarrow") from None
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})", hint="choose a writable --out path") from None


#: Columns of :func:`cases_frame`, in order (docs/evidence.md, "DataFrames and Parquet"); a suite's
#: extra columns (tau2: the write event) follow them.
CASE_FRAME_COLUMNS = (
    "run",
    "case_id",
    "category",
    "gold_class",
    "classes",
    "n_turns",
    "n_emissions",
    "gold_hit",
    "passed",
    "error_type",
    "verdict",
    "errored",
)


def cases_frame(rows: Sequence[CaseRow]) -> pd.DataFrame:
    """One row per case (:class:`~tooldiag.metrics.cases.CaseRow`): ``classes`` as a list (turns) of lists.

    ``passed`` is pandas' nullable ``boolean`` (``<NA>`` for an ungraded case), so that a
    column with gaps stays boolean, and a Parquet round trip gives the same dtype back.
    """

    records = []
    for row in rows:
        record = row.to_json()
        record["n_turns"] = len(row.classes)
        record["n_emissions"] = sum(len(turn) for turn in row.classes)
        records.append(record)
    extras = [key for key in dict.fromkeys(k for r in records for k in r) if key not in CASE_FRAME_COLUMNS]
    frame = records_frame(records, [*CASE_FRAME_COLUMNS, *extras])
    frame["passed"] = frame["passed"].astype("boolean")
    for name in ("gold_hit", "errored"):
        frame[name] = frame[name].astype(bool)
    for name in ("n_turns", "n_emissions"):
        frame[name] = frame[name].astype("int64")
    return frame


def report_frame(reports: Sequence[RunReport]) -> pd.DataFrame:
    """The tidy report table (one row per run and category; ``tooldiag report --format csv``) as a DataFrame.

    Numbers stay numbers (percentages 0-100, ``None`` where undefined), and ``flags`` is a
    list of flag names per row rather than the CSV's ``;``-joined text.
    """
    from tooldiag.report.render import tidy_table

    table = tidy_table(reports)
    frame = table_frame(table)
    frame["flags"] = [list(flags) for flags in table.column("flags")]
    return frame
