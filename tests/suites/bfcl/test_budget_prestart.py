"""A prestarted budget worker (``tooldiag run bfcl`` starts it at the CLI's entry) is the one the
first session uses, answers exactly as BFCL's executor does in process, and is closed when the run
does not need it. Each test runs in its own thread: the worker is per thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from tooldiag.cli import main as cli_main
from tooldiag.suites.bfcl import budget
from tooldiag.suites.bfcl.budget import BudgetedSession, close_unused_worker, prestart_worker
from tooldiag.suites.bfcl.executor import BackendSession

CONFIG = {"GorillaFileSystem": {"root": {"home": {"type": "directory", "contents": {}}}}}
CLASSES = ["GorillaFileSystem", "MathAPI"]
CASE = "multi_turn_base_31"
STEPS = [["mkdir(dir_name='a')", "cd(folder='a')"], ["echo(content='x', file_name='f')", "ls()"], ["add(a=2, b=3)"]]


def in_thread(work: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc
        finally:
            close = getattr(budget._LOCAL, "worker", None)
            if close is not None:
                close.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    if "error" in box:
        raise box["error"]
    return box["value"]


def results_of(session: Any) -> list[list[str]]:
    return [session.execute(step, CONFIG, CLASSES, "run_1", CASE)[0] for step in STEPS]


def test_the_first_session_uses_the_prestarted_worker_and_gets_in_process_results():
    expected = results_of(BackendSession())  # BFCL's executor in this process, no worker

    def work() -> tuple[bool, list[list[str]]]:
        prestart_worker()
        prestarted = budget._LOCAL.worker
        got = results_of(BudgetedSession(return_instances=False))
        prestart_worker()  # a thread that has a worker keeps it: no second preload
        return budget._LOCAL.worker is prestarted and prestarted.alive, got

    same_worker, got = in_thread(work)
    assert same_worker
    assert got == expected


def test_an_unused_prestarted_worker_is_closed_and_a_used_one_kept():
    def work() -> tuple[bool, bool]:
        prestart_worker()
        unused = budget._LOCAL.worker
        close_unused_worker()
        closed = not unused.alive and unused.process.poll() is not None
        session = BudgetedSession(return_instances=False)
        session.execute(STEPS[0], CONFIG, CLASSES, "run_1", CASE)
        close_unused_worker()
        return closed, session._worker is not None and session._worker.alive

    closed, kept = in_thread(work)
    assert closed and kept


@pytest.mark.parametrize(
    ("args", "prestarts"),
    [
        (["run", "bfcl", "--model", "ref/oracle", "--run-dir", "r"], True),
        (["run", "bfcl", "--model", "ref/oracle", "--workers", "1"], True),
        (["run", "bfcl", "--model", "ref/oracle", "--workers=1"], True),
        (["run", "bfcl", "--model", "ref/oracle", "--workers", "2"], False),
        (["run", "bfcl", "--model", "ref/oracle", "--workers=4"], False),
        (["run", "bfcl", "--model", "ref/oracle", "--executor", "ray"], False),
        (["run", "bfcl", "--help"], False),
        (["report", "runs/x"], False),
    ],
)
def test_only_a_run_bfcl_in_this_process_prestarts(monkeypatch: pytest.MonkeyPatch, args, prestarts):
    calls: list[None] = []
    monkeypatch.setattr(budget, "prestart_worker", lambda: calls.append(None))
    cli_main._prestart_for(args)
    assert bool(calls) is prestarts
