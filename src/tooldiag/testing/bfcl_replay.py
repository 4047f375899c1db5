"""Replay BFCL ground truth over HTTP: record what ``ref/oracle`` answers to every
request of a set of cases, then let the fake OpenAI server answer those requests.

A run of ``openai/<anything>`` against that server must then produce the very same
requests, trajectories and grades as ``ref/oracle`` run offline: any difference is a
bug in the HTTP path (request building, response parsing, retries, caching). A
request the recording does not know is answered with HTTP 400, so drift is loud.

    python -m tooldiag.testing.bfcl_replay --out replay.jsonl --categories base,miss_func
    python -m tooldiag.testing.fake_openai --port 8000 --replay replay.jsonl
    tooldiag run bfcl --model openai/replay --base-url http://127.0.0.1:8000/base/v1 \
        --categories base --run-dir runs/replay-base

Each category is recorded under its own URL namespace (see ``ReplayTable``).
"""

from __future__ import annotations

import argparse
import asyncio
import json

from tooldiag.models import resolve_model
from tooldiag.models.base import ModelBackend, ModelRequest
from tooldiag.testing.fake_openai import Reply
from tooldiag.testing.replay import ReplayTable, request_key
from tooldiag.trajectory import Emission, GenerationConfig


class RecordingBackend(ModelBackend):
    """Passes requests to ``inner`` and records each answer under its request key."""

    def __init__(self, inner: ModelBackend, table: ReplayTable | None = None, namespace: str = "") -> None:
        self.inner = inner
        self.table = table if table is not None else ReplayTable()
        self.namespace = namespace
        #: Keys recorded twice with different answers (the replay would be ambiguous).
        self.conflicts: list[str] = []
        self.requests = 0

    async def complete(self, request: ModelRequest) -> Emission:
        emission = await self.inner.complete(request)
        self.requests += 1
        key = request_key([m.to_openai() for m in request.messages], [t.to_openai() for t in request.tools or []])
        reply = Reply(
            text=emission.text,
            tool_calls=[
                (c.name, c.raw_arguments if c.raw_arguments is not None else json.dumps(c.arguments or {}))
                for c in emission.tool_calls
            ],
            call_ids=[c.id for c in emission.tool_calls] or None,
            finish_reason=emission.finish_reason,
        )
        if self.table.add(self.namespace, key, reply) is not None:
            self.conflicts.append(key)
        return emission


async def record_policy(
    cases: list, policy: str = "oracle", generation: GenerationConfig | None = None, *, by_category: bool = True
) -> RecordingBackend:
    """Run ``ref/<policy>`` over ``cases`` (offline) and return the recorder.

    ``by_category``: record each category under its own namespace (served at
    ``http://HOST:PORT/<category>/v1``), because BFCL's variants of one case can open
    with identical requests whose ground truths differ.
    """
    from tooldiag.suites.bfcl.rollout import run_rollout

    recorder = RecordingBackend(resolve_model(f"ref/{policy}"))
    for case in cases:
        recorder.namespace = case.category if by_category else ""
        await run_rollout(case, recorder, generation or GenerationConfig(), None)
    return recorder


def main(argv: list[str] | None = None) -> None:
    from tooldiag.suites.bfcl.data import load_cases, normalise_category

    parser = argparse.ArgumentParser(description="Record ref/<policy> answers to BFCL cases for the fake server.")
    parser.add_argument("--out", required=True)
    parser.add_argument("--categories", default="base,long_context,miss_func,miss_param")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--policy", default="oracle")
    args = parser.parse_args(argv)
    categories = [normalise_category(c) for c in args.categories.split(",")]
    recorder = asyncio.run(record_policy(load_cases(categories, limit=args.limit), args.policy))
    if recorder.conflicts:
        raise SystemExit(
            f"{len(recorder.conflicts)} requests recorded with different answers; replay would be ambiguous"
        )
    recorder.table.save(args.out)
    print(f"recorded {recorder.requests} requests ({len(recorder.table)} distinct) to {args.out}")


if __name__ == "__main__":
    main()
