"""What human / audit labels say about the programmatic reference and the judges (paper 000 App. G).

Computed only when the run holds labels (``tooldiag judgebench labels import``,
:mod:`tooldiag.suites.judgebench.labels`); without labels ``analyze`` is unchanged.

* **human_agreement**: share of metric-level labels that agree with the programmatic score,
  overall, per metric and per topology (``dag_type``), pooled over raters and (with several
  raters) per rater, with Wilson CIs. App. G reports 92.7 % overall on 480 verdicts. A score
  label agrees when it falls on the same side of 0.5 as the programmatic score: the cut App. G's
  disagreement rule flips across.
* **human_kappa**: per pair of raters, on the items (output x metric) both labelled, exact
  agreement and unweighted Cohen's κ of their agree/disagree categories. App. G had one
  annotator and no inter-annotator statistic, so this table appears only with two or more raters.
* **human_alignment**: per judge and condition, on the labelled outputs only, the judge's
  alignment with the programmatic scores beside its **human-corrected alignment**: App. G's rule,
  "on disagreement the human score is 0 if p >= 0.5 else 1; alignment 1 - |ℓ - human|" (an agreed
  metric keeps h = p); the gap (human - programmatic, pp; the paper's mean is -6.9), the exact
  3-bin agreement of judge and human verdicts, and both rankings per condition. With several
  raters the human score of an item is the mean of theirs.
* **human_corrected_rates**: the Rogan-Gladen corrected pass rate (issue 15 item 5,
  :func:`tooldiag.metrics.prevalence.corrected_rate_with_ci`) with the judge's TPR/TNR estimated
  on the human-labelled outputs (truth: the record's mean score >= 0.5, human scores where
  labelled, programmatic elsewhere) and applied to the unlabelled outputs of the same judge x
  condition x difficulty; the decision guide gains ``corrected_pass_rate_human``.
"""

from __future__ import annotations

import hashlib
from itertools import combinations

import numpy as np
import pandas as pd

from tooldiag.metrics.agreement import bin_verdicts, kappa_from_confusion, metric_alignment, wilson_interval
from tooldiag.metrics.prevalence import corrected_rate_with_ci
from tooldiag.metrics.structural import METRICS
from tooldiag.suites.judgebench.analysis import CORRECTED_COLUMNS, PASS_THRESHOLD, AnalysisSettings, ordered
from tooldiag.suites.judgebench.conditions import CONDITIONS
from tooldiag.suites.judgebench.evaluations import KEY, L_COLS, P_COLS
from tooldiag.suites.judgebench.records import DAG_TYPES, DIFFICULTIES

ITEM = [*KEY, "metric"]
AGREEMENT_COLUMNS = ["rater", "scope", "value", "n_labels", "agree", "agreement_pct", "ci_low", "ci_high"]
KAPPA_COLUMNS = ["rater_a", "rater_b", "n_items", "exact_agreement_pct", "kappa"]
ALIGNMENT_COLUMNS = [
    "judge",
    "condition",
    "n_plans",
    "n_verdicts",
    "programmatic_alignment",
    "human_alignment",
    "gap_pp",
    "human_agreement_pct",
    "rank_programmatic",
    "rank_human",
]


def agrees(labels: pd.DataFrame) -> np.ndarray:
    """Per label: does the rater agree with the programmatic score? (a score label: same side of 0.5)."""
    word = labels["label"].to_numpy(object)
    same_side = (labels["score"].to_numpy(float) >= 0.5) == (labels["programmatic"].to_numpy(float) >= 0.5)
    return np.where(pd.isna(word), same_side, word == "agree").astype(bool)


def human_agreement(labels: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Human-vs-programmatic agreement overall, per metric and per topology (App. G, Table 12)."""
    work = labels.assign(agree=agrees(labels))
    raters = ordered(work["rater"], [])
    rows = []
    for rater in ["all", *(raters if len(raters) > 1 else [])]:
        sub = work if rater == "all" else work[work["rater"] == rater]
        scopes = [("overall", "all", sub)]
        scopes += [("metric", m, sub[sub["metric"] == m]) for m in ordered(sub["metric"], list(METRICS))]
        scopes += [("dag_type", d, sub[sub["dag_type"] == d]) for d in ordered(sub["dag_type"], list(DAG_TYPES))]
        for scope, value, part in scopes:
            n, k = len(part), int(part["agree"].sum())
            lo, hi = wilson_interval(k, n, confidence)
            rows.append([rater, scope, value, n, k, 100 * k / n, 100 * float(lo), 100 * float(hi)])
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def rater_kappa(labels: pd.DataFrame) -> pd.DataFrame:
    """Cohen's κ of every rater pair on the items both labelled (agree/disagree categories)."""
    raters = ordered(labels["rater"], [])
    wide = labels.assign(agree=agrees(labels)).pivot_table(index=ITEM, columns="rater", values="agree", aggfunc="first")
    rows = []
    for a, b in combinations(raters, 2):
        both = wide[[a, b]].dropna()
        if both.empty:
            continue
        x, y = both[a].to_numpy(bool).astype(int), both[b].to_numpy(bool).astype(int)
        confusion = np.bincount(x * 2 + y, minlength=4).reshape(2, 2)
        rows.append([a, b, len(both), 100 * float((x == y).mean()), kappa_from_confusion(confusion)])
    return pd.DataFrame(rows, columns=KAPPA_COLUMNS)


def human_scores(labels: pd.DataFrame) -> pd.DataFrame:
    """One human score per labelled output: KEY + ``h_<metric>`` (mean over raters; NaN = not labelled)."""
    mean = labels.groupby(ITEM, sort=True)["score"].mean().unstack("metric")
    out = pd.DataFrame(index=mean.index)
    for metric in METRICS:
        out[f"h_{metric}"] = mean[metric] if metric in mean.columns else np.nan
    return out.reset_index()


H_COLS = [f"h_{m}" for m in METRICS]


def human_alignment(frame: pd.DataFrame, humans: pd.DataFrame) -> pd.DataFrame:
    """Per judge x condition on the labelled outputs: programmatic vs human-corrected alignment (App. G, Table 13)."""
    joined = frame.merge(humans, on=KEY, how="inner")
    if joined.empty:
        return pd.DataFrame(columns=ALIGNMENT_COLUMNS)
    h = joined[H_COLS].to_numpy(float)
    ell = joined[L_COLS].to_numpy(float)
    labelled = ~np.isnan(h)
    mu_p = metric_alignment(joined[P_COLS].to_numpy(float), ell)
    mu_h = metric_alignment(np.nan_to_num(h), ell)
    same = bin_verdicts(ell) == bin_verdicts(np.where(labelled, h, 0.0))
    work = joined[["judge", "condition"]].copy()
    work["verdicts"] = labelled.sum(axis=1)
    work["mu_p"] = np.where(labelled, mu_p, 0.0).sum(axis=1)
    work["mu_h"] = np.where(labelled, mu_h, 0.0).sum(axis=1)
    work["same"] = (labelled & same).sum(axis=1)
    g = work.groupby(["judge", "condition"], sort=True)
    out = pd.DataFrame({"n_plans": g.size(), "n_verdicts": g["verdicts"].sum()})
    out["programmatic_alignment"] = 100 * g["mu_p"].sum() / out["n_verdicts"]
    out["human_alignment"] = 100 * g["mu_h"].sum() / out["n_verdicts"]
    out["gap_pp"] = out["human_alignment"] - out["programmatic_alignment"]
    out["human_agreement_pct"] = 100 * g["same"].sum() / out["n_verdicts"]
    out = out.reset_index()
    by_condition = out.groupby("condition")
    out["rank_programmatic"] = by_condition["programmatic_alignment"].rank(ascending=False, method="min").astype(int)
    out["rank_human"] = by_condition["human_alignment"].rank(ascending=False, method="min").astype(int)
    order = {c: i for i, c in enumerate(ordered(out["condition"], list(CONDITIONS)))}
    out = out.sort_values(["condition", "judge"], key=lambda s: s.map(order) if s.name == "condition" else s)
    return out[ALIGNMENT_COLUMNS].reset_index(drop=True)


def human_corrected_rates(frame: pd.DataFrame, humans: pd.DataFrame, settings: AnalysisSettings) -> pd.DataFrame:
    """Rogan-Gladen corrected pass rates with TPR/TNR from the human-labelled outputs (module docstring)."""
    joined = frame.merge(humans, on=KEY, how="left")
    h = joined[H_COLS].to_numpy(float)
    p = joined[P_COLS].to_numpy(float)
    labelled = ~np.isnan(h).all(axis=1)
    truth = np.where(np.isnan(h), p, h).mean(axis=1) >= PASS_THRESHOLD
    reference = p.mean(axis=1) >= PASS_THRESHOLD
    verdict = np.nan_to_num(joined[L_COLS].to_numpy(float), nan=0.0).mean(axis=1) >= PASS_THRESHOLD
    groups = joined.groupby(["judge", "condition", "difficulty"], sort=False, observed=True).indices
    rows = []
    for judge in ordered(joined["judge"], []):
        for condition in ordered(joined["condition"], list(CONDITIONS)):
            for difficulty in ordered(joined["difficulty"], DIFFICULTIES):
                idx = groups.get((judge, condition, difficulty))
                if idx is None or not labelled[idx].any():
                    continue
                cal, tgt = idx[labelled[idx]], idx[~labelled[idx]]
                text = f"{settings.seed}|human|{judge}|{condition}|{difficulty}"
                seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
                r = corrected_rate_with_ci(
                    verdict[tgt],
                    truth[cal],
                    verdict[cal],
                    resamples=settings.n_resamples,
                    seed=seed,
                    confidence=settings.confidence,
                )
                values = [r.tpr, r.tnr, r.observed, r.corrected, r.ci_low, r.ci_high]
                pct = [np.nan if v is None or np.isnan(v) else 100 * v for v in values]
                ref = 100 * float(reference[tgt].mean()) if len(tgt) else np.nan
                rows.append([judge, condition, difficulty, r.n_labelled, r.n_judged, *pct, ref, r.note])
    return pd.DataFrame(rows, columns=CORRECTED_COLUMNS)


def add_human_tables(
    tables: dict[str, pd.DataFrame], frame: pd.DataFrame, labels: pd.DataFrame, settings: AnalysisSettings
) -> None:
    """The hook of :func:`tooldiag.suites.judgebench.report.analyze`: add the label tables to ``tables``."""
    tables["human_agreement"] = human_agreement(labels, settings.confidence)
    if labels["rater"].nunique() > 1:
        tables["human_kappa"] = rater_kappa(labels)
    humans = human_scores(labels)
    tables["human_alignment"] = human_alignment(frame, humans)
    corrected = human_corrected_rates(frame, humans, settings)
    tables["human_corrected_rates"] = corrected
    guide = tables.get("decision_guide")
    if guide is not None and not guide.empty and not corrected.empty:
        lookup = corrected.set_index(["judge", "condition", "difficulty"])["corrected_pass"]
        keys = zip(guide["best_judge"], guide["condition"], guide["difficulty"], strict=True)
        tables["decision_guide"] = guide.assign(corrected_pass_rate_human=[float(lookup.get(k, np.nan)) for k in keys])
