"""A judge run commits its verdicts in groups (issue 16): what a reader or a kill sees.

Batching must not change what is stored, must commit a group while the judge still waits for
its next replies (a timer, not only a row count), and a SIGKILL at any moment must leave a store
that the same command completes to exactly the rows of an uninterrupted run. The store's fast
path for text without surrogates must write what the repairing walk writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.suites.judgebench.test_jb_runners import kill_once, slow_judge_script
from tooldiag.errors import repair_value
from tooldiag.models import resolve_model
from tooldiag.models.base import ModelBackend
from tooldiag.suites.judgebench.generate import predict
from tooldiag.suites.judgebench.judge import judge_predictions
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.suites.judgebench.store import JudgeBenchStore, _json_repaired, _utf8_safe

#: Every column of a verdict but its timestamp and the judge's name (the killed run's judge is a
#: slowed copy of ``ref/jb-exact`` registered under another name).
COLUMNS = (
    "generator, record_id, difficulty, condition, sample, variant, status, tool_selection, parameter_structure, "
    "sequence, coverage, verdict, raw, attempts, error, prompt"
)


@pytest.fixture(scope="module")
def records():
    return load_records()


def predicted(run_dir, records, difficulties=("easy", "medium", "hard")):
    with JudgeBenchStore(run_dir) as store:
        asyncio.run(predict(store, records, "ref/jb-oracle", resolve_model("ref/jb-oracle"), difficulties=difficulties))
        return len(store.predictions(status="ok"))


def verdict_rows(run_dir):
    db = sqlite3.connect(run_dir / "judgebench.sqlite")
    try:
        return db.execute(f"SELECT {COLUMNS} FROM judgements ORDER BY {COLUMNS}").fetchall()
    finally:
        db.close()


def committed(run_dir) -> int:
    """Rows another connection sees: only what the judge run has committed."""
    db = sqlite3.connect(run_dir / "judgebench.sqlite", timeout=10)
    try:
        return db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
    finally:
        db.close()


class Gate(ModelBackend):
    """``ref/jb-exact`` that answers ``open_calls`` requests, then waits until ``release`` is set."""

    def __init__(self, open_calls: int) -> None:
        self.inner = resolve_model("ref/jb-exact")
        self.open_calls = open_calls
        self.answered = 0
        self.release = asyncio.Event()

    async def complete(self, request):
        if self.answered >= self.open_calls:
            await self.release.wait()
        self.answered += 1
        return await self.inner.complete(request)


def test_a_group_is_committed_while_the_judge_waits_for_its_next_replies(tmp_path, records):
    run_dir = tmp_path / "run"
    plans = predicted(run_dir, records, difficulties=("easy",))
    store = JudgeBenchStore(run_dir, create=False)
    gate = Gate(open_calls=5)  # far fewer than a group's row count: only the timer commits them

    async def scenario() -> tuple[int, int]:
        task = asyncio.create_task(
            judge_predictions(store, "ref/jb-exact", gate, conditions=["with_gt"], concurrency=2)
        )
        deadline = time.monotonic() + 30
        seen = 0
        while time.monotonic() < deadline and seen < 5:
            await asyncio.sleep(0.05)
            seen = committed(run_dir)
        waiting = gate.answered  # nothing was answered past the gate while we looked
        gate.release.set()
        await task
        return seen, waiting

    seen, waiting = asyncio.run(scenario())
    store.close()
    assert (seen, waiting) == (5, 5)
    assert committed(run_dir) == plans


def test_batched_verdicts_are_the_rows_a_commit_per_verdict_writes(tmp_path, records, monkeypatch):
    """More verdicts than a group holds, so groups are cut by their row count too."""
    from tooldiag.suites.judgebench import judge as judge_module

    run_dir = tmp_path / "run"
    predicted(run_dir, records)
    with JudgeBenchStore(run_dir, create=False) as store:
        asyncio.run(judge_predictions(store, "ref/jb-flaky", resolve_model("ref/jb-flaky"), conditions=["all"]))

    class NoBatches(judge_module._CommitBatches):
        """The Ray path's way of storing: no group is ever opened, so each verdict commits by itself."""

        def hold(self) -> None:
            pass

    monkeypatch.setattr(judge_module, "_CommitBatches", NoBatches)
    expected_dir = tmp_path / "one-by-one"
    predicted(expected_dir, records)
    with JudgeBenchStore(expected_dir, create=False) as store:
        asyncio.run(judge_predictions(store, "ref/jb-flaky", resolve_model("ref/jb-flaky"), conditions=["all"]))
    rows = verdict_rows(run_dir)
    assert len(rows) > 64 and rows == verdict_rows(expected_dir)


def test_a_run_killed_mid_group_resumes_to_the_rows_of_an_uninterrupted_run(tmp_path, records):
    run_dir = tmp_path / "run"
    units = 2 * predicted(run_dir, records)
    script = tmp_path / "slow_judge.py"
    script.write_text(slow_judge_script(0.01))
    args = [sys.executable, str(script), "judgebench", "judge", "-j", "slow/exact", "--run-dir", str(run_dir)]
    args += ["-q", "-c", "4"]
    env = {**os.environ, "TOOLDIAG_CACHE_DIR": str(tmp_path / "cache")}
    done = kill_once(args, env, lambda: committed(run_dir), at_least=10, poll_s=0.05)
    assert 0 < done < units, "the run should have been killed midway"
    finished = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    expected_dir = tmp_path / "uninterrupted"
    predicted(expected_dir, records)
    with JudgeBenchStore(expected_dir, create=False) as store:
        asyncio.run(judge_predictions(store, "ref/jb-exact", resolve_model("ref/jb-exact")))
    rows = verdict_rows(run_dir)
    assert len(rows) == units and rows == verdict_rows(expected_dir)


class Shown:
    """An object ``json.dumps`` writes through ``default=str``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, 2.5, None, True], "b": "plain"},
        ["caf\u00e9", "\ud55c\uad6d\uc5b4"],  # non-ASCII, and Hangul (written as \\ud55c...)
        ["lone \ud800 surrogate", {"key \udfff": "x"}],
        ["\U0001f600 astral (a surrogate pair in the JSON text)"],
        ["a backslash then ud: \\ud800"],
        ("a", ("tuple", "\udc80")),
        [Shown("str() with \ud834 in it"), Shown("plain")],
        "top-level \ud800 text",
    ],
)
def test_store_json_without_the_walk_matches_the_repairing_walk(value):
    assert _json_repaired(value, default=str) == json.dumps(repair_value(value)[0], default=str)


@pytest.mark.parametrize(
    "row",
    [
        ("judge", "gen", "r1", "easy", 1.0, None, 3),
        ("caf\u00e9", "\U0001f600", "x"),
        ("ok", "lone \ud800", None, 0.5),
    ],
)
def test_row_without_the_walk_matches_the_repairing_walk(row):
    assert _utf8_safe(*row) == repair_value(row)[0]
