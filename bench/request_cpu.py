"""Harness CPU of one in-process ``run_bfcl``, split between this process and the budget worker.

``marginal_cpu.py`` measures whole commands (every process, start-up included); this script
says where the per-request CPU goes: a warm-up run of one case first (imports, the replay
server's first answers), then a fresh budget worker, then the measured run of ``--limit``
cases of one category against ``bench/replay_server.py`` at 0 ms. Printed: the CPU of this
process and of the budget worker (``suites/bfcl/budget.py``, where BFCL's backends execute
and grading compares instances), per request; with ``--profile N``, the top N entries of a
``cProfile`` (``time.process_time``) of this process, by own and by cumulative time.

    uv run python bench/request_cpu.py                    # base, 200 cases
    uv run python bench/request_cpu.py --profile 40       # plus the profile's top 40
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import tempfile
import time

import machine
from compare_bfcl import Server


def cpu_seconds() -> tuple[float, float]:
    """(this process, its waited-for children) user + system CPU seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--category", default="base")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--profile", type=int, default=0, help="print the profile's top N entries")
    args = parser.parse_args()
    print(machine.host_line(), flush=True)

    from tooldiag.api import run_bfcl
    from tooldiag.models.base import ModelOptions
    from tooldiag.suites.bfcl import budget

    server = Server(0.0, args.limit)
    try:
        options = ModelOptions(base_url=f"{server.root}/{args.category}/v1", cache=False, concurrency=args.concurrency)
        with tempfile.TemporaryDirectory(prefix="request-cpu-") as folder:
            run_bfcl("openai/replay", f"{folder}/warm", categories=[args.category], limit=1, options=options)
            budget._close_workers()  # the measured run starts its own worker, counted when it ends
            before = server.requests()
            profile = cProfile.Profile(time.process_time) if args.profile else None
            own_0, children_0 = cpu_seconds()
            if profile is not None:
                profile.enable()
            run_bfcl("openai/replay", f"{folder}/run", categories=[args.category], limit=args.limit, options=options)
            if profile is not None:
                profile.disable()
            own_1, _ = cpu_seconds()
            budget._close_workers()
            _, children_1 = cpu_seconds()
        requests = server.requests() - before
    finally:
        server.stop()
    own, worker = own_1 - own_0, children_1 - children_0
    print(
        f"{args.category} {args.limit} cases, {requests} requests: this process {own:.2f} s, budget worker "
        f"{worker:.2f} s (its start-up included), {1000 * (own + worker) / max(1, requests):.3f} ms per request"
        + (" (under cProfile)" if profile is not None else "")
    )
    if profile is not None:
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(args.profile)
        stats.sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
