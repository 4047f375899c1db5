"""Under injected faults (10 % 429/500/malformed, 3 % stalls past the timeout) every
request still gets its answer, and the fake server's draws are reproducible."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.fake_openai import FakeOpenAIServer, FaultSpec, Reply
from tooldiag.models import resolve_model
from tooldiag.trajectory import GenerationConfig, Message

FAULTS = "429=0.034,500=0.033,malformed=0.033,stall=0.03"


def test_every_request_succeeds_through_faults(options):
    spec = FaultSpec.parse(FAULTS, stall_s=2.0, seed=7)
    with FakeOpenAIServer(
        faults=spec, responder=lambda request: Reply.say(request.body["messages"][0]["content"])
    ) as server:
        backend = resolve_model("openai/m", options(base_url=server.base_url, concurrency=16, max_retries=8))
        config = GenerationConfig(timeout_s=1.0)  # a whole-request deadline: room for a loaded machine

        async def go():
            prompts = [f"case {i}" for i in range(200)]
            results = await asyncio.gather(
                *(backend.generate([Message(role="user", content=p)], config=config) for p in prompts)
            )
            await backend.aclose()
            return prompts, results

        prompts, results = asyncio.run(go())
        outcomes = dict(server.outcomes)
    assert [r.text for r in results] == prompts  # each answer belongs to its request
    assert outcomes["ok"] == 200
    for fault in ("429", "500", "malformed", "stall"):
        assert outcomes.get(fault, 0) > 0, outcomes
    assert server.max_in_flight <= 16


def test_fault_draws_depend_on_seed_body_and_occurrence_only():
    spec = FaultSpec.parse(FAULTS, stall_s=0.01, seed=3)
    assert spec.draw(0.01).status == 429 and spec.draw(0.99) is None

    def outcomes(order, seed=3):
        with FakeOpenAIServer(faults=FaultSpec.parse(FAULTS, stall_s=0.01, seed=seed)) as server:
            with httpx.Client() as client:
                for i in order:
                    body = {"model": "m", "messages": [{"role": "user", "content": str(i)}]}
                    client.post(server.base_url + "/chat/completions", json=body, timeout=5)
            return {r.body["messages"][0]["content"]: r.outcome for r in server.requests}

    forward = outcomes(range(80))
    assert forward == outcomes(reversed(range(80)))  # arrival order does not matter
    assert set(forward.values()) - {"ok"}  # some faults were drawn...
    assert forward != outcomes(range(80), seed=4)  # ...and the seed decides which


def test_runs_as_a_script():
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_openai", "--port", "0", "--latency-ms", "1"],
        cwd=root,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:")
        base_url = line.split()[-1]
        tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [tool]}
        started = time.time()
        answer = httpx.post(base_url + "/chat/completions", json=body, timeout=5).json()
        assert time.time() - started < 5
        assert answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "lookup"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
