"""Bias analyses of judges: order-probe verdict changes, length bias, self-preference with its direction.

* **order change** (``order_change``): per judge × condition, the share of plan × metric whose
  3-bin verdict (≤ 0.1 → 0, ≥ 0.9 → 1, else 0.5) differs between the plan as generated
  (variant ``""``) and its ``order`` rewrite (:mod:`tooldiag.suites.judgebench.probes`), which
  keeps every programmatic score, so a perfect judge changes nothing. Wilson CI. Both verdicts
  are the first draw (sample 0) and must have parsed; a metric either reply lacks is not
  compared. Plans with no distinct rewrite (a single admissible order, no call with two keys)
  are counted in ``no_rewrite`` and are not in the denominator.
* **length bias** (``length_bias``): per judge × condition, the least-squares slope of the
  judge's error ``|ℓ - p|`` (mean over the metrics the reply has, in pp) against the plan's
  number of calls, its number of argument keys (summed over calls) and the prompt's length in
  tokens, each predictor on its own (they are strongly collinear, so a joint fit would split
  one effect between them arbitrarily), with an HC1 robust 95 % CI
  (:func:`tooldiag.metrics.effects.ols_slope`). Prompt tokens are approximated as
  ``len(prompt) / 4`` (characters of the rendered prompt over four, the usual rule of thumb
  for English and JSON with BPE tokenizers; no tokenizer is a dependency), rendered with the
  packaged template of the condition (a run with ``--prompts DIR`` is measured with the
  packaged text), the record's own reference (``corrupted_gt`` showed another record's:
  references of one DAG type have similar lengths), and for four-call Prometheus conditions
  the mean over the four metric prompts.
* **self-preference** (``self_preference_family``): per condition × judge × generator of the
  judge's *family*, the judge's mean signed error ``ℓ - p`` on that generator's outputs minus
  its mean signed error on the outputs of generators of other families (overall and per
  metric), with a 95 % CI that resamples records (every verdict of the judge on one record moves
  together, in each group apart): a percentile bootstrap up to :data:`BOOTSTRAP_CLUSTERS` records,
  above that its normal limit (the cluster-robust variance; the bootstrap would cost resamples ×
  records draws per judge × generator); ``direction`` says whether the judge favours (CI above 0) or
  disfavours (CI below 0) its own family, or shows no clear preference. Signed error rather
  than the raw judge value, so a better generator earning higher scores is not read as
  preference. A model's family is :func:`model_family`: the model name after the last ``/``,
  lower-cased, up to its first non-letter (``openai/gpt-5.4`` and ``vllm/gpt-oss-120b`` are
  ``gpt``, ``Qwen3-32B`` is ``qwen``; ``qwq`` counts as ``qwen``), or a mapping the caller
  passes. A judge and a generator with the same model string are always one family.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tooldiag.metrics.agreement import bin_verdicts, cell_rng, wilson_interval
from tooldiag.metrics.effects import mean_differences, ols_slope
from tooldiag.metrics.structural import METRICS
from tooldiag.suites.judgebench.conditions import CONDITIONS
from tooldiag.suites.judgebench.evaluations import L_COLS, P_COLS
from tooldiag.suites.judgebench.judge import openai_style
from tooldiag.suites.judgebench.probes import has_distinct_rewrite
from tooldiag.suites.judgebench.prompts import PromptTemplate, load_rubrics, load_template
from tooldiag.suites.judgebench.records import JudgeBenchRecord
from tooldiag.suites.judgebench.store import JudgeBenchStore

PLAN = ["generator", "record_id", "difficulty"]
UNIT = ["judge", *PLAN, "condition"]
#: Characters per token of the prompt-length rule.
CHARS_PER_TOKEN = 4
#: Family stems that name one family (a model line sold under two names).
FAMILY_ALIASES: dict[str, str] = {"qwq": "qwen"}
#: Predictors of the length-bias fit: column, what one unit of its slope is.
PREDICTORS: dict[str, str] = {"n_calls": "per call", "n_args": "per argument key", "prompt_ktokens": "per 1k tokens"}


@dataclass
class BiasInputs:
    """What the bias tables read from a store beyond the evaluation table."""

    #: One row per plan × condition: PLAN + condition, n_calls, n_args, prompt_ktokens.
    features: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: UNIT + l_* of the first draws of the plans as generated and of the order rewrites (ok only).
    base: pd.DataFrame = field(default_factory=pd.DataFrame)
    probe: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: PLAN + has_rewrite, for the plans the order probe saw (empty when no probe ran).
    rewritable: pd.DataFrame = field(default_factory=pd.DataFrame)


def model_family(model: str, families: Mapping[str, str] | None = None) -> str:
    """A model's family (module docstring); ``families`` maps model strings to families first."""
    if families and model in families:
        return families[model]
    name = model.rsplit("/", 1)[-1].lower()
    stem = re.match(r"[a-z]*", name)
    text = stem.group(0) if stem and stem.group(0) else name
    return FAMILY_ALIASES.get(text, text)


# --------------------------------------------------------------------------- loading


def _first_ok(rows: list[tuple], columns: tuple[str, ...]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(columns))
    frame = frame[(frame["sample"] == 0) & (frame["status"] == "ok")]
    frame = frame.rename(columns={m: f"l_{m}" for m in METRICS})
    return frame[[*UNIT, *L_COLS]].astype({c: float for c in L_COLS}).reset_index(drop=True)


class _PromptLength:
    """Characters of a rendered prompt, from the lengths of its parts (no rendering per plan).

    ``fixed`` is the template rendered with every placeholder empty; ``per[p]`` how often ``p``
    occurs, so ``len(render(values)) = fixed + Σ per[p]·len(values[p])`` exactly.
    """

    def __init__(self, template: PromptTemplate) -> None:
        empty = dict.fromkeys(template.placeholders, "")
        self.fixed = len(template.render(**empty))
        self.per = {p: len(template.render(**{**empty, p: "x"})) - self.fixed for p in template.placeholders}

    def chars(self, lengths: Mapping[str, float]) -> float:
        return self.fixed + sum(count * lengths.get(p, 0.0) for p, count in self.per.items())


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def plan_features(
    records: Mapping[str, JudgeBenchRecord], predictions: list[dict[str, Any]], conditions: list[str]
) -> pd.DataFrame:
    """Calls, argument keys and approximate prompt tokens (thousands) per plan × condition."""
    columns = [*PLAN, "condition", "n_calls", "n_args", "prompt_ktokens"]
    if not predictions or not conditions:
        return pd.DataFrame(columns=columns)
    lengths = {c: _PromptLength(load_template(CONDITIONS[c].template)) for c in conditions}
    rubric_extra: dict[str, float] = {}
    if any(CONDITIONS[c].per_metric for c in conditions):
        rubrics, _ = load_rubrics()
        for c in conditions:
            if CONDITIONS[c].per_metric:
                per = lengths[c].per
                extra = [
                    per.get("criterion", 0) * len(m.replace("_", " ")) + per.get("rubric", 0) * len(rubrics.get(m, ""))
                    for m in METRICS
                ]
                rubric_extra[c] = float(np.mean(extra))
    tools_len = {rid: len(_text(r.available_tools)) for rid, r in records.items()}
    reference_len = {rid: len(_text(r.expected_responses)) for rid, r in records.items()}
    rows = []
    for pred in predictions:
        record = records[pred["record_id"]]
        calls = pred["calls"] or []
        n_args = sum(len(c.get("arguments") or {}) if isinstance(c.get("arguments"), dict) else 0 for c in calls)
        parts = {
            "user_message": float(len(record.query(pred["difficulty"]) or "")),
            "available_tools": float(tools_len[record.id]),
            "generated_tool_calls": float(len(_text(openai_style(calls)))),
            "expected_responses": float(reference_len[record.id]),
        }
        for c in conditions:
            chars = lengths[c].chars(parts) + rubric_extra.get(c, 0.0)
            rows.append((*(pred[k] for k in PLAN), c, len(calls), n_args, chars / CHARS_PER_TOKEN / 1000))
    return pd.DataFrame(rows, columns=columns)


def load_bias_inputs(store: JudgeBenchStore) -> BiasInputs:
    """Plan features for every judged condition; the order probe's verdict pairs when it ran."""
    columns = store.JUDGEMENT_ROW_COLUMNS
    base = _first_ok(store.judgement_rows(variant=""), columns)
    probe = _first_ok(store.judgement_rows(variant="order"), columns)
    records = store.records()
    predictions = store.predictions(status="ok")
    conditions = [c for c in CONDITIONS if c in set(base["condition"])]
    rewritable = pd.DataFrame(columns=[*PLAN, "has_rewrite"])
    if len(probe):
        rewritable = pd.DataFrame(
            [
                (*(p[k] for k in PLAN), has_distinct_rewrite(records[p["record_id"]], p["calls"] or []))
                for p in predictions
            ],
            columns=[*PLAN, "has_rewrite"],
        )
    return BiasInputs(plan_features(records, predictions, conditions), base, probe, rewritable)


# --------------------------------------------------------------------------- order change

ORDER_COLUMNS = [
    "judge", "condition", "plans", "no_rewrite", "probed", "verdicts", "changed", "change_rate_pct",
    "ci_low", "ci_high", *(f"{m}_change_pct" for m in METRICS),
]  # fmt: skip


def order_change(inputs: BiasInputs, confidence: float = 0.95) -> pd.DataFrame:
    """The verdict change rate under the order probe per judge × condition (module docstring)."""
    if inputs.probe.empty:
        return pd.DataFrame(columns=ORDER_COLUMNS)
    pairs = inputs.base.merge(inputs.probe, on=UNIT, suffixes=("", "_order"))
    a = bin_verdicts(pairs[L_COLS].to_numpy(float))
    b = bin_verdicts(pairs[[f"{c}_order" for c in L_COLS]].to_numpy(float))
    compared = (a >= 0) & (b >= 0)
    changed = compared & (a != b)
    base = inputs.base.merge(inputs.rewritable, on=PLAN, how="left")
    base["no_rewrite"] = ~base["has_rewrite"].fillna(True).astype(bool)
    probed_keys = set(map(tuple, inputs.probe[["judge", "condition"]].drop_duplicates().to_numpy()))
    rows = []
    groups = pairs.groupby(["judge", "condition"], sort=False).indices
    for (judge, condition), sub in base.groupby(["judge", "condition"], sort=True):
        if (judge, condition) not in probed_keys:
            continue
        idx = groups.get((judge, condition), np.zeros(0, np.int64))
        n, k = int(compared[idx].sum()), int(changed[idx].sum())
        lo, hi = wilson_interval(k, n, confidence)
        per_metric = {
            f"{m}_change_pct": 100 * changed[idx, i].sum() / compared[idx, i].sum()
            if compared[idx, i].any()
            else np.nan
            for i, m in enumerate(METRICS)
        }
        rows.append(
            {
                "judge": judge,
                "condition": condition,
                "plans": len(sub),
                "no_rewrite": int(sub["no_rewrite"].sum()),
                "probed": len(idx),
                "verdicts": n,
                "changed": k,
                "change_rate_pct": 100 * k / n if n else np.nan,
                "ci_low": 100 * float(lo),
                "ci_high": 100 * float(hi),
                **per_metric,
            }
        )
    return _in_condition_order(pd.DataFrame(rows, columns=ORDER_COLUMNS))


def _in_condition_order(frame: pd.DataFrame) -> pd.DataFrame:
    rank = {c: i for i, c in enumerate(CONDITIONS)}
    key = frame["condition"].map(lambda c: rank.get(c, len(rank)))
    return frame.assign(_k=key).sort_values(["judge", "_k", "condition"], kind="stable").drop(columns="_k")


# --------------------------------------------------------------------------- length bias

LENGTH_COLUMNS = [
    "judge", "condition", "predictor", "unit", "n", "mean_error_pp", "predictor_mean", "slope_pp",
    "ci_low", "ci_high", "trend",
]  # fmt: skip


def _pooled(values: np.ndarray) -> np.ndarray:
    present = (~np.isnan(values)).sum(axis=1)
    with np.errstate(invalid="ignore"):
        return np.where(present > 0, np.nansum(values, axis=1) / np.maximum(present, 1), np.nan)


def length_bias(frame: pd.DataFrame, features: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Slope of the pooled judge error (pp) on each size predictor, per judge × condition."""
    if frame.empty or features.empty:
        return pd.DataFrame(columns=LENGTH_COLUMNS)
    work = frame[["judge", *PLAN, "condition"]].copy()
    work["error"] = 100 * _pooled(np.abs(frame[L_COLS].to_numpy(float) - frame[P_COLS].to_numpy(float)))
    work = work.merge(features, on=[*PLAN, "condition"], how="inner")
    rows = []
    for (judge, condition), sub in work.groupby(["judge", "condition"], sort=True):
        for predictor, unit in PREDICTORS.items():
            fit = ols_slope(sub[predictor].to_numpy(float), sub["error"].to_numpy(float), confidence)
            trend = (
                "error grows with size"
                if fit.ci_low > 0
                else "error shrinks with size"
                if fit.ci_high < 0
                else "no clear trend"
                if not np.isnan(fit.slope)
                else "predictor constant"
            )
            rows.append(
                {
                    "judge": judge,
                    "condition": condition,
                    "predictor": predictor,
                    "unit": unit,
                    "n": fit.n,
                    "mean_error_pp": float(sub["error"].mean()),
                    "predictor_mean": float(sub[predictor].mean()),
                    "slope_pp": fit.slope,
                    "ci_low": fit.ci_low,
                    "ci_high": fit.ci_high,
                    "trend": trend,
                }
            )
    return _in_condition_order(pd.DataFrame(rows, columns=LENGTH_COLUMNS))


# --------------------------------------------------------------------------- self-preference

#: Up to this many records (both groups) the self-preference CI is a record bootstrap; above, its normal limit.
BOOTSTRAP_CLUSTERS = 1000

SELF_COLUMNS = [
    "condition", "judge", "generator", "family", "metric", "n_own", "n_other", "own_error", "other_error",
    "difference", "ci_low", "ci_high", "direction",
]  # fmt: skip


def self_preference(
    frame: pd.DataFrame,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 42,
    families: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Same-family minus other-family mean signed error per condition × judge × family generator."""
    if frame.empty:
        return pd.DataFrame(columns=SELF_COLUMNS)
    err = frame[L_COLS].to_numpy(float) - frame[P_COLS].to_numpy(float)
    signed = np.column_stack([_pooled(err), err])
    names = ["all", *METRICS]
    generators = frame["generator"].to_numpy()
    records = pd.factorize(frame["record_id"])[0]
    generator_family = {g: model_family(str(g), families) for g in pd.unique(generators)}
    rows = []
    for (condition, judge), idx in sorted(frame.groupby(["condition", "judge"], sort=True).indices.items()):
        family = model_family(str(judge), families)
        gens = generators[idx]
        own_family = np.array([g == judge or generator_family[g] == family for g in gens])
        if own_family.all() or not own_family.any():
            continue
        other = idx[~own_family]
        for generator in sorted(set(gens[own_family])):
            mine = idx[gens == generator]
            rng = cell_rng(seed, f"self|{condition}|{judge}|{generator}")
            n_clusters = len(np.unique(records[mine])) + len(np.unique(records[other]))
            results = mean_differences(
                signed[mine],
                signed[other],
                clusters_a=records[mine],
                clusters_b=records[other],
                n_resamples=n_resamples,
                confidence=confidence,
                rng=rng,
                interval="bootstrap" if n_clusters <= BOOTSTRAP_CLUSTERS else "normal",
            )
            for metric, d in zip(names, results, strict=True):
                direction = (
                    "not measurable"
                    if np.isnan(d.difference)
                    else "favours own family"
                    if d.ci_low > 0
                    else "disfavours own family"
                    if d.ci_high < 0
                    else "no clear preference"
                )
                rows.append(
                    {
                        "condition": condition,
                        "judge": judge,
                        "generator": generator,
                        "family": family,
                        "metric": metric,
                        "n_own": d.n_a,
                        "n_other": d.n_b,
                        "own_error": d.mean_a,
                        "other_error": d.mean_b,
                        "difference": d.difference,
                        "ci_low": d.ci_low,
                        "ci_high": d.ci_high,
                        "direction": direction,
                    }
                )
    return pd.DataFrame(rows, columns=SELF_COLUMNS)


# --------------------------------------------------------------------------- all of them

#: Report sections of the bias tables (title, note), in report order.
BIAS_SECTIONS: dict[str, tuple[str, str]] = {
    "order_change": (
        "Order probe: verdict change rate",
        "Share of plan × metric whose 3-bin verdict changed when the plan was re-judged with independent calls in "
        "another valid order and argument keys reordered (programmatic scores unchanged, so any change is bias); "
        "Wilson 95 % CI; no_rewrite = plans with no distinct rewrite (not in the rate).",
    ),
    "length_bias": (
        "Length bias: judge error against plan size",
        "OLS slope of the judge's error |ℓ - p| (pp, mean over metrics) per call, per argument key and per 1k "
        "prompt tokens (len(prompt) / 4), each predictor alone; HC1 robust 95 % CI.",
    ),
    "self_preference_family": (
        "Self-preference by model family",
        "Mean signed error ℓ - p on a same-family generator's outputs minus on other families' outputs; "
        "95 % CI over records (bootstrap up to 1,000 records, normal limit above); favours own family = CI above 0.",
    ),
}

#: Number formats of the bias tables' markdown (the rest as the report's default).
BIAS_FORMATS: dict[str, dict[str, str]] = {
    "length_bias": {c: ".2f" for c in ("predictor_mean", "slope_pp", "ci_low", "ci_high")},
    "self_preference_family": {c: ".3f" for c in ("own_error", "other_error", "difference", "ci_low", "ci_high")},
}


def bias_tables(
    frame: pd.DataFrame,
    inputs: BiasInputs | None,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 42,
) -> dict[str, pd.DataFrame]:
    """The bias tables that have data: ``order_change``, ``length_bias``, ``self_preference_family``."""
    tables: dict[str, pd.DataFrame] = {}
    if inputs is not None and not inputs.probe.empty:
        tables["order_change"] = order_change(inputs, confidence)
    if inputs is not None and not inputs.features.empty:
        table = length_bias(frame, inputs.features, confidence)
        if not table.empty:
            tables["length_bias"] = table
    own = self_preference(frame, n_resamples=n_resamples, confidence=confidence, seed=seed)
    if not own.empty:
        tables["self_preference_family"] = own
    return {name: table.reset_index(drop=True) for name, table in tables.items()}
