"""``run bfcl --workers N`` (issue 16, item 3): a run sharded over processes stores, case by case,
what a one-process run stores, and a ``kill -9`` of a worker or of the parent leaves a directory
the same command resumes with nothing lost and nothing stored twice."""

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
from tooldiag.api import classifier, run_bfcl
from tooldiag.models import ModelOptions
from tooldiag.runner.shard import WorkerDiedError
from tooldiag.store import RunStore
from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.export import export_cases

ROOT = Path(__file__).resolve().parents[3]
REPLAYED = 24  # base cases the fake server can answer
#: How long a worker may take to notice that its parent is gone (it checks every second).
ORPHAN_DEADLINE_S = 8.0


@pytest.fixture(scope="module")
def replay_table():
    """What ``ref/oracle`` answers to every request of the first base cases, for the fake server."""
    recorder = asyncio.run(record_policy(load_cases(["base"], limit=REPLAYED)))
    assert not recorder.conflicts
    return recorder.table


@pytest.fixture(scope="module")
def whole_run(replay_table, tmp_path_factory) -> dict[str, dict]:
    """The rows of an uninterrupted one-process run over HTTP: what every sharded run must store."""
    run_dir = tmp_path_factory.mktemp("whole") / "run"
    with FakeOpenAIServer(responder=replay_table, record=False) as server:
        run_bfcl("openai/replay", run_dir, categories=["base"], limit=REPLAYED, options=_http_options(server))
    rows = _rows(run_dir)
    assert len(rows) == REPLAYED and all(row["passed"] for row in rows.values())  # the replay is the oracle
    return rows


def _rows(run_dir: Path) -> dict[str, dict]:
    """The exported rows of a run, by case id, with each case's grade (no timestamps or latency)."""
    store = RunStore.open(run_dir)
    try:
        grades = {record.case_id: record.grade for record in store.iter_cases()}
        rows = export_cases(store, classifier("default"))
    finally:
        store.close()
    return {row["case_id"]: {**row, "grade": grades[row["case_id"]]} for row in rows}


def _stored_once(run_dir: Path) -> tuple[int, int]:
    """(rows in the store, rows its writing sessions say they stored): equal when none was stored twice."""
    store = RunStore.open(run_dir)
    try:
        return store.count(), sum(session["cases"] for session in store.sessions())
    finally:
        store.close()


def _http_options(server: FakeOpenAIServer, concurrency: int = 4) -> ModelOptions:
    return ModelOptions(base_url=f"{server.root_url}/base/v1", cache=False, concurrency=concurrency)


def test_two_workers_store_what_one_stores_with_the_oracle(tmp_path):
    one = run_bfcl("ref/oracle", tmp_path / "one", limit=8, workers=1)
    two = run_bfcl("ref/oracle", tmp_path / "two", limit=8, workers=2)
    expected = _rows(tmp_path / "one")
    assert len(expected) == 32 and one.ran == two.ran == 32
    assert (one.workers, two.workers) == (1, 2)
    assert _rows(tmp_path / "two") == expected
    assert two.counts == one.counts


def test_two_workers_store_what_one_stores_over_http(tmp_path, replay_table, whole_run):
    with FakeOpenAIServer(responder=replay_table, record=False) as server:
        summary = run_bfcl(
            "openai/replay",
            tmp_path / "two",
            categories=["base"],
            limit=REPLAYED,
            options=_http_options(server),
            workers=2,
        )
    assert replay_table.misses == 0
    assert _rows(tmp_path / "two") == whole_run
    assert summary.errors == [] and summary.ran == REPLAYED


class _KillAWorker:
    """A progress sink that ``kill -9``s the first worker once ``after`` cases are stored."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.stored = 0
        self.killed: list[int] = []

    def start(self, total, done_already, tallies=None) -> None:
        pass

    def advance(self, label, ok=None) -> None:
        self.stored += 1
        if self.stored == self.after:
            worker = next(p for p in multiprocessing.active_children() if p.name == "tooldiag-worker-1")
            assert worker.pid is not None
            os.kill(worker.pid, signal.SIGKILL)
            self.killed.append(worker.pid)

    def finish(self) -> None:
        pass


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_nothing_on_resume(tmp_path, replay_table, whole_run):
    with FakeOpenAIServer(responder=replay_table, record=False, latency_s=0.02) as server:
        killer = _KillAWorker(after=3)
        with pytest.raises(WorkerDiedError, match=r"worker 1 of 2 died .*SIGKILL"):
            run_bfcl(
                "openai/replay",
                tmp_path / "killed",
                categories=["base"],
                limit=REPLAYED,
                options=_http_options(server),
                workers=2,
                progress=killer,
            )
        assert killer.killed
        partial, _ = _stored_once(tmp_path / "killed")
        assert 3 <= partial < REPLAYED
        resumed = run_bfcl(
            "openai/replay",
            tmp_path / "killed",
            categories=["base"],
            limit=REPLAYED,
            options=_http_options(server),
            workers=2,
        )
    assert resumed.skipped == partial and resumed.ran == REPLAYED - partial
    assert _stored_once(tmp_path / "killed") == (REPLAYED, REPLAYED)
    assert _rows(tmp_path / "killed") == whole_run


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _stored_rows(run_dir: Path) -> int:
    path = run_dir / "run.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
    except sqlite3.OperationalError:  # created but no table yet
        return 0


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_parent_killed_mid_run_leaves_workers_exiting_and_a_resumable_run(tmp_path, replay_table, whole_run):
    with FakeOpenAIServer(responder=replay_table, record=False, latency_s=0.02) as server:
        command = [sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", "openai/replay", "--categories"]
        command += ["base", "--limit", str(REPLAYED), "--base-url", f"{server.root_url}/base/v1", "--no-cache"]
        command += ["--concurrency", "4", "--workers", "2", "-q", "--run-dir", str(tmp_path / "killed")]
        parent = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while _stored_rows(tmp_path / "killed") < 3 and parent.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            workers = _children(parent.pid)
            os.kill(parent.pid, signal.SIGKILL)
        finally:
            parent.wait()
        assert parent.returncode == -signal.SIGKILL, parent.stderr.read() if parent.stderr else ""
        assert len(workers) >= 2  # the two workers (and multiprocessing's resource tracker)
        deadline = time.monotonic() + ORPHAN_DEADLINE_S
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in workers)
        partial = _stored_rows(tmp_path / "killed")
        assert 3 <= partial < REPLAYED
        finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert finished.returncode == 0, finished.stderr
    assert f"{REPLAYED - partial} cases run, {partial} already finished" in finished.stdout
    assert _stored_once(tmp_path / "killed") == (REPLAYED, REPLAYED)
    assert _rows(tmp_path / "killed") == whole_run
