"""``tooldiag run bfcl --workers N``: wall time of the 800 BFCL multi-turn cases at 1, 2, ...
worker processes, offline (``ref/oracle``) and over HTTP against the fake OpenAI server
replaying ``ref/oracle``'s answers (``tooldiag.testing.bfcl_replay``) at 0 ms latency.

Each figure is one fresh ``tooldiag run bfcl`` process per run directory (start-up, worker
spawn and the store included). ``ref/oracle`` runs the 800 cases as one command; the replay
runs one command per category (each category has its own URL namespace, see
``tooldiag.testing.bfcl_replay``), the four wall times summed. Every case must pass.
``--concurrency`` is the total, split between the workers.

    uv run python bench/bfcl_workers.py                       # 1 and 2 workers, concurrency 8
    uv run python bench/bfcl_workers.py --workers 1,2,4 --limit 50 --skip-http
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import host_line

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = ("base", "long_context", "miss_func", "miss_param")


def children_cpu_s() -> float:
    """CPU seconds of every finished child process (the CLI and the workers it reaped)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(
    model: str, categories: str, run_dir: Path, workers: int, concurrency: int, extra: list[str]
) -> tuple[float, float]:
    """(wall s, CPU s of all its processes) of one ``tooldiag run bfcl`` command (it must succeed)."""
    command = [sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", model, "--categories", categories]
    command += ["--run-dir", str(run_dir), "--workers", str(workers), "--concurrency", str(concurrency)]
    command += ["--no-cache", "-q", *extra]
    started, cpu = time.perf_counter(), children_cpu_s()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return wall, children_cpu_s() - cpu


def passed(run_dirs: list[Path]) -> tuple[int, int]:
    """(passed, stored) over the run directories."""
    from tooldiag.store import RunStore

    ok = total = 0
    for run_dir in run_dirs:
        store = RunStore.open(run_dir)
        try:
            counts = store.status_counts()
        finally:
            store.close()
        ok += sum(entry["passed"] for entry in counts.values())
        total += sum(entry["done"] + entry["error"] for entry in counts.values())
    return ok, total


def start_server(replay: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "tooldiag.testing.fake_openai", "--port", "0", "--replay", str(replay)]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("listening on "):
        server.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return server, line.split()[-1].removesuffix("/v1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--concurrency", type=int, default=8, help="total, split between the workers")
    parser.add_argument("--limit", type=int, default=None, help="cases per category (default: all 200)")
    parser.add_argument("--skip-http", action="store_true", help="only ref/oracle offline")
    args = parser.parse_args()
    counts = [int(value) for value in args.workers.split(",")]
    limit = ["--limit", str(args.limit)] if args.limit else []
    print(host_line())
    print("\n| model | workers | concurrency (total) | wall s | CPU s, all processes | passed / cases |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for attempt, workers in enumerate(counts):
            run_dir = work / f"oracle-{attempt}"
            wall, cpu = run("ref/oracle", ",".join(CATEGORIES), run_dir, workers, args.concurrency, limit)
            ok, total = passed([run_dir])
            print(
                f"| ref/oracle | {workers} | {args.concurrency} | {wall:.1f} | {cpu:.1f} | {ok} / {total} |", flush=True
            )
        if args.skip_http:
            return
        from tooldiag.testing.bfcl_replay import main as record

        replay = work / "replay.jsonl"
        record(["--out", str(replay), *limit])
        server, root = start_server(replay)
        try:
            for attempt, workers in enumerate(counts):
                run_dirs = [work / f"http-{attempt}-{category}" for category in CATEGORIES]
                figures = [
                    run(
                        "openai/replay",
                        category,
                        run_dir,
                        workers,
                        args.concurrency,
                        [*limit, "--base-url", f"{root}/{category}/v1"],
                    )
                    for category, run_dir in zip(CATEGORIES, run_dirs, strict=True)
                ]
                wall, cpu = sum(f[0] for f in figures), sum(f[1] for f in figures)
                ok, total = passed(run_dirs)
                line = (
                    f"| fake server, 0 ms | {workers} | {args.concurrency} | {wall:.1f} | {cpu:.1f} | {ok} / {total} |"
                )
                print(line, flush=True)
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
