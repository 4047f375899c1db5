"""End to end: BFCL through the OpenAI-compatible provider over real HTTP, with the
fake server replaying ``ref/oracle``'s answers under injected faults, must store the
same trajectories and grades as ``ref/oracle`` run offline (issue 4, item 8)."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.bfcl_replay import record_policy
from tests.support.fake_openai import FakeOpenAIServer, FaultSpec
from tooldiag.models import ModelOptions
from tooldiag.store import RunStore
from tooldiag.suites.bfcl import CATEGORIES
from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.runner import run_bfcl_async
from tooldiag.trajectory import GenerationConfig, RunConfig

LIMIT = 3


def _actions(trajectory):
    """What the model did, step by step (latency, ids and raw bodies aside)."""
    return [
        [(step.emission.text, [(c.name, c.arguments) for c in step.emission.tool_calls]) for step in turn.steps]
        for turn in trajectory.turns
    ]


def _stored(run_dir):
    store = RunStore.open(run_dir)
    try:
        return {r.case_id: (r.status, r.passed, r.error_type, _actions(r.trajectory)) for r in store.iter_cases()}
    finally:
        store.close()


@pytest.mark.slow
def test_replayed_oracle_over_faulty_http_grades_like_the_oracle(tmp_path):
    recorder = asyncio.run(record_policy(load_cases(list(CATEGORIES), limit=LIMIT)))
    assert not recorder.conflicts
    faults = FaultSpec.parse("429=0.034,500=0.033,malformed=0.033,stall=0.03", stall_s=1.0, seed=1)
    generation = GenerationConfig(timeout_s=0.3)
    with FakeOpenAIServer(responder=recorder.table, faults=faults, record=False) as server:
        for category in CATEGORIES:
            http = RunConfig(
                suite="bfcl", model="openai/replay", categories=[category], limit=LIMIT, generation=generation
            )
            options = ModelOptions(
                base_url=f"{server.root_url}/{category}/v1",
                cache=False,
                concurrency=4,
                max_retries=10,
                extra={"retry_base_s": 0.001, "retry_max_s": 0.01},
            )
            summary = asyncio.run(run_bfcl_async(http, tmp_path / f"http-{category}", options))
            assert summary.errors == []
        outcomes = dict(server.outcomes)
    oracle = RunConfig(suite="bfcl", model="ref/oracle", categories=list(CATEGORIES), limit=LIMIT)
    asyncio.run(run_bfcl_async(oracle, tmp_path / "oracle"))

    expected = _stored(tmp_path / "oracle")
    got = {}
    for category in CATEGORIES:
        got.update(_stored(tmp_path / f"http-{category}"))
    assert len(expected) == LIMIT * len(CATEGORIES)
    assert got == expected
    assert all(passed for _, passed, _, _ in expected.values())
    assert recorder.table.misses == 0
    assert {"429", "500", "malformed", "stall"} <= set(outcomes), outcomes
