"""The gate report: how often each quality gate passed, failed and caused a regeneration.

Paper 000 §3.1 regenerates records that fail a gate; what a reader of a generated set needs to
know is how hard the gates bit, per gate and per topology. The report is built from the simplest
record of the generator's work: one tuple ``(dag_type, attempt_index, failed_gate_names)`` per
attempt, in the order they were made, ``attempt_index`` 0 for a record's first try and k for its
k-th regeneration. A record's attempts are consecutive: an index of 0 starts a new record, and an
attempt followed by one of the next index was *regenerated*. A record is accepted when its last
attempt fails nothing, rejected when its last attempt still fails (the retry limit was reached).

Counts per gate: ``passed`` and ``failed`` (attempts), ``regenerated`` (failed attempts that were
retried), ``skipped`` (attempts on which the gate did not run, e.g. trace consistency without an
executor). Written as ``<records>.gates.json`` and ``.md`` beside the records file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The gates in report order (gates.GATE_NAMES; repeated here so the report needs no gate code).
REPORT_GATES = (
    "schema_validity",
    "argument_types",
    "trace_consistency",
    "argument_sufficiency",
    "grounding",
    "query_naturalness",
)
#: Failures listed in the markdown report (all are in the JSON).
MARKDOWN_FAILURES = 20

#: ``(dag_type, attempt_index, failed_gate_names)``, optionally with the names skipped on that attempt.
Attempt = tuple[str, int, Sequence[str]] | tuple[str, int, Sequence[str], Sequence[str]]


@dataclass
class GateCounts:
    passed: int = 0
    failed: int = 0
    regenerated: int = 0
    skipped: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"passed": self.passed, "failed": self.failed, "regenerated": self.regenerated, "skipped": self.skipped}


@dataclass
class GroupCounts:
    """Attempts and records of one group (all records, or one topology)."""

    gates: dict[str, GateCounts]
    attempts: int = 0
    records: int = 0
    accepted_first_try: int = 0
    accepted_after_regeneration: int = 0
    rejected: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "records": self.records,
            "accepted_first_try": self.accepted_first_try,
            "accepted_after_regeneration": self.accepted_after_regeneration,
            "rejected": self.rejected,
            "gates": {name: counts.as_dict() for name, counts in self.gates.items()},
        }


@dataclass
class GateReport:
    """Gate outcomes over a set of attempts, overall and per topology (see the module docstring)."""

    gates: tuple[str, ...]
    overall: GroupCounts
    by_topology: dict[str, GroupCounts]
    #: Optional detail rows ``{"id", "dag_type", "gate", "detail"}`` (the ``gates`` command fills them).
    failures: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def from_attempts(
        cls,
        attempts: Iterable[Attempt],
        *,
        gates: Sequence[str] = REPORT_GATES,
        skipped: Iterable[str] = (),
        failures: Iterable[dict[str, str]] = (),
    ) -> GateReport:
        """Count ``attempts`` (``(dag_type, attempt_index, failed_gate_names)``, in order).

        ``skipped`` names gates that ran on no attempt; a fourth tuple element names those
        skipped on that attempt only.
        """
        rows = [(str(a[0]), int(a[1]), tuple(a[2]), set(a[3]) if len(a) > 3 else set()) for a in attempts]
        names = tuple(gates) + tuple(sorted({g for row in rows for g in row[2] if g not in gates}))
        report = cls(names, GroupCounts({n: GateCounts() for n in names}), {}, list(failures))
        expected_index = 0
        for position, (dag, index, failed, skipped_here) in enumerate(rows):
            skip = skipped_here | set(skipped)
            if index != 0 and index != expected_index:
                raise ValueError(f"attempt {position} has index {index}, expected 0 or {expected_index}")
            retried = position + 1 < len(rows) and rows[position + 1][1] == index + 1
            expected_index = index + 1
            group = report.by_topology.setdefault(dag, GroupCounts({n: GateCounts() for n in names}))
            for counts in (report.overall, group):
                counts.attempts += 1
                counts.records += index == 0
                for name in names:
                    gate = counts.gates[name]
                    if name in failed:
                        gate.failed += 1
                        gate.regenerated += retried
                    elif name in skip:
                        gate.skipped += 1
                    else:
                        gate.passed += 1
                if not retried:
                    if failed:
                        counts.rejected += 1
                    elif index == 0:
                        counts.accepted_first_try += 1
                    else:
                        counts.accepted_after_regeneration += 1
        report.by_topology = dict(sorted(report.by_topology.items()))
        return report

    @property
    def failed_records(self) -> int:
        return self.overall.rejected

    def as_dict(self) -> dict[str, Any]:
        return {
            "gates": list(self.gates),
            "overall": self.overall.as_dict(),
            "by_topology": {dag: group.as_dict() for dag, group in self.by_topology.items()},
            "failures": self.failures,
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True, ensure_ascii=False, indent=2, separators=(",", ": ")) + "\n"

    def to_markdown(self) -> str:
        o = self.overall
        lines = [
            "# Quality gates",
            "",
            f"{o.records} records, {o.attempts} attempts: {o.accepted_first_try} accepted at the first try, "
            f"{o.accepted_after_regeneration} after regeneration, {o.rejected} rejected.",
            "",
            "| gate | passed | failed | regenerated | skipped |",
            "|---|---|---|---|---|",
        ]
        lines += [f"| {n} | {c.passed} | {c.failed} | {c.regenerated} | {c.skipped} |" for n, c in o.gates.items()]
        lines += [
            "",
            "Failed attempts per topology and gate (regenerated in parentheses):",
            "",
            "| topology | records | attempts | rejected | " + " | ".join(self.gates) + " |",
            "|---" * (4 + len(self.gates)) + "|",
        ]
        for dag, group in self.by_topology.items():
            cells = [f"{group.gates[n].failed} ({group.gates[n].regenerated})" for n in self.gates]
            lines.append(
                f"| {dag} | {group.records} | {group.attempts} | {group.rejected} | " + " | ".join(cells) + " |"
            )
        if self.failures:
            lines += ["", f"Failures ({len(self.failures)}):", ""]
            for row in self.failures[:MARKDOWN_FAILURES]:
                lines.append(f"- `{row.get('id')}` ({row.get('dag_type')}) {row.get('gate')}: {row.get('detail')}")
            if len(self.failures) > MARKDOWN_FAILURES:
                lines.append(f"- ... {len(self.failures) - MARKDOWN_FAILURES} more in the JSON report")
        return "\n".join(lines) + "\n"


def report_paths(records_path: str | Path) -> tuple[Path, Path]:
    """``records.jsonl`` -> ``records.gates.json``, ``records.gates.md`` (same folder)."""
    path = Path(records_path)
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    return path.with_name(f"{stem}.gates.json"), path.with_name(f"{stem}.gates.md")


def write_gate_report(report: GateReport, records_path: str | Path) -> tuple[Path, Path]:
    """Write the report as JSON and markdown beside ``records_path``; returns both paths."""
    json_path, md_path = report_paths(records_path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(report.to_json(), encoding="utf-8")
    md_path.write_text(report.to_markdown(), encoding="utf-8")
    return json_path, md_path
