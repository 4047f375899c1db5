"""The tail of the schedule at a server latency: wall time against the latency floor (issue 16).

A BFCL case is a chain of sequential requests; when the long chains start late the last part of
a run has fewer than ``concurrency`` requests in flight and the wall overshoots the floor
``requests x latency / concurrency``. This bench measures it two ways:

* **model** (no CPU involved): the makespan of a pool of ``concurrency`` slots over the cases'
  request counts (what the replay server makes them send), in the given order and longest
  expected first (:mod:`tooldiag.runner.schedule`), over the floor; with ``--workers N``,
  shards dealt round-robin against shards balanced by expected work;
* **measured**: ``tooldiag run bfcl`` against ``replay_server.py``'s server (run in a thread of
  this process, which otherwise only waits) at ``--latency-ms``, recording requests in flight
  at the server: wall over floor, mean in flight, and mean in flight over the last fifth of
  the run (the tail). On a busy machine the harness's CPU inflates the wall too: compare the
  tail figure, which the schedule decides.

    uv run python bench/schedule_tail.py                               # base, 200 cases, 50 ms, -c 8
    uv run python bench/schedule_tail.py --limit 100 --workers 2 --concurrency 32
    PYTHONPATH=/tmp/old/src uv run python bench/schedule_tail.py       # another tree's tooldiag, same bench
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import math
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import machine
from compare_bfcl import ROOT, run_child, stored, tail, tooldiag_command

# This tree's modules for the model and the server; the measured command inherits PYTHONPATH
sys.path.insert(0, str(ROOT / "src"))
from replay_server import CALLS_PER_MESSAGE, ReplayServer, build_table


class TracingServer(ReplayServer):
    """The replay server, noting ``(time, +1 / -1)`` as each chat request starts and ends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.events: list[tuple[float, int]] = []

    async def _answer(self, method: str, path: str, raw: bytes) -> tuple[int, bytes]:
        chat = path.rstrip("/").endswith("/chat/completions")
        if chat:
            self.events.append((time.perf_counter(), 1))
        try:
            return await super()._answer(method, path, raw)
        finally:
            if chat:
                self.events.append((time.perf_counter(), -1))


def in_flight(events: list[tuple[float, int]], start: float, end: float) -> float:
    """Time-weighted mean of requests in flight between ``start`` and ``end``."""
    level, area, last = 0, 0.0, start
    for moment, step in sorted(events):
        if moment > start:
            area += level * (min(moment, end) - last)
            last = min(moment, end)
        level += step
    area += level * max(0.0, end - last)
    return area / max(1e-9, end - start)


def makespan(counts: list[int], slots: int) -> int:
    ends = [0] * slots
    for count in counts:
        heapq.heappush(ends, heapq.heappop(ends) + count)
    return max(ends)


def model_figures(category: str, limit: int, concurrency: int, workers: int) -> str:
    from tooldiag.runner.schedule import balance_shards, longest_first
    from tooldiag.runner.shard import deal_units, split_concurrency
    from tooldiag.suites.bfcl.data import load_cases
    from tooldiag.suites.bfcl.schedule import expected_requests

    cases = load_cases([category], limit=limit)
    sent = {c.id: sum(math.ceil(len(t) / CALLS_PER_MESSAGE) + 1 for t in c.ground_truth) for c in cases}
    floor = sum(sent.values()) / concurrency
    slots = split_concurrency(max(concurrency, workers), workers)

    def sharded(shards: list[list[Any]]) -> float:
        return max(makespan([sent[c.id] for c in shard], share) for shard, share in zip(shards, slots, strict=True))

    ordered = longest_first(cases, expected_requests)
    given = sharded(deal_units(cases, workers))
    scheduled = sharded(balance_shards(ordered, [expected_requests(c) for c in ordered], workers))
    return (
        f"model ({len(cases)} cases, {sum(sent.values())} requests, -c {concurrency}, {workers} worker(s)): "
        f"given order {given / floor:.3f}x the floor, longest expected first {scheduled / floor:.3f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--category", default="base")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--model-only", action="store_true", help="only the CPU-free model figures")
    args = parser.parse_args()
    print(machine.host_line(), flush=True)
    print(model_figures(args.category, args.limit, args.concurrency, args.workers), flush=True)
    if args.model_only:
        return
    loop = asyncio.new_event_loop()
    server = TracingServer(build_table(args.limit, [args.category]), args.latency_ms / 1000.0)
    loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory(prefix="schedule-tail-") as folder:
            run_dir = Path(folder) / "run"
            command = tooldiag_command("openai/replay", args.category, run_dir, args.concurrency, args.limit)
            command += ["--base-url", f"http://127.0.0.1:{server.port}/{args.category}/v1"]
            command += ["--workers", str(args.workers)]
            child = run_child(command, Path(folder) / "run.log")
            if child.rc != 0:
                raise SystemExit(f"run failed:\n{tail(child.log)}")
            cases, passed = stored(run_dir)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
    events = list(server.events)
    first, last = events[0][0], events[-1][0]  # from the first request to the last answer
    span = last - first
    floor = server.requests * args.latency_ms / 1000.0 / args.concurrency
    print(
        f"measured: {cases} cases ({passed} passed), {server.requests} requests, -c {args.concurrency}, "
        f"--workers {args.workers}, {args.latency_ms:g} ms: first request to last answer {span:.2f} s, "
        f"floor {floor:.2f} s ({span / floor:.2f}x); command wall {child.wall:.2f} s, CPU {child.cpu:.2f} s; "
        f"in flight: mean {in_flight(events, first, last):.2f}, "
        f"last fifth {in_flight(events, last - span / 5, last):.2f} of {args.concurrency}"
    )


if __name__ == "__main__":
    main()
