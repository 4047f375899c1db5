"""Runs through the reference policies: known answers, resume, kill -9."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

from tooldiag.store import RunStore
from tooldiag.suites.bfcl.runner import run_bfcl


def test_oracle_passes_all_800(tmp_path):
    summary = run_bfcl("ref/oracle", tmp_path / "oracle")
    assert {c: (e["passed"], e["done"], e["error"]) for c, e in summary.counts.items()} == {
        c: (200, 200, 0) for c in ("base", "long_context", "miss_func", "miss_param")
    }


def test_halt_and_overcall_show_their_failure(tmp_path):
    halt = run_bfcl("ref/halt", tmp_path / "halt", limit=25)
    assert all(e["done"] == 25 for e in halt.counts.values())
    assert sum(e["passed"] for e in halt.counts.values()) < 0.4 * 100
    over = run_bfcl("ref/overcall", tmp_path / "over", categories=["miss_func", "miss_param"], limit=40)
    # overcall never asks or refuses, yet BFCL's grader passes some of its cases
    assert 0 < over.counts["miss_func"]["passed"] < 40
    store = RunStore.open(tmp_path / "over")
    record = store.get_case("multi_turn_miss_func_0")
    turn2 = record.trajectory.turns[2]
    # on the GT-empty turn it called the held-out function, and BFCL executed it
    assert turn2.steps[0].emission.tool_calls[0].name == "sort"
    assert not turn2.steps[0].tool_results[0].startswith("Error")
    store.close()


def test_trajectory_records_every_step(tmp_path):
    run_bfcl("ref/oracle", tmp_path / "o", ids=["multi_turn_miss_func_0", "multi_turn_base_1"])
    store = RunStore.open(tmp_path / "o")
    record = store.get_case("multi_turn_miss_func_0")
    traj = record.trajectory
    assert traj.notes["ground_truth_sizes"][2] == 0 and traj.notes["give_back_turns"] == [3]
    assert traj.turns[3].user_messages[0].content.startswith("I have updated some more functions")
    first = traj.turns[0].steps[0]
    assert first.emission.tool_calls and first.decoded_calls and len(first.tool_results) == len(first.decoded_calls)
    assert traj.turns[0].steps[-1].emission.text and traj.turns[0].steps[-1].decode_error
    assert traj.turns[2].steps[0].emission.text.startswith("I cannot")
    assert record.passed is True and record.grade.passed
    store.close()


def test_resume_skips_finished_and_extends(tmp_path):
    first = run_bfcl("ref/halt", tmp_path / "r", categories=["base"], limit=3)
    assert first.ran == 3
    again = run_bfcl("ref/halt", tmp_path / "r", categories=["base"], limit=5)
    assert again.skipped == 3 and again.ran == 2
    assert RunStore.open(tmp_path / "r").count() == 5


SLOW_RUN = textwrap.dedent(
    """
    import asyncio, sys
    from tooldiag.models.registry import provider
    from tooldiag.suites.bfcl.policies import OraclePolicy

    class Slow(OraclePolicy):
        async def complete(self, request):
            await asyncio.sleep(0.01)
            return await super().complete(request)

    provider("slow")(lambda name, options: Slow(name, options))
    from tooldiag.cli.main import main
    main(["run", "bfcl", "--model", "slow/oracle", "--run-dir", sys.argv[1], "--categories", "base,miss_func",
          "--limit", "30", "--concurrency", "4", "--quiet"])
    """
)


def _rows(db):
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT case_id, status, passed, error_type FROM cases ORDER BY case_id").fetchall()


def test_kill_9_midway_then_resume_loses_and_duplicates_nothing(tmp_path):
    run_dir = tmp_path / "killed"
    db = run_dir / "run.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_RUN, str(run_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.time() + 60
    count = 0
    while time.time() < deadline:
        if db.exists():
            try:
                count = len(_rows(db))
            except sqlite3.OperationalError:
                count = 0
            if count >= 10:
                break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _rows(db)
    assert 10 <= len(partial) < 60, "the kill must land midway"
    done = subprocess.run([sys.executable, "-c", SLOW_RUN, str(run_dir)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = _rows(db)
    assert len(rows) == 60 and len({r[0] for r in rows}) == 60
    assert all(r[1] == "done" and r[2] == 1 for r in rows)
    # the grades equal a clean, uninterrupted run
    run_bfcl("ref/oracle", tmp_path / "clean", categories=["base", "miss_func"], limit=30)
    assert [r[:4] for r in rows] == _rows(tmp_path / "clean" / "run.sqlite")


class RecordingProgress:
    """A ProgressSink that keeps every call."""

    def __init__(self):
        self.calls = []

    def start(self, total, done_already, tallies=None):
        self.calls.append(("start", total, done_already, tallies))

    def advance(self, label, ok=None):
        self.calls.append(("advance", label, ok))

    def finish(self):
        self.calls.append(("finish",))


def test_runner_reports_through_the_progress_protocol(tmp_path):
    import asyncio

    from tooldiag.models.base import ModelOptions
    from tooldiag.suites.bfcl.runner import run_bfcl_async
    from tooldiag.trajectory import RunConfig

    config = RunConfig(suite="bfcl", model="ref/halt", categories=["base"], limit=3)
    run_bfcl("ref/halt", tmp_path / "p", categories=["base"], limit=2)
    progress = RecordingProgress()
    asyncio.run(run_bfcl_async(config, tmp_path / "p", ModelOptions(), progress=progress))
    assert progress.calls[0][:3] == ("start", 3, 2) and progress.calls[0][3]["base"]["done"] == 2
    assert progress.calls[1:] == [("advance", "base", False), ("finish",)]
