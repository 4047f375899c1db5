"""Peak RSS of a full 800-case ``tooldiag run bfcl``, every process counted, and re-grading it.

Issue 16: peak RSS of a full 800-case run < 400 MB (with ``--workers``, all processes
together) and re-grading 800 stored cases (``tooldiag report``) <= 3 s. The run is
``ref/oracle`` over the four categories (offline: BFCL's executor, grading and the store
do the work, no server); while it runs, the resident set of the command and of every
process under it is read from ``/proc`` every 50 ms and the largest sum is the figure (a
sum of each process's own peak would overstate it: the workers peak at other moments than
the parent). Then ``tooldiag report RUN --format json`` runs 3 times (the least wall counts).

    uv run python bench/run_footprint.py                 # --workers default (one per core)
    uv run python bench/run_footprint.py --workers 1
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine

ROOT = Path(__file__).resolve().parents[1]
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss_mb(root: int) -> float:
    """Resident MB of ``root`` and its descendants now (``/proc/PID/statm``; 0 once gone)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError):
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        todo.extend(children.get(pid, []))
    return total / 2**20


def timed(command: list[str]) -> tuple[float, float, int]:
    """(wall s, peak tree RSS MB, exit status); the caller reads CPU from ``RUSAGE_CHILDREN``."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        time.sleep(0.05)
    return time.perf_counter() - started, peak, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="cases per category (default: all 200)")
    args = parser.parse_args()
    print(machine.host_line(), flush=True)
    with tempfile.TemporaryDirectory(prefix="run-footprint-") as folder:
        run_dir = Path(folder) / "oracle"
        command = [sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", "ref/oracle", "--run-dir", str(run_dir)]
        command += ["--categories", "base,long_context,miss_func,miss_param", "--concurrency", "8", "-q"]
        command += ["--workers", str(args.workers)] if args.workers else []
        command += ["--limit", str(args.limit)] if args.limit else []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, peak, rc = timed(command)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if rc != 0:
            raise SystemExit(f"run failed (exit {rc})")
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        workers = args.workers or "default"
        print(f"run: ref/oracle, 4 categories, --workers {workers}: {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"peak RSS of all its processes together {peak:.0f} MB")  # fmt: skip
        best = None
        for attempt in range(3):
            out = Path(folder) / f"report-{attempt}.json"
            report = [sys.executable, "-m", "tooldiag", "report", str(run_dir), "--format", "json", "--out", str(out)]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall, peak, rc = timed(report)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if rc != 0:
                raise SystemExit(f"report failed (exit {rc})")
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            if best is None or wall < best[0]:
                best = (wall, cpu, peak)
        assert best is not None
        print(f"re-grade: tooldiag report on the run: {best[0]:.2f} s wall, {best[1]:.2f} s CPU, "
              f"{best[2]:.0f} MB peak RSS (least wall of 3)")  # fmt: skip


if __name__ == "__main__":
    main()
