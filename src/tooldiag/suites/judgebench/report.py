"""Assemble the analysis of a judge-reliability study and render it as markdown, CSV and JSON.

:func:`analyze` turns an :class:`~tooldiag.suites.judgebench.evaluations.EvaluationData` into
a :class:`~tooldiag.suites.judgebench.analysis.JudgeBenchReport` (typed tables);
:func:`render_markdown`, :func:`write_report` and :func:`summary_markdown` only format it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from tooldiag.errors import UserError
from tooldiag.report.table import Column, Table, pipe_to_slash, table_records, to_csv, to_markdown
from tooldiag.suites.judgebench.analysis import (
    AnalysisSettings,
    JudgeBenchReport,
    attrition,
    cell_statistics,
    contrasts,
    corrected_rates,
    decision_guide,
    generator_accuracy,
    nulls,
    per_group,
    per_metric,
    table2,
    with_alignment,
    with_corrected_pass,
)
from tooldiag.suites.judgebench.bias import BIAS_FORMATS, BIAS_SECTIONS, BiasInputs, bias_tables
from tooldiag.suites.judgebench.evaluations import EvaluationData
from tooldiag.suites.judgebench.reliability import (
    binary_collapse_table,
    confusion_table,
    inter_judge,
    judge_bias,
    reweighting,
    soft_jury_table,
)

FORMATS = ("md", "csv", "json", "parquet", "html")

#: Section titles and one-line explanations, in report order.
SECTIONS: dict[str, tuple[str, str]] = {
    "table2": (
        "Alignment by difficulty (paper Table 2 layout)",
        "100 × mean over records of ¼Σ_m (1 - |p_m - ℓ_m|): 100 = the judge reproduces the programmatic scores. "
        "GT lift = mean over difficulties of with_gt - without_gt (pp).",
    ),
    "decision_guide": (
        "Decision guide: best judge per condition and difficulty",
        "Alignment averaged equally over the generators every judge was run on; 95 % bootstrap CIs.",
    ),
    "corrected_rates": (
        "Prevalence-corrected pass rates (Rogan-Gladen)",
        "A record passes when the mean of its four scores is ≥ 0.5 (the binary-collapse cut), for the reference "
        "and the judge. TPR/TNR (%) are estimated on a hashed half of the records, the judge's observed pass rate on "
        "the other half is corrected: (p_obs + TNR - 1) / (TPR + TNR - 1), 95 % bootstrap CI over both halves; "
        "reference_pass is the truth on that half.",
    ),
    "contrasts": (
        "Condition contrasts per judge (GT lift and ablations)",
        "Mean over shared (generator, difficulty) cells of align(a) - align(b), pp, with 95 % CI.",
    ),
    "cells": ("Every cell with its 95 % CI", "Stratified (by dag_type) percentile bootstrap per cell."),
    "per_metric": ("Alignment per metric", "Mean of 1 - |p - ℓ| per metric (pp); a missing metric counts 0."),
    "per_dag": ("Alignment per DAG topology", ""),
    "inter_judge": (
        "Inter-judge agreement",
        "Verdicts binned (≤0.1 → 0, ≥0.9 → 1, else 0.5); exact agreement p_o (Wilson CI), Cohen κ, "
        "and the share of disagreements that involve the 0.5 bin.",
    ),
    "confusion": (
        "Inter-judge confusion matrices",
        "Counts of paired metric-level verdicts: column aX_bY = first judge in bin X, second in bin Y.",
    ),
    "binary_collapse": (
        "Binary collapse",
        "Middle-bin verdicts moved toward the programmatic value (0 if p < 0.5 else 1).",
    ),
    "binary_spearman": ("Ranking change under binary collapse", "Spearman ρ of judge rankings (plain ranks)."),
    "soft_jury": ("Soft jury", "Mean of all judges' raw values on records every judge scored completely."),
    "reweighting": ("Ranking robustness under metric re-weighting", "Spearman ρ against the equal-weight ranking."),
    "self_preference": (
        "Self-preference check",
        "Signed error ℓ - p on the judge's own outputs vs its range on other generators' outputs.",
    ),
    "bias": ("Signed judge error per generator", "Mean ℓ - p (positive = over-credits)."),
    "generator_accuracy": ("Generator accuracy (programmatic, pp)", ""),
    "attrition": ("Generator attrition", "Empty or unparseable outputs are excluded from judging (Wilson CI)."),
    "nulls": ("Judge nulls", "Replies unparseable after retries: never counted as agreement or disagreement."),
    # Only when the run holds human / audit labels (suites/judgebench/human_labels.py, paper 000 App. G).
    "human_agreement": (
        "Human vs programmatic agreement (App. G)",
        "Share (%) of metric-level human labels agreeing with the programmatic score, overall, per metric and "
        "per topology; a score label agrees when on the same side of 0.5; Wilson 95 % CI.",
    ),
    "human_kappa": ("Inter-rater agreement", "Per rater pair, items both labelled: exact agreement (%) and Cohen κ."),
    "human_alignment": (
        "Judge alignment against human verdicts (App. G)",
        "Labelled outputs only. Human score = p where the human agrees, else 0 if p ≥ 0.5 else 1 (App. G); "
        "human_alignment = 100 × mean 1 - |ℓ - human|; gap = human - programmatic (pp); "
        "human_agreement_pct: 3-bin judge verdict = human score.",
    ),
    "human_corrected_rates": (
        "Prevalence-corrected pass rates, TPR/TNR from human labels",
        "TPR/TNR (%) on the human-labelled outputs (truth: mean of human scores where labelled, programmatic "
        "elsewhere, ≥ 0.5); the judge's pass rate on the unlabelled outputs corrected (Rogan-Gladen, 95 % CI).",
    ),
    "stability": (
        "Stability across repeated draws",
        "Only for judges with several draws per plan (judge --samples K); every other table uses the canonical "
        "verdict, the per-metric median of the draws. flip_pct: share of plan x metric units whose 3-bin verdict "
        "(or omission) differs between parsed draws; alpha: Krippendorff's alpha across draws (interval, raw "
        "values); alignment_min/max/sd: the judge's alignment (pp) from each draw alone; cell_range_max: widest "
        "spread of one cell.",
    ),
    **BIAS_SECTIONS,
}


#: Tables :func:`tooldiag.load_judgebench` serves: the stored judgements, ``alignment`` (= ``cells``), then every
#: table of the analysis.
JUDGEBENCH_TABLES = ("judgements", "alignment", *SECTIONS)


def analyze(
    data: EvaluationData,
    settings: AnalysisSettings | None = None,
    *,
    labels: pd.DataFrame | None = None,
    bias_inputs: BiasInputs | None = None,
) -> JudgeBenchReport:
    """Every table of the study; the human-label tables too when ``labels`` (``labels.label_frame``) has rows;
    ``bias_inputs`` (:func:`~tooldiag.suites.judgebench.bias.load_bias_inputs`) adds the order-probe and
    length-bias tables (the self-preference-by-family table needs none)."""
    settings = settings or AnalysisSettings()
    frame = with_alignment(data.frame)
    cells = cell_statistics(frame, settings)
    agreement, matrices = inter_judge(frame, settings.confidence)
    binary, binary_rho = binary_collapse_table(frame)
    bias, self_pref = judge_bias(frame)
    corrected = corrected_rates(frame, settings)
    tables = {
        "table2": table2(cells),
        "decision_guide": with_corrected_pass(decision_guide(cells, settings), corrected),
        "corrected_rates": corrected,
        "contrasts": contrasts(cells, settings),
        "cells": cells.table,
        "per_metric": per_metric(frame),
        "per_dag": per_group(frame, ["judge", "condition", "dag_type"]),
        "inter_judge": agreement,
        "confusion": confusion_table(matrices),
        "binary_collapse": binary,
        "binary_spearman": binary_rho,
        "soft_jury": soft_jury_table(frame, settings),
        "reweighting": reweighting(frame),
        "self_preference": self_pref,
        "bias": bias,
        "generator_accuracy": generator_accuracy(data, frame),
        "attrition": attrition(data, settings.confidence),
        "nulls": nulls(data, settings.confidence),
    }
    if labels is not None and not labels.empty:
        from tooldiag.suites.judgebench.human_labels import add_human_tables

        add_human_tables(tables, frame, labels, settings)
    if data.draws is not None:
        from tooldiag.suites.judgebench.stability import stability_table

        tables["stability"] = stability_table(data.draws)
    tables.update(
        bias_tables(
            frame, bias_inputs, n_resamples=settings.n_resamples, confidence=settings.confidence, seed=settings.seed
        )
    )
    extras = {
        "confusion_matrices": matrices,
        "scorer": data.scorer,
        "evaluations": len(frame),
        "judges": sorted(frame["judge"].unique().tolist()) if len(frame) else [],
        "generators": sorted(frame["generator"].unique().tolist()) if len(frame) else [],
        "conditions": sorted(frame["condition"].unique().tolist()) if len(frame) else [],
        "bootstrap": {"resamples": settings.n_resamples, "confidence": settings.confidence, "seed": settings.seed},
    }
    return JudgeBenchReport(tables=tables, extras=extras, settings=settings)


# --------------------------------------------------------------------------- rendering


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.3f}" if abs(value) < 1.5 and value != round(value) else f"{value:.1f}"
    return str(value)


def _cell_format(spec: str | None) -> Callable[[Any], str]:
    """Markdown text of a cell: ``spec`` for a number (not NaN), else :func:`_fmt`."""

    def text(value: Any) -> str:
        if spec and isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
            return format(value, spec)
        return _fmt(value)

    return text


def frame_table(frame: pd.DataFrame, formats: dict[str, str] | None = None, key: str = "") -> Table:
    """A data frame as a :class:`Table` of its values; ``formats`` maps a column to a format spec (e.g. ``.1f``)."""
    formats = formats or {}
    columns = [Column(str(c), format=_cell_format(formats.get(c))) for c in frame.columns]
    return Table(columns=columns, rows=[list(row) for row in frame.itertuples(index=False, name=None)], key=key)


def md_table(frame: pd.DataFrame, formats: dict[str, str] | None = None) -> str:
    """A GitHub markdown table; ``formats`` maps a column to a format spec (e.g. ``.1f``)."""
    if frame is None or frame.empty:
        return "_(nothing to show)_\n"
    return to_markdown(frame_table(frame, formats), escape=pipe_to_slash, header=lambda name: name.replace(":", " "))


def _pp(frame: pd.DataFrame) -> dict[str, str]:
    """One decimal for every float column (percentages and pp)."""
    return {c: ".1f" for c in frame.columns if frame[c].dtype.kind == "f"}


def _guide_view(guide: pd.DataFrame) -> pd.DataFrame:
    if guide.empty:
        return guide
    view = guide[
        [
            "condition",
            "difficulty",
            "best_judge",
            "alignment",
            "ci_low",
            "ci_high",
            "runner_up",
            "runner_up_alignment",
            "verdict",
            *(["corrected_pass_rate"] if "corrected_pass_rate" in guide.columns else []),
            *(["corrected_pass_rate_human"] if "corrected_pass_rate_human" in guide.columns else []),
        ]
    ]
    return view.rename(columns={"runner_up_alignment": "runner_up_align"})


def render_markdown(report: JudgeBenchReport, title: str = "Judge reliability report") -> str:
    ex = report.extras
    parts = [
        f"# {title}\n",
        f"{ex['evaluations']} parsed verdicts; judges: {', '.join(ex['judges']) or '–'}; "
        f"generators: {', '.join(ex['generators']) or '–'}; conditions: {', '.join(ex['conditions']) or '–'}; "
        f"programmatic scorer: {ex['scorer']}; bootstrap: {ex['bootstrap']['resamples']} stratified resamples, "
        f"seed {ex['bootstrap']['seed']}.\n",
    ]
    for name, (heading, note) in SECTIONS.items():
        table = report.tables.get(name)
        if table is None:
            continue
        if name == "decision_guide":
            table = _guide_view(table)
        formats = _pp(table) | BIAS_FORMATS.get(name, {})
        if name == "stability":
            formats["alpha"] = ".3f"
        for column in (
            "kappa",
            "spearman_vs_equal",
            "spearman_standard_vs_binary",
            "self_bias",
            "others_min",
            "others_max",
            "all",
            "tool_selection",
            "parameter_structure",
            "sequence",
            "coverage",
        ):
            if column in table.columns and name in (
                "inter_judge",
                "reweighting",
                "binary_spearman",
                "self_preference",
                "bias",
            ):
                formats[column] = ".3f"
        parts.append(f"## {heading}\n")
        if note:
            parts.append(f"{note}\n")
        parts.append(md_table(table, formats))
    return "\n".join(parts)


def summary_markdown(report: JudgeBenchReport) -> str:
    """The short version: Table 2, the decision guide, attrition and nulls in one line each."""
    t2 = report.tables.get("table2", pd.DataFrame())
    guide = _guide_view(report.tables.get("decision_guide", pd.DataFrame()))
    lines = [
        "Alignment (%) by difficulty, with and without the reference plan; GT lift in pp.\n",
        md_table(t2, _pp(t2)),
        "Decision guide (95 % bootstrap CIs, 2,000 stratified resamples):\n",
        md_table(guide, _pp(guide)),
    ]
    att = report.tables.get("attrition", pd.DataFrame())
    if not att.empty:
        lost = int((att["empty"] + att["unparseable"]).sum())
        lines.append(
            f"Generator attrition: {lost} of {int(att['inputs'].sum())} outputs empty or unparseable (excluded)."
        )
    nul = report.tables.get("nulls", pd.DataFrame())
    if not nul.empty:
        lines.append(
            f"Judge nulls: {int(nul['null'].sum())} of {int((nul['ok'] + nul['null']).sum())} verdicts unparseable "
            f"after retries (excluded, never counted as agreement or disagreement)."
        )
    return "\n".join(lines) + "\n"


def write_report(
    report: JudgeBenchReport,
    out_dir: str | Path,
    formats: tuple[str, ...] = FORMATS,
    title: str = "Judge reliability report",
) -> list[Path]:
    """Write ``report.md``, ``tables/<name>.csv``, ``tables/<name>.parquet``, ``report.json`` and ``report.html``
    (one self-contained page: the figures and their tables) under ``out_dir``.

    Parquet (``parquet`` in ``formats``) holds each table as the analysis computed it:
    numbers as numbers, every column of the DataFrame (what ``tooldiag.load_judgebench`` returns).
    """
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise UserError(f"unknown report format(s): {', '.join(bad)}", hint="use md, csv, json, parquet, html")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if "md" in formats:
        path = out / "report.md"
        path.write_text(render_markdown(report, title), "utf-8")
        written.append(path)
    if "csv" in formats:
        (out / "tables").mkdir(exist_ok=True)
        for name, table in report.tables.items():
            path = out / "tables" / f"{name}.csv"
            path.write_text(to_csv(frame_table(table, key=name), cells="raw"), "utf-8")
            written.append(path)
    if "parquet" in formats:
        from tooldiag.report.frames import write_parquet

        (out / "tables").mkdir(exist_ok=True)
        for name, table in report.tables.items():
            path = out / "tables" / f"{name}.parquet"
            write_parquet(table.reset_index(drop=True), path)
            written.append(path)
    if "json" in formats:
        path = out / "report.json"
        payload = {
            "extras": report.extras,
            "tables": {name: table_records(frame_table(table, key=name)) for name, table in report.tables.items()},
        }
        path.write_text(json.dumps(payload, indent=1, allow_nan=False), "utf-8")
        written.append(path)
    if "html" in formats:
        from tooldiag.suites.judgebench.html import judgebench_page

        path = out / "report.html"
        path.write_text(judgebench_page(report, title), "utf-8")
        written.append(path)
    return written
