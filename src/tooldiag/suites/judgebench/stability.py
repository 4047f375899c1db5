"""How stable a judge's verdicts are across repeated draws (``judge --samples K``).

Why: a judge sampled at temperature > 0 can give one plan different verdicts on different
runs; a single run's alignment then hides how much of it is luck. Per judge and condition
(only where more than one draw is stored) the table reports, over the parsed draws:

* **flip rate**: the share of plan x metric units (with at least two parsed draws) whose
  outcome differs between draws. The outcome is the 3-bin verdict the agreement tables use
  (:func:`tooldiag.metrics.agreement.bin_verdicts`: ≤ 0.1, middle, ≥ 0.9), or "not reported"
  when a parsed reply omitted the metric (which the alignment scores as a miss, so a draw that
  omits it and one that scores it disagree). Null draws (unparseable after retries) are left
  out, as everywhere in the analysis; their rate is in the null table.
* **alpha**: Krippendorff's alpha (:mod:`tooldiag.metrics.krippendorff`) with the draws as raters
  and the plan x metric units as units, at the *interval* level on the raw values in [0, 1]:
  the alignment (1 - |p - ℓ|) reads the raw value as a number, so the draw-to-draw differences
  that move it are squared differences on that scale. Omitted metrics and null draws are missing
  values (alpha needs no complete data). 1 = every draw agrees; NaN when all values are equal.
* **alignment spread**: alignment (Eq. 5a, pp) of each (generator, difficulty) cell computed from
  one draw alone, averaged over the judge's cells, then the min, max and sample standard deviation
  (ddof = 1) of that figure across draws; ``cell_range_max`` is the largest max - min of any one
  cell across draws.

The main tables read the canonical verdict (median of the draws,
:func:`tooldiag.suites.judgebench.evaluations.canonical_verdicts`), not any single draw.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tooldiag.metrics.agreement import bin_verdicts, metric_alignment
from tooldiag.metrics.krippendorff import krippendorff_alpha
from tooldiag.metrics.structural import METRICS
from tooldiag.suites.judgebench.analysis import ordered
from tooldiag.suites.judgebench.conditions import CONDITIONS
from tooldiag.suites.judgebench.evaluations import L_COLS, P_COLS

STABILITY_COLUMNS = [
    "judge", "condition", "draws", "plans", "units", "flips", "flip_pct", "alpha",
    "alignment_min", "alignment_max", "alignment_sd", "cell_range_max",
]  # fmt: skip

#: Outcome code of a metric that a parsed draw did not report (bin_verdicts gives -1 for NaN).
NOT_REPORTED = -1


def stability_table(draws: pd.DataFrame) -> pd.DataFrame:
    """One row per judge x condition with more than one stored draw (columns :data:`STABILITY_COLUMNS`).

    ``draws`` has one row per parsed draw: the evaluation columns plus ``sample``.
    """
    rows = []
    groups = draws.groupby(["judge", "condition"], sort=False, observed=True).indices
    for judge in ordered(draws["judge"], []):
        for condition in ordered(draws["condition"], list(CONDITIONS)):
            idx = groups.get((judge, condition))
            if idx is None:
                continue
            sub = draws.iloc[idx]
            if sub["sample"].nunique() < 2:
                continue
            rows.append({"judge": judge, "condition": condition, **_stability(sub)})
    return pd.DataFrame(rows, columns=STABILITY_COLUMNS)


def draw_matrix(sub: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Judge values as ``(plans, metrics, draws)`` (NaN where missing) and which (plan, draw) parsed."""
    plan = sub.groupby(["generator", "record_id", "difficulty"], sort=True, observed=True).ngroup().to_numpy()
    draw = pd.factorize(sub["sample"], sort=True)[0]
    n_plans, n_draws = int(plan.max()) + 1, int(draw.max()) + 1
    values = np.full((n_plans, len(METRICS), n_draws), np.nan)
    values[plan, :, draw] = sub[L_COLS].to_numpy(float)
    parsed = np.zeros((n_plans, n_draws), dtype=bool)
    parsed[plan, draw] = True
    return values, parsed


def flips(values: np.ndarray, parsed: np.ndarray) -> tuple[int, int]:
    """(units with at least two parsed draws, those whose outcome differs between them)."""
    codes = bin_verdicts(values)  # NOT_REPORTED where a parsed draw omitted the metric
    mask = np.broadcast_to(parsed[:, None, :], codes.shape)
    n = mask.sum(axis=2)
    high = np.where(mask, codes, NOT_REPORTED - 1).max(axis=2)
    low = np.where(mask, codes, 3).min(axis=2)
    comparable = n >= 2
    return int(comparable.sum()), int((comparable & (high != low)).sum())


def _stability(sub: pd.DataFrame) -> dict[str, float | int]:
    values, parsed = draw_matrix(sub)
    units, flipped = flips(values, parsed)
    alpha = krippendorff_alpha(values.reshape(-1, values.shape[2]), "interval")
    record = metric_alignment(sub[P_COLS].to_numpy(float), sub[L_COLS].to_numpy(float)).mean(axis=1)
    cells = (
        pd.DataFrame({"generator": sub["generator"].to_numpy(), "difficulty": sub["difficulty"].to_numpy()})
        .assign(sample=sub["sample"].to_numpy(), alignment=100 * record)
        .pivot_table(index=["generator", "difficulty"], columns="sample", values="alignment", aggfunc="mean")
        .to_numpy(float)
    )
    per_draw = np.nanmean(cells, axis=0)
    return {
        "draws": int(values.shape[2]),
        "plans": int(values.shape[0]),
        "units": units,
        "flips": flipped,
        "flip_pct": 100 * flipped / units if units else np.nan,
        "alpha": alpha,
        "alignment_min": float(per_draw.min()),
        "alignment_max": float(per_draw.max()),
        "alignment_sd": float(per_draw.std(ddof=1)),
        "cell_range_max": float(np.nanmax(np.nanmax(cells, axis=1) - np.nanmin(cells, axis=1))),
    }
