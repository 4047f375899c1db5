"""Renderers of :class:`~tooldiag.report.model.RunReport` lists: md, csv, json, latex.

Markdown and LaTeX follow paper 001's layouts: Table 1 (a row per run; per category
GAR, Acc, Delta; overall Acc), Table 14 (case- vs turn-level GAR with Wilson
intervals) and Table 5 (capability counts, T_cap). CSV is one tidy row per run and
category, for pandas; JSON is :func:`tooldiag.report.model.to_json`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from tooldiag.metrics.gar import (
    CAPABILITY_CLASSES,
    FLAG_BOUND_VIOLATION,
    FLAG_ERRORS_EXCLUDED,
    FLAG_EXECUTION_FAILURE,
    FLAG_MASKING,
    FLAG_NOT_COMPUTABLE,
    CategorySummary,
)
from tooldiag.report.model import RunReport, ordered_categories, report_order, to_json

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


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f}"


def _ci(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f"[{interval[0]:.1f}, {interval[1]:.1f}]"


def _md(name: str) -> str:
    return name.replace("|", "\\|")


def _marks(summary: CategorySummary) -> str:
    marks = [_FLAG_MARKS[f] for f in summary.flags if f in _FLAG_MARKS]
    return f" ({','.join(marks)})" if marks else ""


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


# -- markdown ---------------------------------------------------------------------------
def table1_markdown(reports: Sequence[RunReport]) -> str:
    """Paper 001 Table 1: calibration profile, a row per run."""
    categories = _all_categories(reports)
    header = ["Run", "Overall Acc"]
    for category in categories:
        header += [f"{category} GAR", f"{category} Acc", f"{category} Δ"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for report in reports:
        row = [_md(report.name), _pct(report.overall_acc, 2)]
        for category in categories:
            s = report.categories.get(category)
            if s is None:
                row += ["", "", ""]
            else:
                row += [_pct(s.gar), _pct(s.acc), _signed(s.delta_pp) + _marks(s)]
        lines.append("| " + " | ".join(row) + " |")
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


def table14_markdown(reports: Sequence[RunReport]) -> str:
    """Paper 001 Table 14: case- vs turn-level GAR with Wilson intervals."""
    confidence = int(round(100 * reports[0].thresholds.confidence)) if reports else 95
    lines = [
        f"| Run | Category | n | Case GAR (Wilson {confidence}% CI) | Turn GAR (Wilson {confidence}% CI) | Gap (pp) | Ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for report in reports:
        for category in ordered_categories(list(report.categories), report.category_order):
            s = report.categories[category]
            gap = None if s.gar is None or s.turn_gar is None else s.gar - s.turn_gar
            ratio = f"{s.gar / s.turn_gar:.2f}×" if s.gar is not None and s.turn_gar else "–"
            lines.append(
                f"| {_md(report.name)} | {category} | {s.n} | {_pct(s.gar)}% {_ci(s.gar_ci)} | "
                f"{_pct(s.turn_gar)}% {_ci(s.turn_gar_ci)} | {_signed(gap)} | {ratio} |"
            )
    return "\n".join(lines) + "\n"


def table5_markdown(reports: Sequence[RunReport]) -> str:
    """Paper 001 Table 5: cases emitting each decision class; * marks counts below T_cap."""
    t_cap = reports[0].thresholds.t_cap if reports else 10
    lines = ["| Run | N | " + " | ".join(a.value for a in CAPABILITY_CLASSES) + " |", "|---|---|" + "---|" * len(CAPABILITY_CLASSES)]
    for report in reports:
        cap = report.capability
        cells = [f"{cap.counts.get(a, 0)}{'' if cap.capable(a) else '*'}" for a in CAPABILITY_CLASSES]
        lines.append(f"| {_md(report.name)} | {cap.n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + f"\n\nCases (of N) in which each class was emitted at least once; * = below T_cap = {t_cap}.\n"


def render_markdown(reports: Sequence[RunReport]) -> str:
    scheme = reports[0].scheme if reports else "default"
    parts = [
        f"## Calibration profile (paper 001, Table 1; classifier scheme: {scheme})\n",
        table1_markdown(reports),
        "## Case- vs turn-level GAR (paper 001, Table 14)\n",
        table14_markdown(reports),
        "## Capability counts (paper 001, Table 5)\n",
        table5_markdown(reports),
    ]
    notes = [f"- {_md(r.name)}: {note}" for r in reports for note in r.notes]
    if notes:
        parts += ["## Notes\n", "\n".join(notes) + "\n"]
    return "\n".join(parts)


# -- csv ----------------------------------------------------------------------------------
CSV_COLUMNS = [
    "run", "source", "scheme", "category", "gold_class", "n", "gar", "gar_lo", "gar_hi", "turn_gar",
    "turn_gar_lo", "turn_gar_hi", "acc", "acc_lo", "acc_hi", "delta_pp", "flags", "n_errors", "overall_acc",
    "n_cases", *[f"cap_{a.value}" for a in CAPABILITY_CLASSES],
]


def render_csv(reports: Sequence[RunReport]) -> str:
    """One row per run and category; run-level numbers (overall Acc, capability) repeated."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def num(value: float | None) -> str:
        return "" if value is None else f"{value:.4f}"

    for report in reports:
        caps = [report.capability.counts.get(a, 0) for a in CAPABILITY_CLASSES]
        for category in ordered_categories(list(report.categories), report.category_order):
            s = report.categories[category]
            lo_hi = [(num(ci[0]), num(ci[1])) if ci else ("", "") for ci in (s.gar_ci, s.turn_gar_ci, s.acc_ci)]
            writer.writerow(
                [report.name, report.source, report.scheme, category, s.gold.value, s.n, num(s.gar), *lo_hi[0],
                 num(s.turn_gar), *lo_hi[1], num(s.acc), *lo_hi[2], num(s.delta_pp), ";".join(s.flags), s.n_errors,
                 num(report.overall_acc), report.capability.n, *caps]
            )
    return buffer.getvalue()


# -- latex --------------------------------------------------------------------------------
_TEX_ESCAPES = {"\\": r"\textbackslash{}", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$", "{": r"\{", "}": r"\}", "^": r"\^{}", "~": r"\~{}"}


def _tex(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(char, char) for char in text)


def _tex_delta(s: CategorySummary) -> str:
    if s.delta_pp is None:
        return "n/a"
    colour = "green!50!black" if s.delta_pp >= 0 else "red"
    cell = rf"\textcolor{{{colour}}}{{${s.delta_pp:+.1f}$}}"
    if FLAG_EXECUTION_FAILURE in s.flags or FLAG_MASKING in s.flags:
        cell = r"\cellcolor{gray!25}" + cell
    if FLAG_BOUND_VIOLATION in s.flags:
        cell += r"$^{\dagger}$"
    return cell


def render_latex(reports: Sequence[RunReport]) -> str:
    """Table 1, 14 and 5 as booktabs tables (needs ``booktabs`` and ``xcolor`` with ``table``)."""
    categories = _all_categories(reports)
    out = ["% tooldiag report; needs \\usepackage{booktabs} and \\usepackage[table]{xcolor}"]
    out += [r"\begin{tabular}{l r " + " ".join(["rrr"] * len(categories)) + "}", r"\toprule"]
    out.append("Run & Overall Acc & " + " & ".join(rf"\multicolumn{{3}}{{c}}{{{_tex(c)}}}" for c in categories) + r" \\")
    gold = {c: next(r.categories[c].gold.value for r in reports if c in r.categories) for c in categories}
    out.append(" & & " + " & ".join(rf"\multicolumn{{3}}{{c}}{{gold: {_tex(gold[c])}}}" for c in categories) + r" \\")
    out.append(" & & " + " & ".join(r"GAR & Acc & $\Delta$" for _ in categories) + r" \\")
    out.append(r"\midrule")
    for report in reports:
        cells = [_tex(report.name), _pct(report.overall_acc, 2)]
        for c in categories:
            s = report.categories.get(c)
            cells += ["", "", ""] if s is None else [_pct(s.gar), _pct(s.acc), _tex_delta(s)]
        out.append(" & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}", ""]
    out += [r"\begin{tabular}{l l r l l r r}", r"\toprule",
            r"Run & Category & $n$ & Case GAR (Wilson CI) & Turn GAR (Wilson CI) & Gap (pp) & Ratio \\", r"\midrule"]
    for report in reports:
        for c in ordered_categories(list(report.categories), report.category_order):
            s = report.categories[c]
            gap = None if s.gar is None or s.turn_gar is None else s.gar - s.turn_gar
            ratio = f"{s.gar / s.turn_gar:.2f}$\\times$" if s.gar is not None and s.turn_gar else "--"
            out.append(
                f"{_tex(report.name)} & {_tex(c)} & {s.n} & {_pct(s.gar)}\\% {_ci(s.gar_ci)} & "
                f"{_pct(s.turn_gar)}\\% {_ci(s.turn_gar_ci)} & {_signed(gap)} & {ratio} \\\\"
            )
    out += [r"\bottomrule", r"\end{tabular}", ""]
    out += [r"\begin{tabular}{l r " + "r " * len(CAPABILITY_CLASSES) + "}", r"\toprule",
            "Run & $N$ & " + " & ".join(_tex(a.value) for a in CAPABILITY_CLASSES) + r" \\", r"\midrule"]
    for report in reports:
        cap = report.capability
        cells = [f"{cap.counts.get(a, 0)}{'' if cap.capable(a) else '$^{*}$'}" for a in CAPABILITY_CLASSES]
        out.append(f"{_tex(report.name)} & {cap.n} & " + " & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}", ""]
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
