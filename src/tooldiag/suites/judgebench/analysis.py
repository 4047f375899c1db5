"""Judge alignment with the programmatic reference (paper 000, Eqs. 4a-5b, App. E, decision guide).

Every figure is computed with vectorised pandas/numpy on the evaluation table
(:mod:`tooldiag.suites.judgebench.evaluations`); per-record Python loops appear nowhere.

* **cells** (Eq. 5a): 100 × mean record alignment per judge × generator × difficulty ×
  condition, with a 95 % CI from 2,000 bootstrap resamples *stratified by dag_type*, each cell
  with its own seeded generator (App. E). The released code averaged the per-record
  percentages after rounding them to 2 d.p.; we average unrounded values (difference ≤ 0.005 pp).
* **contrasts** (Eq. 5b and ablations): per judge, the mean over the (generator, difficulty)
  cells present in both conditions of align(a) - align(b) (GT lift = with_gt - without_gt);
  the CI is paired: each cell bootstrap resamples generator outputs, which carry their verdicts
  under every condition.
* **corrected rates** (Rogan & Gladen 1978): per judge × condition × difficulty, the judge's
  pass rate corrected for its TPR/TNR against the programmatic reference (see
  :func:`corrected_rates`), beside the reference's own pass rate.
* **decision guide** (App. A): per condition and difficulty, judges ranked by their alignment
  averaged equally over the generators every judge was run on, with CIs; when the leader's CI
  overlaps the runner-up's, the guide says so.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tooldiag.metrics.agreement import (
    cell_rng,
    grouped_resample_means,
    metric_alignment,
    percentile_interval,
)
from tooldiag.metrics.prevalence import corrected_rate_with_ci
from tooldiag.metrics.structural import METRICS
from tooldiag.suites.judgebench.conditions import CONDITIONS, CONTRASTS
from tooldiag.suites.judgebench.evaluations import L_COLS, P_COLS, EvaluationData
from tooldiag.suites.judgebench.records import DIFFICULTIES

CELL = ["judge", "generator", "difficulty", "condition"]


@dataclass
class AnalysisSettings:
    n_resamples: int = 2000
    #: The released jury analysis used 1,000 resamples (notes §2).
    jury_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 42
    workers: int = 2


@dataclass
class JudgeBenchReport:
    """Every table of the analysis as a DataFrame, plus a few structured extras."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    settings: AnalysisSettings = field(default_factory=AnalysisSettings)


def ordered(values: pd.Series | list[str], order: tuple[str, ...] | list[str]) -> list[str]:
    """Distinct ``values`` in the given ``order`` first, then the rest sorted."""
    present = [str(v) for v in pd.unique(pd.Series(values))]
    return [v for v in order if v in present] + sorted(v for v in present if v not in order)


def with_alignment(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``mu_<metric>`` (Eq. 4a) and ``alignment`` (Eq. 4b, in [0, 1]) columns."""
    out = frame.copy()
    mu = metric_alignment(out[P_COLS].to_numpy(float), out[L_COLS].to_numpy(float))
    for i, metric in enumerate(METRICS):
        out[f"mu_{metric}"] = mu[:, i]
    out["alignment"] = mu.mean(axis=1)
    return out


@dataclass
class CellStats:
    """Cell means and bootstrap distributions, indexed by (judge, generator, difficulty, condition).

    The distributions of one (judge, generator, difficulty) across conditions come from the
    same resampled generator outputs, so condition differences are paired.
    """

    table: pd.DataFrame
    index: dict[tuple[str, str, str, str], int]
    distributions: np.ndarray


def cell_statistics(frame: pd.DataFrame, settings: AnalysisSettings) -> CellStats:
    """Eq. 5a for every cell with stratified bootstrap CIs (in percentage points).

    Per (judge, generator, difficulty) the generator outputs are resampled 2,000 times within
    each dag_type stratum (generator ``cell_rng(seed, "judge|generator|difficulty")``), and every
    condition's cell mean is taken over the resampled outputs it has a verdict for.
    """
    columns = [*CELL, "n", "alignment", "ci_low", "ci_high"]
    if frame.empty:
        return CellStats(pd.DataFrame(columns=columns), {}, np.zeros((0, settings.n_resamples)))
    conditions = ordered(frame["condition"], list(CONDITIONS))
    group_keys = ["judge", "generator", "difficulty"]
    grouped = frame.groupby(group_keys, sort=True, observed=True)
    group = grouped.ngroup().to_numpy()
    group_names = [tuple(str(v) for v in key) for key in grouped.size().index]
    unit = frame.groupby([*group_keys, "record_id"], sort=True, observed=True).ngroup().to_numpy()
    cond = pd.Categorical(frame["condition"], categories=conditions).codes
    n_units = int(unit.max()) + 1
    values = np.full((n_units, len(conditions)), np.nan)
    values[unit, cond] = frame["alignment"].to_numpy(float)
    unit_group = np.empty(n_units, dtype=np.int64)
    unit_group[unit] = group
    unit_dag = np.empty(n_units, dtype=np.int64)
    unit_dag[unit] = pd.factorize(frame["dag_type"], sort=True)[0]
    order = np.lexsort((unit_dag, unit_group))
    bounds = np.searchsorted(unit_group[order], np.arange(int(group.max()) + 2))

    def one(g: int) -> tuple[np.ndarray, np.ndarray]:
        rows = order[bounds[g] : bounds[g + 1]]
        block = values[rows]
        present = ~np.isnan(block).all(axis=0)
        strata = np.split(np.arange(len(rows)), np.flatnonzero(np.diff(unit_dag[rows])) + 1)
        rng = cell_rng(settings.seed, "|".join(group_names[g]))
        return present, grouped_resample_means(block[:, present], strata, settings.n_resamples, rng)

    if settings.workers > 1 and len(group_names) > 1:
        with ThreadPoolExecutor(max_workers=settings.workers) as pool:
            results = list(pool.map(one, range(len(group_names))))
    else:
        results = [one(g) for g in range(len(group_names))]

    records, dists = [], []
    for g, (present, dist) in enumerate(results):
        rows = order[bounds[g] : bounds[g + 1]]
        block = values[rows]
        for j, c in enumerate(np.flatnonzero(present)):
            column = block[:, c]
            column = column[~np.isnan(column)]
            records.append((*group_names[g], conditions[c], len(column), 100 * column.mean()))
            dists.append(100 * dist[j])
    table = pd.DataFrame(records, columns=[*CELL, "n", "alignment"])
    distributions = np.vstack(dists)
    lo, hi = percentile_interval(distributions, settings.confidence)
    table["ci_low"], table["ci_high"] = lo, hi
    table = table.sort_values(CELL, kind="stable")
    distributions = distributions[table.index.to_numpy()]
    table = table.reset_index(drop=True)
    index = {tuple(row): i for i, row in enumerate(table[CELL].itertuples(index=False, name=None))}
    return CellStats(table, index, distributions)


def contrasts(cells: CellStats, settings: AnalysisSettings) -> pd.DataFrame:
    """Per judge and condition contrast (a, b): mean over the (generator, difficulty) cells both
    conditions have of align(a) - align(b) (Eq. 5b for the GT lift), in pp.

    The CI comes from the paired cell distributions (the same resampled generator outputs under
    both conditions), so a judge that answers the same in both conditions gets a zero-width CI.
    """
    rows = []
    table = cells.table
    for name, (a, b) in CONTRASTS.items():
        for judge in ordered(table["judge"], []):
            sub = table[table["judge"] == judge]
            cells_a = {(g, d) for g, d, c in zip(sub["generator"], sub["difficulty"], sub["condition"]) if c == a}
            cells_b = {(g, d) for g, d, c in zip(sub["generator"], sub["difficulty"], sub["condition"]) if c == b}
            shared = sorted(cells_a & cells_b)
            if not shared:
                continue
            ia = [cells.index[(judge, g, d, a)] for g, d in shared]
            ib = [cells.index[(judge, g, d, b)] for g, d in shared]
            delta = float(np.mean(table["alignment"].to_numpy()[ia] - table["alignment"].to_numpy()[ib]))
            dist = (cells.distributions[ia] - cells.distributions[ib]).mean(axis=0)
            dist = dist[~np.isnan(dist)]
            lo, hi = percentile_interval(dist, settings.confidence) if len(dist) else (np.nan, np.nan)
            rows.append(
                {
                    "judge": judge,
                    "contrast": name,
                    "condition_a": a,
                    "condition_b": b,
                    "n_cells": len(shared),
                    "delta_pp": delta,
                    "ci_low": float(lo),
                    "ci_high": float(hi),
                }
            )
    columns = ["judge", "contrast", "condition_a", "condition_b", "n_cells", "delta_pp", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)


def table2(cells: CellStats) -> pd.DataFrame:
    """Paper Table 2 layout: one row per generator × judge; alignment per condition and
    difficulty (with GT, then without GT, then any other condition), then the row's GT lift:
    the mean over its difficulties of with_gt - without_gt (pp)."""
    t = cells.table
    if t.empty:
        return pd.DataFrame()
    conds = ordered(t["condition"], list(CONDITIONS))
    diffs = ordered(t["difficulty"], DIFFICULTIES)
    wide = t.pivot_table(index=["generator", "judge"], columns=["condition", "difficulty"], values="alignment")
    columns = [(c, d) for c in conds for d in diffs if (c, d) in wide.columns]
    wide = wide[columns]
    wide.columns = [f"{c}:{d}" for c, d in columns]
    wide = wide.reset_index()
    if {"with_gt", "without_gt"} <= set(conds):
        per_pair = t[t["condition"].isin(["with_gt", "without_gt"])].pivot_table(
            index=["generator", "judge", "difficulty"], columns="condition", values="alignment"
        )
        if {"with_gt", "without_gt"} <= set(per_pair.columns):
            diff = (per_pair["with_gt"] - per_pair["without_gt"]).groupby(level=["generator", "judge"]).mean()
            wide = wide.merge(diff.rename("gt_lift").reset_index(), on=["generator", "judge"], how="left")
    return wide


def decision_guide(cells: CellStats, settings: AnalysisSettings) -> pd.DataFrame:
    """Best judge per condition and difficulty, averaged equally over shared generators."""
    t = cells.table
    rows = []
    for condition in ordered(t["condition"], list(CONDITIONS)):
        for difficulty in ordered(t["difficulty"], DIFFICULTIES):
            sub = t[(t["condition"] == condition) & (t["difficulty"] == difficulty)]
            judges = ordered(sub["judge"], [])
            if not judges:
                continue
            shared = set.intersection(*(set(sub[sub["judge"] == j]["generator"]) for j in judges))
            if not shared:
                continue
            scored = []
            for judge in judges:
                idx = [cells.index[(judge, g, difficulty, condition)] for g in sorted(shared)]
                mean = float(t["alignment"].to_numpy()[idx].mean())
                lo, hi = percentile_interval(cells.distributions[idx].mean(axis=0), settings.confidence)
                scored.append((mean, judge, float(lo), float(hi)))
            scored.sort(key=lambda s: (-s[0], s[1]))
            best = scored[0]
            row = {
                "condition": condition,
                "difficulty": difficulty,
                "generators": len(shared),
                "best_judge": best[1],
                "alignment": best[0],
                "ci_low": best[2],
                "ci_high": best[3],
                "runner_up": None,
                "runner_up_alignment": np.nan,
                "runner_up_ci_low": np.nan,
                "runner_up_ci_high": np.nan,
            }
            if len(scored) > 1:
                second = scored[1]
                row.update(
                    runner_up=second[1],
                    runner_up_alignment=second[0],
                    runner_up_ci_low=second[2],
                    runner_up_ci_high=second[3],
                )
                tied = [s[1] for s in scored[1:] if s[3] >= best[2]]
                row["verdict"] = (
                    f"{best[1]} leads; its CI overlaps {', '.join(tied)}: not a clear winner"
                    if tied
                    else f"{best[1]} leads; CI clear of every other judge"
                )
            else:
                row["verdict"] = f"{best[1]} is the only judge run"
            rows.append(row)
    return pd.DataFrame(rows)


def per_group(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean alignment (pp) and count per group."""
    if frame.empty:
        return pd.DataFrame(columns=[*by, "n", "alignment"])
    g = frame.groupby(by, sort=True)["alignment"]
    return pd.DataFrame({"n": g.size(), "alignment": 100 * g.mean()}).reset_index()


def per_metric(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-metric alignment (pp) per judge and condition (paper App. Q)."""
    if frame.empty:
        return pd.DataFrame(columns=["judge", "condition", "metric", "n", "alignment"])
    mu_cols = [f"mu_{m}" for m in METRICS]
    g = frame.groupby(["judge", "condition"], sort=True)
    means = (100 * g[mu_cols].mean()).rename(columns=dict(zip(mu_cols, METRICS, strict=True)))
    long = means.reset_index().melt(id_vars=["judge", "condition"], var_name="metric", value_name="alignment")
    long = long.merge(g.size().rename("n").reset_index(), on=["judge", "condition"])
    return long[["judge", "condition", "metric", "n", "alignment"]]


def generator_accuracy(data: EvaluationData, frame: pd.DataFrame) -> pd.DataFrame:
    """Programmatic accuracy (pp) per generator and difficulty: the four metrics and their mean."""
    if frame.empty:
        return pd.DataFrame()
    unique = frame.drop_duplicates(["generator", "record_id", "difficulty"])
    g = unique.groupby(["generator", "difficulty"], sort=True)
    out = (100 * g[P_COLS].mean()).rename(columns=dict(zip(P_COLS, METRICS, strict=True)))
    out["mean"] = out[list(METRICS)].mean(axis=1)
    out.insert(0, "n", g.size())
    return out.reset_index()


def attrition(data: EvaluationData, confidence: float) -> pd.DataFrame:
    """Generator inputs per generator × difficulty, by outcome, with the attrition rate (Wilson CI)."""
    from tooldiag.metrics.agreement import wilson_interval

    p = data.predictions
    if p.empty:
        return pd.DataFrame()
    counts = p.pivot_table(index=["generator", "difficulty"], columns="status", aggfunc="size", fill_value=0)
    for status in ("ok", "empty", "unparseable", "error"):
        if status not in counts.columns:
            counts[status] = 0
    counts = counts[["ok", "empty", "unparseable", "error"]]
    counts.columns.name = None
    out = counts.reset_index()
    out["inputs"] = out[["ok", "empty", "unparseable", "error"]].sum(axis=1)
    lost = out["empty"] + out["unparseable"]
    decided = out["inputs"] - out["error"]
    lo, hi = wilson_interval(lost, decided, confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["attrition_pct"] = np.where(decided > 0, 100 * lost / decided.replace(0, np.nan), np.nan)
    out["ci_low"], out["ci_high"] = 100 * lo, 100 * hi
    return out


def nulls(data: EvaluationData, confidence: float) -> pd.DataFrame:
    """Judge units per judge × condition by outcome, the null rate (Wilson CI) and replies missing a metric."""
    from tooldiag.metrics.agreement import wilson_interval

    j = data.judgements
    if j.empty:
        return pd.DataFrame()
    counts = j.pivot_table(index=["judge", "condition"], columns="status", aggfunc="size", fill_value=0)
    for status in ("ok", "null", "error"):
        if status not in counts.columns:
            counts[status] = 0
    counts = counts[["ok", "null", "error"]]
    counts.columns.name = None
    out = counts.reset_index()
    missing = j[j["missing"] > 0].groupby(["judge", "condition"]).size().rename("replies_missing_a_metric")
    out = out.merge(missing.reset_index(), on=["judge", "condition"], how="left").fillna(
        {"replies_missing_a_metric": 0}
    )
    decided = out["ok"] + out["null"]
    lo, hi = wilson_interval(out["null"], decided, confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["null_pct"] = np.where(decided > 0, 100 * out["null"] / decided.replace(0, np.nan), np.nan)
    out["ci_low"], out["ci_high"] = 100 * lo, 100 * hi
    out["replies_missing_a_metric"] = out["replies_missing_a_metric"].astype(int)
    return out


#: A record passes when the mean of its four metric values reaches this cut: the 0.5 the binary
#: collapse uses to send a middle verdict toward the reference (``p >= 0.5`` -> 1), applied to the
#: record's mean score (Eq. 4 averages the metrics the same way), for the reference and the judge alike.
PASS_THRESHOLD = 0.5

CORRECTED_COLUMNS = [
    "judge",
    "condition",
    "difficulty",
    "n_labelled",
    "n_judged",
    "tpr",
    "tnr",
    "observed_pass",
    "corrected_pass",
    "ci_low",
    "ci_high",
    "reference_pass",
    "note",
]


def _labelled_half(record_ids: pd.Series) -> np.ndarray:
    """True for records in the labelled (calibration) half: even first byte of sha256(record_id).

    A record falls on the same side for every judge, generator and condition, and the split does
    not depend on the order of the rows.
    """
    side = {rid: hashlib.sha256(str(rid).encode("utf-8")).digest()[0] % 2 == 0 for rid in pd.unique(record_ids)}
    return record_ids.map(side).to_numpy(bool)


def corrected_rates(frame: pd.DataFrame, settings: AnalysisSettings) -> pd.DataFrame:
    """Rogan-Gladen corrected judge pass rates per judge × condition × difficulty (in %).

    Truth is the programmatic reference: a generator output passes when the mean of its four
    ``p_*`` scores is at least :data:`PASS_THRESHOLD`; the judge's verdict passes when the mean of
    its four values does (a missing metric counts 0, as in the alignment). The records are split
    in two halves by a hash of their id: TPR/TNR are estimated on the labelled half (where the
    study plays "we know the truth"), and the judge's observed pass rate on the other half is
    corrected. ``reference_pass`` is the reference's pass rate on that same half: how close
    ``corrected_pass`` lands to it shows whether correcting with error rates estimated elsewhere
    works for this judge (the correction on the very set TPR/TNR came from would recover it exactly).
    """
    if frame.empty:
        return pd.DataFrame(columns=CORRECTED_COLUMNS)
    truth = frame[P_COLS].to_numpy(float).mean(axis=1) >= PASS_THRESHOLD
    verdict = np.nan_to_num(frame[L_COLS].to_numpy(float), nan=0.0).mean(axis=1) >= PASS_THRESHOLD
    labelled = _labelled_half(frame["record_id"])
    rows = []
    keys = ["judge", "condition", "difficulty"]
    groups = frame.groupby(keys, sort=False, observed=True).indices
    judges = ordered(frame["judge"], [])
    conditions = ordered(frame["condition"], list(CONDITIONS))
    difficulties = ordered(frame["difficulty"], DIFFICULTIES)
    for key in [(j, c, d) for j in judges for c in conditions for d in difficulties]:
        if key not in groups:
            continue
        idx = groups[key]
        cal, tgt = idx[labelled[idx]], idx[~labelled[idx]]
        seed = int.from_bytes(hashlib.sha256(f"{settings.seed}|{'|'.join(key)}".encode()).digest()[:4], "big")
        r = corrected_rate_with_ci(
            verdict[tgt],
            truth[cal],
            verdict[cal],
            resamples=settings.n_resamples,
            seed=seed,
            confidence=settings.confidence,
        )

        def pct(value: float | None) -> float:
            return np.nan if value is None else 100 * value

        rows.append(
            {
                "judge": key[0],
                "condition": key[1],
                "difficulty": key[2],
                "n_labelled": r.n_labelled,
                "n_judged": r.n_judged,
                "tpr": pct(r.tpr),
                "tnr": pct(r.tnr),
                "observed_pass": pct(r.observed),
                "corrected_pass": pct(r.corrected),
                "ci_low": pct(r.ci_low),
                "ci_high": pct(r.ci_high),
                "reference_pass": pct(float(truth[tgt].mean())) if len(tgt) else np.nan,
                "note": r.note,
            }
        )
    return pd.DataFrame(rows, columns=CORRECTED_COLUMNS)


def with_corrected_pass(guide: pd.DataFrame, corrected: pd.DataFrame) -> pd.DataFrame:
    """The decision guide with the best judge's corrected pass rate (%) as ``corrected_pass_rate``."""
    if guide.empty or corrected.empty:
        return guide
    lookup = corrected.set_index(["judge", "condition", "difficulty"])["corrected_pass"]
    out = guide.copy()
    out["corrected_pass_rate"] = [
        float(lookup.get((j, c, d), np.nan))
        for j, c, d in zip(out["best_judge"], out["condition"], out["difficulty"], strict=True)
    ]
    return out
