"""Wall-clock and peak memory of full 800-case BFCL runs with the reference policies.

Usage: uv run python bench/bfcl_demo.py [--policies oracle,overcall,halt]

Each policy runs in a fresh process (as `tooldiag run bfcl` would), so the peak RSS is
that of one full run. The figures go in the README.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

CHILD = """
import resource, sys, time
from tooldiag.suites.bfcl.runner import run_bfcl
t = time.perf_counter()
s = run_bfcl(sys.argv[1], sys.argv[2])
wall = time.perf_counter() - t
graded = sum(e["done"] for e in s.counts.values()); passed = sum(e["passed"] for e in s.counts.values())
print(f"{wall:.1f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} {graded} {passed}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="oracle,overcall,halt")
    args = parser.parse_args()
    print(f"{'model':<14}{'cases':>6}{'passed':>8}{'wall s':>9}{'peak RSS MB':>13}")
    total = time.perf_counter()
    for policy in args.policies.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, f"ref/{policy}", f"{tmp}/run"], capture_output=True, text=True, check=True
            ).stdout.split()
        wall, rss, graded, passed = out
        print(f"{'ref/' + policy:<14}{graded:>6}{passed:>8}{wall:>9}{rss:>13}")
    print(f"all policies, including process start-up: {time.perf_counter() - total:.1f} s")


if __name__ == "__main__":
    main()
