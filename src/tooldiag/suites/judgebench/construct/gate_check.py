"""``tooldiag judgebench gates FILE``: the quality gates over an existing records file.

The generator gates its own attempts; this applies the same gates to any file in the released
layout (a generated set, the built-in records, a user's or the hub's records), one attempt per
record, so a user can see which records a judge study should not rely on. A file that is not a
records file at all (a plans file, a run's export) is refused with one line, not gated: its rows
lack the columns every gate reads.

Trace consistency needs the tools' implementations. A record made by tooldiag's generator says
so (``metadata.generator``) and is re-executed with the packaged executor
(``construct/execute.py``) when it is installed; other records have hand-written or unknown
tools, and the gate is skipped for them (their trace structure is still checked).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.judgebench.construct.gate_report import GateReport
from tooldiag.suites.judgebench.construct.gates import GATE_NAMES, Executor, failed_gates, run_gates
from tooldiag.suites.judgebench.construct.record_view import decode
from tooldiag.suites.judgebench.loaders import BUILTIN, _builtin_rows, _file_rows

#: The columns without which a row is not a record at all (the gates cannot even start).
RECORD_COLUMNS = ("user_message", "available_tools", "expected_responses")
EXECUTOR_MODULE = "tooldiag.suites.judgebench.construct.execute"


def read_record_rows(source: str | Path) -> tuple[list[dict[str, Any]], str]:
    """The raw rows of a records file (or ``builtin``), refusing files of another schema."""
    spec = str(source)
    if spec == BUILTIN:
        rows, origin = _builtin_rows(), "the built-in records"
    else:
        path = Path(spec).expanduser()
        if not path.is_file():
            raise UserError(
                f"records file {spec} does not exist",
                hint="pass a .jsonl/.json/.parquet records file (e.g. from `tooldiag judgebench generate`) or builtin",
            )
        rows, origin = _file_rows(path), str(path)
    if not rows:
        raise UserError(f"{origin} holds no records", hint="one record object per line")
    for number, row in enumerate(rows, start=1):
        missing = [c for c in RECORD_COLUMNS if c not in row] if isinstance(row, dict) else list(RECORD_COLUMNS)
        if missing:
            raise UserError(
                f"{origin} is not an AgentJudgeBench records file: row {number} has no {', '.join(missing)}",
                hint="gate records in the released layout (docs/judgebench.md, Records), "
                "e.g. a file written by `tooldiag judgebench generate`",
            )
    return rows, origin


def generated_executor(row: Mapping[str, Any]) -> Executor | None:
    """The executor that re-runs a generated record's tools (its domain's, from ``metadata.domain``).

    ``None`` for a record this generator version did not write (hand-written tools, or a domain
    this version lacks, cannot be re-run: trace consistency then checks the structure only).
    """
    from tooldiag.suites.judgebench.construct.domains import load_domains
    from tooldiag.suites.judgebench.construct.generate import GENERATOR_VERSION

    metadata, _ = decode(row.get("metadata"))
    if not isinstance(metadata, dict) or metadata.get("generator") != GENERATOR_VERSION:
        return None  # hand-written, or another generator's: its tools cannot be re-run here
    if str(metadata.get("domain")) not in load_domains():
        return None
    module = importlib.import_module(EXECUTOR_MODULE)
    return module.record_executor(str(metadata["domain"]))


def generated_record_gates(record: dict[str, Any]) -> list[str]:
    """The gates ``judgebench generate`` runs on every record it builds (names of the failed ones)."""
    return failed_gates(record, generated_executor(record))


def is_generated(row: dict[str, Any]) -> bool:
    """Whether tooldiag's generator wrote ``row`` (its metadata names the generator)."""
    metadata, _ = decode(row.get("metadata"))
    return isinstance(metadata, dict) and "generator" in metadata


def gate_rows(rows: Iterable[dict[str, Any]], executor: Executor | None = None) -> GateReport:
    """Gate every row (one attempt each); ``executor`` re-executes every record, else generated ones only."""
    attempts: list[tuple[str, int, list[str], list[str]]] = []
    failures: list[dict[str, str]] = []
    for row in rows:
        chosen = executor if executor is not None else generated_executor(row)
        results = run_gates(row, chosen)
        dag = str(row.get("dag_type") or "unknown").strip().replace("-", "_")
        failed = [r.name for r in results if r.passed is False]
        skipped = [r.name for r in results if r.passed is None]
        attempts.append((dag, 0, failed, skipped))
        failures.extend(
            {"id": str(row.get("id")), "dag_type": dag, "gate": r.name, "detail": r.detail}
            for r in results
            if r.passed is False
        )
    return GateReport.from_attempts(attempts, gates=GATE_NAMES, failures=failures)
