"""Judge-versus-judge statistics and robustness checks (paper 000 §4.2, App. A, G, O, T).

* **inter-judge agreement**: per condition and judge pair, the 3-bin verdicts (v ≤ 0.1 → 0,
  v ≥ 0.9 → 1, else 0.5) of the metric-level verdicts both judges gave on the same generator
  outputs, pooled across generators and difficulties: exact agreement p_o (Wilson CI),
  unweighted Cohen κ, the confusion matrix and the share of disagreements at the 0.5 bin;
* **binary collapse**: alignment when each middle-bin verdict is moved toward the
  programmatic value, the share of middle-bin verdicts, and Spearman ρ between the judge
  rankings before and after (released plain-rank formula);
* **soft jury**: mean of all judges' raw values per record and metric, on records every judge
  scored completely, against the best single judge on the same records (CI stratified by DAG,
  1,000 resamples as in the released jury analysis);
* **re-weighting**: Spearman ρ between the equal-weight judge ranking and rankings with the
  parameter-structure metric halved or excluded (paper §3.2, App. G);
* **bias and self-preference**: mean signed error ℓ - p per judge × generator (overall and per
  metric); where a judge also generated, its self-bias against its range on other generators (App. O).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from tooldiag.metrics.agreement import (
    bin_verdicts,
    binary_collapse,
    bootstrap_cells,
    boundary_share,
    confusion_matrix3,
    exact_agreement,
    kappa_from_confusion,
    metric_alignment,
    spearman_plain,
    wilson_interval,
)
from tooldiag.metrics.structural import METRICS
from tooldiag.suites.judgebench.analysis import AnalysisSettings, ordered
from tooldiag.suites.judgebench.conditions import CONDITIONS
from tooldiag.suites.judgebench.evaluations import L_COLS, P_COLS
from tooldiag.suites.judgebench.records import DIFFICULTIES

#: Metric weightings of the robustness check, in METRICS order.
WEIGHTINGS: dict[str, tuple[float, float, float, float]] = {
    "equal": (1.0, 1.0, 1.0, 1.0),
    "parameter_structure_halved": (1.0, 0.5, 1.0, 1.0),
    "parameter_structure_excluded": (1.0, 0.0, 1.0, 1.0),
    "sequence_excluded": (1.0, 1.0, 0.0, 1.0),
}


def _verdict_cube(sub: pd.DataFrame, judges: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """(units, judges, 4) judge values (NaN where absent) and one row of unit facts per unit."""
    unit_codes = sub.groupby(["generator", "record_id", "difficulty"], sort=False, observed=True).ngroup().to_numpy()
    judge_codes = pd.Categorical(sub["judge"], categories=judges).codes
    cube = np.full((unit_codes.max() + 1 if len(unit_codes) else 0, len(judges), 4), np.nan)
    cube[unit_codes, judge_codes] = sub[L_COLS].to_numpy(float)
    first = ~pd.Series(unit_codes).duplicated().to_numpy()
    units = sub.loc[first, ["generator", "record_id", "difficulty", "dag_type", *P_COLS]].copy()
    units.index = unit_codes[first]
    return cube, units.sort_index()


def inter_judge(frame: pd.DataFrame, confidence: float) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Pairwise agreement table and confusion matrices (keyed ``condition|judge_a|judge_b``)."""
    rows, matrices = [], {}
    for condition in ordered(frame["condition"], list(CONDITIONS)):
        sub = frame[frame["condition"] == condition]
        judges = ordered(sub["judge"], [])
        if len(judges) < 2:
            continue
        cube, _ = _verdict_cube(sub, judges)
        bins = bin_verdicts(cube)
        for a, b in combinations(range(len(judges)), 2):
            cm = confusion_matrix3(bins[:, a, :], bins[:, b, :])
            n = int(cm.sum())
            lo, hi = wilson_interval(np.trace(cm), n, confidence)
            rows.append(
                {
                    "condition": condition,
                    "judge_a": judges[a],
                    "judge_b": judges[b],
                    "n_verdicts": n,
                    "exact_agreement_pct": 100 * exact_agreement(cm),
                    "ci_low": 100 * float(lo),
                    "ci_high": 100 * float(hi),
                    "kappa": kappa_from_confusion(cm),
                    "boundary_share_pct": 100 * boundary_share(cm),
                }
            )
            matrices[f"{condition}|{judges[a]}|{judges[b]}"] = cm.tolist()
    columns = [
        "condition",
        "judge_a",
        "judge_b",
        "n_verdicts",
        "exact_agreement_pct",
        "ci_low",
        "ci_high",
        "kappa",
        "boundary_share_pct",
    ]
    return pd.DataFrame(rows, columns=columns), {"labels": ["0", "0.5", "1"], "matrices": matrices}


def confusion_table(matrices: dict[str, Any]) -> pd.DataFrame:
    """The pairwise 3×3 confusion matrices as rows: column ``a0.5_b1`` counts verdicts the first
    judge binned 0.5 and the second 1."""
    labels = matrices["labels"]
    rows = []
    for key, cm in matrices["matrices"].items():
        condition, judge_a, judge_b = key.split("|", 2) if key.count("|") == 2 else (key, "", "")
        row: dict[str, Any] = {"condition": condition, "judge_a": judge_a, "judge_b": judge_b}
        for i, la in enumerate(labels):
            for j, lb in enumerate(labels):
                row[f"a{la}_b{lb}"] = int(cm[i][j])
        rows.append(row)
    return pd.DataFrame(rows)


def binary_collapse_table(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Standard vs binary-collapsed alignment per judge × condition, and ranking Spearman per condition."""
    if frame.empty:
        return pd.DataFrame(), pd.DataFrame()
    P = frame[P_COLS].to_numpy(float)
    L = frame[L_COLS].to_numpy(float)
    collapsed = metric_alignment(P, binary_collapse(L, P)).mean(axis=1)
    codes = bin_verdicts(L)
    work = frame[["judge", "condition"]].copy()
    work["standard"] = frame["alignment"].to_numpy()
    work["binary"] = collapsed
    work["middle"] = (codes == 1).sum(axis=1)
    work["verdicts"] = (codes >= 0).sum(axis=1)
    g = work.groupby(["judge", "condition"], sort=True)
    out = pd.DataFrame(
        {
            "standard": 100 * g["standard"].mean(),
            "binary": 100 * g["binary"].mean(),
            "middle_verdict_pct": 100 * g["middle"].sum() / g["verdicts"].sum().replace(0, np.nan),
        }
    ).reset_index()
    out["delta_pp"] = out["binary"] - out["standard"]
    ranks = []
    for condition in ordered(out["condition"], list(CONDITIONS)):
        sub = out[out["condition"] == condition]
        if len(sub) >= 2:
            ranks.append(
                {
                    "condition": condition,
                    "judges": len(sub),
                    "spearman_standard_vs_binary": spearman_plain(sub["standard"].tolist(), sub["binary"].tolist()),
                }
            )
    return out[["judge", "condition", "standard", "binary", "delta_pp", "middle_verdict_pct"]], pd.DataFrame(ranks)


def soft_jury_table(frame: pd.DataFrame, settings: AnalysisSettings) -> pd.DataFrame:
    """Soft-jury alignment per condition × difficulty vs the best single judge on the same records."""
    rows = []
    for condition in ordered(frame["condition"], list(CONDITIONS)):
        sub = frame[frame["condition"] == condition]
        judges = ordered(sub["judge"], [])
        if len(judges) < 2:
            continue
        cube, units = _verdict_cube(sub, judges)
        complete = ~np.isnan(cube).any(axis=(1, 2))
        if not complete.any():
            continue
        P = units[P_COLS].to_numpy(float)[complete]
        jury = cube[complete].mean(axis=1)
        jury_alignment = metric_alignment(P, jury).mean(axis=1)
        single = np.stack([metric_alignment(P, cube[complete, j]).mean(axis=1) for j in range(len(judges))], axis=1)
        facts = units[complete]
        diffs = ordered(facts["difficulty"], DIFFICULTIES)
        cell_codes = pd.Categorical(facts["difficulty"], categories=diffs).codes
        keys = [f"jury|{condition}|{d}" for d in diffs]
        boot = bootstrap_cells(
            jury_alignment,
            cell_codes,
            pd.factorize(facts["dag_type"], sort=True)[0],
            keys,
            n_resamples=settings.jury_resamples,
            seed=settings.seed,
            workers=settings.workers,
        )
        lo, hi = boot.interval(settings.confidence)
        for i, difficulty in enumerate(diffs):
            mask = cell_codes == i
            means = single[mask].mean(axis=0)
            best = int(np.argmax(means))
            rows.append(
                {
                    "condition": condition,
                    "difficulty": difficulty,
                    "judges": len(judges),
                    "n_records": int(mask.sum()),
                    "jury_alignment": 100 * float(boot.means[i]),
                    "ci_low": 100 * float(lo[i]),
                    "ci_high": 100 * float(hi[i]),
                    "best_judge": judges[best],
                    "best_judge_alignment": 100 * float(means[best]),
                }
            )
    return pd.DataFrame(rows)


def reweighting(frame: pd.DataFrame) -> pd.DataFrame:
    """Spearman ρ between the equal-weight judge ranking and each alternative weighting, per condition.

    A weighted record alignment is linear in the per-metric alignments, so each judge's weighted
    mean is its per-metric means combined with the weights.
    """
    rows = []
    mu_cols = [f"mu_{m}" for m in METRICS]
    means = frame.groupby(["condition", "judge"], sort=True, observed=True)[mu_cols].mean()
    for condition in ordered(frame["condition"], list(CONDITIONS)):
        if condition not in means.index.get_level_values(0):
            continue
        per_judge = means.loc[condition]
        if len(per_judge) < 2:
            continue
        names = [str(j) for j in per_judge.index]
        scores = {scheme: 100 * per_judge.to_numpy() @ (np.asarray(w) / sum(w)) for scheme, w in WEIGHTINGS.items()}
        for scheme in WEIGHTINGS:
            order = [names[i] for i in np.argsort(-scores[scheme], kind="stable")]
            rows.append(
                {
                    "condition": condition,
                    "weighting": scheme,
                    "weights": "/".join(f"{w:g}" for w in WEIGHTINGS[scheme]),
                    "spearman_vs_equal": spearman_plain(scores["equal"].tolist(), scores[scheme].tolist()),
                    "ranking": " > ".join(order),
                }
            )
    return pd.DataFrame(rows)


def judge_bias(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Signed error ℓ - p per condition × judge × generator, and the self-preference check."""
    if frame.empty:
        return pd.DataFrame(), pd.DataFrame()
    err = frame[L_COLS].to_numpy(float) - frame[P_COLS].to_numpy(float)
    work = frame[["condition", "judge", "generator"]].copy()
    for i, metric in enumerate(METRICS):
        work[metric] = err[:, i]
    present = (~np.isnan(err)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        work["all"] = np.where(present > 0, np.nansum(err, axis=1) / np.maximum(present, 1), np.nan)
    bias = work.groupby(["condition", "judge", "generator"], sort=True)[["all", *METRICS]].mean().reset_index()
    rows = []
    for (condition, judge), sub in bias.groupby(["condition", "judge"], sort=True):
        own = sub[sub["generator"] == judge]
        others = sub[sub["generator"] != judge]
        if own.empty or others.empty:
            continue
        for metric in ["all", *METRICS]:
            value = float(own[metric].iloc[0])
            lo, hi = float(others[metric].min()), float(others[metric].max())
            rows.append(
                {
                    "condition": condition,
                    "judge": judge,
                    "metric": metric,
                    "self_bias": value,
                    "others_min": lo,
                    "others_max": hi,
                    "outside_others_range": bool(value > hi or value < lo),
                    "direction": "over-credits own outputs"
                    if value > hi
                    else "under-credits own outputs"
                    if value < lo
                    else "within others' range",
                }
            )
    return bias, pd.DataFrame(rows)
