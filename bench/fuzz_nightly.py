"""The nightly fuzz budget (issue 20: >= 100k generated cases) in one command, on every core.

Runs each file of ``tests/fuzz`` under ``TOOLDIAG_FUZZ_PROFILE=nightly`` (each test's CI
example count x 200; 108k cases in all) in its own pytest process, as many at once as there are
cores, and prints one line per file (passed/failed, wall time) and the total. A failure prints
the falsifying example hypothesis found; the exit status is 1 if any file failed.

    uv run python bench/fuzz_nightly.py              # every file, one process per core
    uv run python bench/fuzz_nightly.py --jobs 1     # one at a time
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import machine

ROOT = Path(__file__).resolve().parents[1]


def run_file(path: Path) -> tuple[Path, int, float, str]:
    env = {**os.environ, "TOOLDIAG_FUZZ_PROFILE": "nightly"}
    start = time.perf_counter()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path.relative_to(ROOT))]
    child = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    return path, child.returncode, time.perf_counter() - start, child.stdout + child.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(machine.host_line(), flush=True)
    files = sorted((ROOT / "tests" / "fuzz").glob("test_*.py"))
    failed = 0
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for path, rc, wall, output in pool.map(run_file, files):
            summary = output.strip().splitlines()[-1] if output.strip() else ""
            print(f"{path.name}: {'passed' if rc == 0 else 'FAILED'} in {wall:.0f} s ({summary})", flush=True)
            if rc != 0:
                failed += 1
                print(output[-6000:], flush=True)
    print(f"{len(files)} files, {failed} failed, {time.perf_counter() - start:.0f} s wall", flush=True)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
