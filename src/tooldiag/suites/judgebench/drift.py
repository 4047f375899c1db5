"""Judge drift: how the verdicts of two judges (or of one model under two prompt versions) differ on the same plans.

A judge is swapped for a newer model, or its prompt is reworded: the question a user then
has is not "is the new judge aligned?" (``judgebench analyze`` answers that) but "which
verdicts did the change flip?". Both sides must have judged the *same stored plans* of one
run directory, so the comparison is paired: per condition and per structural metric, the
plans both judged, the share whose 3-bin verdict changed, the mean absolute score change,
the bin-to-bin transition counts and Cohen's κ between the two.

Bins are the analysis's (:func:`tooldiag.metrics.agreement.bin_verdicts`): a value ≤ 0.1
is ``fail``, ≥ 0.9 ``pass``, anything between ``partial``; κ is the unweighted Cohen κ of
those bins (:func:`~tooldiag.metrics.agreement.kappa_from_confusion`), exactly as the
inter-judge agreement table computes it. The ``overall`` row pools the four metrics'
verdicts (its counts are verdicts, not plans), as the analysis's κ does.

A plan one side judged and the other did not (never judged, ``null`` reply, ``error``, or a
reply that lacked the metric) is counted under ``only_a`` / ``only_b`` and never compared:
a judge that fails to parse is not "drifting", it is missing, and ``analyze`` reports its nulls.

Judgements are keyed ``judge x condition x plan`` and a store refuses to resume a judge
under another prompt tag, so one prompt version per judge name and condition lives in a
store. Two prompt versions of one model are compared by storing them under two judge names
(docs/judgebench.md, "Judge drift"); the prompt tags of each side are reported with the table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tooldiag.errors import UserError
from tooldiag.metrics.agreement import bin_verdicts, confusion_matrix3, kappa_from_confusion
from tooldiag.metrics.structural import METRICS
from tooldiag.report.table import Column, Table, to_csv, to_json, to_markdown
from tooldiag.suites.judgebench.conditions import CONDITIONS
from tooldiag.suites.judgebench.store import JudgeBenchStore

if TYPE_CHECKING:
    import pandas as pd

#: Names of the three verdict bins (codes 0, 1, 2 of ``bin_verdicts``).
BIN_NAMES = ("fail", "partial", "pass")
#: Every change of bin, as ``from->to`` (judge A's bin -> judge B's bin).
TRANSITIONS = tuple(f"{BIN_NAMES[i]}->{BIN_NAMES[j]}" for i in (2, 1, 0) for j in (2, 1, 0) if i != j)
#: The pooled row's metric name.
OVERALL = "overall"
DRIFT_FORMATS = ("md", "json", "csv", "parquet")

#: (generator, record_id, difficulty): one stored plan.
PlanKey = tuple[str, str, str]


@dataclass(frozen=True)
class DriftRow:
    """One condition x metric: paired verdicts of judge A and judge B."""

    condition: str
    metric: str
    #: Verdicts both sides gave (plans, except on the pooled ``overall`` row).
    n_both: int
    only_a: int
    only_b: int
    #: Paired verdicts whose bin differs.
    changed: int
    #: Mean |A - B| of the continuous scores, over the paired verdicts.
    mean_abs_change: float
    kappa: float
    #: ``from->to`` (A's bin -> B's bin) -> count, every key of :data:`TRANSITIONS`.
    transitions: dict[str, int] = field(default_factory=dict)

    @property
    def change_rate(self) -> float:
        return self.changed / self.n_both if self.n_both else float("nan")

    def record(self) -> dict[str, Any]:
        """The row as plain numbers (json, csv, parquet), NaN as ``None``."""
        out: dict[str, Any] = {
            "condition": self.condition,
            "metric": self.metric,
            "n_both": self.n_both,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "changed": self.changed,
            "change_rate": _number(self.change_rate),
            "mean_abs_change": _number(self.mean_abs_change),
            "kappa": _number(self.kappa),
        }
        out.update({name: self.transitions.get(name, 0) for name in TRANSITIONS})
        return out


@dataclass
class DriftReport:
    """Verdict drift from ``judge_a`` to ``judge_b`` in one run directory."""

    run_dir: str
    judge_a: str
    judge_b: str
    rows: list[DriftRow]
    #: judge -> condition -> the prompt tag its stored verdicts were made with (``name@version``).
    prompts: dict[str, dict[str, str]]

    def row(self, condition: str, metric: str) -> DriftRow:
        for row in self.rows:
            if row.condition == condition and row.metric == metric:
                return row
        raise KeyError(f"no drift row for {condition}/{metric}")

    def table(self) -> Table:
        pct = Column("changed %", key="change_rate", decimals=1, percent=True, missing="n/a")
        columns = [
            Column("condition"),
            Column("metric"),
            Column("n both", key="n_both"),
            Column("only A", key="only_a"),
            Column("only B", key="only_b"),
            Column("changed"),
            pct,
            Column("mean abs change", key="mean_abs_change", decimals=3, missing="n/a"),
            Column("kappa", decimals=3, missing="n/a"),
            *(Column(name) for name in TRANSITIONS),
        ]
        table = Table(
            columns=columns,
            key="verdict_drift",
            title=f"Verdict drift: A = {self.judge_a}, B = {self.judge_b}",
            note=(
                "bins: fail <= 0.1 < partial < 0.9 <= pass; transitions are A's bin -> B's bin; "
                "overall pools the four metrics' verdicts; only A / only B: judged by one side only, not compared."
            ),
            records=[row.record() for row in self.rows],
        )
        for rec in table.records:
            table.add(*(rec[c.id] for c in columns))
        return table

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            [row.record() for row in self.rows], columns=list(self.rows[0].record()) if self.rows else None
        )

    def to_markdown(self) -> str:
        table = self.table()
        lines = [f"## {table.title}", "", f"Run: {self.run_dir}", ""]
        for label, judge in (("A", self.judge_a), ("B", self.judge_b)):
            tags = "; ".join(f"{c}: {t}" for c, t in self.prompts.get(judge, {}).items())
            lines.append(f"- {label} prompts: {tags or 'none'}")
        lines += ["", to_markdown(table).rstrip("\n"), "", table.note, ""]
        return "\n".join(lines)

    def to_json(self) -> str:
        body = json.loads(to_json(self.table()))
        body.update(
            {"run_dir": self.run_dir, "judge_a": self.judge_a, "judge_b": self.judge_b, "prompts": self.prompts}
        )
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"

    def to_csv(self) -> str:
        return to_csv(self.table(), cells="raw")


def _number(value: float) -> float | None:
    return None if value != value else float(value)


def _verdicts(rows: list[tuple], judge: str, condition: str) -> dict[PlanKey, np.ndarray]:
    """First-draw verdicts of ``judge`` under ``condition``: plan -> 4 values (NaN where a metric is missing)."""
    out: dict[PlanKey, np.ndarray] = {}
    for j, generator, record_id, difficulty, cond, sample, _variant, status, *values in rows:
        if j == judge and cond == condition and status == "ok" and sample == 0:
            out[(generator, record_id, difficulty)] = np.array([np.nan if v is None else v for v in values], float)
    return out


def _compare(condition: str, metric: str, a: np.ndarray, b: np.ndarray) -> DriftRow:
    """Paired verdicts ``a`` and ``b`` (same shape, NaN where a side gave none) as one drift row."""
    has_a, has_b = ~np.isnan(a), ~np.isnan(b)
    both = has_a & has_b
    codes_a, codes_b = bin_verdicts(a[both]), bin_verdicts(b[both])
    cm = confusion_matrix3(codes_a, codes_b)
    transitions = {f"{BIN_NAMES[i]}->{BIN_NAMES[j]}": int(cm[i, j]) for i in range(3) for j in range(3) if i != j}
    n = int(both.sum())
    return DriftRow(
        condition=condition,
        metric=metric,
        n_both=n,
        only_a=int((has_a & ~has_b).sum()),
        only_b=int((has_b & ~has_a).sum()),
        changed=int(cm.sum() - np.trace(cm)),
        mean_abs_change=float(np.abs(a[both] - b[both]).mean()) if n else float("nan"),
        kappa=kappa_from_confusion(cm),
        transitions={name: transitions[name] for name in TRANSITIONS},
    )


def _ordered_conditions(conditions: set[str]) -> list[str]:
    return [c for c in CONDITIONS if c in conditions] + sorted(conditions - set(CONDITIONS))


def verdict_drift(store_dir: str | Path, judge_a: str, judge_b: str, *, condition: str | None = None) -> DriftReport:
    """Compare ``judge_b``'s verdicts with ``judge_a``'s on the plans of ``store_dir`` both judged.

    One row per condition the two share (or only ``condition``) and metric, plus the pooled
    ``overall`` row of each condition. A judge the store lacks, or a condition neither
    shares, is a :class:`~tooldiag.errors.UserError` naming what the store holds.
    """
    with JudgeBenchStore(Path(store_dir), create=False) as store:
        rows = store.judgement_rows()
        settings = store.settings()
    present: dict[str, set[str]] = {}
    for judge, _g, _r, _d, cond, *_ in rows:  # the judgement_rows columns: condition fifth
        present.setdefault(judge, set()).add(cond)
    for judge in (judge_a, judge_b):
        if judge not in present:
            names = ", ".join(sorted(present)) or "none"
            raise UserError(
                f"judge {judge!r} has no verdicts in {store_dir} (judges present: {names})",
                hint=f"judge into this run first (`tooldiag judgebench judge --run-dir {store_dir} --judge {judge}`)",
            )
    shared = present[judge_a] & present[judge_b]
    if condition is not None:
        if condition not in shared:
            raise UserError(
                f"condition {condition!r} is not judged by both {judge_a} and {judge_b} in {store_dir}",
                hint=f"conditions both judged: {', '.join(_ordered_conditions(shared)) or 'none'}",
            )
        shared = {condition}
    if not shared:
        raise UserError(
            f"{judge_a} and {judge_b} share no condition in {store_dir}",
            hint=f"{judge_a}: {', '.join(_ordered_conditions(present[judge_a]))}; "
            f"{judge_b}: {', '.join(_ordered_conditions(present[judge_b]))}",
        )
    out: list[DriftRow] = []
    for cond in _ordered_conditions(shared):
        va, vb = _verdicts(rows, judge_a, cond), _verdicts(rows, judge_b, cond)
        plans = sorted(set(va) | set(vb))
        missing = np.full(len(METRICS), np.nan)
        a = np.array([va.get(p, missing) for p in plans]).reshape(len(plans), len(METRICS))
        b = np.array([vb.get(p, missing) for p in plans]).reshape(len(plans), len(METRICS))
        out += [_compare(cond, metric, a[:, i], b[:, i]) for i, metric in enumerate(METRICS)]
        out.append(_compare(cond, OVERALL, a.ravel(), b.ravel()))
    prompts = {
        judge: {
            scope: str(config.get("prompt"))
            for role, model, scope, config in settings
            if role == "judge" and model == judge and scope in shared
        }
        for judge in dict.fromkeys((judge_a, judge_b))
    }
    return DriftReport(run_dir=str(store_dir), judge_a=judge_a, judge_b=judge_b, rows=out, prompts=prompts)


def write_drift(report: DriftReport, fmt: str, out: str | Path | None) -> str | None:
    """Render ``report`` as ``fmt``; write it to ``out`` when given (parquet needs ``out``).

    Returns the text to print (``None`` when it went to a file)."""
    if fmt not in DRIFT_FORMATS:
        raise UserError(f"unknown drift format {fmt!r}", hint=f"use one of: {', '.join(DRIFT_FORMATS)}")
    if fmt == "parquet":
        from tooldiag.report.frames import write_parquet

        write_parquet(report.frame(), Path(out) if out is not None else None)
        return None
    text = {"md": report.to_markdown, "json": report.to_json, "csv": report.to_csv}[fmt]()
    if out is None:
        return text
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return None
