"""Speed of the judge-reliability analysis at AgentJudgeBench scale (paper 000).

Synthesises an evaluation table of 6 judges × 5 generators × 3 difficulties × 2 conditions
and times ``tooldiag.suites.judgebench.report.analyze`` on it: every cell with its 2,000-resample
stratified bootstrap CI, paired GT-lift CIs, decision guide, per-metric and per-DAG tables,
inter-judge κ and confusion matrices, binary collapse, soft jury (with its own bootstrap),
re-weighting, bias and self-preference, attrition and null tables.

Two scales:

* ``rows`` (default): 321,648 verdict rows, the paper's headline count read literally
  (26,804 usable generator outputs × 6 judges × 2 conditions);
* ``paired``: the paper's 321,648 *paired* evaluations, i.e. 53,608 usable generator outputs
  (3,808 records × 15 generator-difficulty inputs, 93.8 % usable) × 6 judges × 2 conditions
  = 643,296 verdict rows.

Programmatic scores come from random plans scored with the vectorised scorer (timed apart).
Usage: ``uv run python bench/judgebench_analysis.py [--scale rows|paired] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

from tooldiag.metrics.structural import score_plans
from tooldiag.suites.judgebench.analysis import AnalysisSettings
from tooldiag.suites.judgebench.evaluations import L_COLS, P_COLS, EvaluationData
from tooldiag.suites.judgebench.report import analyze

JUDGES = ["qwq_32b", "gpt_oss_20b", "gpt_oss_120b", "gpt_5_4", "claude_large", "gemini_2_5_pro"]
GENERATORS = ["smollm3_3b", "llama_3_1_8b", "qwen3_32b", "llama_3_3_70b", "gpt_5_4"]
DIFFICULTIES = ["easy", "medium", "hard"]
CONDITIONS = ["with_gt", "without_gt"]
DAGS = ["linear", "fan_out", "fan_in", "diamond", "optional_enrichment", "loop_like"]
DAG_WEIGHTS = np.array([812, 399, 1049, 501, 823, 224]) / 3808

SCALES = {"rows": (1906, 26_804), "paired": (3808, 53_608)}


def random_plans(n: int, rng: np.random.Generator, quality: np.ndarray) -> tuple[list, list]:
    """Expected plans of 2-5 calls and predictions perturbed more where ``quality`` is low."""
    tools = [f"t{i}" for i in range(14)]
    keys = ["a", "b", "c", "d"]
    expected, predicted = [], []
    for i in range(n):
        names = rng.choice(tools, size=rng.integers(2, 6), replace=False)
        plan = [
            {"name": str(t), "arguments": dict.fromkeys(rng.choice(keys, size=rng.integers(0, 3), replace=False), 1)}
            for t in names
        ]
        pred = [dict(c, arguments=dict(c["arguments"])) for c in plan]
        q = quality[i]
        if rng.random() > q and len(pred) > 1:
            pred.pop(int(rng.integers(len(pred))))
        if rng.random() > q and len(pred) > 1:
            j = int(rng.integers(len(pred) - 1))
            pred[j], pred[j + 1] = pred[j + 1], pred[j]
        if rng.random() > q:
            pred[int(rng.integers(len(pred)))]["name"] = str(rng.choice(tools))
        if rng.random() > q:
            pred[int(rng.integers(len(pred)))]["arguments"]["extra"] = 1
        expected.append(plan)
        predicted.append(pred)
    return expected, predicted


def synthesise(scale: str, seed: int = 0) -> tuple[EvaluationData, float]:
    n_records, usable = SCALES[scale]
    rng = np.random.default_rng(seed)
    dag_of = rng.choice(DAGS, size=n_records, p=DAG_WEIGHTS)
    inputs = pd.DataFrame(
        [(g, f"rec{r:05d}", d) for g in GENERATORS for d in DIFFICULTIES for r in range(n_records)],
        columns=["generator", "record_id", "difficulty"],
    )
    inputs["dag_type"] = dag_of[inputs["record_id"].str[3:].astype(int).to_numpy()]
    lost = rng.choice(len(inputs), size=len(inputs) - usable, replace=False)
    status = np.full(len(inputs), "ok", dtype=object)
    status[lost] = np.where(rng.random(len(lost)) < 0.8, "unparseable", "empty")
    predictions = inputs.assign(status=status)
    ok = inputs[status == "ok"].reset_index(drop=True)

    gen_skill = ok["generator"].map(dict(zip(GENERATORS, [0.55, 0.7, 0.75, 0.85, 0.92], strict=True))).to_numpy()
    diff_drop = ok["difficulty"].map({"easy": 0.0, "medium": 0.08, "hard": 0.18}).to_numpy()
    expected, predicted = random_plans(len(ok), rng, gen_skill - diff_drop)
    t0 = time.perf_counter()
    p = score_plans(expected, predicted)
    scoring_s = time.perf_counter() - t0

    blocks = []
    for j, judge in enumerate(JUDGES):
        for condition in CONDITIONS:
            noise = 0.18 + 0.03 * j + (0.06 if condition == "without_gt" else 0.0)
            lean = 0.1 if condition == "without_gt" else 0.0  # without GT, verdicts drift toward 1.0
            raw = p + rng.normal(lean, noise, p.shape) + 0.25 * diff_drop[:, None] * rng.standard_normal(p.shape)
            ell = np.clip(np.round(raw * 2) / 2, 0.0, 1.0)
            ell[rng.random(p.shape) < 0.004] = np.nan  # a metric missing from a parsed reply
            block = ok.copy()
            block.insert(0, "judge", judge)
            block["condition"] = condition
            block[P_COLS] = p
            block[L_COLS] = ell
            blocks.append(block)
    frame = pd.concat(blocks, ignore_index=True)[
        ["judge", "generator", "difficulty", "condition", "record_id", "dag_type", *P_COLS, *L_COLS]
    ]
    judgements = frame[["judge", "generator", "record_id", "difficulty", "condition"]].assign(
        status="ok", missing=frame[L_COLS].isna().sum(axis=1)
    )
    nulls = judgements.sample(frac=0.033, random_state=seed).assign(status="null", missing=0)
    data = EvaluationData(
        frame=frame, predictions=predictions, judgements=pd.concat([judgements, nulls], ignore_index=True)
    )
    return data, scoring_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="rows")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="Time the analysis this many times; report the best.")
    args = parser.parse_args()
    t0 = time.perf_counter()
    data, scoring_s = synthesise(args.scale)
    build_s = time.perf_counter() - t0
    frame = data.frame
    print(
        f"scale {args.scale}: {len(frame):,} verdict rows = {frame['judge'].nunique()} judges x "
        f"{frame['generator'].nunique()} generators x {frame['difficulty'].nunique()} difficulties x "
        f"{frame['condition'].nunique()} conditions over {len(frame) // 12:,} usable generator outputs"
    )
    print(f"synthesis {build_s:.1f} s (of which vectorised scoring of {len(frame) // 12:,} plans: {scoring_s:.2f} s)")
    times, cpu = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = analyze(data, AnalysisSettings(n_resamples=args.resamples, workers=args.workers))
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    cells = report.tables["cells"]
    half = (cells["ci_high"] - cells["ci_low"]) / 2
    print(
        f"analysis with all bootstrap CIs ({len(cells)} cells x {args.resamples} stratified resamples, "
        f"{args.workers} threads, {os.cpu_count()} CPUs): wall best {min(times):.2f} s of {len(times)}, "
        f"CPU {min(cpu):.2f} s"
    )
    print(f"CI half-width per cell: median {half.median():.2f} pp, max {half.max():.2f} pp")
    lift = report.tables["contrasts"]
    print(
        lift[lift["contrast"] == "gt_lift"][["judge", "delta_pp", "ci_low", "ci_high"]].round(2).to_string(index=False)
    )


if __name__ == "__main__":
    main()
