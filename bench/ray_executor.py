"""``tooldiag run bfcl --executor ray`` on a local multi-node Ray cluster: the 800 BFCL multi-turn
cases of ``ref/oracle``, every one stored as the local executor stores it (issue 17's Must-hold;
``tests/runner/test_ray_executor.py`` asserts the same; this script times it).

The cluster is ``ray.cluster_utils.Cluster``: a head and ``--nodes - 1`` worker nodes of
``--cpus`` CPUs each, no dashboard, an 80 MB object store per node. Both runs are one fresh
``tooldiag run bfcl`` process each (the Ray run with ``--ray-address`` of the cluster); the wall
times include start-up (and, for Ray, connecting and the workers' imports), not the cluster's
own start. Exits non-zero when a case is missing or graded differently.

    uv run python bench/ray_executor.py                  # 800 cases, 3 nodes of 1 CPU
    uv run python bench/ray_executor.py --limit 20 --nodes 2
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import host_line

ROOT = Path(__file__).resolve().parents[1]
OBJECT_STORE_BYTES = 80 * 1024 * 1024


def run(run_dir: Path, limit: int | None, concurrency: int, extra: list[str]) -> float:
    """Wall seconds of one ``tooldiag run bfcl --model ref/oracle`` command (it must succeed)."""
    command = [sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", "ref/oracle", "--run-dir", str(run_dir)]
    command += ["--concurrency", str(concurrency), "-q", *extra]
    if limit is not None:
        command += ["--limit", str(limit)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return time.perf_counter() - started


#: The columns of a stored case that must be byte-identical across executors: all but ``updated_at``.
STORED_COLUMNS = "case_id, category, status, passed, error_type, grade, trajectory"


def stored(run_dir: Path) -> dict[str, tuple]:
    """case id -> its :data:`STORED_COLUMNS`: what must match case by case (the trajectory's bytes included)."""
    import sqlite3

    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        return {row[0]: row for row in conn.execute(f"SELECT {STORED_COLUMNS} FROM cases")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="cases per category (default: all 200)")
    parser.add_argument("--nodes", type=int, default=3, help="nodes of the local cluster, the head included")
    parser.add_argument("--cpus", type=int, default=1, help="CPUs of each node")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    from ray.cluster_utils import Cluster

    print(host_line())
    with tempfile.TemporaryDirectory(prefix="tooldiag-ray-bench-") as tmp:
        local_wall = run(Path(tmp) / "local", args.limit, args.concurrency, ["--workers", "1"])
        started = time.perf_counter()
        cluster = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": args.cpus,
                "include_dashboard": False,
                "object_store_memory": OBJECT_STORE_BYTES,
            },
        )
        try:
            for _ in range(args.nodes - 1):
                cluster.add_node(num_cpus=args.cpus, object_store_memory=OBJECT_STORE_BYTES)
            cluster.wait_for_nodes()
            cluster_s = time.perf_counter() - started
            ray_wall = run(
                Path(tmp) / "ray", args.limit, args.concurrency, ["--executor", "ray", "--ray-address", cluster.address]
            )
        finally:
            cluster.shutdown()
        local, on_ray = stored(Path(tmp) / "local"), stored(Path(tmp) / "ray")
    passed = sum(1 for _, _, status, ok, *_ in on_ray.values() if status == "done" and ok == 1)
    differing = sorted(case for case in local.keys() | on_ray.keys() if local.get(case) != on_ray.get(case))
    print(f"cluster: {args.nodes} nodes x {args.cpus} CPU, started in {cluster_s:.1f}s")
    print(f"local executor (1 process): {len(local)} cases in {local_wall:.1f}s")
    print(f"ray executor:               {len(on_ray)} cases in {ray_wall:.1f}s, {passed}/{len(on_ray)} passed")
    print(f"stored cases differing case by case: {len(differing)}" + (f" (first: {differing[0]})" if differing else ""))
    return 0 if not differing and passed == len(on_ray) == len(local) else 1


if __name__ == "__main__":
    raise SystemExit(main())
