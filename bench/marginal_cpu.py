"""Marginal harness CPU per request of ``tooldiag run bfcl`` (issue 16: <= 1 ms), quickly.

The fixed cost of one command (a one-case run, least of 3) is taken out of a run of N cases
of one category against ``bench/replay_server.py`` at 0 ms; what is left, over the requests
left, is the harness's own CPU per request (request building, HTTP, decoding, BFCL's executor,
grading, the store). The same figure as ``compare_bfcl.py``'s "marginal" column, for one
category and one process, in well under a minute: the figure to quote before and after a
change of the hot path.

    uv run python bench/marginal_cpu.py                       # base, 200 cases, --workers 1, concurrency 8
    uv run python bench/marginal_cpu.py --limit 100 --workers 2
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import machine
from compare_bfcl import Server, fixed_cost, run_child, stored, tail, tooldiag_command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--category", default="base")
    parser.add_argument("--limit", type=int, default=200, help="cases of the measured run")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1, help="measured runs; the least CPU counts")
    args = parser.parse_args()
    print(machine.host_line(), flush=True)
    server = Server(0.0, args.limit)
    try:
        with tempfile.TemporaryDirectory(prefix="marginal-cpu-") as folder:
            work = Path(folder)
            fixed_cpu, fixed_requests = fixed_cost(server, work / "fixed")
            best = None
            for attempt in range(args.rounds):
                before = server.requests()
                run_dir = work / f"run-{attempt}"
                command = tooldiag_command("openai/replay", args.category, run_dir, args.concurrency, args.limit)
                command += ["--base-url", f"{server.root}/{args.category}/v1", "--workers", str(args.workers)]
                child = run_child(command, work / f"run-{attempt}.log")
                if child.rc != 0:
                    raise SystemExit(f"run failed:\n{tail(child.log)}")
                requests = server.requests() - before
                cases, passed = stored(run_dir)
                if best is None or child.cpu < best[0].cpu:
                    best = (child, requests, cases, passed)
    finally:
        server.stop()
    assert best is not None
    child, requests, cases, passed = best
    marginal = (child.cpu - fixed_cpu) / max(1, requests - fixed_requests)
    print(
        f"{args.category} {cases} cases ({passed} passed), {requests} requests, --workers {args.workers} "
        f"-c {args.concurrency}: wall {child.wall:.2f} s, CPU {child.cpu:.2f} s, peak RSS {child.rss_mb:.0f} MB; "
        f"one-case run CPU {fixed_cpu:.2f} s ({fixed_requests} requests); "
        f"marginal CPU {1000 * marginal:.3f} ms per request"
    )


if __name__ == "__main__":
    main()
