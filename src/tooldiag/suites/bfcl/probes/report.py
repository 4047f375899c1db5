"""Probe reports: paper 001 Tables 4 and 6-11 from probe runs and their baselines.

Input: probe runs (``tooldiag run bfcl --probe SPEC``) and baseline runs (no probe) of
the same models. Each probe run is paired with the baseline of its model
(:func:`build_probe_report`), and every number comes from
:mod:`tooldiag.suites.bfcl.probes.analysis`. A table appears only when its runs are there:

========  =========================================================  ==================
table     layout                                                     needs
========  =========================================================  ==================
shifts    per run and category: GAR, Acc (value and shift), P->F,    any probe run
          F->P, fired rate, changed cases
4         per model: SRI GAR/Acc on base, long_context; CRI GAR      sri; cri-retry;
          (from cri-retry) and Acc (from cri-bypass) on miss_func,   cri-bypass
          miss_param; each cell "value (shift)"
6         per model and SRI method: GAR shift per category,          sri variants
          aggregate Acc shift
7         per model: SRI-v1 Acc minus each ablation's                sri + ablations
8         per model: baseline passes and the state-only shift        sri:state_only
9         per category and model: baseline -> SRI passes, P->F,     sri
          F->P
10        per model: CRI-retry Acc shift on miss_func, miss_param    cri-retry
11        per model: CRI-bypass fired rate on miss_func, miss_param  cri-bypass
========  =========================================================  ==================

GAR is always reading A of App. C.2 (injected text excluded). CRI-bypass GAR is not
reported as GAR (the placeholder is not a model emission); the CSV/JSON outputs carry
it under both readings as ``gar_reading_a`` / ``gar_reading_b`` for audit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tooldiag.classify import Classifier
from tooldiag.errors import UserError
from tooldiag.report.table import BLANK, Column, Table, markdown_lines, table_json, to_csv
from tooldiag.suites.bfcl import CATEGORIES
from tooldiag.suites.bfcl.probes import PROBE_SPECS
from tooldiag.suites.bfcl.probes.analysis import (
    COMPONENTS,
    CategoryShift,
    Comparison,
    RunView,
    compare,
    component_effects,
    graded_ids,
    pooled_acc,
)

SRI_METHODS = {
    "sri": "SRI v1 (full)",
    "sri:hd_only": "HD-only",
    "sri:no_history": "SRI - History",
    "sri:no_state": "SRI - State",
    "sri:no_recon": "SRI - Recon",
    "sri:gate_global": "SRI-Gate (global)",
    "sri:gate_miss_param": "SRI-Gate (miss_param)",
    "sri:state_only": "state-injection-only",
}
FORMATS = ("md", "csv", "json")


@dataclass
class ProbeReport:
    comparisons: list[Comparison]
    #: model -> {probe spec or "baseline": run}
    runs: dict[str, dict[str, RunView]]
    tables: list[Table]
    #: Reading-B comparisons of CRI-bypass runs (audit only).
    reading_b: list[Comparison] = field(default_factory=list)


# -- formatting ---------------------------------------------------------------------------
def fmt_value(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_shift(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    if round(value, digits) == 0:
        return f"{0.0:.{digits}f}"
    return f"{value:+.{digits}f}"


def fmt_cell(value: float | None, shift: float | None) -> str:
    if value is None:
        return "-"
    return f"{fmt_value(value)} ({fmt_shift(shift)})"


class Shifted(NamedTuple):
    """A probe-run value and its shift against the baseline (cells "value (shift)")."""

    value: float | None
    shift: float | None


class Passes(NamedTuple):
    """Passed cases of a run on the paired cases, with the Acc (or Acc shift) beside them."""

    passed: int
    n: int
    rate: float | None


def _shifted(cell: Shifted) -> str:
    return fmt_cell(cell.value, cell.shift)


def _passes_with_acc(cell: Passes) -> str:
    return f"{cell.passed}/{cell.n} ({fmt_value(cell.rate, 2)}%)"


def _passes_with_shift(cell: Passes) -> str:
    return f"{cell.passed}/{cell.n} ({fmt_shift(cell.rate)})"


def _pass_flow(shift: CategoryShift) -> str:
    delta = shift.probe.passed - shift.baseline.passed
    flow = f"P->F {shift.pass_to_fail}, F->P {shift.fail_to_pass}"
    return f"{shift.baseline.passed} -> {shift.probe.passed} ({delta:+d}; {flow})"


def _shift_column(name: str, digits: int = 1) -> Column:
    return Column(name, missing="-", format=lambda value: fmt_shift(value, digits))


def _cell_column(name: str, missing: str = "-") -> Column:
    return Column(name, missing=missing, format=_shifted)


# -- pairing --------------------------------------------------------------------------------
def pair_runs(probe_runs: Sequence[RunView], baselines: Sequence[RunView]) -> dict[str, dict[str, RunView]]:
    """Group runs by model: ``{model: {"baseline": run, spec: run, ...}}``; bad input raises UserError."""
    grouped: dict[str, dict[str, RunView]] = {}
    for base in baselines:
        if base.probe:
            raise UserError(
                f"--baseline {base.run_dir} is a probe run ({base.probe})",
                hint="give the run of the same model made without --probe",
            )
        if base.model in grouped:
            raise UserError(
                f"two baselines for model {base.model}: {grouped[base.model]['baseline'].run_dir} and {base.run_dir}",
                hint="give one --baseline per model",
            )
        grouped[base.model] = {"baseline": base}
    for run in probe_runs:
        if not run.probe:
            raise UserError(
                f"{run.run_dir} is not a probe run (it was made without --probe)",
                hint="pass it as --baseline, or give runs made with `tooldiag run bfcl --probe SPEC`",
            )
        if run.probe not in PROBE_SPECS:
            raise UserError(f"{run.run_dir} has unknown probe {run.probe!r}", hint="use a run made by this tooldiag")
        group = grouped.get(run.model)
        if group is None:
            known = ", ".join(sorted(grouped)) or "none"
            raise UserError(
                f"probe run {run.run_dir} ({run.model}) has no baseline of the same model (baselines: {known})",
                hint=f"add --baseline RUN_DIR with a run of {run.model} made without --probe",
            )
        if run.probe in group:
            raise UserError(
                f"two {run.probe} runs of {run.model}: {group[run.probe].run_dir} and {run.run_dir}",
                hint="give one run per model and probe",
            )
        group[run.probe] = run
    return grouped


# -- tables ---------------------------------------------------------------------------------
def shifts_table(comparisons: Sequence[Comparison]) -> Table:
    table = Table(
        key="shifts",
        title="Probe shifts against the baseline (paired cases; GAR reading A)",
        columns=[
            Column("model"), Column("probe"), Column("category"), Column("n"),
            # CRI-bypass GAR is not a model measurement: not defined, shown as such.
            _cell_column("GAR", missing="n/a (bypass)"), _cell_column("Acc"), Column("P->F"), Column("F->P"),
            Column("fired %", decimals=1, missing="-"), Column("changed"),
        ],
    )  # fmt: skip
    for comp in comparisons:
        for cat in comp.categories:
            gar = None if comp.probe == "cri-bypass" else Shifted(cat.probe.gar, cat.gar_shift)
            table.add(comp.model, comp.probe, cat.category, cat.n, gar, Shifted(cat.probe.acc, cat.acc_shift),
                      cat.pass_to_fail, cat.fail_to_pass, cat.probe.fired_rate, cat.changed)  # fmt: skip
        overall = Shifted(comp.acc, comp.acc_shift)
        table.add(comp.model, comp.probe, "all", comp.n, BLANK, overall, BLANK, BLANK, BLANK, comp.changed)
    table.note = "Cells: value (shift vs baseline) in %/pp. CRI-bypass GAR is not a model measurement (App. C.2)."
    return table


def table4(runs: dict[str, dict[str, RunView]], by_key: dict[tuple[str, str], Comparison]) -> Table | None:
    columns = [Column("Family"), *(_cell_column(name) for name in (
        "base GAR", "base Acc", "long_context GAR", "long_context Acc",
        "miss_func GAR_retry", "miss_func Acc_bypass", "miss_param GAR_retry", "miss_param Acc_bypass"))]  # fmt: skip
    table = Table(key="table4", title="Table 4: SRI and CRI shifts (value (shift vs baseline))", columns=columns)
    for model in runs:
        sri, retry, bypass = (
            by_key.get((model, "sri")),
            by_key.get((model, "cri-retry")),
            by_key.get((model, "cri-bypass")),
        )
        if not (sri or retry or bypass):
            continue
        row: list[Shifted | None] = []
        record: dict[str, Any] = {"model": model}
        for cat in ("base", "long_context"):
            shift = sri.category(cat) if sri else None
            row += [Shifted(shift.probe.gar, shift.gar_shift) if shift else None,
                    Shifted(shift.probe.acc, shift.acc_shift) if shift else None]  # fmt: skip
            record[f"{cat}_gar"], record[f"{cat}_gar_shift"] = (
                (shift.probe.gar, shift.gar_shift) if shift else (None, None)
            )
            record[f"{cat}_acc"], record[f"{cat}_acc_shift"] = (
                (shift.probe.acc, shift.acc_shift) if shift else (None, None)
            )
        for cat in ("miss_func", "miss_param"):
            g = retry.category(cat) if retry else None
            a = bypass.category(cat) if bypass else None
            row += [Shifted(g.probe.gar, g.gar_shift) if g else None, Shifted(a.probe.acc, a.acc_shift) if a else None]
            record[f"{cat}_gar_retry"], record[f"{cat}_gar_retry_shift"] = (
                (g.probe.gar, g.gar_shift) if g else (None, None)
            )
            record[f"{cat}_acc_bypass"], record[f"{cat}_acc_bypass_shift"] = (
                (a.probe.acc, a.acc_shift) if a else (None, None)
            )
        table.add(model, *row)
        table.records.append(record)
    table.note = "SRI: GAR and Acc from the sri run. CRI: GAR from cri-retry, Acc from cri-bypass (App. C.2)."
    return table if table.rows else None


def table6(runs: dict[str, dict[str, RunView]], by_key: dict[tuple[str, str], Comparison]) -> Table | None:
    columns = [Column("Family"), Column("Method"), *(_shift_column(name) for name in (
        "base GAR", "long_ctx GAR", "miss_func GAR", "miss_param GAR")), _shift_column("Acc shift", 2)]  # fmt: skip
    table = Table(
        key="table6", title="Table 6: SRI per-category GAR shift and aggregate Acc shift (pp)", columns=columns
    )
    for model in runs:
        for spec, method in SRI_METHODS.items():
            comp = by_key.get((model, spec))
            if comp is None:
                continue
            shifts: list[float | None] = []
            record: dict[str, Any] = {"model": model, "method": spec}
            for cat in CATEGORIES:
                shift = comp.category(cat)
                shifts.append(shift.gar_shift if shift else None)
                record[f"{cat}_gar_shift"] = shift.gar_shift if shift else None
            record["acc_shift"] = comp.acc_shift
            table.add(model, method, *shifts, comp.acc_shift)
            table.records.append(record)
    return table if table.rows else None


def table7(runs: dict[str, dict[str, RunView]]) -> Table | None:
    models = [m for m, group in runs.items() if "sri" in group or "sri:hd_only" in group]
    if not models:
        return None
    effects = {model: component_effects(runs[model]) for model in models}
    if all(v is None for e in effects.values() for v in e.values()):
        return None
    table = Table(key="table7", title="Table 7: SRI component decomposition (SRI-v1 Acc - ablation Acc, pp)",
                  columns=[Column("Component"), *(_shift_column(m, 2) for m in models)])  # fmt: skip
    for name, _, _ in COMPONENTS:
        table.add(name, *(effects[m][name] for m in models))
        table.records.append({"component": name, **{m: effects[m][name] for m in models}})
    table.note = "Halt detection row: HD-only Acc - baseline Acc."
    return table


def table8(runs: dict[str, dict[str, RunView]]) -> Table | None:
    table = Table(key="table8", title="Table 8: state-injection-only against the baseline",
                  columns=[Column("Model"), Column("Baseline", format=_passes_with_acc),
                           Column("+ state-injection-only", format=_passes_with_shift)])  # fmt: skip
    for model, group in runs.items():
        run = group.get("sri:state_only")
        if run is None:
            continue
        base = group["baseline"]
        common = sorted(graded_ids(run) & graded_ids(base))
        base_pass = sum(1 for cid in common if base.cases[cid].passed)
        run_pass = sum(1 for cid in common if run.cases[cid].passed)
        base_acc, run_acc = pooled_acc(base, common), pooled_acc(run, common)
        shift = None if base_acc is None or run_acc is None else run_acc - base_acc
        table.add(model, Passes(base_pass, len(common), base_acc), Passes(run_pass, len(common), shift))
        table.records.append({"model": model, "n": len(common), "baseline_passed": base_pass,
                              "state_only_passed": run_pass, "acc_shift": shift})  # fmt: skip
    return table if table.rows else None


def table9(runs: dict[str, dict[str, RunView]], by_key: dict[tuple[str, str], Comparison]) -> Table | None:
    models = [m for m in runs if (m, "sri") in by_key]
    if not models:
        return None
    table = Table(key="table9", title="Table 9: per-category passes, baseline -> SRI (P->F / F->P)",
                  columns=[Column("Category"),
                           *(Column(m, missing="-", format=_pass_flow) for m in models)])  # fmt: skip
    categories = [c for c in CATEGORIES
                  if any(by_key[(m, "sri")].category(c) for m in models)]  # fmt: skip
    for cat in categories:
        flows: list[CategoryShift | None] = []
        for model in models:
            shift = by_key[(model, "sri")].category(cat)
            flows.append(shift)
            if shift is None:
                continue
            table.records.append({"category": cat, "model": model, "baseline_passed": shift.baseline.passed,
                                  "sri_passed": shift.probe.passed, "pass_to_fail": shift.pass_to_fail,
                                  "fail_to_pass": shift.fail_to_pass, "n": shift.n})  # fmt: skip
        table.add(cat, *flows)
    return table


def _per_model(key: str, title: str, spec: str, metric: str, by_key: dict[tuple[str, str], Comparison],
               models: Sequence[str]) -> Table | None:  # fmt: skip
    if metric == "acc_shift":
        cells = [_shift_column("miss_func"), _shift_column("miss_param")]
    else:
        cells = [Column(name, missing="-", format=lambda value: fmt_value(value) + "%")
                 for name in ("miss_func", "miss_param")]  # fmt: skip
    table = Table(key=key, title=title, columns=[Column("Family"), *cells])
    for model in models:
        comp = by_key.get((model, spec))
        if comp is None:
            continue
        values: list[float | None] = []
        record: dict[str, Any] = {"model": model}
        for cat in ("miss_func", "miss_param"):
            shift = comp.category(cat)
            value = None if shift is None else (shift.acc_shift if metric == "acc_shift" else shift.probe.fired_rate)
            values.append(value)
            record[f"{cat}_{metric}"] = value
        table.add(model, *values)
        table.records.append(record)
    return table if table.rows else None


# -- assembly -------------------------------------------------------------------------------
def build_probe_report(probe_runs: Sequence[RunView], baselines: Sequence[RunView]) -> ProbeReport:
    """Pair runs by model, compare each probe run with its baseline, lay out the tables."""
    if not probe_runs:
        raise UserError(
            "no probe runs to report", hint="give run directories made with `tooldiag run bfcl --probe SPEC`"
        )
    runs = pair_runs(probe_runs, baselines)
    comparisons, reading_b = [], []
    for group in runs.values():
        base = group["baseline"]
        for spec, run in group.items():
            if spec == "baseline":
                continue
            comparisons.append(compare(run, base, "A"))
            if spec == "cri-bypass":
                reading_b.append(compare(run, base, "B"))
    by_key = {(c.model, c.probe): c for c in comparisons}
    models = list(runs)
    tables = [shifts_table(comparisons)]
    for table in (
        table4(runs, by_key),
        table6(runs, by_key),
        table7(runs),
        table8(runs),
        table9(runs, by_key),
        _per_model("table10", "Table 10: CRI-retry Acc shift (pp)", "cri-retry", "acc_shift", by_key, models),
        _per_model("table11", "Table 11: CRI-bypass case-level fired rate", "cri-bypass", "fired_rate", by_key, models),
    ):
        if table is not None:
            tables.append(table)
    return ProbeReport(comparisons=comparisons, runs=runs, tables=tables, reading_b=reading_b)


def probe_report_from_dirs(
    run_dirs: Sequence[str | Path],
    baselines: Sequence[str | Path],
    classifier: Classifier | None = None,
) -> ProbeReport:
    """:func:`build_probe_report` over run directories (what ``tooldiag report --baseline`` calls)."""
    from tooldiag.suites.bfcl.probes.analysis import load_run

    probe_runs = [load_run(d, classifier) for d in run_dirs]
    baseline_runs = [load_run(d, classifier) for d in baselines]
    return build_probe_report(probe_runs, baseline_runs)


def tidy_rows(report: ProbeReport) -> list[dict[str, Any]]:
    """Every number as one row: model, probe, category, metric, value (the CSV output)."""
    rows: list[dict[str, Any]] = []

    def add(comp: Comparison, category: str, metric: str, value: Any) -> None:
        rows.append({"model": comp.model, "probe": comp.probe, "category": category, "metric": metric, "value": value})

    for comp in report.comparisons:
        bypass = comp.probe == "cri-bypass"
        for cat in comp.categories:
            add(comp, cat.category, "n", cat.n)
            add(comp, cat.category, "gar_reading_a" if bypass else "gar", cat.probe.gar)
            add(comp, cat.category, "gar_baseline", cat.baseline.gar)
            add(comp, cat.category, "gar_reading_a_shift" if bypass else "gar_shift", cat.gar_shift)
            add(comp, cat.category, "acc", cat.probe.acc)
            add(comp, cat.category, "acc_baseline", cat.baseline.acc)
            add(comp, cat.category, "acc_shift", cat.acc_shift)
            add(comp, cat.category, "pass_to_fail", cat.pass_to_fail)
            add(comp, cat.category, "fail_to_pass", cat.fail_to_pass)
            add(comp, cat.category, "fired_rate", cat.probe.fired_rate)
            add(comp, cat.category, "detector_rate", cat.probe.detector_rate)
            add(comp, cat.category, "changed", cat.changed)
        add(comp, "all", "n", comp.n)
        add(comp, "all", "acc", comp.acc)
        add(comp, "all", "acc_baseline", comp.baseline_acc)
        add(comp, "all", "acc_shift", comp.acc_shift)
        add(comp, "all", "unpaired", comp.unpaired)
    for comp in report.reading_b:
        for cat in comp.categories:
            add(comp, cat.category, "gar_reading_b", cat.probe.gar)
            add(comp, cat.category, "gar_reading_b_shift", cat.gar_shift)
    return rows


def render_markdown(report: ProbeReport) -> str:
    parts = []
    for table in report.tables:
        lines = [f"### {table.title}", "", *markdown_lines(table)]
        if table.note:
            lines += ["", table.note]
        parts.append("\n".join(lines))
    parts.append(
        "GAR is reading A of paper 001 App. C.2 throughout: text the harness injected (the CRI-bypass "
        "placeholder) is never counted as a model emission."
    )
    return "\n\n".join(parts) + "\n"


#: The columns of :func:`tidy_rows` (``--format csv`` and ``--format parquet``).
TIDY_COLUMNS = ("model", "probe", "category", "metric", "value")


def render_csv(report: ProbeReport) -> str:
    columns = [Column(name) for name in TIDY_COLUMNS]
    rows = [[row[c.name] for c in columns] for row in tidy_rows(report)]
    return to_csv(Table(columns=columns, rows=rows))


def render_json(report: ProbeReport) -> str:
    data = {
        "gar_reading": "A",
        "runs": {model: {spec: run.run_dir for spec, run in group.items()} for model, group in report.runs.items()},
        "tables": [table_json(t) for t in report.tables],
        "metrics": tidy_rows(report),
    }
    return json.dumps(data, indent=2, allow_nan=False)


def render(report: ProbeReport, fmt: str) -> str:
    if fmt not in FORMATS:
        raise UserError(f"unknown report format {fmt!r}", hint="use one of: " + ", ".join(FORMATS))
    return {"md": render_markdown, "csv": render_csv, "json": render_json}[fmt](report)
