"""From a run directory to one evaluation table: judge values beside programmatic scores.

One row per parsed judge verdict, with columns

``judge, generator, difficulty, condition, record_id, dag_type, p_<metric>, l_<metric>``

for the four metrics (``p`` programmatic, ``l`` the judge's value, NaN when the reply lacked
the metric). Null verdicts (unparseable after retries) and unusable generator outputs are
*not* rows: they are counted in the attrition and null tables. The programmatic scores are
recomputed from the stored plans with the vectorised scorer (released formulas, or the
``schema_aware`` variant), always against the record's true reference.
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


def load_evaluations(store: JudgeBenchStore, *, schema_aware: bool = False) -> EvaluationData:
    """The evaluation table of a run directory."""
    records = store.records()
    dag = {rid: r.dag_type for rid, r in records.items()}
    preds = pd.DataFrame(
        store.predictions(status=None), columns=["generator", "record_id", "difficulty", "status", "calls", "error"]
    )
    preds = preds.drop(columns=["calls", "error"])
    preds["dag_type"] = preds["record_id"].map(dag)
    judg = pd.DataFrame(
        store.judgement_rows(),
        columns=["judge", "generator", "record_id", "difficulty", "condition", "status", *L_COLS],
    )
    judg["missing"] = judg[L_COLS].isna().sum(axis=1).where(judg["status"] == "ok", 0)
    scores = programmatic_scores(store, schema_aware=schema_aware)
    ok = judg[judg["status"] == "ok"]
    frame = ok.merge(scores, on=KEY, how="inner").drop(columns=["status", "missing"])
    frame = frame[["judge", "generator", "difficulty", "condition", "record_id", "dag_type", *P_COLS, *L_COLS]]
    return EvaluationData(
        frame=frame.reset_index(drop=True),
        predictions=preds,
        judgements=judg[["judge", "generator", "record_id", "difficulty", "condition", "status", "missing"]],
        scorer="schema_aware" if schema_aware else "released",
    )
