"""``judgebench judge`` throughput and CPU per call against the fake server (issue 16, item 4).

The same measurement as the last line of ``compare_bfcl.py`` (plans of ``ref/jb-perturb`` and
``ref/jb-sloppy``, every condition, concurrency 8, ``replay_server.py --judge`` answering a valid
verdict), without the rest of that bench.

    uv run python bench/judge_cpu.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import machine
from compare_bfcl import judge_throughput


def main() -> None:
    print(machine.host_line(), flush=True)
    with tempfile.TemporaryDirectory(prefix="judge-cpu-") as folder:
        judge = judge_throughput(Path(folder))
    print(
        f"judge: {judge['calls']:.0f} calls at concurrency {judge['concurrency']:.0f}: {judge['wall_s']:.1f} s, "
        f"{judge['calls_per_s']:.0f} calls/s, {judge['cpu_ms_per_call']:.2f} ms CPU per call (whole process), "
        f"{judge['rss_mb']:.0f} MB peak RSS"
    )


if __name__ == "__main__":
    main()
