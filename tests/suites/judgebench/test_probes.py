"""Bias probes: the order rewrite, the order-change rate of reference judges, length bias, self-preference."""

from __future__ import annotations

import asyncio
import json
import random

import numpy as np
import pandas as pd
import pytest

from tooldiag.cli.main import main
from tooldiag.metrics.agreement import bin_verdicts
from tooldiag.metrics.effects import mean_differences, ols_slope
from tooldiag.metrics.structural import METRICS, score_plan
from tooldiag.models import resolve_model
from tooldiag.suites.judgebench.analysis import AnalysisSettings
from tooldiag.suites.judgebench.bias import (
    BiasInputs,
    length_bias,
    load_bias_inputs,
    model_family,
    order_change,
    self_preference,
)
from tooldiag.suites.judgebench.construct.topology import calls_with_outputs, dependency_edges
from tooldiag.suites.judgebench.evaluations import EvaluationData, load_evaluations
from tooldiag.suites.judgebench.generate import predict
from tooldiag.suites.judgebench.judge import judge_predictions
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.suites.judgebench.policies import perturb_plan
from tooldiag.suites.judgebench.probes import has_distinct_rewrite, order_rewrite, plan_seed
from tooldiag.suites.judgebench.report import analyze
from tooldiag.suites.judgebench.store import JudgeBenchStore

L = [f"l_{m}" for m in METRICS]
P = [f"p_{m}" for m in METRICS]


@pytest.fixture(scope="module")
def records():
    return load_records()


def _canon(call):
    return json.dumps([call["name"], call.get("arguments") or {}], sort_keys=True)


def _positions(reference, plan):
    """Reference call index -> position in ``plan`` of the first unused equal call (name and arguments)."""
    where, taken = {}, set()
    for r, ref in enumerate(reference):
        k = next((k for k, c in enumerate(plan) if k not in taken and _canon(c) == _canon(ref)), None)
        if k is not None:
            where[r] = k
            taken.add(k)
    return where


def _plans(record):
    """The reference plan and a few seeded perturbations of it (the generators' mistakes)."""
    tools = record.tool_specs()
    names = [t.name for t in tools]
    yield record.expected_calls()
    for k in range(4):
        yield perturb_plan(record.expected_calls(), names, tools, 0.5, random.Random(f"{record.id}:{k}"))


# --------------------------------------------------------------------------- the rewrite


def test_rewrite_keeps_dependencies_calls_and_programmatic_scores(records):
    seen = {"moved": 0, "keys_only": 0, "none": 0}
    for record in records:
        reference = record.expected_calls()
        ref_edges = dependency_edges(calls_with_outputs(record.expected_responses))
        for p, plan in enumerate(_plans(record)):
            for seed in range(3):
                rewrite = order_rewrite(record, plan, plan_seed(seed, "g", record.id, str(p)))
                if rewrite is None:
                    seen["none"] += 1
                    continue
                new = rewrite.calls
                # the same calls (name + arguments), only in another order / key order, and a distinct text
                assert sorted(map(_canon, new)) == sorted(map(_canon, plan))
                assert json.dumps(new) != json.dumps(plan)
                # every argument keeps its value; the keys are a permutation
                for k, i in enumerate(rewrite.order):
                    assert new[k]["arguments"] == plan[i]["arguments"]
                # programmatic scores identical (the per-plan reference scorer, not the batch one the probe uses)
                assert score_plan(reference, new) == score_plan(reference, plan)
                # reference dependencies respected: a call equal to a reference producer that came before
                # the call equal to its consumer still does (the generated plan itself may already break them)
                before, after = _positions(reference, plan), _positions(reference, new)
                for a, b in ref_edges:
                    if a in before and b in before and before[a] < before[b]:
                        assert after[a] < after[b], (record.id, a, b)
                seen["moved" if rewrite.moved_calls else "keys_only"] += 1
    # the built-in records exercise every outcome
    assert min(seen.values()) > 0, seen


def test_reference_plan_rewrite_is_a_topological_order_of_the_trace(records):
    for record in records:
        plan = record.expected_calls()
        edges = dependency_edges(calls_with_outputs(record.expected_responses))
        for seed in range(5):
            rewrite = order_rewrite(record, plan, seed)
            if rewrite is None:
                continue
            where = {i: k for k, i in enumerate(rewrite.order)}
            assert all(where[a] < where[b] for a, b in edges), record.id
            # the released sequence metric is positional: a full-score plan may only swap same-named calls
            assert [c["name"] for c in rewrite.calls] == [c["name"] for c in plan]


def test_no_distinct_rewrite_is_none_and_counted(records):
    lone = [r for r in records if order_rewrite(r, r.expected_calls(), 1) is None]
    assert lone  # at least one built-in plan has a single order and at most one key per call
    for record in lone:
        calls = record.expected_calls()
        assert all(len(c["arguments"]) <= 1 for c in calls)
        assert not has_distinct_rewrite(record, calls)
    two_keys = next(r for r in records if any(len(c["arguments"]) >= 2 for c in r.expected_calls()))
    assert has_distinct_rewrite(two_keys, two_keys.expected_calls())


def test_rewrite_is_seeded_per_plan(records):
    record = next(r for r in records if r.dag_type == "loop_like")
    plan = record.expected_calls()
    a = order_rewrite(record, plan, plan_seed(7, "gen", record.id, "easy"))
    b = order_rewrite(record, plan, plan_seed(7, "gen", record.id, "easy"))
    assert a == b and a is not None
    assert plan_seed(7, "gen", record.id, "easy") != plan_seed(8, "gen", record.id, "easy")


# --------------------------------------------------------------------------- reference judges end to end


def _out_of_order(expected, predicted):
    """The documented ref/jb-order rule, written out again: reference order of equal calls, keys in reference order."""
    remaining = [_canon(c) for c in expected]
    hits = []
    for call in predicted:
        if _canon(call) in remaining:
            r = remaining.index(_canon(call))
            hits.append(r)
            remaining[r] = None
    if hits != sorted(hits):
        return True
    first_keys = {}
    for call in expected:
        first_keys.setdefault(call["name"], list(call["arguments"]))
    for call in predicted:
        if call["name"] in first_keys:
            keys = [k for k in call["arguments"] if k in first_keys[call["name"]]]
            if keys != [k for k in first_keys[call["name"]] if k in call["arguments"]]:
                return True
    return False


def order_probed_store(folder, records) -> JudgeBenchStore:
    """Plans of ref/jb-oracle and ref/jb-sloppy for ``records``, judged with the reference by
    ref/jb-exact and ref/jb-order under the order probe (seed 42), in a new store in ``folder``."""
    store = JudgeBenchStore(folder / "run")
    for generator in ("ref/jb-oracle", "ref/jb-sloppy"):
        asyncio.run(predict(store, records, generator, resolve_model(generator)))
    for judge in ("ref/jb-exact", "ref/jb-order"):
        asyncio.run(
            judge_predictions(store, judge, resolve_model(judge), conditions=["with_gt"], probes=["order"], seed=42)
        )
    return store


@pytest.fixture(scope="module")
def probed(tmp_path_factory, records):
    store = order_probed_store(tmp_path_factory.mktemp("probe"), records)
    yield store
    store.close()


def test_exact_judge_order_change_rate_is_zero_and_order_judge_matches_hand_count(probed):
    records = probed.records()
    table = order_change(load_bias_inputs(probed)).set_index("judge")
    exact = table.loc["ref/jb-exact"]
    assert exact["changed"] == 0 and exact["change_rate_pct"] == 0 and exact["verdicts"] > 0

    changed = probed_plans = no_rewrite = 0
    for pred in probed.predictions(status="ok"):
        record = records[pred["record_id"]]
        rewrite = order_rewrite(
            record, pred["calls"], plan_seed(42, pred["generator"], pred["record_id"], pred["difficulty"])
        )
        if rewrite is None:
            no_rewrite += 1
            continue
        probed_plans += 1
        expected = record.expected_calls()
        sequence = score_plan(expected, pred["calls"]).sequence
        before = 0.0 if _out_of_order(expected, pred["calls"]) else sequence
        after = 0.0 if _out_of_order(expected, rewrite.calls) else sequence
        changed += int(bin_verdicts(np.array([before]))[0] != bin_verdicts(np.array([after]))[0])
    order = table.loc["ref/jb-order"]
    assert (order["probed"], order["no_rewrite"], order["verdicts"]) == (probed_plans, no_rewrite, 4 * probed_plans)
    assert order["changed"] == changed > 0
    assert order["change_rate_pct"] == pytest.approx(100 * changed / (4 * probed_plans))
    assert order["ci_low"] < order["change_rate_pct"] < order["ci_high"]
    assert order["sequence_change_pct"] == pytest.approx(100 * changed / probed_plans)


def test_probe_rows_are_their_own_variant_and_resume(probed):
    plain = load_evaluations(probed).frame
    assert len(plain) == len(probed.judgement_rows()) == 2 * len(probed.predictions(status="ok"))
    n_probe = len(probed.judgement_rows(variant="order"))
    summary = asyncio.run(
        judge_predictions(
            probed, "ref/jb-exact", resolve_model("ref/jb-exact"), conditions=["with_gt"], probes=["order"]
        )
    )
    assert summary.ran == 0 and summary.probe_no_rewrite == order_change(load_bias_inputs(probed))["no_rewrite"].iloc[0]
    assert len(probed.judgement_rows(variant="order")) == n_probe


def test_analyze_shows_bias_sections_only_with_data(probed):
    fast = AnalysisSettings(n_resamples=200, workers=1)
    data = load_evaluations(probed)
    with_probe = analyze(data, fast, bias_inputs=load_bias_inputs(probed)).tables
    assert {"order_change", "length_bias"} <= set(with_probe)
    assert "order_change" not in analyze(data, fast).tables


def test_cli_rejects_an_unknown_probe(tmp_path, capsys):
    run = str(tmp_path / "run")
    main(["judgebench", "predict", "-g", "ref/jb-oracle", "--run-dir", run, "--limit", "2", "-q"])
    with pytest.raises(SystemExit) as exc:
        main(["judgebench", "judge", "-j", "ref/jb-exact", "--run-dir", run, "--probe", "length", "-q"])
    assert exc.value.code == 2
    assert "unknown probe" in capsys.readouterr().err


# --------------------------------------------------------------------------- length bias


def _frame(n, rng, judge="j", generators=("g",)):
    return pd.DataFrame(
        {
            "judge": judge,
            "generator": [generators[i % len(generators)] for i in range(n)],
            "record_id": [f"r{i // 3}" for i in range(n)],
            "difficulty": [("easy", "medium", "hard")[i % 3] for i in range(n)],
            "condition": "with_gt",
            "dag_type": "linear",
        }
    )


def test_length_bias_recovers_a_known_slope_within_its_ci():
    rng = np.random.default_rng(3)
    n = 3000
    frame = _frame(n, rng)
    calls = rng.integers(1, 9, n)
    frame[P] = 1.0
    # error = 0.1 + 0.02 per call + noise, on every metric (never clipped): the judge under-credits longer plans
    error = 0.1 + 0.02 * calls + rng.normal(0, 0.02, n)
    assert (error > 0).all()
    frame[L] = (1.0 - error)[:, None] * np.ones((1, 4))
    features = frame[["generator", "record_id", "difficulty", "condition"]].copy()
    features["n_calls"] = calls
    features["n_args"] = 2 * calls + rng.integers(0, 3, n)
    features["prompt_ktokens"] = 0.5 + 0.1 * calls
    table = length_bias(frame, features).set_index("predictor")
    row = table.loc["n_calls"]
    assert row["ci_low"] < 2.0 < row["ci_high"]  # pp per call
    assert row["ci_low"] > 0 and row["trend"] == "error grows with size"
    assert table.loc["prompt_ktokens", "slope_pp"] == pytest.approx(20.0, rel=0.1)  # 2 pp per 0.1k tokens


def test_ols_slope_matches_statsmodels_hc1():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 10, 400)
    y = 1 + 0.3 * x + rng.normal(0, 0.2 + 0.1 * x)
    fit = ols_slope(x, y)
    ref = sm.OLS(y, sm.add_constant(x)).fit(cov_type="HC1")
    assert fit.slope == pytest.approx(ref.params[1], rel=1e-10)
    assert fit.se == pytest.approx(ref.bse[1], rel=1e-10)
    assert (fit.ci_low, fit.ci_high) == pytest.approx(tuple(ref.conf_int()[1]), rel=1e-9)
    assert np.isnan(ols_slope(np.ones(5), np.arange(5.0)).slope)


# --------------------------------------------------------------------------- self-preference


def test_model_family_rule():
    assert model_family("openai/gpt-5.4") == model_family("vllm/gpt-oss-120b") == "gpt"
    assert model_family("vllm/Qwen3-32B") == model_family("openai/QwQ-32B") == "qwen"
    assert model_family("anthropic/claude-sonnet-4.5") == "claude"
    assert model_family("x/custom", {"x/custom": "gpt"}) == "gpt"


@pytest.mark.parametrize(("shift", "direction"), [(0.1, "favours own family"), (-0.1, "disfavours own family")])
def test_self_preference_direction_and_ci(shift, direction):
    rng = np.random.default_rng(11)
    gens = ("openai/gpt-4o", "vllm/llama-3-70b", "vllm/mistral-large")
    n = 1200  # 400 records: a bootstrap CI (below bias.BOOTSTRAP_CLUSTERS)
    frame = _frame(n, rng, judge="openai/gpt-5.4", generators=gens)
    truth = rng.uniform(0, 1, (n, 4))
    frame[P] = truth
    own = (frame["generator"] == "openai/gpt-4o").to_numpy()
    frame[L] = truth + np.where(own, shift, 0.0)[:, None] + rng.normal(0, 0.05, (n, 4))
    table = self_preference(frame, n_resamples=500)
    assert set(table["generator"]) == {"openai/gpt-4o"}
    overall = table[table["metric"] == "all"].iloc[0]
    assert overall["direction"] == direction
    assert overall["ci_low"] < shift < overall["ci_high"]
    assert overall["n_own"] == own.sum() and overall["n_other"] == (~own).sum()
    # the shipped report carries the table, and the generator == judge check names a direction
    data = EvaluationData(frame=frame, predictions=pd.DataFrame(), judgements=pd.DataFrame())
    tables = analyze(data, AnalysisSettings(n_resamples=100, workers=1)).tables
    assert (tables["self_preference_family"]["direction"] == direction).sum() == 5


def test_cluster_bootstrap_and_its_normal_limit_agree():
    rng = np.random.default_rng(2)
    clusters_a, clusters_b = rng.integers(0, 400, 1500), rng.integers(0, 400, 1200)
    effect_a, effect_b = rng.normal(0, 0.2, 400), rng.normal(0, 0.2, 400)  # records differ: rows are not independent
    a = 0.1 + effect_a[clusters_a] + rng.normal(0, 0.1, 1500)
    b = effect_b[clusters_b] + rng.normal(0, 0.1, 1200)
    kw = {"clusters_a": clusters_a, "clusters_b": clusters_b, "n_resamples": 4000, "rng": 3}
    (boot,) = mean_differences(a, b, **kw)
    (normal,) = mean_differences(a, b, **kw, interval="normal")
    assert boot.difference == normal.difference
    width = boot.ci_high - boot.ci_low
    assert abs(boot.ci_low - normal.ci_low) < 0.1 * width and abs(boot.ci_high - normal.ci_high) < 0.1 * width
    (naive,) = mean_differences(a, b, n_resamples=4000, rng=3)  # rows as if independent: far too narrow
    assert naive.ci_high - naive.ci_low < 0.6 * width


def test_mean_differences_without_clusters_is_the_plain_difference():
    a, b = np.array([1.0, 2.0, 3.0, np.nan]), np.array([0.0, 1.0])
    (d,) = mean_differences(a, b, n_resamples=300, rng=1)
    assert (d.n_a, d.n_b, d.difference) == (3, 2, pytest.approx(1.5))
    assert d.ci_low <= d.difference <= d.ci_high
    (empty,) = mean_differences(a, np.array([np.nan]), n_resamples=10)
    assert np.isnan(empty.difference)


def test_bias_inputs_without_probe_give_no_order_table():
    assert order_change(BiasInputs()).empty
