"""800 BFCL multi-turn cases through ``tooldiag run bfcl`` over HTTP, and a faulty run
killed with ``kill -9`` and resumed.

The fake OpenAI server (``tooldiag.testing.fake_openai``, a separate process) replays
what ``ref/oracle`` answers to every request (``tooldiag.testing.bfcl_replay``), so
every case must pass, exactly as ``ref/oracle`` offline. Each category is served under
its own URL namespace (``http://127.0.0.1:PORT/<category>/v1``) because BFCL's variants
of one case can open with the same request but different ground truth, so the 800
cases run as four ``tooldiag run bfcl`` commands of 200, one after the other, each at
the given concurrency.

Reported per (server latency, concurrency): wall-clock of the four commands, cases
passed, model steps, and the CPU seconds of the ``tooldiag`` processes per model step
(everything: start-up, BFCL's executor, grading, the store, HTTP), and the marginal
CPU per step once the fixed cost of a command (measured on a one-case run) is taken
out. ``ref/oracle`` offline is the baseline without HTTP.

The fault scenario: 200 base cases against a server injecting 3.4 % 429, 3.3 % 500,
3.3 % malformed bodies and 3 % stalls longer than ``--timeout``; the run is killed
with SIGKILL once about half the cases are stored, then the same command is re-run.
Every case must end graded and passed, each stored once.

    uv run python bench/bfcl_http.py                     # full: about 10 minutes
    uv run python bench/bfcl_http.py --limit 20 --latencies 0 --concurrency 8
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = ("base", "long_context", "miss_func", "miss_param")
FAULTS = "429=0.034,500=0.033,malformed=0.033,stall=0.03"


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def start_server(replay: Path, latency_ms: float, faults: str = "", stall_s: float = 5.0):
    command = [sys.executable, "-m", "tooldiag.testing.fake_openai", "--port", "0", "--replay", str(replay)]
    command += ["--latency-ms", str(latency_ms), "--stall-s", str(stall_s)]
    if faults:
        command += ["--faults", faults]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, line.split()[-1].removesuffix("/v1")


def tooldiag_run(model: str, category: str, run_dir: Path, concurrency: int, limit: int | None, extra: list[str]):
    command = [sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", model, "--categories", category]
    command += ["--run-dir", str(run_dir), "--concurrency", str(concurrency), "--no-cache", "-q", *extra]
    if limit:
        command += ["--limit", str(limit)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stored(run_dir: Path) -> tuple[int, int, int, int]:
    """(rows, graded and passed, error rows, model steps) in a run store."""
    from tooldiag.store import RunStore

    store = RunStore.open(run_dir)
    try:
        records = list(store.iter_cases())
    finally:
        store.close()
    return (
        len(records),
        sum(1 for r in records if r.passed),
        sum(1 for r in records if r.trajectory.inference_error),
        sum(len(turn.steps) for r in records for turn in r.trajectory.turns),
    )


def fixed_cost(model: str, extra: list[str], work: Path, tag: str) -> tuple[float, int]:
    """(CPU s, model steps) of a one-case ``tooldiag run bfcl``, best of 3.

    Start-up, imports (this environment may forbid writing bytecode, so every process
    compiles its modules) and connection set-up are paid once per command; subtracting
    four of these from a row leaves the marginal CPU cost per model step.
    """
    best = (float("inf"), 0)
    for attempt in range(3):
        before = children_cpu_s()
        run_dir = work / f"fixed-{tag}-{attempt}"
        proc = tooldiag_run(model, "base", run_dir, 1, 1, extra)
        proc.communicate()
        cpu = children_cpu_s() - before
        if cpu < best[0]:
            best = (cpu, stored(run_dir)[3])
    return best


def run_800(model_for, work: Path, concurrency: int, limit: int | None, tag: str) -> tuple[float, int, int, int, float]:
    """Run every category; returns (wall s, passed, cases, model steps, CPU s of the tooldiag processes).

    ``model_for(category)`` -> ``(model string, extra command-line arguments)``.
    """
    wall = 0.0
    passed = cases = steps = 0
    cpu_before = children_cpu_s()
    for category in CATEGORIES:
        run_dir = work / f"{tag}-{category}"
        started = time.perf_counter()
        model, extra = model_for(category)
        proc = tooldiag_run(model, category, run_dir, concurrency, limit, extra)
        output, _ = proc.communicate()
        wall += time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(f"tooldiag run failed:\n{output}")
        rows, ok, _, n_steps = stored(run_dir)
        cases += rows
        passed += ok
        steps += n_steps
    return wall, passed, cases, steps, children_cpu_s() - cpu_before


def fault_scenario(replay: Path, work: Path, limit: int) -> str:
    server, root = start_server(replay, 0.0, faults=FAULTS, stall_s=3.0)
    run_dir = work / "faults"
    args = (
        "openai/replay",
        "base",
        run_dir,
        8,
        limit,
        ["--base-url", f"{root}/base/v1", "--timeout", "1", "--max-retries", "10"],
    )
    try:
        started = time.perf_counter()
        proc = tooldiag_run(*args)
        while proc.poll() is None:
            time.sleep(0.2)
            try:
                if stored(run_dir)[0] >= limit // 2:
                    break
            except Exception:  # noqa: BLE001 - the store may not exist yet
                continue
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        at_kill = stored(run_dir)[0]
        rerun = tooldiag_run(*args)
        output, _ = rerun.communicate()
        wall = time.perf_counter() - started
        if rerun.returncode != 0:
            raise RuntimeError(f"re-run failed:\n{output}")
        rows, ok, errors, _ = stored(run_dir)
        match = re.search(r"(\d+) cases run, (\d+) already finished", output)
        resumed = f"re-run ran {match.group(1)}, skipped {match.group(2)}" if match else "re-run summary not found"
    finally:
        server.terminate()
        server.wait(timeout=10)
    verdict = "OK" if (rows, ok, errors) == (limit, limit, 0) else "FAILED"
    return (
        f"{verdict}: {limit} cases, killed with SIGKILL at {at_kill} stored; {resumed}; "
        f"final store: {rows} rows, {ok} passed, {errors} error rows; {wall:.1f} s in all"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="cases per category (default: all 200)")
    parser.add_argument("--latencies", default="0,50")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--fault-cases", type=int, default=200, help="0 skips the fault scenario")
    args = parser.parse_args()
    from tooldiag.testing.bfcl_replay import main as record

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        replay = work / "replay.jsonl"
        record(["--out", str(replay), *(["--limit", str(args.limit)] if args.limit else [])])
        print(
            "\n| model | server latency | concurrency | wall s (4 commands) | passed / cases | model steps "
            "| CPU ms per step, all | CPU ms per step, marginal |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")

        def row(label: str, latency: str, concurrency: int, result, fixed: tuple[float, int]) -> None:
            wall, passed, cases, steps, cpu = result
            marginal = (cpu - 4 * fixed[0]) / (steps - 4 * fixed[1])
            print(
                f"| {label} | {latency} | {concurrency} | {wall:.1f} | {passed} / {cases} | {steps} | "
                f"{1000 * cpu / steps:.2f} | {1000 * marginal:.2f} |",
                flush=True,
            )

        concurrencies = [int(c) for c in args.concurrency.split(",")]
        fixed_ref = fixed_cost("ref/oracle", [], work, "ref")
        for concurrency in concurrencies:
            result = run_800(lambda c: ("ref/oracle", []), work, concurrency, args.limit, f"ref{concurrency}")
            row("ref/oracle (offline)", "-", concurrency, result, fixed_ref)
        for latency in [float(x) for x in args.latencies.split(",")]:
            server, root = start_server(replay, latency)
            try:
                fixed_http = fixed_cost("openai/replay", ["--base-url", f"{root}/base/v1"], work, f"http{latency:g}")
                for concurrency in concurrencies:
                    result = run_800(
                        lambda category, root=root: ("openai/replay", ["--base-url", f"{root}/{category}/v1"]),
                        work,
                        concurrency,
                        args.limit,
                        f"http{latency:g}-{concurrency}",
                    )
                    row("openai over HTTP", f"{latency:g} ms", concurrency, result, fixed_http)
            finally:
                server.terminate()
                server.wait(timeout=10)
        if args.fault_cases:
            print("\nfault scenario:", fault_scenario(replay, work, min(args.fault_cases, args.limit or 200)))


if __name__ == "__main__":
    main()
