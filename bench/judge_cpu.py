"""``judgebench judge`` throughput and CPU per call against the fake server (issue 16, item 4: <= 0.5 ms).

The same measurement as the judge line of ``compare_bfcl.py`` (plans of ``ref/jb-perturb`` and
``ref/jb-sloppy``, every condition, concurrency 8, ``replay_server.py --judge`` answering a valid
verdict), without the rest of that bench. Two CPU figures per model call (an HTTP request; a
Prometheus verdict makes four):

* whole process: all CPU of the command over its calls, start-up included;
* marginal: (CPU of the full run - CPU of a tiny run) / (calls of the full run - calls of the
  tiny run), the tiny run being the same command (the same ``--judges``, default 4) on one
  generator's easy plans: the harness's
  own CPU per call (prompt, request body, HTTP, reply parsing, the store), the figure the target
  is about. Each run is the least CPU of ``--rounds``.

    uv run python bench/judge_cpu.py                  # 3 rounds of each run
    nice -n 10 uv run python bench/judge_cpu.py --rounds 5
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import machine
from compare_bfcl import judge_line, judge_throughput


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each size; the least CPU counts")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--judges", type=int, default=4, help="judges per command (1: the earlier passes' shape)")
    args = parser.parse_args()
    print(machine.host_line(), flush=True)
    with tempfile.TemporaryDirectory(prefix="judge-cpu-") as folder:
        judge = judge_throughput(
            Path(folder), args.concurrency, rounds=args.rounds, tiny_rounds=args.rounds, judges=args.judges
        )
    print(judge_line(judge))
    print(
        f"per verdict: {judge['cpu_ms_per_unit']:.3f} ms whole process; full run CPU {judge['cpu_s']:.2f} s, "
        f"tiny run CPU {judge['tiny_cpu_s']:.2f} s ({judge['tiny_units']:.0f} verdicts)"
    )


if __name__ == "__main__":
    main()
