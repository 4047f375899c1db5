"""``tooldiag run bfcl --repeats K``: draws per case, resume per draw, flip rates from their definition.

ref/oracle is deterministic: K draws, one verdict, flip rate 0. ref/coin answers each (case,
sample) as ref/overcall with probability q by a documented seeded coin; the test replays the
coins itself (sha256 of the documented text, the documented per-draw seed) and the verdicts of
ref/oracle and ref/overcall from one-draw runs, and so knows every draw's outcome in advance.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys

import pytest

import tooldiag
from tests.support.fake_openai import FakeOpenAIServer
from tooldiag.classify import get_classifier
from tooldiag.errors import UserError
from tooldiag.metrics.gar import Thresholds, emitted_gold
from tooldiag.models import ModelOptions
from tooldiag.report import render
from tooldiag.store import RunStore
from tooldiag.store.rundb import DB_NAME
from tooldiag.suites.bfcl.diagnostic import observations_from_store, report_from_run_dir
from tooldiag.suites.bfcl.ids import case_id_order
from tooldiag.suites.bfcl.policies import COIN_Q, coin_heads
from tooldiag.trajectory import GenerationConfig

MISSING = ["miss_func", "miss_param"]
CALIBRATION = {"bound_violation", "masking", "execution_failure"}


def _replayed_seed(seed: int, sample: int) -> int:
    """The documented seed of draw ``sample`` (GenerationConfig.for_sample), computed here."""
    if sample == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{sample}".encode()).digest()[:4], "big") >> 1


def _replayed_heads(seed: int, case_id: str, sample: int) -> bool:
    """ref/coin's documented coin (policies module docstring), computed here."""
    text = f"ref/coin:{_replayed_seed(seed, sample)}:{case_id}:{sample}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64 < 0.3


def _one_draw_outcomes(run_dir) -> dict[str, tuple[bool, bool]]:
    """Per case of a one-draw run: (passed, gold class emitted at any turn), read with the existing adapter."""
    with RunStore.open(run_dir) as store:
        cases, _, _ = observations_from_store(store, get_classifier("default"))
    return {case.case_id: (bool(case.passed), emitted_gold(case)) for case in cases}


def _report(run_dir, **kwargs):
    return report_from_run_dir(run_dir, get_classifier("default"), **kwargs)


def test_oracle_with_three_repeats_never_flips(tmp_path):
    summary = tooldiag.run_bfcl("ref/oracle", tmp_path / "o", limit=6, repeats=3)
    assert (summary.ran, summary.skipped, summary.repeats) == (72, 0, 3)
    report = _report(tmp_path / "o")
    assert report.repeats is not None and set(report.repeats) == set(report.categories)
    for cat in report.repeats.values():
        assert (cat.repeats, cat.n_cases, cat.flip_n_acc, cat.flip_n_gar) == (3, 6, 6, 6)
        assert cat.flip_rate_acc == cat.flip_rate_gar == 0.0
        assert cat.pass_k_acc == cat.pass_k_gar == (100.0, 100.0, 100.0)
        assert cat.acc.sd == cat.gar.sd == 0.0 and cat.noise_floor == 0.0
    md = render([report], "md")
    assert "## Repeats" in md and "0.0 (0/6)" in md
    data = json.loads(render([report], "json"))["runs"][0]
    assert data["repeats"]["miss_func"]["flip_rate_gar"] == 0.0 and data["repeats"]["base"]["pass_k_acc"] == [100.0] * 3
    # one case row per draw, with its sample; the verdict table counts draw 0 only
    samples = [(row.case_id, row.extra["sample"]) for row in report.cases]
    assert len(samples) == 72 and samples[:3] == [("multi_turn_base_0", s) for s in range(3)]
    assert "| ref/oracle | base | 0 | 0 | 6 | 0 | 0 |" in md


def test_coin_flip_rate_is_the_one_its_documented_draws_give(tmp_path):
    seed, k = 7, 3
    tooldiag.run_bfcl("ref/oracle", tmp_path / "oracle", categories=MISSING, limit=15)
    tooldiag.run_bfcl("ref/overcall", tmp_path / "overcall", categories=MISSING, limit=15)
    oracle, overcall = _one_draw_outcomes(tmp_path / "oracle"), _one_draw_outcomes(tmp_path / "overcall")
    generation = GenerationConfig(seed=seed)
    tooldiag.run_bfcl("ref/coin", tmp_path / "coin", categories=MISSING, limit=15, generation=generation, repeats=k)

    def outcome(case_id: str, sample: int) -> tuple[bool, bool]:
        return overcall[case_id] if _replayed_heads(seed, case_id, sample) else oracle[case_id]

    # every stored draw is the behaviour its coin chose
    with RunStore.open(tmp_path / "coin", sort_key=case_id_order) as store:
        stored = {(r.case_id, r.sample): r.passed for r in store.iter_samples()}
    assert len(stored) == 30 * k
    assert all(stored[(case_id, s)] == outcome(case_id, s)[0] for case_id, s in stored)
    assert all(coin_heads(_replayed_seed(seed, s), c, s) == _replayed_heads(seed, c, s) for c, s in stored)

    report = _report(tmp_path / "coin")
    assert report.repeats is not None
    for category in MISSING:
        ids = [case_id for case_id in oracle if f"_{category}_" in case_id]
        flips = [sum(len({outcome(case_id, s)[which] for s in range(k)}) > 1 for case_id in ids) for which in (0, 1)]
        summary = report.repeats[category]
        assert (summary.flips_acc, summary.flip_n_acc) == (flips[0], len(ids))
        assert (summary.flips_gar, summary.flip_n_gar) == (flips[1], len(ids))
    # the GAR of every miss_* case differs between oracle and overcall, so its flip rate
    # estimates 1 - q^K - (1-q)^K = 0.63: over 30 cases within 4 sd of that
    differing = [c for c in oracle if oracle[c][1] != overcall[c][1]]
    assert len(differing) == 30
    expected = 1 - COIN_Q**k - (1 - COIN_Q) ** k
    observed = sum(report.repeats[c].flips_gar for c in MISSING) / 30
    assert abs(observed - expected) < 4 * (expected * (1 - expected) / 30) ** 0.5
    assert report.repeats["miss_param"].flip_rate_gar > 0  # the stochastic policy does flip


def test_the_documented_coin_is_bernoulli_q():
    draws = [
        _replayed_heads(seed, f"multi_turn_base_{i}", s) for seed in range(10) for i in range(50) for s in range(4)
    ]
    assert abs(sum(draws) / len(draws) - COIN_Q) < 0.03  # 2000 draws: sd 0.010


def test_resume_runs_only_the_missing_draws_and_raising_k_adds_samples(tmp_path):
    run_dir, kwargs = tmp_path / "r", {"categories": ["miss_param"], "limit": 3}
    first = tooldiag.run_bfcl("ref/coin", run_dir, repeats=2, **kwargs)
    assert (first.ran, first.skipped) == (6, 0)
    more = tooldiag.run_bfcl("ref/coin", run_dir, repeats=3, **kwargs)
    assert (more.ran, more.skipped) == (3, 6)
    # lose two draws, as a kill before their commit would, and mark one an error row
    with sqlite3.connect(run_dir / DB_NAME) as conn:
        conn.execute("DELETE FROM samples WHERE case_id = 'multi_turn_miss_param_1' AND sample = 2")
        conn.execute("DELETE FROM cases WHERE case_id = 'multi_turn_miss_param_2'")
        conn.execute("UPDATE samples SET status = 'error', passed = NULL WHERE case_id = 'multi_turn_miss_param_0'")
    resumed = tooldiag.run_bfcl("ref/coin", run_dir, repeats=3, **kwargs)
    assert (resumed.ran, resumed.skipped) == (4, 5)  # 2 lost + 2 error rows of case 0 (samples 1, 2)
    fresh = tooldiag.run_bfcl("ref/coin", tmp_path / "fresh", repeats=3, **kwargs)
    assert fresh.ran == 9

    def rows(path):
        with RunStore.open(path) as store:
            return [(r.case_id, r.sample, r.status, r.passed, r.trajectory) for r in store.iter_samples()]

    assert rows(run_dir) == rows(tmp_path / "fresh")
    assert resumed.counts == fresh.counts == {"miss_param": fresh.counts["miss_param"]}
    assert fresh.counts["miss_param"]["done"] == 9


def test_workers_run_the_same_case_sample_units(tmp_path):
    kwargs = {"categories": ["base", "miss_param"], "limit": 4, "repeats": 2}
    one = tooldiag.run_bfcl("ref/coin", tmp_path / "one", **kwargs)
    two = tooldiag.run_bfcl("ref/coin", tmp_path / "two", workers=2, **kwargs)
    assert two.workers == 2 and one.ran == two.ran == 16

    def units(path):
        with RunStore.open(path, sort_key=case_id_order) as store:
            return [(r.case_id, r.sample, r.passed, r.trajectory) for r in store.iter_samples()]

    assert units(tmp_path / "one") == units(tmp_path / "two")


def test_one_draw_runs_keep_their_config_schema_and_report(tmp_path):
    tooldiag.run_bfcl("ref/oracle", tmp_path / "r", categories=["miss_func"], limit=2)
    with sqlite3.connect(tmp_path / "r" / DB_NAME) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        config = json.loads(dict(conn.execute("SELECT key, value FROM meta"))["config"])
    assert tables == {"meta", "cases"} and "repeats" not in config
    report = _report(tmp_path / "r")
    assert report.repeats is None and all("sample" not in row.extra for row in report.cases)
    assert "## Repeats" not in render([report], "md")
    assert "repeats" not in json.loads(render([report], "json"))["runs"][0]
    assert "sample" not in tooldiag.load_cases(tmp_path / "r").columns


def test_case_rows_of_a_repeats_run_carry_the_sample(tmp_path):
    tooldiag.run_bfcl("ref/coin", tmp_path / "r", categories=["miss_param"], limit=2, repeats=3)
    rows = tooldiag.case_rows(tmp_path / "r")
    assert [(row.case_id, row.extra["sample"]) for row in rows] == [
        (f"multi_turn_miss_param_{i}", s) for i in range(2) for s in range(3)
    ]
    frame = tooldiag.load_cases(tmp_path / "r")
    assert list(frame["sample"]) == [0, 1, 2, 0, 1, 2]


def test_noise_aware_keeps_only_the_flags_that_survive(tmp_path):
    generation = GenerationConfig(seed=3)
    tooldiag.run_bfcl("ref/coin", tmp_path / "r", categories=MISSING, limit=10, generation=generation, repeats=3)
    plain, aware = _report(tmp_path / "r"), _report(tmp_path / "r", thresholds=Thresholds(noise_aware=True))
    assert plain.repeats is not None
    dropped = 0
    for name, summary in plain.categories.items():
        kept = aware.categories[name].flags
        surviving = set(plain.repeats[name].surviving)
        assert set(kept) <= set(summary.flags)
        assert {f for f in summary.flags if f in CALIBRATION and f not in surviving}.isdisjoint(kept)
        assert {f for f in summary.flags if f not in CALIBRATION or f in surviving} <= set(kept)
        dropped += len(summary.flags) - len(kept)
    assert dropped > 0  # this seed's draws disagree enough that some draw-0 flag does not survive


def test_the_cache_keys_on_the_sample_and_draw_zero_keeps_the_one_draw_key(tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    generation = GenerationConfig(seed=5)
    with FakeOpenAIServer() as server:
        options = ModelOptions(base_url=server.base_url, cache=True, cache_path=cache)
        kwargs = {"categories": ["miss_func"], "limit": 1, "generation": generation, "options": options}
        one = tooldiag.run_bfcl("openai/m", tmp_path / "one", **kwargs)
        asked = server.request_count
        two = tooldiag.run_bfcl("openai/m", tmp_path / "two", repeats=2, **kwargs)
        new_requests = server.requests[asked:]
        again = tooldiag.run_bfcl("openai/m", tmp_path / "again", repeats=2, **kwargs)
        assert server.request_count == asked + len(new_requests)  # the second repeats run asked nothing
    assert one.usage is not None and two.usage is not None and again.usage is not None
    assert two.usage.cache_hits == one.usage.requests  # draw 0 hit the one-draw run's answers
    assert len(new_requests) == two.usage.requests - one.usage.requests > 0  # draw 1 was asked anew
    assert {request.body.get("seed") for request in new_requests} == {_replayed_seed(5, 1)}
    assert again.usage.cache_hits == again.usage.requests == two.usage.requests


def test_cli_repeats_option_and_bad_values(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", "ref/oracle", "--run-dir", str(tmp_path / "r"),
         "--repeats", "0", "-q"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    with pytest.raises(UserError, match="--repeats must be 1 or more"):
        tooldiag.run_bfcl("ref/oracle", tmp_path / "s", repeats=0)
    assert not (tmp_path / "s").exists()
