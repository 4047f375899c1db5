"""The judge-reliability section of the HTML report (paper 000's figures, drawn from the analysis).

:func:`judge_section` turns a :class:`~tooldiag.suites.judgebench.analysis.JudgeBenchReport`
into one :class:`~tooldiag.report.html.Section`: alignment by difficulty per judge with and
without the reference (Fig. 8 style, every cell with its bootstrap CI), per metric, per DAG
topology, the GT lift with its paired CI, the inter-judge kappa heatmap, the pairwise confusion
matrices and the decision guide; then, when the run holds their data, the human-label tables (App. G
agreement, inter-rater kappa, alignment against human verdicts, human-calibrated pass rates), the
stability of repeated draws and the bias probes (order change, length bias, self-preference by
family), as the markdown shows them. Each figure sits above the table of the numbers it draws (the
report's own frame, so the page and ``report.md`` never disagree). :func:`judge_summary` says in
plain sentences which judge to trust at which difficulty, for a summary beside the agent's profile.

The figures live here, not in ``report/html``, because they know the suite's conditions,
difficulties and metrics; the page machinery stays suite-free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tooldiag.report.html import Section, esc, figure_html, note_html, render_page, table_html
from tooldiag.report.html.svg import new_figure, svg_of
from tooldiag.suites.judgebench.conditions import CONDITIONS
from tooldiag.suites.judgebench.records import DIFFICULTIES

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from tooldiag.suites.judgebench.analysis import JudgeBenchReport

#: Words for the conditions the summary names most (the rest: ``under <name>``).
_CONDITION_WORDS = {"with_gt": "with the reference", "without_gt": "without the reference"}
#: Confusion-matrix panels per row before the grid wraps.
_PANELS_PER_ROW = 6
#: A table with more rows than this starts folded (``<details>``): the figure above says it first.
_FOLD_ROWS = 12


def _ordered(values: Any, order: Sequence[str]) -> list[str]:
    from tooldiag.suites.judgebench.analysis import ordered

    return ordered(values, tuple(order))


def _colors(judges: Sequence[str]) -> dict[str, str]:
    """One colour per judge, the same in every figure of the section."""
    return {judge: f"C{i % 10}" for i, judge in enumerate(judges)}


def _table(frame: pd.DataFrame, table_id: str, caption: str, digits: dict[str, str] | None = None) -> str:
    """``frame`` as a sortable table: floats with one decimal (pp) unless ``digits`` says otherwise."""
    from tooldiag.suites.judgebench.report import frame_table

    formats = {c: ".1f" for c in frame.columns if frame[c].dtype.kind == "f"}
    formats.update(digits or {})
    html = table_html(frame_table(frame, formats, key=table_id), table_id=table_id, caption=caption)
    if len(frame) <= _FOLD_ROWS:
        return html
    return f"<details><summary>{esc(caption)}: {len(frame)} rows</summary>{html}</details>"


def _whiskers(frame: pd.DataFrame) -> list[list[float]]:
    """Error-bar lengths below and above ``alignment`` (0 where a CI is missing)."""
    low = (frame["alignment"] - frame["ci_low"]).clip(lower=0).fillna(0)
    high = (frame["ci_high"] - frame["alignment"]).clip(lower=0).fillna(0)
    return [low.tolist(), high.tolist()]


def _axes_grid(rows: int, cols: int, width: float, height: float) -> tuple[Any, list[list[Axes]]]:
    figure, first = new_figure(width, height)
    figure.delaxes(first)
    grid = figure.subplots(rows, cols, squeeze=False, sharey=True)
    return figure, [list(row) for row in grid]


def _legend(figure: Any, colors: dict[str, str]) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, marker="o", label=j) for j, c in colors.items()]
    figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4), fontsize=8, frameon=False)


# -- figures ------------------------------------------------------------------------------------
def difficulty_figure(cells: pd.DataFrame, colors: dict[str, str]) -> str:
    """Fig. 8: per generator (rows) and condition (columns), one line per judge over difficulty."""
    generators = _ordered(cells["generator"], [])
    conditions = _ordered(cells["condition"], list(CONDITIONS))
    difficulties = _ordered(cells["difficulty"], DIFFICULTIES)
    figure, grid = _axes_grid(len(generators), len(conditions), 3.2 * len(conditions) + 0.6,
                              2.3 * len(generators) + 0.8)  # fmt: skip
    offsets = {j: (i - (len(colors) - 1) / 2) * 0.06 for i, j in enumerate(colors)}
    for r, generator in enumerate(generators):
        for c, condition in enumerate(conditions):
            axes = grid[r][c]
            panel = cells[(cells["generator"] == generator) & (cells["condition"] == condition)]
            for judge, color in colors.items():
                line = panel[panel["judge"] == judge]
                line = line.set_index("difficulty").reindex([d for d in difficulties if d in set(line["difficulty"])])
                if line.empty:
                    continue
                x = [difficulties.index(str(d)) + offsets[judge] for d in line.index]
                axes.errorbar(x, line["alignment"], yerr=_whiskers(line), color=color, marker="o", markersize=4,
                              capsize=2, linewidth=1.2, label=judge)  # fmt: skip
            axes.set_xticks(range(len(difficulties)), difficulties)
            axes.set_title(f"{condition} · {generator}", fontsize=9)
            axes.grid(axis="y", alpha=0.3)
            if c == 0:
                axes.set_ylabel("alignment (%)")
    _legend(figure, colors)
    return svg_of(figure, label="Alignment by difficulty per judge, with and without the reference")


def _grouped_bars(frame: pd.DataFrame, key: str, order: Sequence[str], colors: dict[str, str], label: str) -> str:
    """One panel per condition; per ``key`` value (x), one bar per judge."""
    conditions = _ordered(frame["condition"], list(CONDITIONS))
    groups = _ordered(frame[key], list(order))
    width = 0.8 / max(len(colors), 1)
    figure, grid = _axes_grid(1, len(conditions), min(9.0, max(6.0, 0.8 * len(groups) * len(conditions) + 1.0)), 3.4)
    for c, condition in enumerate(conditions):
        axes = grid[0][c]
        panel = frame[frame["condition"] == condition]
        for i, (judge, color) in enumerate(colors.items()):
            rows = panel[panel["judge"] == judge].set_index(key)
            x = [groups.index(str(g)) + (i - (len(colors) - 1) / 2) * width for g in rows.index]
            axes.bar(x, rows["alignment"], width=width, color=color, label=judge)
        axes.set_xticks(range(len(groups)), [g.replace("_", " ") for g in groups], rotation=30, ha="right", fontsize=8)
        axes.set_title(condition, fontsize=9)
        axes.set_ylim(0, 105)
        axes.grid(axis="y", alpha=0.3)
        if c == 0:
            axes.set_ylabel("alignment (%)")
    _legend(figure, colors)
    return svg_of(figure, label=label)


def lift_figure(contrasts: pd.DataFrame, colors: dict[str, str]) -> str:
    """Per contrast (panels), each judge's mean difference with its paired 95 % CI."""
    names = _ordered(contrasts["contrast"], [])
    judges = [j for j in colors if j in set(contrasts["judge"])]
    figure, grid = _axes_grid(1, len(names), max(7.0, 3.6 * len(names) + 1.6), 0.35 * len(judges) + 1.4)
    for c, name in enumerate(names):
        axes = grid[0][c]
        panel = contrasts[contrasts["contrast"] == name].set_index("judge").reindex(judges).dropna(subset=["delta_pp"])
        y = [judges.index(str(j)) for j in panel.index]
        low = (panel["delta_pp"] - panel["ci_low"]).clip(lower=0).fillna(0)
        high = (panel["ci_high"] - panel["delta_pp"]).clip(lower=0).fillna(0)
        axes.barh(y, panel["delta_pp"], xerr=[low.tolist(), high.tolist()], capsize=3,
                  color=[colors[str(j)] for j in panel.index])  # fmt: skip
        axes.axvline(0, color="black", linewidth=0.8)
        axes.set_yticks(range(len(judges)), judges, fontsize=8)
        axes.set_xlabel("pp (95 % CI)")
        axes.set_title(name, fontsize=9)
        axes.grid(axis="x", alpha=0.3)
    return svg_of(figure, label="GT lift per judge with 95 % CI")


def kappa_figure(agreement: pd.DataFrame, judges: Sequence[str]) -> str:
    """Per condition, Cohen's kappa of every judge pair as an annotated heatmap (diagonal left blank)."""
    import numpy as np

    conditions = _ordered(agreement["condition"], list(CONDITIONS))
    size = len(judges)
    figure, grid = _axes_grid(1, len(conditions), 0.8 * size * len(conditions) + 2.4, 0.7 * size + 1.8)
    image = None
    for c, condition in enumerate(conditions):
        axes = grid[0][c]
        matrix = np.full((size, size), np.nan)
        for row in agreement[agreement["condition"] == condition].itertuples(index=False):
            a, b = judges.index(str(row.judge_a)), judges.index(str(row.judge_b))
            matrix[a, b] = matrix[b, a] = float(row.kappa)
        image = axes.imshow(np.ma.masked_invalid(matrix), cmap="RdYlGn", vmin=-1, vmax=1)
        for a in range(size):
            for b in range(size):
                if not math.isnan(matrix[a, b]):
                    axes.text(b, a, f"{matrix[a, b]:.2f}", ha="center", va="center", fontsize=8)
        short = [j.split("/")[-1] for j in judges]
        axes.set_xticks(range(size), short, rotation=35, ha="right", fontsize=8)
        axes.set_yticks(range(size), short, fontsize=8)
        axes.set_title(condition, fontsize=9)
    if image is not None:
        figure.colorbar(image, ax=[row[-1] for row in grid], label="Cohen κ", shrink=0.8)
    return svg_of(figure, label="Inter-judge Cohen kappa heatmap")


def confusion_figure(confusion: pd.DataFrame, labels: Sequence[str]) -> str:
    """Every judge pair's 3x3 matrix of binned verdicts (rows: first judge, columns: second)."""
    import numpy as np

    panels = list(confusion.itertuples(index=False))
    cols = min(len(panels), _PANELS_PER_ROW)
    rows = math.ceil(len(panels) / cols)
    figure, first = new_figure(1.9 * cols + 0.4, 2.2 * rows + 0.3)
    figure.delaxes(first)
    grid = figure.subplots(rows, cols, squeeze=False)
    names = [f"a{a}_b{b}" for a in labels for b in labels]
    for index, axes in enumerate(grid.flat):
        if index >= len(panels):
            axes.set_axis_off()
            continue
        row = confusion.iloc[index]
        matrix = np.array([int(row[n]) for n in names]).reshape(len(labels), len(labels))
        axes.imshow(matrix, cmap="Blues")
        peak = matrix.max() or 1
        for a in range(len(labels)):
            for b in range(len(labels)):
                color = "white" if matrix[a, b] > 0.6 * peak else "black"
                axes.text(b, a, str(matrix[a, b]), ha="center", va="center", fontsize=7, color=color)
        axes.set_xticks(range(len(labels)), labels, fontsize=7)
        axes.set_yticks(range(len(labels)), labels, fontsize=7)
        short_a, short_b = str(row["judge_a"]).split("/")[-1], str(row["judge_b"]).split("/")[-1]
        axes.set_title(f"{row['condition']}\n{short_a} (rows) vs {short_b}", fontsize=7)
    return svg_of(figure, label="Inter-judge confusion matrices")


# -- summary ------------------------------------------------------------------------------------
def _join(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _condition_words(condition: str) -> str:
    return _CONDITION_WORDS.get(condition, f"under {condition}")


def judge_summary(report: JudgeBenchReport) -> list[str]:
    """Plain sentences from the decision guide: per condition, whom to trust at which difficulty.

    One sentence per condition ("With the reference, trust ref/jb-exact at every difficulty
    (...)"), naming where the leader's CI overlaps a runner-up's, then one on the GT lift.
    """
    guide = report.tables.get("decision_guide")
    if guide is None or guide.empty:
        return ["No judge was scored on a difficulty every judge shares: no decision guide."]
    sentences = []
    for condition in _ordered(guide["condition"], list(CONDITIONS)):
        rows = guide[guide["condition"] == condition]
        by_judge: dict[str, list[str]] = {}
        for row in rows.itertuples(index=False):
            by_judge.setdefault(str(row.best_judge), []).append(str(row.difficulty))
        if len(by_judge) == 1 and len(rows) > 1:
            (judge,) = by_judge
            advice = f"trust {judge} at every difficulty"
        else:
            advice = "; ".join(f"trust {judge} at {_join(ds)}" for judge, ds in by_judge.items())
        numbers = ", ".join(f"{row.alignment:.1f} % at {row.difficulty}" for row in rows.itertuples(index=False))
        sentence = f"{_condition_words(condition).capitalize()}, {advice} (alignment {numbers})"
        unclear = [row for row in rows.itertuples(index=False) if "not a clear winner" in str(row.verdict)]
        if unclear:
            parts = [f"at {row.difficulty} its CI overlaps {row.runner_up}" for row in unclear]
            sentence += f"; not a clear winner {_join(parts)}"
        sentences.append(sentence + ".")
    contrasts = report.tables.get("contrasts")
    if contrasts is not None and not contrasts.empty:
        lift = contrasts[contrasts["contrast"] == "gt_lift"].sort_values("delta_pp", ascending=False)
        if not lift.empty:
            top = lift.iloc[0]
            sentences.append(
                f"The reference helps {top['judge']} most: GT lift {top['delta_pp']:+.1f} pp "
                f"[{top['ci_low']:.1f}, {top['ci_high']:.1f}]."
            )
    return sentences


# -- the section ----------------------------------------------------------------------------------
def _guide_frame(report: JudgeBenchReport) -> pd.DataFrame:
    guide = report.tables["decision_guide"]
    columns = ["condition", "difficulty", "best_judge", "alignment", "ci_low", "ci_high", "runner_up",
               "runner_up_alignment", "runner_up_ci_low", "runner_up_ci_high", "verdict"]  # fmt: skip
    return guide[[c for c in columns if c in guide.columns]]


def _block(title: str, intro: str, *parts: str) -> str:
    return f"<h3>{esc(title)}</h3>" + (note_html(intro) if intro else "") + "".join(parts)


def _present(report: JudgeBenchReport, name: str) -> bool:
    table = report.tables.get(name)
    return table is not None and not table.empty


def _figure_blocks(report: JudgeBenchReport, judges: list[str]) -> list[str]:
    """Each figure with its heading, its note and the tables of the numbers it draws."""
    from tooldiag.metrics.structural import METRICS
    from tooldiag.suites.judgebench.report import SECTIONS

    tables, colors = report.tables, _colors(judges)
    blocks = []
    if _present(report, "cells"):
        figure = difficulty_figure(tables["cells"], colors)
        caption = "Per generator and condition, one line per judge over difficulty; whiskers: 95 % bootstrap CI."
        blocks.append(
            _block(
                "Alignment by difficulty, with and without the reference (paper Fig. 8)",
                SECTIONS["table2"][1],
                figure_html(figure, caption, figure_id="jb-fig-difficulty"),
                _table(tables["cells"], "jb-cells", "Every cell with its 95 % CI (the points above)"),
                _table(tables["table2"], "jb-table2", "Paper Table 2 layout, with the GT lift per row"),
            )
        )
    if _present(report, "per_metric"):
        figure = _grouped_bars(tables["per_metric"], "metric", METRICS, colors, "Alignment per metric")
        blocks.append(
            _block(
                *SECTIONS["per_metric"],
                figure_html(figure, "Alignment per metric, one bar per judge.", figure_id="jb-fig-metric"),
                _table(tables["per_metric"], "jb-per-metric", "Alignment per metric (the bars above)"),
            )
        )
    if _present(report, "per_dag"):
        figure = _grouped_bars(tables["per_dag"], "dag_type", [], colors, "Alignment per DAG topology")
        blocks.append(
            _block(
                SECTIONS["per_dag"][0],
                "Mean alignment (pp) per DAG topology of the record.",
                figure_html(figure, "Alignment per DAG topology, one bar per judge.", figure_id="jb-fig-dag"),
                _table(tables["per_dag"], "jb-per-dag", "Alignment per DAG topology (the bars above)"),
            )
        )
    if _present(report, "contrasts"):
        caption = "GT lift (with_gt - without_gt) and any other contrast per judge; whiskers: paired 95 % CI."
        blocks.append(
            _block(
                *SECTIONS["contrasts"],
                figure_html(lift_figure(tables["contrasts"], colors), caption, figure_id="jb-fig-lift"),
                _table(tables["contrasts"], "jb-contrasts", "Contrasts per judge (the bars above)"),
            )
        )
    if _present(report, "inter_judge"):
        caption = "Cohen κ of each judge pair per condition (cells annotated, two decimals)."
        blocks.append(
            _block(
                *SECTIONS["inter_judge"],
                figure_html(kappa_figure(tables["inter_judge"], judges), caption, figure_id="jb-fig-kappa"),
                _table(tables["inter_judge"], "jb-kappa", "Pairwise agreement (κ: the heatmap)", {"kappa": ".3f"}),
            )
        )
    if _present(report, "confusion"):
        matrices = report.extras.get("confusion_matrices") or {}
        labels = [str(label) for label in matrices.get("labels", ("0", "0.5", "1"))]
        caption = "Binned verdicts of each judge pair: rows the first judge's bin, columns the second's."
        blocks.append(
            _block(
                *SECTIONS["confusion"],
                figure_html(confusion_figure(tables["confusion"], labels), caption, figure_id="jb-fig-confusion"),
                _table(tables["confusion"], "jb-confusion", "Confusion counts (the matrices above)"),
            )
        )
    return blocks


#: The tables the analysis adds only when their data is there, in report order, with their HTML ids: human /
#: audit labels (paper 000 App. G), repeated draws (``judge --samples K``) and the bias probes.
DATA_TABLES: dict[str, str] = {
    "human_agreement": "jb-human-agreement",
    "human_kappa": "jb-human-kappa",
    "human_alignment": "jb-human-alignment",
    "human_corrected_rates": "jb-human-corrected",
    "stability": "jb-stability",
    "order_change": "jb-order-change",
    "length_bias": "jb-length-bias",
    "self_preference_family": "jb-self-preference-family",
}
#: Coefficients in [-1, 1] shown with three decimals, as the markdown shows kappa and alpha.
_COEFFICIENTS = {"kappa": ".3f", "alpha": ".3f"}


def _data_blocks(report: JudgeBenchReport) -> list[str]:
    """Each of :data:`DATA_TABLES` the report holds, under the markdown's heading and note, with its numbers.

    The frames are the report's own (what ``report.md`` and ``report.json`` print): nothing is recomputed.
    """
    from tooldiag.suites.judgebench.bias import BIAS_FORMATS
    from tooldiag.suites.judgebench.report import SECTIONS

    blocks = []
    for name, table_id in DATA_TABLES.items():
        if not _present(report, name):
            continue
        frame = report.tables[name]
        digits = {c: f for c, f in _COEFFICIENTS.items() if c in frame.columns} | BIAS_FORMATS.get(name, {})
        heading, note = SECTIONS[name]
        blocks.append(_block(heading, note, _table(frame, table_id, heading, digits)))
    return blocks


def judge_section(report: JudgeBenchReport, *, section_id: str = "judges", title: str = "Judge reliability") -> Section:
    """The whole judge section (module docstring): the summary, the decision guide, then the figures."""
    from tooldiag.suites.judgebench.report import SECTIONS

    ex = report.extras
    judges = [str(j) for j in ex.get("judges") or []]
    if not judges and _present(report, "cells"):
        judges = _ordered(report.tables["cells"]["judge"], [])
    body = [
        note_html(
            f"{ex.get('evaluations', 0)} parsed verdicts; judges: {', '.join(judges) or '–'}; "
            f"generators: {', '.join(ex.get('generators', [])) or '–'}; programmatic scorer: {ex.get('scorer', '–')}; "
            f"bootstrap: {ex.get('bootstrap', {}).get('resamples', '–')} stratified resamples."
        ),
        *(note_html(s, "ok") for s in judge_summary(report)),
    ]
    if _present(report, "decision_guide"):
        guide = _table(_guide_frame(report), "jb-guide", "Decision guide")
        body.append(_block(*SECTIONS["decision_guide"], guide))
    figures = _figure_blocks(report, judges)
    data = _data_blocks(report)
    if not figures and not data:
        figures = [note_html("The analysis holds no tables to draw.", "warn")]
    return Section(id=section_id, title=title, body="".join(body + figures + data))


def judgebench_page(report: JudgeBenchReport, title: str = "Judge reliability report") -> str:
    """One HTML document holding the judge section (``judgebench analyze --formats html``)."""
    return render_page(title, [judge_section(report)], subtitle="tooldiag judgebench analyze", footer="tooldiag")
