"""The runners through the real OpenAI-compatible provider, against a fake server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.fake_openai import FakeOpenAIServer, RecordedRequest, Reply
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.suites.judgebench.evaluations import load_evaluations
from tooldiag.suites.judgebench.generate import generation_config, predict
from tooldiag.suites.judgebench.judge import judge_predictions
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.suites.judgebench.store import JudgeBenchStore


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLDIAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_generator_and_judge_over_http(tmp_path):
    records = load_records(limit=3)
    by_query = {r.query(d): r for r in records for d in ("easy", "hard")}
    judge_calls = {"n": 0}

    def responder(request: RecordedRequest) -> Reply:
        body = request.body
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if body.get("tools"):  # a generator request: answer with the reference plan as tool calls
            record = by_query[user]
            return Reply.call(*[(c["name"], c["arguments"]) for c in record.expected_calls()])
        judge_calls["n"] += 1
        if judge_calls["n"] % 5 == 1:  # every fifth reply is prose: the runner must retry it
            return Reply.say("The plan looks structurally sound overall.")
        verdict = {
            k: {"accuracy": 1.0, "justification": "ok"}
            for k in (
                "tool_selection_accuracy",
                "parameter_structure_accuracy",
                "sequence_accuracy",
                "query_coverage_accuracy",
            )
        }
        return Reply.say("<think>check each call</think>```json\n" + json.dumps(verdict) + "\n```")

    with FakeOpenAIServer(responder=responder) as server:
        options = ModelOptions(base_url=server.base_url, cache=False, max_retries=0)
        with JudgeBenchStore(tmp_path / "run") as store:
            summary = asyncio.run(
                predict(
                    store,
                    records,
                    "openai/fake-gen",
                    resolve_model("openai/fake-gen", options),
                    difficulties=["easy", "hard"],
                    config=generation_config(0.0, False),
                )
            )
            assert summary.statuses["ok"] == 6
            judged = asyncio.run(
                judge_predictions(
                    store,
                    "openai/fake-judge",
                    resolve_model("openai/fake-judge", options),
                    conditions=["with_gt", "without_gt"],
                    config=generation_config(0.15, None),
                    concurrency=1,
                )
            )
            assert judged.statuses[("with_gt", "ok")] == 6 and judged.statuses[("without_gt", "ok")] == 6
            assert judged.retried > 0
            data = load_evaluations(store)
        requests = [r.body for r in server.requests]

    generator_requests = [b for b in requests if b.get("tools")]
    judge_requests = [b for b in requests if not b.get("tools")]
    first = generator_requests[0]
    assert first["temperature"] == 0.0
    assert first["chat_template_kwargs"] == {"enable_thinking": False}
    assert first["messages"][0]["role"] == "system" and "single shot" in first["messages"][0]["content"]
    assert first["tool_choice"] == "auto"
    assert all(t["function"]["parameters"]["type"] == "object" for t in first["tools"])
    assert all(b["temperature"] == 0.15 and "chat_template_kwargs" not in b for b in judge_requests)
    with_gt = [b["messages"][0]["content"] for b in judge_requests if "REFERENCE PLAN" in b["messages"][0]["content"]]
    without = [
        b["messages"][0]["content"] for b in judge_requests if "REFERENCE PLAN" not in b["messages"][0]["content"]
    ]
    assert with_gt and without
    assert '"tool_calls"' in with_gt[0] and "step1" in with_gt[0]  # the reference conversation is shown
    assert all("step1" not in text for text in without)
    # the oracle-like plans score 1 everywhere, and the judge said 1.0: alignment 100
    assert len(data.frame) == 12
    assert (data.frame.filter(like="p_") == 1).all().all() and (data.frame.filter(like="l_") == 1).all().all()
