"""Speed of ``tooldiag judgebench generate --n 3000 --seed 1`` (issue 14: under 60 s on one core).

Times the whole command path in this process (plan, execute, query, offered tools, JSONL
write) with the progress bar off, pinned to one CPU where the OS allows it, and prints the
topology shares next to the paper's, the mean call count and whether a second run wrote the
same bytes. ``--check`` exits 1 above the limit or when a share is off by more than 2 pp.
Usage: ``uv run python bench/judgebench_generate.py [--n 3000] [--seed 1] [--check]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import tooldiag
from tooldiag.suites.judgebench.construct.generate import PAPER_FREQUENCIES

LIMIT_S = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="exit 1 above 60 s or a share off by > 2 pp")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    with tempfile.TemporaryDirectory() as folder:
        digests = []
        times = []
        for run in range(2):
            out = Path(folder) / f"records-{run}.jsonl"
            started = time.perf_counter()
            result = tooldiag.judgebench_generate(out, args.n, args.seed)
            times.append(time.perf_counter() - started)
            digests.append(hashlib.sha256(out.read_bytes()).hexdigest())
            size = out.stat().st_size
    shares = Counter(r["dag_type"] for r in result.records)
    calls = [len(json.loads(r["expected_tool_calls"])) for r in result.records]
    print(
        f"generate --n {args.n} --seed {args.seed}: {times[0]:.2f} s, {times[1]:.2f} s (one core), {size / 1e6:.1f} MB"
    )
    print(f"byte-identical across runs: {digests[0] == digests[1]}; mean calls {sum(calls) / len(calls):.2f}")
    worst = 0.0
    for topology, wanted in PAPER_FREQUENCIES.items():
        share = shares[topology] / len(result.records)
        worst = max(worst, abs(share - wanted))
        print(f"  {topology:<20} {100 * share:5.1f} %  (paper {100 * wanted:.1f} %)")
    ok = max(times) < LIMIT_S and worst <= 0.02 and digests[0] == digests[1]
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
