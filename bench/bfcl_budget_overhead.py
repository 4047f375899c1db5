"""What the execution budget costs per BFCL backend call: worker process vs in-process.

    uv run python bench/bfcl_budget_overhead.py [--cases 100]

Replays the ground-truth calls of the first ``--cases`` BFCL multi-turn cases (every
category) turn by turn, once on :class:`BackendSession` (in-process, no budget) and once
on :class:`BudgetedSession` (each call in the budgeted worker), as the rollout does (results
only) and as the grader does (results plus the instances, pickled back, after each turn).
Prints the wall time per call of each and the difference, the budget's overhead. The
worker's start-up (once per thread) is timed separately.
"""

from __future__ import annotations

import argparse
import time

from machine import host_line  # bench/machine.py: the folder is on sys.path
from tooldiag.suites.bfcl.budget import BudgetedSession
from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.executor import BackendSession


def replay(make_session, cases, per_call: bool) -> tuple[float, int]:
    calls = 0
    start = time.perf_counter()
    for case in cases:
        session = make_session()
        for turn in case.ground_truth:
            batches = [[call] for call in turn] if per_call else [turn]
            for batch in batches:
                session.execute(batch, case.initial_config, case.involved_classes, "bench", case.id, case.long_context)
                calls += len(batch)
    return time.perf_counter() - start, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=100)
    args = parser.parse_args()
    cases = load_cases()
    step = max(1, len(cases) // args.cases)
    cases = cases[::step][: args.cases]
    print(host_line())
    start = time.perf_counter()
    BudgetedSession().execute([], {}, ["MathAPI"], "bench", "warm")
    print(f"worker start-up: {time.perf_counter() - start:.2f} s (once per thread)")
    for label, per_call in (("rollout (one call per request)", True), ("grading (one turn per request)", False)):
        local, calls = replay(BackendSession, cases, per_call)
        budgeted, _ = replay(BudgetedSession, cases, per_call)
        print(
            f"{label}: {calls} calls; in-process {1e3 * local / calls:.3f} ms/call, "
            f"budgeted {1e3 * budgeted / calls:.3f} ms/call, overhead {1e3 * (budgeted - local) / calls:.3f} ms/call"
        )


if __name__ == "__main__":
    main()
