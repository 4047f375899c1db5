"""The run summary read from the stored JSON is the summary read through the models, byte for byte.

Real runs against the fake OpenAI server: scripted 429s and a 500 (retries by kind), a second
run through the response cache (cache hits) and ``--repeats 2`` (draws in ``samples``).
"""

from __future__ import annotations

import json

import tooldiag
from tests.support.fake_openai import FakeOpenAIServer, Reply
from tooldiag.models import ModelOptions
from tooldiag.store import RunStore
from tooldiag.store.usage import summarize_usage, usage_summary

FAST = {"retry_base_s": 0.001, "retry_max_s": 0.01}


def _through_models(store: RunStore):
    records = list(store.iter_samples())
    return summarize_usage(
        (record.trajectory for record in records),
        error_rows=sum(1 for record in records if record.status != "done"),
        sessions=store.sessions(),
    )


def _assert_same(run_dir):
    with RunStore.open(run_dir) as store:
        from_json, from_models = usage_summary(store), _through_models(store)
    assert json.dumps(from_json.to_json()) == json.dumps(from_models.to_json())
    assert from_json.lines() == from_models.lines()
    return from_json


def test_the_summary_from_json_matches_the_models_on_runs_with_retries_cache_hits_and_repeats(tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    with FakeOpenAIServer() as server:
        server.script(Reply.fail(429, "slow down"), Reply.fail(500, "oops"), Reply.fail(429, "slow down"))
        options = ModelOptions(base_url=server.base_url, cache=True, cache_path=cache, extra=dict(FAST))
        first = tooldiag.run_bfcl("openai/m", tmp_path / "a", categories=["miss_func"], limit=2, options=options)
        answered = server.request_count - 3
        again = tooldiag.run_bfcl(
            "openai/m", tmp_path / "b", categories=["miss_func"], limit=3, options=options, repeats=2
        )
    a = _assert_same(tmp_path / "a")
    b = _assert_same(tmp_path / "b")
    assert first.usage is not None and again.usage is not None
    printed = first.usage.to_json()  # what `run` printed at its end; `close` saved the wall time once more
    assert {**a.to_json(), "wall_s": None} == {**printed, "wall_s": None}
    assert a.retries == {"rate_limit": 2, "server": 1} and a.requests == answered and a.cache_hits == 0
    assert a.latency_median_s is not None and a.input_tokens is not None
    with RunStore.open(tmp_path / "b") as store:
        draws = sum(store.sample_counts().values())
    assert b.cases == draws == 6  # 3 cases x 2 draws, sample 1 in the samples table
    assert 0 < b.cache_hits < b.requests  # the first two cases' first draws came from the cache


def test_a_resumed_run_gives_the_same_summary_both_ways(tmp_path):
    tooldiag.run_bfcl("ref/overcall", tmp_path / "r", categories=["miss_func"], limit=2)
    tooldiag.run_bfcl("ref/overcall", tmp_path / "r", categories=["miss_func"], limit=4)
    summary = _assert_same(tmp_path / "r")
    assert (summary.cases, summary.sessions) == (4, 2)
