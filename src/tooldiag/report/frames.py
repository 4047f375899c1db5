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


def write_parquet(frame: pd.DataFrame, out: Path | None, *, what: str = "--format parquet") -> None:
    """Write ``frame`` to the Parquet file ``out`` (its folder created); a clear error without ``--out``.

    Nested cells (lists of lists, such as the per-turn classes of a case) are stored as
    Parquet lists; a mapping cell is stored as JSON text, since a struct column would
    have to share one key set across rows.
    """
    if out is None:
        raise UserError(f"{what} writes a binary file", hint="add --out FILE.parquet")
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
