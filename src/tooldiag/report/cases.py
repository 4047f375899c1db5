"""The evidence rows as a reader wants them: filtered, as a table, as CSV or JSON lines.

:mod:`tooldiag.metrics.cases` makes one :class:`~tooldiag.metrics.cases.CaseRow` per
case; this module picks rows (``--verdict``, ``--category``, ``--class``, each name
checked so that a typo is an error rather than an empty answer) and lays them out for
``tooldiag cases``. Suite-agnostic: the rows carry everything.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tooldiag.classify.classes import ActionClass
from tooldiag.errors import UserError
from tooldiag.metrics.cases import VERDICTS, CaseRow, verdict_counts
from tooldiag.report.table import Column, Table

#: The shared columns of a case row, in order (``tooldiag cases --format csv|jsonl``).
CASE_COLUMNS = (
    "run",
    "case_id",
    "category",
    "gold_class",
    "classes",
    "gold_hit",
    "passed",
    "error_type",
    "verdict",
    "errored",
)

#: Every action-class name ``--class`` accepts.
CLASS_NAMES: tuple[str, ...] = tuple(action.value for action in ActionClass)


def _checked(names: Iterable[str], valid: Sequence[str], option: str) -> frozenset[str]:
    chosen = [name.strip().lower() for name in names]
    unknown = [name for name in chosen if name not in valid]
    if unknown:
        raise UserError(f"unknown {option} {unknown[0]!r}", hint=f"use one of: {', '.join(valid)}")
    return frozenset(chosen)


@dataclass(frozen=True)
class CaseFilter:
    """Which rows to keep; an empty set keeps everything on that axis. Names are checked on construction."""

    verdicts: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()
    #: Rows in which any of these classes was emitted at any turn.
    classes: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        verdicts: Iterable[str] | None = None,
        categories: Iterable[str] | None = None,
        classes: Iterable[str] | None = None,
    ) -> CaseFilter:
        """A filter from user-given names: unknown verdicts or classes raise :class:`UserError`."""
        return cls(
            verdicts=_checked(verdicts or (), VERDICTS, "--verdict"),
            categories=frozenset(categories or ()),
            classes=_checked(classes or (), CLASS_NAMES, "--class"),
        )

    def keeps(self, row: CaseRow) -> bool:
        if self.verdicts and row.verdict.value not in self.verdicts:
            return False
        if self.categories and row.category not in self.categories:
            return False
        return not self.classes or bool(self.classes & row.emitted())

    def apply(self, rows: Iterable[CaseRow]) -> list[CaseRow]:
        return [row for row in rows if self.keeps(row)]

    def check_categories(self, rows: Sequence[CaseRow]) -> None:
        """An unknown ``--category`` (none of the loaded rows has it) is a typo: say which exist."""
        present = dict.fromkeys(row.category for row in rows)
        unknown = sorted(self.categories - set(present))
        if unknown and rows:
            raise UserError(
                f"no case of category {unknown[0]!r} in the inputs", hint=f"categories: {', '.join(present)}"
            )


def classes_text(classes: Sequence[Sequence[str]]) -> str:
    """Per turn the classes of its emissions, comma-joined; turns separated by `` | `` (``-`` for a silent turn)."""
    return " | ".join(",".join(turn) or "-" for turn in classes)


def _bool_text(value: bool | None) -> str:
    return "" if value is None else ("yes" if value else "no")


def case_table(rows: Sequence[CaseRow], *, with_run: bool = True) -> Table:
    """The rows as a display table (classes readable: ``tool_call,other | refuse``)."""
    columns = [Column("run")] if with_run else []
    columns += [
        Column("case_id"),
        Column("category"),
        Column("gold", key="gold_class"),
        Column("classes per turn", key="classes", format=classes_text),
        Column("gold_hit", format=_bool_text),
        Column("passed", format=_bool_text),
        Column("error_type"),
        Column("verdict"),
    ]
    table = Table(columns=columns, key="cases")
    for row in rows:
        values = [row.gold_hit, row.passed, row.error_type, row.verdict.value]
        table.add(*([row.run] if with_run else []), row.case_id, row.category, row.gold_class, row.classes, *values)
    return table


def csv_text(rows: Sequence[CaseRow]) -> str:
    """One CSV line per row: the shared columns, then the suites' extras; ``classes`` as JSON."""
    import csv
    import io

    extras = list(dict.fromkeys(key for row in rows for key in row.extra if key not in CASE_COLUMNS))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CASE_COLUMNS, *extras])
    for row in rows:
        data = row.to_json()
        data["classes"] = json.dumps(data["classes"])
        writer.writerow(["" if data.get(key) is None else data[key] for key in (*CASE_COLUMNS, *extras)])
    return buffer.getvalue()


def jsonl_text(rows: Sequence[CaseRow]) -> str:
    """One JSON object per row (:meth:`CaseRow.to_json`)."""
    return "".join(json.dumps(row.to_json(), ensure_ascii=False) + "\n" for row in rows)


def counts_line(shown: Sequence[CaseRow], total: Sequence[CaseRow]) -> str:
    """``7 of 20 case(s) shown; all 20: masked 7, execution_failure 0, ok 3, fail 10, ungraded 0``."""
    counts = ", ".join(f"{name} {n}" for name, n in verdict_counts(total).items())
    return f"{len(shown)} of {len(total)} case(s) shown; all {len(total)}: {counts}"
