"""``run bfcl`` killed with SIGKILL at seeded random points, resumed with the same command each time,
ends byte for byte where an uninterrupted run ends (issue 20, "Suites that keep it so").

Each start is a ``fork`` of this process running :func:`tooldiag.cli.main.main` (the
imports and BFCL's data are loaded once, here, so a start costs milliseconds, not an
interpreter). The kill points are drawn from ``random.Random(SEED)``: right after the run
directory appears, right after ``run.sqlite`` appears (during store creation), or after a
uniform delay. A run that finishes before the next kill ends its episode, and so does the start after
:data:`KILLS_PER_EPISODE` kills, which is left to finish (so no timing decides whether the
test ends); episodes go on, each in a fresh run directory, until at least :data:`MIN_KILLS`
kills hit a live process.
Every episode's final ``export --format jsonl`` and ``report --format md`` must equal the
uninterrupted run's, after :func:`_normalized` removes what a kill changes by design:

* JSONL: the keys in :data:`VOLATILE_KEYS` (when a case was written, how long a request
  took), at any depth. The export holds none of them today, so nothing is stripped now;
  the list keeps the test meaningful if one is added.
* Markdown: the run directory's path (each episode has its own), and the run summary's
  ``Latency`` and ``Wall (s)`` columns (time measured, which an interrupted run spends
  differently). Counts (requests, retries, error rows) stay: a resume must not add or lose any.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.fuzz.harness import run_cli

SEED = 20
MIN_KILLS = 20
CASES = 30
COMMAND = ["run", "bfcl", "--model", "ref/oracle", "--categories", "base", "--limit", str(CASES), "-q"]
#: What a kill changes by design in an export line (module docstring).
VOLATILE_KEYS = frozenset({"latency_s", "latency", "timestamp", "updated_at", "created_at", "wall_s"})
#: Run-summary columns that measure time (module docstring).
VOLATILE_COLUMNS = ("Latency", "Wall")
#: Kills in one episode before its last start runs to the end: on a loaded machine a start may
#: need longer than any drawn delay, and the episode must end whatever the machine's speed.
KILLS_PER_EPISODE = 8
#: Longest one start may take before the test calls it a hang.
START_TIMEOUT_S = 120.0

pytestmark = pytest.mark.slow


def _child(run_dir: str) -> None:
    """One start of the command (in a forked process), its output discarded."""
    from tooldiag.cli.main import main

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    main([*COMMAND, "--run-dir", run_dir])


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _strip(item) for key, item in value.items() if key not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip(item) for item in value]
    return value


def _normalized_report(markdown: str, run_dir: Path) -> str:
    """The report with the run's path replaced and the time-measuring columns of its tables blanked."""
    out: list[str] = []
    blank: list[int] = []
    for line in markdown.replace(str(run_dir), "RUN").splitlines():
        cells = line.split("|")
        if line.startswith("|") and any(cell.strip().startswith(VOLATILE_COLUMNS) for cell in cells):
            blank = [i for i, cell in enumerate(cells) if cell.strip().startswith(VOLATILE_COLUMNS)]
        elif line.startswith("|") and blank and not set(line) <= set("|- "):
            cells = ["-" if i in blank else cell for i, cell in enumerate(cells)]
        elif not line.startswith("|"):
            blank = []
        out.append("|".join(cells) if line.startswith("|") else line)
    return "\n".join(out)


def _normalized(run_dir: Path) -> tuple[str, str]:
    """``(export as JSONL, report as Markdown)`` of ``run_dir``, less what a kill changes by design."""
    exported = run_cli(["export", str(run_dir), "--format", "jsonl"])
    report = run_cli(["report", str(run_dir), "--format", "md"])
    assert exported.code == 0 and report.code == 0, exported.explain() + report.explain()
    lines = [json.dumps(_strip(json.loads(line)), sort_keys=True) for line in exported.stdout.splitlines()]
    return "\n".join(lines), _normalized_report(report.stdout, run_dir)


def _wait_for(path: Path, process: multiprocessing.process.BaseProcess) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not path.exists() and process.is_alive() and time.monotonic() < deadline:
        time.sleep(0.0005)


def _start_and_kill(run_dir: Path, rng: random.Random, *, kill: bool = True) -> str | None:
    """One start killed at a drawn point: the point's kind when the kill hit a live process, ``None`` when the
    start finished first (the run is complete). ``kill=False``: the start runs to its end."""
    process = multiprocessing.get_context("fork").Process(target=_child, args=(str(run_dir),))
    point = rng.choice(["run_dir", "store", "delay", "delay", "delay"])
    delay = rng.uniform(0.0, 0.6)
    process.start()
    if not kill:
        process.join(START_TIMEOUT_S)
    elif point == "run_dir":
        _wait_for(run_dir, process)
    elif point == "store":
        _wait_for(run_dir / "run.sqlite", process)
    else:
        process.join(delay)
    alive = process.is_alive()
    if alive:
        assert process.pid is not None
        os.kill(process.pid, signal.SIGKILL)
    process.join(START_TIMEOUT_S)
    assert not process.is_alive(), "a start hung"
    if not alive:
        assert process.exitcode == 0, f"a resume failed (exit {process.exitcode}) in {run_dir}"
    return point if alive else None


def test_runs_killed_at_20_random_points_end_as_an_uninterrupted_run(tmp_path):
    reference = tmp_path / "reference"
    outcome = run_cli([*COMMAND, "--run-dir", str(reference)])  # also loads everything the forks share
    assert outcome.code == 0, outcome.explain()
    expected = _normalized(reference)
    assert len(expected[0].splitlines()) == CASES

    rng = random.Random(SEED)
    kills: Counter[str] = Counter()
    episodes = 0
    while kills.total() < MIN_KILLS:
        episodes += 1
        run_dir = tmp_path / f"episode-{episodes}"
        in_episode = 0
        while (point := _start_and_kill(run_dir, rng, kill=in_episode < KILLS_PER_EPISODE)) is not None:
            kills[point] += 1
            in_episode += 1
        assert _normalized(run_dir) == expected, f"episode {episodes} (kills so far: {dict(kills)}) differs"
    # the kills hit every kind of point, the creation of the run directory and of its store included
    assert kills.keys() == {"run_dir", "store", "delay"}, dict(kills)
