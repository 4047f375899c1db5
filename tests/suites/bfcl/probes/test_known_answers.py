"""Known-answer tests: reference policies whose probe shifts are known in advance.

* ref/oracle never triggers a probe: every probe run equals the baseline case by case
  and every shift is exactly 0;
* ref/halt-recoverable halts after one call and completes the turn when reconciled:
  SRI raises Acc and never turns a pass into a fail;
* ref/overcall calls where it should ask or refuse: CRI-bypass removes the suspect
  calls without lowering Acc, and GAR under reading A (placeholder excluded) does not
  move while reading B (placeholder counted) moves by the fired rate on miss_func;
* ref/overcall-heeding refuses/asks when told: CRI-retry moves GAR to the fired rate.
"""

import pytest

from tooldiag.suites.bfcl.probes import PROBE_SPECS
from tooldiag.suites.bfcl.probes.analysis import compare, differing_cases, load_run
from tooldiag.suites.bfcl.probes.report import build_probe_report, tidy_rows
from tooldiag.suites.bfcl.runner import run_bfcl

CATS = ["base", "long_context", "miss_func", "miss_param"]


def run(tmp, model, probe, categories=CATS, limit=3):
    name = f"{model.replace('/', '_')}_{(probe or 'baseline').replace(':', '_')}"
    summary = run_bfcl(model, tmp / name, categories=categories, limit=limit, probe=probe)
    assert not summary.errors
    return load_run(tmp / name)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("known")


def test_probes_never_fire_on_the_oracle_and_change_nothing(tmp):
    baseline = run(tmp, "ref/oracle", None)
    for spec in PROBE_SPECS:
        probe_run = run(tmp, "ref/oracle", spec)
        assert differing_cases(probe_run, baseline) == [], spec
        assert not any(c.fired or c.detector_fired for c in probe_run.cases.values()), spec
        comparison = compare(probe_run, baseline)
        assert [c.category for c in comparison.categories] == CATS
        for cat in comparison.categories:
            assert (cat.gar_shift, cat.acc_shift, cat.changed, cat.probe.fired) == (0.0, 0.0, 0, 0), (
                spec,
                cat.category,
            )
        assert comparison.acc_shift == 0.0 and comparison.acc == 100.0


def test_sri_recovers_a_halting_policy(tmp):
    cats = ["base", "long_context"]
    baseline = run(tmp, "ref/halt-recoverable", None, cats, limit=10)
    sri = run(tmp, "ref/halt-recoverable", "sri", cats, limit=10)
    comparison = compare(sri, baseline)
    for cat in comparison.categories:
        assert cat.acc_shift > 0 and cat.pass_to_fail == 0 and cat.fail_to_pass > 0
        assert cat.gar_shift == 0.0 and cat.probe.gar == 100.0  # tool_call was emitted all along
        assert cat.probe.fired_rate > 0
    assert "multi_turn_base_1" in {cid for cid in sri.cases if sri.cases[cid].passed and not baseline.cases[cid].passed}


def test_cri_bypass_removes_overcalls_without_lowering_acc_and_both_readings(tmp):
    cats = ["miss_func", "miss_param"]
    baseline = run(tmp, "ref/overcall", None, cats, limit=10)
    bypass = run(tmp, "ref/overcall", "cri-bypass", cats, limit=10)
    reading_a, reading_b = compare(bypass, baseline, "A"), compare(bypass, baseline, "B")
    for cat in reading_a.categories:
        assert cat.acc_shift >= 0 and cat.pass_to_fail == 0
        assert cat.probe.fired > 0
        # reading A: the placeholder is not a model emission; overcall never asks or refuses
        assert cat.probe.gar == 0.0 and cat.gar_shift == 0.0
    mf_b, mp_b = reading_b.category("miss_func"), reading_b.category("miss_param")
    # reading B: the placeholder classifies as refuse, so miss_func GAR equals the fired rate ...
    assert mf_b.probe.gar == mf_b.probe.fired_rate > 0 and mf_b.gar_shift == mf_b.probe.fired_rate
    # ... and on miss_param (gold ask) it collapses to reading A
    assert mp_b.probe.gar == reading_a.category("miss_param").probe.gar == 0.0
    assert reading_a.acc_shift > 0

    report = build_probe_report([bypass], [baseline])
    metrics = {(r["category"], r["metric"]): r["value"] for r in tidy_rows(report)}
    assert metrics[("miss_func", "gar_reading_a")] == 0.0
    assert metrics[("miss_func", "gar_reading_b")] == mf_b.probe.gar
    assert ("miss_func", "gar") not in metrics  # bypass GAR is never reported as plain GAR
    table4 = next(t for t in report.tables if t.key == "table4")
    assert table4.records[0]["miss_func_gar_retry"] is None  # GAR only from a cri-retry run
    assert table4.records[0]["miss_func_acc_bypass"] == reading_a.category("miss_func").probe.acc


def test_cri_retry_moves_gar_of_a_heeding_policy(tmp):
    cats = ["miss_func", "miss_param"]
    baseline = run(tmp, "ref/overcall-heeding", None, cats, limit=10)
    retry = run(tmp, "ref/overcall-heeding", "cri-retry", cats, limit=10)
    comparison = compare(retry, baseline)
    for cat in comparison.categories:
        assert cat.baseline.gar == 0.0
        assert cat.probe.gar == cat.probe.fired_rate > 0 and cat.gar_shift > 0
    report = build_probe_report([retry], [baseline])
    table4 = next(t for t in report.tables if t.key == "table4")
    assert table4.records[0]["miss_func_gar_retry"] == comparison.category("miss_func").probe.gar
    table10 = next(t for t in report.tables if t.key == "table10")
    assert table10.records[0]["miss_func_acc_shift"] == comparison.category("miss_func").acc_shift
