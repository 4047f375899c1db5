"""Harness overhead per model step, and wall-clock of N requests against a local server.

Two measurements (issue 4, item 4: target <= 1 ms CPU per model step):

1. **Our code alone**, no network: building the request body from messages and tools,
   serialising it, parsing a chat completion into an Emission, and the response-cache
   key and lookup. Measured on real BFCL multi-turn requests (the largest of a few
   cases, recorded from ``ref/oracle``), in CPU time per step.
2. **The whole client** against ``tooldiag.testing.fake_openai`` running in a separate
   process, at 0 ms and 50 ms server latency, concurrency 1, 8, 32: wall-clock for N
   requests and the client process's CPU time per request (our code plus httpx and
   asyncio; the server's CPU is not counted since it runs in another process).

    uv run python bench/harness_overhead.py            # N=800
    uv run python bench/harness_overhead.py --requests 200 --latencies 0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tooldiag.models import ModelOptions, resolve_model
from tooldiag.models.cache import ResponseCache, cache_key
from tooldiag.models.openai_compat import build_request_body, parse_chat_completion
from tooldiag.testing.bfcl_replay import RecordingBackend
from tooldiag.trajectory import GenerationConfig

ROOT = Path(__file__).resolve().parents[1]


class _Capture(RecordingBackend):
    """Keeps the (messages, tools) of every request it sees."""

    def __init__(self, inner):
        super().__init__(inner)
        self.seen = []

    async def complete(self, request):
        self.seen.append((list(request.messages), list(request.tools or [])))
        return await super().complete(request)


def bfcl_requests(n_cases: int = 8):
    """Real BFCL multi-turn requests (messages, tools), recorded from ref/oracle."""
    from tooldiag.suites.bfcl.data import load_cases
    from tooldiag.suites.bfcl.rollout import run_rollout

    capture = _Capture(resolve_model("ref/oracle"))

    async def go():
        for case in load_cases(["base"], limit=n_cases):
            await run_rollout(case, capture, GenerationConfig(), None)

    asyncio.run(go())
    return capture.seen


def cpu_per_step_ms(fn, repeat: int, rounds: int = 5) -> float:
    """Best of ``rounds`` (the least disturbed by other processes) of the mean CPU ms."""
    fn()  # warm up
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(repeat):
            fn()
        best = min(best, 1000.0 * (time.process_time() - started) / repeat)
    return best


def measure_our_code(requests) -> list[tuple[str, float, str]]:
    """CPU ms per step of each piece of our per-step code, on the largest request."""
    messages, tools = max(
        requests, key=lambda r: len(json.dumps(build_request_body("m", r[0], r[1], None, GenerationConfig())))
    )
    config = GenerationConfig()
    body = json.dumps(build_request_body("m", messages, tools, None, config), ensure_ascii=False).encode()
    reply = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"c{i}",
                            "type": "function",
                            "function": {"name": "cd", "arguments": '{"folder": "docs"}'},
                        }
                        for i in range(3)
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 30},
    }
    reply_text = json.dumps(reply)
    with tempfile.TemporaryDirectory() as folder:
        cache = ResponseCache(Path(folder) / "c.sqlite")
        emission = parse_chat_completion(json.loads(reply_text))
        key = cache_key("openai", "m", messages, tools, None, config)
        cache.put(key, "openai/m", emission)
        rows = [
            (
                "build + serialise request",
                cpu_per_step_ms(
                    lambda: json.dumps(
                        build_request_body("m", messages, tools, None, config), ensure_ascii=False
                    ).encode(),
                    300,
                ),
            ),
            (
                "parse response (3 tool calls)",
                cpu_per_step_ms(lambda: parse_chat_completion(json.loads(reply_text)), 2000),
            ),
            ("cache key", cpu_per_step_ms(lambda: cache_key("openai", "m", messages, tools, None, config), 300)),
            ("cache lookup (hit)", cpu_per_step_ms(lambda: cache.get(key), 2000)),
        ]
        cache.close()
    total = sum(ms for _, ms in rows)
    size = f"{len(body) / 1024:.1f} KiB body, {len(messages)} messages, {len(tools)} tools"
    return [(name, ms, size) for name, ms in rows] + [("total per step", total, "")]


def start_server(latency_ms: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tooldiag.testing.fake_openai", "--port", "0", "--latency-ms", str(latency_ms)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, line.split()[-1]


def measure_http(base_url: str, messages, tools, n: int, concurrency: int) -> tuple[float, float]:
    """(wall seconds, client CPU ms per request) for ``n`` requests."""
    backend = resolve_model("openai/bench", ModelOptions(base_url=base_url, cache=False, concurrency=concurrency))
    config = GenerationConfig()

    async def go():
        await backend.generate(messages, tools, None, config)  # connect, warm up
        wall = time.perf_counter()
        cpu = time.process_time()
        await asyncio.gather(*(backend.generate(messages, tools, None, config) for _ in range(n)))
        result = time.perf_counter() - wall, 1000.0 * (time.process_time() - cpu) / n
        await backend.aclose()
        return result

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=800)
    parser.add_argument("--latencies", default="0,50", help="server latencies in ms")
    parser.add_argument("--concurrency", default="1,8,32")
    args = parser.parse_args()

    requests = bfcl_requests()
    print("## Our code per model step (CPU, no network)\n")
    print("| step | CPU ms | request |")
    print("|---|---:|---|")
    for name, ms, size in measure_our_code(requests):
        print(f"| {name} | {ms:.3f} | {size} |")

    messages, tools = requests[len(requests) // 2]
    print(f"\n## {args.requests} requests against the fake server (separate process)\n")
    print("| server latency | concurrency | wall s | requests/s | client CPU ms/request |")
    print("|---:|---:|---:|---:|---:|")
    for latency in [float(x) for x in args.latencies.split(",")]:
        proc, base_url = start_server(latency)
        try:
            for concurrency in [int(x) for x in args.concurrency.split(",")]:
                wall, cpu_ms = measure_http(base_url, messages, tools, args.requests, concurrency)
                print(f"| {latency:g} ms | {concurrency} | {wall:.2f} | {args.requests / wall:.0f} | {cpu_ms:.2f} |")
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
