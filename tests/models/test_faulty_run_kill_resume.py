"""Issue 4 must-hold: 200 BFCL cases against a server injecting 10 % 429/500/malformed
replies and 3 % stalls longer than ``--timeout`` finish with every case graded; a
``kill -9`` midway and the same command again lose and duplicate nothing."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.bfcl_replay import record_policy
from tests.support.fake_openai import FakeOpenAIServer, FaultSpec
from tooldiag.suites.bfcl.data import load_cases

ROOT = Path(__file__).resolve().parents[2]


def _rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT case_id, status, passed FROM cases").fetchall()


@pytest.mark.slow
def test_200_cases_through_faults_killed_and_resumed(tmp_path):
    recorder = asyncio.run(record_policy(load_cases(["base"])))
    faults = FaultSpec.parse("429=0.034,500=0.033,malformed=0.033,stall=0.03", stall_s=2.0, seed=3)
    run_dir = tmp_path / "run"
    db = run_dir / "run.sqlite"
    with FakeOpenAIServer(responder=recorder.table, faults=faults, record=False) as server:
        command = [
            sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", "openai/replay",
            "--base-url", f"{server.root_url}/base/v1", "--categories", "base", "--run-dir", str(run_dir),
            "--timeout", "0.5", "--max-retries", "10", "--concurrency", "8", "--no-cache", "-q",
            "--workers", "2",  # the worker processes too: every case graded once after faults, a kill and a resume
        ]  # fmt: skip
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            try:
                if db.exists() and len(_rows(db)) >= 60:
                    break
            except sqlite3.OperationalError:
                pass
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        at_kill = len(_rows(db))
        assert 0 < at_kill < 200, "the kill must land midway"
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outcomes = dict(server.outcomes)
    rows = _rows(db)
    assert len(rows) == 200 and len({r[0] for r in rows}) == 200
    assert all(status == "done" and passed == 1 for _, status, passed in rows)
    assert {"429", "500", "malformed", "stall"} <= set(outcomes), outcomes
