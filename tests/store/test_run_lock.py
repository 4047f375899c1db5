"""One writer per run directory (issue 20, defects 3 and 4): a second `run` on a directory in use
exits 2 at once naming the holder's pid while the first finishes intact; a lock left by a killed
process is taken over; a store whose creation was killed before it committed is created again."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.bfcl_replay import record_policy
from tests.support.fake_openai import FakeOpenAIServer
from tooldiag.errors import StoreError
from tooldiag.store import RunStore
from tooldiag.store.lock import LOCK_FILE, acquire_run_lock
from tooldiag.store.rundb import DB_NAME
from tooldiag.suites.bfcl.data import load_cases
from tooldiag.trajectory import RunConfig

ROOT = Path(__file__).resolve().parents[2]


def _config() -> RunConfig:
    return RunConfig(model="ref/oracle", suite="bfcl", categories=["base"])


def _rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT case_id, status, passed FROM cases ORDER BY case_id").fetchall()


def test_a_second_writer_in_process_is_refused_and_the_lock_frees_on_close(tmp_path):
    first = RunStore.create_or_resume(tmp_path / "r", _config())
    with pytest.raises(StoreError, match=f"is in use by pid {os.getpid()} \\(started "):
        RunStore.create_or_resume(tmp_path / "r", _config())
    first.close()
    RunStore.create_or_resume(tmp_path / "r", _config()).close()  # free again


def test_two_run_commands_on_one_directory(tmp_path):
    cases = load_cases(["base"])[:12]
    recorder = asyncio.run(record_policy(cases))
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(responder=recorder.table, latency_s=0.05, record=False) as server:
        command = [
            sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", "openai/replay",
            "--base-url", f"{server.root_url}/base/v1", "--categories", "base", "--limit", "12",
            "--run-dir", str(run_dir), "--concurrency", "1", "--no-cache", "-q",
        ]  # fmt: skip
        first = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and not (run_dir / DB_NAME).exists():
            time.sleep(0.02)
        second = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert first.poll() is None, "the first run must still be going"  # else the refusal proves nothing
        assert second.returncode == 2, second.stderr
        lines = [line for line in second.stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and f"is in use by pid {first.pid}" in lines[0], second.stderr
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
    rows = _rows(run_dir / DB_NAME)
    assert len(rows) == 12 and all(status == "done" and passed == 1 for _, status, passed in rows)


def test_the_lock_of_a_killed_process_is_taken_over(tmp_path):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from tooldiag.store.lock import "
         "acquire_run_lock; held = acquire_run_lock(Path(sys.argv[1])); print('held', flush=True); time.sleep(60)",
         str(run_dir)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(StoreError, match=f"pid {holder.pid}"):
        acquire_run_lock(run_dir)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert str(holder.pid) in (run_dir / LOCK_FILE).read_text()  # the stale content stays ...
    with acquire_run_lock(run_dir):  # ... but the lock is free
        assert str(os.getpid()) in (run_dir / LOCK_FILE).read_text()


@pytest.mark.parametrize("leftover", ["empty file", "blank database"])
def test_a_store_whose_creation_never_committed_is_created_again(tmp_path, leftover):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    if leftover == "empty file":
        (run_dir / DB_NAME).write_bytes(b"")
    else:  # what a kill inside the creating transaction leaves: the file, no schema
        conn = sqlite3.connect(run_dir / DB_NAME)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.close()
    with RunStore.create_or_resume(run_dir, _config()) as store:
        assert store.config.model == "ref/oracle"
    with RunStore.create_or_resume(run_dir, _config()) as store:  # and it resumes as a store now
        assert store.config.model == "ref/oracle"


def _create_and_hold(run_dir: str) -> None:
    """A child process: create the store, then wait to be killed."""
    RunStore.create_or_resume(Path(run_dir), _config())
    time.sleep(60)


def test_a_store_killed_at_40_moments_of_its_creation_always_resumes(tmp_path):
    """kill -9 during the first milliseconds of creating a store (0 to ~4 ms after its folder appears),
    then create_or_resume again: it always opens, as the same run (10 of 20 such kills once left a
    directory that could never be resumed)."""
    context = multiprocessing.get_context("fork")
    landed = 0
    for trial in range(40):
        run_dir = tmp_path / f"r{trial}"
        child = context.Process(target=_create_and_hold, args=(str(run_dir),))
        child.start()
        deadline = time.monotonic() + 5  # the kills aim at creation: first wait for the run directory
        while not run_dir.exists() and time.monotonic() < deadline and child.is_alive():
            time.sleep(0.0001)
        time.sleep(0.0001 * trial)
        os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
        child.join()
        landed += (run_dir / DB_NAME).exists()
        with RunStore.create_or_resume(run_dir, _config()) as store:
            assert store.config == _config()
    assert landed >= 5, f"only {landed} of 40 kills landed after the store file appeared"
