"""Where records come from: the built-in set, JSONL/JSON/Parquet files, or the Hugging Face hub.

A record source is named by one string (the ``--records`` option):

* ``builtin`` (default): 36 records written for tooldiag, six per DAG topology, each with
  easy/medium/hard queries, so everything runs offline;
* ``PATH.jsonl`` / ``PATH.json`` / ``PATH.parquet``: the released layouts (rewritten file with
  ``query_medium``/``query_hard``, or per-difficulty rows with a ``difficulty`` column, which
  are merged back into one record per id);
* ``hf:OWNER/NAME[:CONFIG][@SPLIT]``: a Hugging Face dataset through ``datasets``, e.g.
  ``hf:ServiceNow-AI/BFCL_agentic_judge_bench:linear`` (the source set has only the easy
  query per record); a local folder in the hub layout works too (``hf:./folder:linear``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tooldiag.errors import MissingDependencyError, UserError
from tooldiag.suites.judgebench.records import DIFFICULTIES, JudgeBenchRecord

BUILTIN = "builtin"
HUB_DATASET = "ServiceNow-AI/BFCL_agentic_judge_bench"


def load_records(source: str | Path | None = None, *, limit: int | None = None) -> list[JudgeBenchRecord]:
    """Load and validate records from ``source`` (see the module docstring)."""
    spec = str(source) if source is not None else BUILTIN
    if spec == BUILTIN:
        rows, origin = _builtin_rows(), "built-in records"
    elif spec.startswith("hf:"):
        rows, origin = _hub_rows(spec[3:]), spec
    else:
        path = Path(spec).expanduser()
        if not path.exists():
            raise UserError(
                f"records file {spec} does not exist",
                hint="pass --records builtin, a .jsonl/.json/.parquet file, or hf:OWNER/NAME[:CONFIG]",
            )
        rows, origin = _file_rows(path), str(path)
    records = records_from_rows(rows, origin)
    if not records:
        raise UserError(f"{origin} holds no records", hint="check the file or the dataset config")
    return records[:limit] if limit is not None else records


def records_from_rows(rows: Iterable[dict[str, Any]], origin: str) -> list[JudgeBenchRecord]:
    """Validate rows into records, merging per-difficulty rows; errors name the row."""
    merged: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    per_difficulty: set[str] = set()
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise UserError(f"{origin}: row {number} is not a JSON object", hint="one record object per line")
        row = dict(row)
        difficulty = row.pop("difficulty", None)
        key = str(row.get("id"))
        if difficulty is None:
            if key in merged:
                raise UserError(f"{origin}: duplicate record id {key!r} (row {number})", hint="ids must be unique")
            merged[key] = row
            order.append(key)
            continue
        if difficulty not in DIFFICULTIES:
            raise UserError(
                f"{origin}: row {number} has difficulty {difficulty!r}",
                hint=f"use one of {', '.join(DIFFICULTIES)}",
            )
        base = merged.get(key)
        if base is None:
            base = merged[key] = {k: v for k, v in row.items() if k != "user_message"}
            base["user_message"] = None
            order.append(key)
            per_difficulty.add(key)
        field = {"easy": "user_message", "medium": "query_medium", "hard": "query_hard"}[difficulty]
        base[field] = row.get("user_message")
    records = []
    for key in order:
        row = merged[key]
        if key in per_difficulty and row.get("user_message") is None:
            # per-difficulty input without its easy row: keep the record, easy unavailable
            row["user_message"] = ""
        try:
            records.append(JudgeBenchRecord.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UserError(
                f"{origin}: record {key!r} is invalid{f' at {where}' if where else ''}: {first['msg']}",
                hint="records need id, dag_type, user_message, available_tools, expected_responses",
            ) from None
    return records


def _builtin_rows() -> list[dict[str, Any]]:
    text = resources.files("tooldiag.suites.judgebench").joinpath("data/builtin_records.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _file_rows(path: Path) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            import pandas as pd

            frame = pd.read_parquet(path)
        except ImportError as exc:
            raise MissingDependencyError(
                f"reading {path} needs pyarrow ({exc})",
                hint="pip install pyarrow (a regular dependency of tooldiag: reinstall it)",
            ) from None
        return [_plain(row) for row in frame.to_dict(orient="records")]
    text = path.read_text("utf-8")
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno})", hint="fix the file") from None
        if not isinstance(data, list):
            raise UserError(f"{path} must hold a JSON list of records", hint="or use one record per line (.jsonl)")
        return data
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{number} is not valid JSON: {exc.msg}", hint="one JSON object per line") from None
    return rows


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """Parquet/Arrow values (numpy arrays, numpy scalars) as plain Python values."""
    out = {}
    for key, value in row.items():
        if hasattr(value, "tolist"):
            value = value.tolist()
        out[key] = value
    return out


def parse_hub_spec(spec: str) -> tuple[str, str | None, str]:
    """``OWNER/NAME[:CONFIG][@SPLIT]`` -> (path, config, split)."""
    split = "train"
    if "@" in spec:
        spec, split = spec.rsplit("@", 1)
    path, _, config = spec.partition(":")
    if not path:
        raise UserError("empty Hugging Face dataset name", hint=f"write hf:{HUB_DATASET}:linear")
    return path, (config or None), split


def load_hub_dataset(path: str, config: str | None, split: str) -> Iterable[dict[str, Any]]:
    """Rows of a Hugging Face dataset (hub name, or a local folder in the hub layout)."""
    try:
        import datasets
    except ImportError:
        raise MissingDependencyError(
            "loading records from the Hugging Face hub needs the 'datasets' package",
            hint="uv pip install datasets  (or: pip install 'tooldiag[hub]')",
        ) from None
    try:
        return datasets.load_dataset(path, name=config, split=split)
    except ValueError as exc:
        message = str(exc).splitlines()[0]
        raise UserError(
            f"cannot load hf:{path} (config {config!r}, split {split!r}): {message}",
            hint=f"name a config, e.g. hf:{path}:linear, and a split with @SPLIT",
        ) from None
    except (FileNotFoundError, ConnectionError, OSError) as exc:
        raise UserError(
            f"cannot reach hf:{path}: {str(exc).splitlines()[0]}",
            hint="check the name and network access, or download the dataset and pass its files with --records",
        ) from None


def _hub_rows(spec: str) -> list[dict[str, Any]]:
    path, config, split = parse_hub_spec(spec)
    return [_plain(dict(row)) for row in load_hub_dataset(path, config, split)]
