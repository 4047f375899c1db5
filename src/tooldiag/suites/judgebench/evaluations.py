"""From a run directory to one evaluation table: judge values beside programmatic scores.

One row per parsed judge verdict, with columns

``judge, generator, difficulty, condition, record_id, dag_type, p_<metric>, l_<metric>``

for the four metrics (``p`` programmatic, ``l`` the judge's value, NaN when the reply lacked
the metric). Null verdicts (unparseable after retries) and unusable generator outputs are
*not* rows: they are counted in the attrition and null tables. The programmatic scores are
recomputed from the stored plans with the vectorised scorer (released formulas, or the
``schema_aware`` variant), always against the record's true reference.

With repeated draws (``judge --samples K``) the table holds one *canonical* verdict per plan:
per metric, the median of the values of the draws that parsed and reported it (for an even
number, the mean of the two middle values), NaN when none did (:func:`canonical_verdicts`). The
per-draw rows stay in :attr:`EvaluationData.draws` for the stability table; the null table
counts every draw. With one draw per plan nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tooldiag.metrics.structural import METRICS, score_plans
from tooldiag.suites.judgebench.store import JudgeBenchStore

KEY = ["generator", "record_id", "difficulty"]
P_COLS = [f"p_{m}" for m in METRICS]
L_COLS = [f"l_{m}" for m in METRICS]


@dataclass
class EvaluationData:
    """Everything the analysis reads; build it from a store or synthesise it (``bench/``)."""

    #: One row per parsed verdict (see module docstring).
    frame: pd.DataFrame
    #: One row per generator input: generator, record_id, difficulty, dag_type, status.
    predictions: pd.DataFrame
    #: One row per judge unit: judge, generator, record_id, difficulty, condition, status, missing.
    judgements: pd.DataFrame
    scorer: str = "released"
    #: With repeated draws only: ``frame``'s columns plus ``sample``, one row per parsed draw.
    draws: pd.DataFrame | None = None


def programmatic_scores(store: JudgeBenchStore, *, schema_aware: bool = False) -> pd.DataFrame:
    """Programmatic scores of every usable stored plan: KEY + dag_type + ``p_*`` columns."""
    records = store.records()
    preds = store.predictions(status="ok")
    frame = pd.DataFrame(
        {
            "generator": [p["generator"] for p in preds],
            "record_id": [p["record_id"] for p in preds],
            "difficulty": [p["difficulty"] for p in preds],
        }
    )
    expected = {rid: r.expected_calls() for rid, r in records.items()}
    scores = score_plans(
        [expected[p["record_id"]] for p in preds],
        [p["calls"] for p in preds],
        schema_aware=schema_aware,
        tools=[records[p["record_id"]].available_tools for p in preds] if schema_aware else None,
    )
    frame[P_COLS] = scores if len(preds) else np.zeros((0, 4))
    frame["dag_type"] = frame["record_id"].map({rid: r.dag_type for rid, r in records.items()})
    return frame


#: Columns of :func:`judgement_units`: the store's row columns with ``l_`` before each metric.
UNIT_COLUMNS = ["judge", "generator", "record_id", "difficulty", "condition", "sample", "variant", "status", *L_COLS]


def judgement_units(store: JudgeBenchStore) -> pd.DataFrame:
    """Every stored judge unit of the plans as generated (variant ``""``), one row per draw."""
    assert list(store.JUDGEMENT_ROW_COLUMNS[8:]) == list(METRICS)
    return pd.DataFrame(store.judgement_rows(), columns=UNIT_COLUMNS)


def load_evaluations(store: JudgeBenchStore, *, schema_aware: bool = False) -> EvaluationData:
    """The evaluation table of a run directory."""
    records = store.records()
    dag = {rid: r.dag_type for rid, r in records.items()}
    preds = pd.DataFrame(
        store.predictions(status=None), columns=["generator", "record_id", "difficulty", "status", "calls", "error"]
    )
    preds = preds.drop(columns=["calls", "error"])
    preds["dag_type"] = preds["record_id"].map(dag)
    judg = judgement_units(store)
    judg["missing"] = judg[L_COLS].isna().sum(axis=1).where(judg["status"] == "ok", 0)
    scores = programmatic_scores(store, schema_aware=schema_aware)
    ok = judg[judg["status"] == "ok"]
    frame = ok.merge(scores, on=KEY, how="inner").drop(columns=["status", "missing"])
    columns = ["judge", "generator", "difficulty", "condition", "record_id", "dag_type", *P_COLS, *L_COLS]
    draws = None
    if len(frame) and int(frame["sample"].max()) > 0:
        draws = frame[[*columns, "sample"]].reset_index(drop=True)
        frame = canonical_verdicts(draws)
    frame = frame[columns]
    return EvaluationData(
        frame=frame.reset_index(drop=True),
        predictions=preds,
        judgements=judg[["judge", "generator", "record_id", "difficulty", "condition", "status", "missing"]],
        scorer="schema_aware" if schema_aware else "released",
        draws=draws,
    )


#: One canonical verdict per these columns (a plan under one judge and condition).
PLAN_KEY = ["judge", "generator", "record_id", "difficulty", "condition"]


def canonical_verdicts(draws: pd.DataFrame) -> pd.DataFrame:
    """One row per judge x plan x condition: per metric the median of the parsed draws' values.

    Why the median: it is a value some draw gave when K is odd (so a judge that answers on a
    grid stays on it, and a lone outlier draw cannot move the verdict), it is what a majority of
    draws is at least/at most, and for K = 1 it is the draw itself. For an even count the two
    middle values are averaged (the usual median; two draws 0 and 1 give 0.5, "undecided", the
    middle bin). A draw that omitted the metric does not vote on it; NaN when no draw reported it.
    Rows keep the order of ``draws`` (key order), programmatic scores and dag_type are the plan's.
    """
    grouped = draws.groupby(PLAN_KEY, sort=False, observed=True)
    first = grouped[[c for c in draws.columns if c not in (*PLAN_KEY, *L_COLS, "sample")]].first()
    medians = grouped[L_COLS].median()
    return first.join(medians).reset_index()


#: Columns of :func:`judgement_frame`, in order.
JUDGEMENT_COLUMNS = [
    "judge", "generator", "record_id", "difficulty", "condition", "dag_type", "status", "missing",
    *L_COLS, *P_COLS, *(f"mu_{m}" for m in METRICS), "alignment",
]  # fmt: skip


def judgement_frame(store: JudgeBenchStore, *, schema_aware: bool = False) -> pd.DataFrame:
    """One row per stored judge unit (judge x condition x plan), parsed or not.

    ``status`` is ``ok``, ``null`` (unparseable after retries) or ``error`` (infrastructure,
    retried on resume); ``l_*`` the judge's value per metric (NaN where the reply lacked it),
    ``missing`` how many it lacked; ``p_*`` the programmatic scores of the plan (NaN when the
    plan is not usable); ``mu_*`` and ``alignment`` (Eqs. 4a, 4b, in [0, 1]) only for ``ok``
    rows, computed as the analysis does (a missing metric counts 0). The analysis tables
    read the ``ok`` rows of this frame (:func:`load_evaluations`).
    """
    from tooldiag.metrics.agreement import metric_alignment

    records = store.records()
    judg = judgement_units(store)
    judg[L_COLS] = judg[L_COLS].astype(float)
    judg["missing"] = judg[L_COLS].isna().sum(axis=1).where(judg["status"] == "ok", 0).astype(int)
    judg["dag_type"] = judg["record_id"].map({rid: r.dag_type for rid, r in records.items()})
    scores = programmatic_scores(store, schema_aware=schema_aware).drop(columns=["dag_type"])
    frame = judg.merge(scores, on=KEY, how="left")
    ok = (frame["status"] == "ok").to_numpy() & frame[P_COLS].notna().all(axis=1).to_numpy()
    mu = np.full((len(frame), len(METRICS)), np.nan)
    if ok.any():
        mu[ok] = metric_alignment(frame.loc[ok, P_COLS].to_numpy(float), frame.loc[ok, L_COLS].to_numpy(float))
    for i, metric in enumerate(METRICS):
        frame[f"mu_{metric}"] = mu[:, i]
    frame["alignment"] = mu.mean(axis=1)
    frame = frame.sort_values(["judge", "generator", "record_id", "difficulty", "condition"], kind="stable")
    return frame[JUDGEMENT_COLUMNS].reset_index(drop=True)
