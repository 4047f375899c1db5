"""Renderers of :class:`~tooldiag.report.model.RunReport` lists: md, csv, json, latex.

Markdown and LaTeX follow paper 001's layouts: Table 1 (a row per run; per category
GAR, Acc, Delta; overall Acc), Table 14 (case- vs turn-level GAR with Wilson
intervals) and Table 5 (capability counts, T_cap). CSV is one tidy row per run and
category, for pandas; JSON is :func:`tooldiag.report.model.to_json`.

Each table is first built as a :class:`~tooldiag.report.table.Table` of values
(:func:`table1`, :func:`table14`, :func:`table5`, :func:`tidy_table`); composite cells
(a Delta with its flags, a GAR with its interval, a count below T_cap) are small named
tuples whose markdown and LaTeX texts the columns define.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from tooldiag.metrics.cases import VERDICTS, CaseRow, verdict_counts
from tooldiag.metrics.gar import (
    CAPABILITY_CLASSES,
    FLAG_BOUND_VIOLATION,
    FLAG_ERRORS_EXCLUDED,
    FLAG_EXECUTION_FAILURE,
    FLAG_MASKING,
    FLAG_NOT_COMPUTABLE,
)
from tooldiag.report.model import (
    RunReport,
    mixed_versions,
    mixed_versions_note,
    ordered_categories,
    report_order,
    to_json,
)
from tooldiag.report.table import (
    BLANK,
    Column,
    Table,
    escape_pipe,
    latex_lines,
    markdown_lines,
    tex_escape,
    to_csv,
    to_markdown,
)

FORMATS = ("md", "csv", "json", "latex")

_FLAG_MARKS = {
    FLAG_EXECUTION_FAILURE: "E",
    FLAG_MASKING: "M",
    FLAG_BOUND_VIOLATION: "B",
    FLAG_NOT_COMPUTABLE: "NC",
    FLAG_ERRORS_EXCLUDED: "X",
}


def _pct(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _ci(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f"[{interval[0]:.1f}, {interval[1]:.1f}]"


class Delta(NamedTuple):
    """A category's GAR - Acc (pp) with the flags raised on it."""

    pp: float | None
    flags: tuple[str, ...]


class WithInterval(NamedTuple):
    """A GAR (%) with its Wilson interval."""

    value: float | None
    interval: tuple[float, float] | None


class Capability(NamedTuple):
    """Cases emitting a class, and whether that reaches T_cap."""

    cases: int
    capable: bool


def _marks(flags: Sequence[str]) -> str:
    marks = [_FLAG_MARKS[f] for f in flags if f in _FLAG_MARKS]
    return f" ({','.join(marks)})" if marks else ""


def _md_delta(delta: Delta) -> str:
    return ("n/a" if delta.pp is None else f"{delta.pp:+.1f}") + _marks(delta.flags)


def _tex_delta(delta: Delta | None) -> str:
    if delta is None or delta.pp is None:
        return "n/a"
    colour = "green!50!black" if delta.pp >= 0 else "red"
    cell = rf"\textcolor{{{colour}}}{{${delta.pp:+.1f}$}}"
    if FLAG_EXECUTION_FAILURE in delta.flags or FLAG_MASKING in delta.flags:
        cell = r"\cellcolor{gray!25}" + cell
    if FLAG_BOUND_VIOLATION in delta.flags:
        cell += r"$^{\dagger}$"
    return cell


def _md_interval(cell: WithInterval) -> str:
    return f"{_pct(cell.value)}% {_ci(cell.interval)}"


def _tex_interval(cell: WithInterval) -> str:
    return f"{_pct(cell.value)}\\% {_ci(cell.interval)}"


def _tex_ratio(ratio: float | None) -> str:
    return "--" if ratio is None else f"{ratio:.2f}$\\times$"


def _md_capability(cell: Capability) -> str:
    return f"{cell.cases}{'' if cell.capable else '*'}"


def _tex_capability(cell: Capability) -> str:
    return f"{cell.cases}{'' if cell.capable else '$^{*}$'}"


def _percent(name: str, digits: int = 1) -> Column:
    return Column(name, decimals=digits, missing="n/a")


def _all_categories(reports: Sequence[RunReport]) -> list[str]:
    names: set[str] = set()
    for report in reports:
        names.update(report.categories)
    return ordered_categories(names, report_order(reports))


def _gold_line(reports: Sequence[RunReport], categories: list[str]) -> str:
    golds = []
    for category in categories:
        gold = next((r.categories[category].gold.value for r in reports if category in r.categories), "?")
        golds.append(f"{category}: {gold}")
    return "Gold action per category: " + "; ".join(golds) + "."


# -- the three tables as data ---------------------------------------------------------------
def table1(reports: Sequence[RunReport]) -> Table:
    """Paper 001 Table 1: calibration profile, a row per run; GAR, Acc, Delta per category."""
    categories = _all_categories(reports)
    columns = [Column("Run"), _percent("Overall Acc", 2)]
    for category in categories:
        columns += [
            _percent(f"{category} GAR"),
            _percent(f"{category} Acc"),
            Column(f"{category} Δ", format=_md_delta, latex=_tex_delta),
        ]
    table = Table(columns=columns, key="table1", title="Calibration profile (paper 001, Table 1)")
    for report in reports:
        row: list[Any] = [report.name, report.overall_acc]
        for category in categories:
            s = report.categories.get(category)
            row += [BLANK] * 3 if s is None else [s.gar, s.acc, Delta(s.delta_pp, tuple(s.flags))]
        table.add(*row)
    return table


def table14(reports: Sequence[RunReport]) -> Table:
    """Paper 001 Table 14: case- vs turn-level GAR with Wilson intervals, a row per run and category."""
    confidence = round(100 * reports[0].thresholds.confidence) if reports else 95
    columns = [
        Column("Run"),
        Column("Category", md_escape=False),
        Column("n", latex_name="$n$"),
        Column(f"Case GAR (Wilson {confidence}% CI)", format=_md_interval, latex=_tex_interval,
               latex_name="Case GAR (Wilson CI)"),
        Column(f"Turn GAR (Wilson {confidence}% CI)", format=_md_interval, latex=_tex_interval,
               latex_name="Turn GAR (Wilson CI)"),
        Column("Gap (pp)", decimals=1, signed=True, missing="n/a"),
        Column("Ratio", missing="–", format=lambda ratio: f"{ratio:.2f}×", latex=_tex_ratio),
    ]  # fmt: skip
    table = Table(columns=columns, key="table14", title="Case- vs turn-level GAR (paper 001, Table 14)")
    for report in reports:
        for category in ordered_categories(list(report.categories), report.category_order):
            s = report.categories[category]
            gap = None if s.gar is None or s.turn_gar is None else s.gar - s.turn_gar
            ratio = s.gar / s.turn_gar if s.gar is not None and s.turn_gar else None
            case, turn = WithInterval(s.gar, s.gar_ci), WithInterval(s.turn_gar, s.turn_gar_ci)
            table.add(report.name, category, s.n, case, turn, gap, ratio)
    return table


def table5(reports: Sequence[RunReport]) -> Table:
    """Paper 001 Table 5: cases emitting each decision class; * marks counts below T_cap."""
    columns = [Column("Run"), Column("N", latex_name="$N$")]
    columns += [Column(a.value, format=_md_capability, latex=_tex_capability) for a in CAPABILITY_CLASSES]
    table = Table(columns=columns, key="table5", title="Capability counts (paper 001, Table 5)")
    for report in reports:
        cap = report.capability
        table.add(report.name, cap.n, *(Capability(cap.counts.get(a, 0), cap.capable(a)) for a in CAPABILITY_CLASSES))
    return table


# -- markdown ---------------------------------------------------------------------------
def table1_markdown(reports: Sequence[RunReport]) -> str:
    """Paper 001 Table 1: calibration profile, a row per run."""
    categories = _all_categories(reports)
    lines = markdown_lines(table1(reports))
    t = reports[0].thresholds if reports else None
    legend = (
        f"{_gold_line(reports, categories)} GAR, Acc, Δ = GAR − Acc in %. Flags: "
        f"E execution failure (Δ ≥ {t.execution_failure_pp:g} pp on a tool_call category), "
        f"M masking (Δ ≤ {t.masking_pp:g} pp on an ask/refuse/confirm category), "
        "B bound violation (Acc > GAR), NC GAR not computable (no text replies recorded), "
        "X errored cases excluded."
        if t
        else ""
    )
    return "\n".join(lines) + "\n\n" + legend + "\n"


def classifier_lines(reports: Sequence[RunReport]) -> list[str]:
    """``Classifier: llm (judge ..., prompt ...): N emissions, ...``, one line per run that knows it
    (the run's name leads when there are several runs)."""
    lead = (lambda r: f"Classifier of {escape_pipe(r.name)}: ") if len(reports) > 1 else (lambda r: "Classifier: ")
    return [lead(r) + r.classifier.describe() + "." for r in reports if r.classifier is not None]


def table14_markdown(reports: Sequence[RunReport]) -> str:
    """Paper 001 Table 14: case- vs turn-level GAR with Wilson intervals."""
    return to_markdown(table14(reports))


def table5_markdown(reports: Sequence[RunReport]) -> str:
    """Paper 001 Table 5: cases emitting each decision class; * marks counts below T_cap."""
    t_cap = reports[0].thresholds.t_cap if reports else 10
    legend = f"Cases (of N) in which each class was emitted at least once; * = below T_cap = {t_cap}."
    return to_markdown(table5(reports)) + f"\n{legend}\n"


def usage_table(reports: Sequence[RunReport]) -> Table:
    """The run summary, a row per run that has one (docs/evidence.md, "Run summary")."""
    columns = [
        Column("Run"),
        Column("Requests"),
        Column("Cache hits"),
        Column("Retries", format=lambda r: ", ".join(f"{k} {n}" for k, n in sorted(r.items())) or "0"),
        Column("Tokens in", missing="n/a"),
        Column("Tokens out", missing="n/a"),
        Column("Latency median (s)", decimals=2, missing="n/a"),
        Column("Latency p95 (s)", decimals=2, missing="n/a"),
        Column("Error rows"),
        Column("Wall (s)", decimals=1),
    ]
    table = Table(columns=columns, key="usage", title="Run summary")
    for report in reports:
        u = report.usage
        if u is None:
            continue
        table.add(
            report.name, u.requests, u.cache_hits, u.retries, u.input_tokens, u.output_tokens,
            u.latency_median_s, u.latency_p95_s, u.error_rows, u.wall_s,
        )  # fmt: skip
    return table


def verdict_table(reports: Sequence[RunReport]) -> Table:
    """Per run and category, how many cases carry each verdict (the rows behind ``tooldiag cases``)."""
    table = Table(
        key="case_verdicts",
        columns=[Column("Run"), Column("Category"), *(Column(name) for name in VERDICTS)],
    )
    for report in reports:
        by_category: dict[str, list[CaseRow]] = {}
        for row in report.cases:
            if row.extra.get("sample", 0):  # a repeats run: the verdicts of draw 0, as the tables above
                continue
            by_category.setdefault(row.category, []).append(row)
        for category in ordered_categories(list(by_category), report.category_order):
            counts = verdict_counts(by_category[category])
            table.add(report.name, category, *(counts[name] for name in VERDICTS))
    return table


def render_markdown(reports: Sequence[RunReport]) -> str:
    scheme = reports[0].scheme if reports else "default"
    provenance = classifier_lines(reports)
    parts = [
        f"## Calibration profile (paper 001, Table 1; classifier scheme: {scheme})\n",
        table1_markdown(reports),
        *(["\n".join(provenance) + "\n"] if provenance else []),
        "## Case- vs turn-level GAR (paper 001, Table 14)\n",
        table14_markdown(reports),
        "## Capability counts (paper 001, Table 5)\n",
        table5_markdown(reports),
    ]
    verdicts = verdict_table(reports)
    if verdicts.rows:
        source = reports[0].source if len(reports) == 1 and reports[0].source else "SOURCE"
        legend = (
            "masked: passed without the gold class at a gold turn; execution_failure: gold class, not passed "
            f"(docs/evidence.md). List them: `tooldiag cases {source} --verdict masked`; read one: "
            f"`tooldiag show {source} CASE_ID`."
        )
        parts += ["## Case verdicts\n", to_markdown(verdicts) + f"\n{legend}\n"]
    usage = usage_table(reports)
    if usage.rows:
        legend = "Requests: answered model calls (cache hits included); latency of the requests not from the cache."
        parts += ["## Run summary\n", to_markdown(usage) + f"\n{legend}\n"]
    from tooldiag.report.repeats import repeats_markdown

    repeats = repeats_markdown(reports)  # "" unless a run has --repeats above 1
    if repeats:
        parts.append(repeats)
    notes = [f"- {escape_pipe(r.name)}: {note}" for r in reports for note in r.notes]
    mixed = mixed_versions(reports)
    if mixed:
        notes.append(f"- {mixed_versions_note(mixed)}")
    if notes:
        parts += ["## Notes\n", "\n".join(notes) + "\n"]
    return "\n".join(parts)


# -- csv ----------------------------------------------------------------------------------
CSV_COLUMNS = [
    "run",
    "source",
    "scheme",
    "category",
    "gold_class",
    "n",
    "gar",
    "gar_lo",
    "gar_hi",
    "turn_gar",
    "turn_gar_lo",
    "turn_gar_hi",
    "acc",
    "acc_lo",
    "acc_hi",
    "delta_pp",
    "flags",
    "n_errors",
    "overall_acc",
    "n_cases",
    *[f"cap_{a.value}" for a in CAPABILITY_CLASSES],
]
#: CSV columns holding percentages (written with 4 decimals, empty when undefined).
_CSV_NUMBERS = {
    "gar", "gar_lo", "gar_hi", "turn_gar", "turn_gar_lo", "turn_gar_hi",
    "acc", "acc_lo", "acc_hi", "delta_pp", "overall_acc",
}  # fmt: skip


def _csv_column(name: str) -> Column:
    if name in _CSV_NUMBERS:
        return Column(name, decimals=4)
    if name == "flags":
        return Column(name, format=";".join)
    return Column(name)


def tidy_table(reports: Sequence[RunReport]) -> Table:
    """One row per run and category; run-level numbers (overall Acc, capability) repeated."""
    table = Table(columns=[_csv_column(name) for name in CSV_COLUMNS], key="report")
    for report in reports:
        caps = [report.capability.counts.get(a, 0) for a in CAPABILITY_CLASSES]
        for category in ordered_categories(list(report.categories), report.category_order):
            s = report.categories[category]
            lo_hi = [ci if ci else (None, None) for ci in (s.gar_ci, s.turn_gar_ci, s.acc_ci)]
            table.add(
                report.name, report.source, report.scheme, category, s.gold.value, s.n, s.gar, *lo_hi[0],
                s.turn_gar, *lo_hi[1], s.acc, *lo_hi[2], s.delta_pp, list(s.flags), s.n_errors,
                report.overall_acc, report.capability.n, *caps,
            )  # fmt: skip
    return table


def render_csv(reports: Sequence[RunReport]) -> str:
    """One row per run and category; run-level numbers (overall Acc, capability) repeated."""
    return to_csv(tidy_table(reports))


# -- latex --------------------------------------------------------------------------------
def _table1_latex_header(reports: Sequence[RunReport], categories: list[str]) -> list[str]:
    """Three header lines: category spans, their gold class, then GAR / Acc / Delta."""
    gold = {c: next(r.categories[c].gold.value for r in reports if c in r.categories) for c in categories}
    return [
        "Run & Overall Acc & " + " & ".join(rf"\multicolumn{{3}}{{c}}{{{tex_escape(c)}}}" for c in categories) + r" \\",
        " & & " + " & ".join(rf"\multicolumn{{3}}{{c}}{{gold: {tex_escape(gold[c])}}}" for c in categories) + r" \\",
        " & & " + " & ".join(r"GAR & Acc & $\Delta$" for _ in categories) + r" \\",
    ]


def render_latex(reports: Sequence[RunReport]) -> str:
    """Table 1, 14 and 5 as booktabs tables (needs ``booktabs`` and ``xcolor`` with ``table``)."""
    categories = _all_categories(reports)
    out = ["% tooldiag report; needs \\usepackage{booktabs} and \\usepackage[table]{xcolor}"]
    out += [f"% {line}" for line in classifier_lines(reports)]
    out += latex_lines(
        table1(reports),
        spec="l r " + " ".join(["rrr"] * len(categories)),
        header=_table1_latex_header(reports, categories),
    )
    out += [""]
    out += latex_lines(table14(reports), spec="l l r l l r r")
    out += [""]
    out += latex_lines(table5(reports), spec="l r " + "r " * len(CAPABILITY_CLASSES))
    out += [""]
    return "\n".join(out)


def render(reports: Sequence[RunReport], fmt: str) -> str:
    """The reports in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "md":
        return render_markdown(reports)
    if fmt == "csv":
        return render_csv(reports)
    if fmt == "json":
        return json.dumps(to_json(reports), indent=2, ensure_ascii=False) + "\n"
    if fmt == "latex":
        return render_latex(reports)
    from tooldiag.errors import UserError

    raise UserError(f"unknown report format {fmt!r}", hint="use one of: " + ", ".join(FORMATS))
