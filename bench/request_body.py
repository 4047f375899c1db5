"""CPU of building one request body (``OpenAICompatBackend.build_request``), in process.

Recorded BFCL multi-turn requests (``harness_overhead.bfcl_requests``: ``ref/oracle`` on 8
base cases), each case's tool list passed as the same list object on every step, as the
rollout passes it; best of 5 rounds of 20 passes. Issue 16: the case's tool list is encoded
once per case (``models/body_encoding.py``), not on every step.

    uv run python bench/request_body.py
"""

from __future__ import annotations

import time

import machine
from harness_overhead import bfcl_requests
from tooldiag.models import ModelOptions
from tooldiag.models.base import ModelRequest
from tooldiag.models.openai_compat import OpenAICompatBackend
from tooldiag.trajectory import GenerationConfig


def main() -> None:
    print(machine.host_line(), flush=True)
    backend = OpenAICompatBackend("m", ModelOptions(base_url="http://127.0.0.1:1/v1", cache=False))
    config = GenerationConfig()
    lists: dict[tuple[str, ...], list] = {}
    requests = [
        ModelRequest(messages, lists.setdefault(tuple(t.name for t in tools), tools), None, config)
        for messages, tools in bfcl_requests(8)
    ]
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        for _ in range(20):
            for request in requests:
                backend.build_request(request)
        best = min(best, (time.process_time() - started) / (20 * len(requests)))
    size = sum(len(backend.build_request(r)) for r in requests) / len(requests) / 1024
    print(f"{len(requests)} requests, mean body {size:.1f} KiB: build_request {1000 * best:.3f} ms CPU per request")


if __name__ == "__main__":
    main()
