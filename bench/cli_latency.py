"""Start-up latency of the analysis commands: wall time over a bare ``python -c pass``.

    uv run python bench/cli_latency.py [--repeats 5] [--limit 5] [--check]

Issue 12 item 6: ``report``, ``cases``, ``show``, ``diagnose`` and ``classify`` on small
inputs must finish within 1.5 s of a bare interpreter in the same environment. The script
makes its own inputs in a temporary directory (a ``ref/overcall`` BFCL run of ``--limit``
cases per category, the example agent log, a two-line ``classify`` input), runs each
command ``--repeats`` times as ``python -m tooldiag ...`` with this interpreter, and prints
the median and minimum wall time and the overhead = median(command) - median(bare python).
The overhead is wall time, since a user waits for the wall clock; it is therefore sensitive
to other work on the machine, so the CPU count and load average are printed with the figures,
and so is each command's CPU time (user + system of the child), which other work barely moves.

A command whose ``--help`` fails (``cases`` and ``show`` before they were merged) is listed
as ``not available in this build``. ``--check`` exits 1 if any available command's overhead
exceeds 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import host_line  # bench/machine.py: the folder is on sys.path
from tooldiag import run_bfcl

ROOT = Path(__file__).resolve().parents[1]
AGENT_LOG = ROOT / "examples" / "agent_log.jsonl"
BUDGET_S = 1.5
CATEGORIES = ["base", "long_context", "miss_func", "miss_param"]


def make_inputs(work: Path, limit: int) -> dict[str, list[str]]:
    """The arguments of each command, on inputs written under ``work``."""
    run_dir = work / "run"
    run_bfcl("ref/overcall", run_dir, categories=CATEGORIES, limit=limit)
    export = work / "export.jsonl"
    subprocess.run(
        [sys.executable, "-m", "tooldiag", "export", str(run_dir), "--format", "jsonl", "--out", str(export)],
        check=True,
        capture_output=True,
    )
    first_case = json.loads(export.read_text(encoding="utf-8").splitlines()[0])["case_id"]
    log = work / "agent_log.jsonl"
    shutil.copyfile(AGENT_LOG, log)
    messages = work / "messages.jsonl"
    rows = [
        {"role": "assistant", "content": "Which file would you like me to delete?"},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "ls", "arguments": "{}"}}]},
    ]
    messages.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return {
        "report": ["report", str(run_dir)],
        "cases": ["cases", str(run_dir)],
        "show": ["show", str(run_dir), first_case],
        "diagnose": ["diagnose", str(log)],
        "classify": ["classify", str(messages)],
        # start-up alone: the top-level help, and one command's help (its module only)
        "--help": ["--help"],
        "run bfcl --help": ["run", "bfcl", "--help"],
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_runs(argv: list[str], repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of ``repeats`` runs of ``argv``.

    The CPU figure is the one other work on a busy machine barely moves; the wall figure is
    what the user waits for. A failing run stops the benchmark with its stderr.
    """
    walls, cpus = [], []
    for _ in range(repeats):
        cpu_start, start = _children_cpu(), time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - cpu_start)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return walls, cpus


def available(command: str) -> bool:
    proc = subprocess.run([sys.executable, "-m", "tooldiag", command, "--help"], capture_output=True)
    return proc.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per command (median and min over them)")
    parser.add_argument("--limit", type=int, default=5, help="BFCL cases per category in the test run")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if an overhead exceeds {BUDGET_S} s")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tooldiag-cli-latency-") as tmp:
        commands = make_inputs(Path(tmp), args.limit)
        host = host_line()  # before the timed runs: the load of other work, not of this benchmark
        bare, bare_cpu = timed_runs([sys.executable, "-c", "pass"], args.repeats)
        bare_median = statistics.median(bare)
        print(f"python {platform.python_version()} ({sys.executable}); {args.repeats} runs per command")
        print(f"inputs: ref/overcall run, {args.limit} cases x {len(CATEGORIES)} categories; "
              f"{AGENT_LOG.name}; 2 classify messages")  # fmt: skip
        print(host + "\n")
        print("| command | median s | min s | overhead over bare python s | median CPU s |")
        print("|---|---|---|---|---|")
        print(f"| python -c pass | {bare_median:.3f} | {min(bare):.3f} | - | {statistics.median(bare_cpu):.3f} |")
        over_budget = []
        for name, command_args in commands.items():
            if not available(command_args[0]):
                print(f"| {name} | not available in this build | | | |")
                continue
            times, cpus = timed_runs([sys.executable, "-m", "tooldiag", *command_args], args.repeats)
            median = statistics.median(times)
            overhead = median - bare_median
            if overhead > BUDGET_S:
                over_budget.append(name)
            print(f"| {name} | {median:.3f} | {min(times):.3f} | {overhead:.3f} | {statistics.median(cpus):.3f} |")
    if args.check and over_budget:
        print(f"\nover the {BUDGET_S} s budget: {', '.join(over_budget)}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
