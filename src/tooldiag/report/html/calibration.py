"""The calibration section of the HTML report: paper 001's figures beside their tables.

What the section shows, for any list of :class:`~tooldiag.report.model.RunReport` (BFCL runs,
imported runs, agent logs: it knows no suite):

* a plain-language summary per run (:func:`calibration_summary`, also used by the joint view);
* the **GAR vs Acc scatter**, one panel per category: the bound Acc <= GAR as a line, its
  violation side (Acc > GAR) lightly shaded, and the region a flag fires in (masking on a
  category whose gold is not tool_call, execution failure on a tool_call category) marked
  with the thresholds of the report's :class:`~tooldiag.metrics.gar.Thresholds`; one point
  per run with Wilson whiskers on both axes;
* Table 1 with a dot-and-whisker figure of GAR and Acc, case vs turn GAR (Table 14),
  capability counts with the T_cap line (Table 5), the case verdicts, the run summary and
  the report notes, flags in words.

Why the points table: a figure is for looking, a table for checking; every number a figure
draws is in a table of the section (the points table holds the scatter's and the whisker
figure's coordinates and intervals). :func:`scatter_points` is the one source of both.

:func:`shift_panels` draws probe shifts (paper 001 Fig. 2 style) from plain
:class:`ShiftPoint` data; the BFCL probe report is turned into such points by
:mod:`tooldiag.suites.bfcl.probes.html`. matplotlib is imported only inside the figure
functions (through :mod:`tooldiag.report.html.svg`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tooldiag.classify.classes import ActionClass
from tooldiag.metrics.gar import (
    CAPABILITY_CLASSES,
    FLAG_BOUND_VIOLATION,
    FLAG_ERRORS_EXCLUDED,
    FLAG_EXECUTION_FAILURE,
    FLAG_MASKING,
    FLAG_NOT_COMPUTABLE,
    Thresholds,
)
from tooldiag.report.html.elements import esc, figure_html, note_html, table_html
from tooldiag.report.html.page import Section
from tooldiag.report.model import RunReport, mixed_versions, mixed_versions_note, ordered_categories, report_order
from tooldiag.report.render import classifier_lines, table1, table5, table14, usage_table, verdict_table
from tooldiag.report.table import Column, Table

#: Colours of the runs (matplotlib's tab10) and their markers, in run order.
RUN_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
RUN_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_MASKING_COLOUR = "#b03a2e"
_FAILURE_COLOUR = "#c46a00"
#: Two side-by-side blocks (a figure and its table) that wrap on a narrow screen.
_STYLE = (
    "<style>.cal-side{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}"
    ".cal-side>figure{flex:1 1 480px;min-width:320px}.cal-side>div{flex:1 1 420px;min-width:300px}"
    "ul.cal-summary li{margin:2px 0}</style>"
)


# -- the numbers the figures draw ------------------------------------------------------------
@dataclass(frozen=True)
class ScatterPoint:
    """One run in one category: where the scatter puts it, with its intervals and flags."""

    run: str
    category: str
    gold: ActionClass
    n: int
    gar: float | None
    gar_ci: tuple[float, float] | None
    acc: float | None
    acc_ci: tuple[float, float] | None
    delta_pp: float | None
    flags: tuple[str, ...]


def all_categories(reports: Sequence[RunReport]) -> list[str]:
    """The categories of every report, in the suites' column order."""
    names: set[str] = set()
    for report in reports:
        names.update(report.categories)
    return ordered_categories(names, report_order(reports))


def scatter_points(reports: Sequence[RunReport]) -> list[ScatterPoint]:
    """Every (run, category) of ``reports``, category by category, runs in their order."""
    points = []
    for category in all_categories(reports):
        for report in reports:
            s = report.categories.get(category)
            if s is not None:
                points.append(
                    ScatterPoint(report.name, category, s.gold, s.n, s.gar, s.gar_ci, s.acc, s.acc_ci,
                                 s.delta_pp, tuple(s.flags))
                )  # fmt: skip
    return points


def region_labels(thresholds: Thresholds) -> dict[str, str]:
    """The words on the scatter's flag regions, with the thresholds they are drawn at."""
    return {
        FLAG_MASKING: f"masking: Acc − GAR ≥ {-thresholds.masking_pp:g} pp (Δ ≤ {thresholds.masking_pp:g} pp)",
        FLAG_EXECUTION_FAILURE: f"execution failure: GAR − Acc ≥ {thresholds.execution_failure_pp:g} pp",
    }


def _interval_columns(name: str) -> list[Column]:
    return [Column(name, decimals=1, missing="n/a"), Column(f"{name} CI low", decimals=1, missing=""),
            Column(f"{name} CI high", decimals=1, missing="")]  # fmt: skip


def _lo_hi(interval: tuple[float, float] | None) -> tuple[float | None, float | None]:
    return (None, None) if interval is None else interval


def scatter_table(reports: Sequence[RunReport]) -> Table:
    """The scatter's and the whisker figure's numbers: GAR and Acc with their Wilson intervals."""
    confidence = round(100 * reports[0].thresholds.confidence) if reports else 95
    table = Table(
        key="calibration_points",
        title=f"GAR and Acc per run and category (%, Wilson {confidence}% intervals): the points of the figures",
        columns=[Column("Run"), Column("Category"), Column("Gold"), Column("n"), *_interval_columns("GAR"),
                 *_interval_columns("Acc"), Column("Δ (pp)", decimals=1, signed=True, missing="n/a"),
                 Column("Flags", format=lambda flags: ", ".join(f.replace("_", " ") for f in flags))],
    )  # fmt: skip
    for p in scatter_points(reports):
        table.add(p.run, p.category, p.gold.value, p.n, p.gar, *_lo_hi(p.gar_ci), p.acc, *_lo_hi(p.acc_ci),
                  p.delta_pp, p.flags)  # fmt: skip
    table.note = "A point whose GAR or Acc is n/a is not drawn."
    return table


# -- the words --------------------------------------------------------------------------------
def _pair(s: Any) -> str:
    return f"GAR {s.gar:.1f} vs Acc {s.acc:.1f}"


def calibration_summary(reports: Sequence[RunReport]) -> list[str]:
    """One line per run: what its calibration profile says, flag by flag, in words.

    ``ref/overcall: masking on miss_func (GAR 0.0 vs Acc 72.0); ...``; a run without a flag
    says so. The joint view of the whole report quotes these lines.
    """
    lines = []
    for report in reports:
        found = []
        for category in ordered_categories(list(report.categories), report.category_order):
            s = report.categories[category]
            if FLAG_MASKING in s.flags:
                found.append(f"masking on {category} ({_pair(s)})")
            elif FLAG_BOUND_VIOLATION in s.flags:
                found.append(f"bound violation on {category} ({_pair(s)})")
            if FLAG_EXECUTION_FAILURE in s.flags:
                found.append(f"execution failure on {category} ({_pair(s)})")
            if FLAG_NOT_COMPUTABLE in s.flags:
                found.append(f"GAR not computable on {category}")
        if found:
            lines.append(f"{report.name}: " + "; ".join(found))
        else:
            lines.append(f"{report.name}: no calibration flag (Acc within GAR in every category)")
    return lines


def flag_sentences(reports: Sequence[RunReport]) -> list[str]:
    """The flags of every run and category as sentences a reader acts on."""
    out = []
    for report in reports:
        t = report.thresholds
        for category in ordered_categories(list(report.categories), report.category_order):
            s = report.categories[category]
            where = f"{report.name}, {category} (gold {s.gold.value}, n = {s.n})"
            if FLAG_MASKING in s.flags:
                gap = -(s.delta_pp or 0.0)
                out.append(f"{where}: masking. Acc {s.acc:.1f} exceeds GAR {s.gar:.1f} by {gap:.1f} pp "
                           f"(threshold Δ ≤ {t.masking_pp:g} pp): the grader passes cases that never emitted "
                           f"{s.gold.value}.")  # fmt: skip
            elif FLAG_BOUND_VIOLATION in s.flags:
                out.append(f"{where}: bound violation. Acc {s.acc:.1f} > GAR {s.gar:.1f}: some passed cases "
                           f"never emitted {s.gold.value}.")  # fmt: skip
            if FLAG_EXECUTION_FAILURE in s.flags:
                out.append(f"{where}: execution failure. GAR {s.gar:.1f} exceeds Acc {s.acc:.1f} by "
                           f"{s.delta_pp:.1f} pp (threshold {t.execution_failure_pp:g} pp): the right class "
                           "fired, the calls then failed.")  # fmt: skip
            if FLAG_NOT_COMPUTABLE in s.flags:
                out.append(f"{where}: GAR not computable (no text replies were recorded).")
            if FLAG_ERRORS_EXCLUDED in s.flags:
                out.append(f"{where}: {s.n_errors} errored case(s) left out of every number.")
    return out


# -- figures ------------------------------------------------------------------------------------
def _grid(count: int, per_row: int = 2) -> tuple[int, int]:
    cols = max(1, min(per_row, count))
    return (count + cols - 1) // cols, cols


def _whiskers(value: float, interval: tuple[float, float] | None) -> list[list[float]] | None:
    return None if interval is None else [[max(0.0, value - interval[0])], [max(0.0, interval[1] - value)]]


def scatter_figure(reports: Sequence[RunReport]) -> str:
    """GAR (x) vs Acc (y) per category, as inline SVG."""
    from tooldiag.report.html.svg import new_figure, svg_of

    categories = all_categories(reports)
    points = scatter_points(reports)
    thresholds = reports[0].thresholds
    labels = region_labels(thresholds)
    rows, cols = _grid(len(categories))
    figure, _ = new_figure(3.1 * cols, 3.3 * rows + 0.5)
    figure.clear()
    axes = figure.subplots(rows, cols, squeeze=False)
    xs = [float(x) for x in range(101)]
    runs = [r.name for r in reports]
    for index, category in enumerate(categories):
        ax = axes[index // cols][index % cols]
        mine = [p for p in points if p.category == category]
        gold = mine[0].gold
        ax.set_xlim(-2, 102)  # 0..100, with room for a point on the edge
        ax.set_ylim(-2, 102)
        ax.set_aspect("equal")
        ax.fill_between(xs, xs, [100.0] * len(xs), color=_MASKING_COLOUR, alpha=0.05, lw=0)
        ax.plot([0, 100], [0, 100], color="#555555", lw=1, ls="--")
        if gold is ActionClass.TOOL_CALL:
            edge = thresholds.execution_failure_pp
            upper = [min(100.0, max(0.0, x - edge)) for x in xs]
            ax.fill_between(xs, [0.0] * len(xs), upper, color=_FAILURE_COLOUR, alpha=0.2, lw=0)
            ax.text(98, 2, labels[FLAG_EXECUTION_FAILURE].replace(": ", ":\n"), ha="right", va="bottom",
                    fontsize=7, color=_FAILURE_COLOUR)  # fmt: skip
        else:
            gap = -thresholds.masking_pp
            lower = [min(100.0, max(0.0, x + gap)) for x in xs]
            ax.fill_between(xs, lower, [100.0] * len(xs), color=_MASKING_COLOUR, alpha=0.2, lw=0)
            ax.text(2, 98, labels[FLAG_MASKING].replace(": ", ":\n"), ha="left", va="top", fontsize=7,
                    color=_MASKING_COLOUR)  # fmt: skip
        ax.text(60, 55, "Acc = GAR", rotation=45, fontsize=7, color="#555555", ha="center", va="center")
        for p in mine:
            if p.gar is None or p.acc is None:
                continue
            k = runs.index(p.run)
            ax.errorbar(p.gar, p.acc, xerr=_whiskers(p.gar, p.gar_ci), yerr=_whiskers(p.acc, p.acc_ci),
                        fmt=RUN_MARKERS[k % len(RUN_MARKERS)], color=RUN_COLOURS[k % len(RUN_COLOURS)],
                        ms=_marker_size(k), mfc="none" if k else None, capsize=2, lw=1, label=p.run)  # fmt: skip
        ax.set_title(f"{category} (gold: {gold.value})", fontsize=9)
        ax.set_xlabel("GAR (%)", fontsize=8)
        ax.set_ylabel("Acc (%)", fontsize=8)
        ax.tick_params(labelsize=7)
    for index in range(len(categories), rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    _run_legend(figure, reports)
    return svg_of(figure, label="GAR vs Acc per category")


def _marker_size(k: int) -> float:
    """Later runs draw smaller (hollow after the first) markers, so points at one place stay visible."""
    return max(3.0, 9.0 - 2.0 * k)


def _run_legend(figure: Any, reports: Sequence[RunReport]) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker=RUN_MARKERS[k % len(RUN_MARKERS)], color=RUN_COLOURS[k % len(RUN_COLOURS)],
                      mfc="none" if k else None, ls="", label=r.name) for k, r in enumerate(reports)]  # fmt: skip
    figure.legend(handles=handles, loc="outside lower center", ncols=min(4, len(handles)), fontsize=8, frameon=False)


#: A dot-and-whisker series: its label, marker and how to read (value, interval) from a category summary.
Series = tuple[str, str, Callable[[Any], tuple[float | None, tuple[float, float] | None]]]


def dot_whisker_figure(reports: Sequence[RunReport], series: Sequence[Series], label: str) -> str:
    """Per category one panel; per run one row; per series one dot with its whisker (x = %)."""
    from tooldiag.report.html.svg import new_figure, svg_of

    categories = all_categories(reports)
    rows, cols = _grid(len(categories))
    figure, _ = new_figure(3.1 * cols, (0.42 * len(reports) + 1.3) * rows + 0.4)
    figure.clear()
    axes = figure.subplots(rows, cols, squeeze=False, sharey=True)
    offsets = [0.0] if len(series) == 1 else [0.3 * (i / (len(series) - 1) - 0.5) for i in range(len(series))]
    for index, category in enumerate(categories):
        ax = axes[index // cols][index % cols]
        for k, report in enumerate(reports):
            s = report.categories.get(category)
            if s is None:
                continue
            for (_, marker, read), offset in zip(series, offsets, strict=True):
                value, interval = read(s)
                if value is None:
                    continue
                ax.errorbar(value, k + offset, xerr=_whiskers(value, interval), fmt=marker,
                            color=RUN_COLOURS[k % len(RUN_COLOURS)], ms=5, capsize=2, lw=1)  # fmt: skip
        ax.set_xlim(-2, 102)
        ax.set_ylim(len(reports) - 0.5, -0.5)
        ax.set_yticks(range(len(reports)), [r.name for r in reports], fontsize=7)
        ax.set_title(category, fontsize=9)
        ax.set_xlabel("%", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(axis="x", color="#e5e7eb", lw=0.6)
    for index in range(len(categories), rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker=marker, color="#333333", ls="", label=name) for name, marker, _ in series]
    figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    return svg_of(figure, label=label)


def capability_figure(reports: Sequence[RunReport]) -> str:
    """Cases emitting each class, a bar per run, with the T_cap line."""
    from tooldiag.report.html.svg import new_figure, svg_of

    figure, ax = new_figure(6.4, 3.2)
    width = 0.8 / max(1, len(reports))
    for k, report in enumerate(reports):
        counts = [report.capability.counts.get(a, 0) for a in CAPABILITY_CLASSES]
        xs = [i - 0.4 + width * (k + 0.5) for i in range(len(CAPABILITY_CLASSES))]
        ax.bar(xs, counts, width=width, color=RUN_COLOURS[k % len(RUN_COLOURS)], label=report.name)
    t_cap = reports[0].thresholds.t_cap
    ax.axhline(t_cap, color="#b03a2e", ls="--", lw=1, label=f"T_cap = {t_cap}")
    ax.set_xticks(range(len(CAPABILITY_CLASSES)), [a.value for a in CAPABILITY_CLASSES], fontsize=8)
    ax.set_ylabel("cases emitting the class", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, frameon=False)
    return svg_of(figure, label="Capability counts")


# -- the section ---------------------------------------------------------------------------------
def _side(figure: str, table: str) -> str:
    return f'<div class="cal-side">{figure}<div>{table}</div></div>'


def _gar_acc(s: Any) -> tuple[float | None, tuple[float, float] | None]:
    return s.gar, s.gar_ci


def _acc(s: Any) -> tuple[float | None, tuple[float, float] | None]:
    return s.acc, s.acc_ci


def _turn(s: Any) -> tuple[float | None, tuple[float, float] | None]:
    return s.turn_gar, s.turn_gar_ci


def notes_html(reports: Sequence[RunReport]) -> str:
    """Flags in words (warnings), then the classifier lines and the reports' own notes."""
    parts = [note_html(sentence, "warn") for sentence in flag_sentences(reports)]
    notes = [*classifier_lines(reports), *(f"{r.name}: {note}" for r in reports for note in r.notes)]
    mixed = mixed_versions(reports)
    if mixed:
        parts.append(note_html(mixed_versions_note(mixed), "warn"))
    if notes:
        parts.append("<ul>" + "".join(f"<li>{esc(note)}</li>" for note in notes) + "</ul>")
    return "".join(parts) or note_html("No flag and no note.", "ok")


def summary_html(reports: Sequence[RunReport]) -> str:
    items = []
    for report, line in zip(reports, calibration_summary(reports), strict=True):
        flagged = any(s.flags and set(s.flags) - {FLAG_ERRORS_EXCLUDED} for s in report.categories.values())
        items.append(f'<li class="{"warn" if flagged else "ok"}">{esc(line)}</li>')
    return f'<ul class="cal-summary">{"".join(items)}</ul>'


def calibration_section(reports: Sequence[RunReport], *, section_id: str = "calibration") -> Section:
    """The whole calibration section of ``reports`` (one or more runs)."""
    if not reports:
        return Section(section_id, "Calibration", note_html("No run to report."))
    t = reports[0].thresholds
    confidence = round(100 * t.confidence)
    labels = region_labels(t)
    points = scatter_table(reports)
    verdicts, usage = verdict_table(reports), usage_table(reports)
    body = [
        _STYLE,
        "<h3>Summary</h3>",
        summary_html(reports),
        "<h3>GAR vs Acc per category</h3>",
        figure_html(
            scatter_figure(reports),
            f"GAR (x) against Acc (y) per category, one point per run, Wilson {confidence}% whiskers on both "
            "axes. Dashed: Acc = GAR (Acc cannot exceed GAR when passing needs the gold class); lightly shaded "
            f"above it: bound violation (Acc > GAR). Marked: {labels[FLAG_MASKING]} on categories whose gold is "
            f"not tool_call; {labels[FLAG_EXECUTION_FAILURE]} on tool_call categories.",
            figure_id="cal-scatter",
        ),
        table_html(points, table_id="cal-points"),
        "<h3>Calibration profile (paper 001, Table 1)</h3>",
        _side(
            figure_html(
                dot_whisker_figure(reports, [("GAR", "o", _gar_acc), ("Acc", "s", _acc)], "Table 1 with CIs"),
                f"GAR (circle) and Acc (square) per category and run with Wilson {confidence}% whiskers; the "
                "numbers and intervals are in the points table above.",
                figure_id="cal-table1-figure",
            ),
            table_html(table1(reports), table_id="cal-table1"),
        ),
        "<h3>Case- vs turn-level GAR (paper 001, Table 14)</h3>",
        _side(
            figure_html(
                dot_whisker_figure(
                    reports, [("case GAR", "o", _gar_acc), ("turn GAR", "D", _turn)], "Case vs turn GAR"
                ),
                f"Case-level GAR (circle: the gold class at any turn) and turn-level GAR (diamond: share of "
                f"gold turns) with Wilson {confidence}% whiskers.",
                figure_id="cal-table14-figure",
            ),
            table_html(table14(reports), table_id="cal-table14"),
        ),
        "<h3>Capability counts (paper 001, Table 5)</h3>",
        _side(
            figure_html(
                capability_figure(reports),
                f"Cases in which each class was emitted at least once, per run; dashed: T_cap = {t.t_cap} "
                "(below it, * in the table, the class is outside the model's capability).",
                figure_id="cal-table5-figure",
            ),
            table_html(table5(reports), table_id="cal-table5"),
        ),
    ]
    if verdicts.rows:
        body += ["<h3>Case verdicts</h3>", table_html(verdicts, table_id="cal-verdicts",
                 caption="Cases per verdict, run and category (masked: passed without the gold class at a gold "
                         "turn; execution_failure: gold class, not passed)")]  # fmt: skip
    if usage.rows:
        body += ["<h3>Run summary</h3>", table_html(usage, table_id="cal-usage")]
    body += ["<h3>Notes and flags</h3>", notes_html(reports)]
    return Section(section_id, "Calibration", "".join(body))


# -- probe shift panels (paper 001 Fig. 2 style) -----------------------------------------------------
@dataclass(frozen=True)
class ShiftPoint:
    """One probe run (``label``: model and probe) in one category: a metric's baseline, probe value, shift."""

    label: str
    category: str
    metric: str
    baseline: float | None
    value: float | None

    @property
    def shift(self) -> float | None:
        return None if self.baseline is None or self.value is None else self.value - self.baseline


def shift_table(points: Sequence[ShiftPoint], *, key: str = "shift_points") -> Table:
    """The shift panels' numbers: baseline, probe value and shift per label, category and metric."""
    table = Table(
        key=key,
        title="Shift vs baseline per probe run, category and metric (%, pp): the bars of the panels",
        columns=[Column("Run"), Column("Category"), Column("Metric"), Column("Baseline", decimals=1, missing="-"),
                 Column("Probe", decimals=1, missing="-"), Column("Shift (pp)", decimals=1, signed=True, missing="-")],
    )  # fmt: skip
    for p in points:
        table.add(p.label, p.category, p.metric, p.baseline, p.value, p.shift)
    table.note = "A shift shown as - is not defined (no paired case, or not a model measurement) and is not drawn."
    return table


def shift_panels(points: Sequence[ShiftPoint], metrics: Sequence[str]) -> str:
    """One panel per metric: grouped bars of the shift per category, one bar per probe run."""
    from tooldiag.report.html.svg import new_figure, svg_of

    labels = list(dict.fromkeys(p.label for p in points))
    categories = list(dict.fromkeys(p.category for p in points))
    figure, _ = new_figure(max(5.0, 1.3 * len(categories) + 2) * len(metrics) / 1.4, 3.6)
    figure.clear()
    axes = figure.subplots(1, len(metrics), squeeze=False, sharey=True)[0]
    width = 0.8 / max(1, len(labels))
    for ax, metric in zip(axes, metrics, strict=True):
        for k, label in enumerate(labels):
            by_category = {p.category: p.shift for p in points if p.label == label and p.metric == metric}
            xs = [i - 0.4 + width * (k + 0.5) for i, c in enumerate(categories) if by_category.get(c) is not None]
            ys = [by_category[c] for c in categories if by_category.get(c) is not None]
            ax.bar(xs, ys, width=width, color=RUN_COLOURS[k % len(RUN_COLOURS)], label=label)
        ax.axhline(0, color="#333333", lw=0.8)
        ax.set_xticks(range(len(categories)), categories, fontsize=7)
        ax.set_title(f"{metric} shift vs baseline (pp)", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(axis="y", color="#e5e7eb", lw=0.6)
    from matplotlib.patches import Patch

    handles = [Patch(color=RUN_COLOURS[k % len(RUN_COLOURS)], label=label) for k, label in enumerate(labels)]
    figure.legend(handles=handles, loc="outside lower center", ncols=min(4, len(handles)), fontsize=8, frameon=False)
    return svg_of(figure, label="Probe shifts")
