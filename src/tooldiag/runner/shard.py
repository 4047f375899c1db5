"""Shard the units of one run across worker processes, with one writer: the parent.

Why processes: a run of model calls against a fast server is CPU-bound (request building,
decoding, grading), and one Python process uses one core. Why one writer: the store stays
exactly what a single-process run writes (one transaction per unit, in the parent), so resume
and ``kill -9`` semantics do not change with the number of workers.

The shape, which knows no suite (judgebench and a distributed executor can reuse it):

* the caller passes picklable *unit descriptions* (e.g. case ids), a picklable *payload* (what
  every worker needs to rebuild its model and data: configs, never live objects) and a
  picklable *entry point*, a module-level ``async def entry(payload, units, concurrency, emit)``
  that does the work of its units at the given concurrency and calls ``emit(result)`` once per
  finished unit (its return value comes back too);
* :func:`run_sharded` starts the workers with the ``spawn`` context (never ``fork``: the parent
  may hold threads and an event loop), deals the units round-robin (so each worker gets a share
  of every category in the given order), or, given each unit's expected cost, into shards of
  equal expected work, longest first (:func:`tooldiag.runner.schedule.balance_shards`: no worker
  left with the long chains while the others idle), and splits ``concurrency`` between them,
  then hands each result to ``on_result`` in the parent as it arrives: commit and report
  progress there.

Failures: the first error a worker raises (a fatal model error, say) stops every worker and is
re-raised in the parent. A worker that dies without a word (``kill -9``, out of memory) stops
the run with :class:`WorkerDiedError`: every result that arrived is already committed, the
units in flight are not, so re-running the same command resumes with nothing lost or doubled.
We stop rather than restart the shard on purpose: a death is rarely transient (memory, a bad
unit), and a restart loop would hide it. A worker whose parent dies (``kill -9`` of the CLI)
sees its lifeline pipe close (or its parent id change) and exits at once; it never writes.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import threading
import traceback
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from multiprocessing import connection, get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from tooldiag.errors import UserError
from tooldiag.runner.schedule import balance_shards

#: A worker's entry point: ``entry(payload, units, concurrency, emit)``, module-level (picklable).
WorkerEntry = Callable[[Any, list[Any], int, Callable[[Any], None]], Coroutine[Any, Any, Any]]

#: With the default worker count, fewer units than this per worker do not pay for a process: a
#: spawned worker re-imports everything, loads its cases and starts its own budget worker, 1.5-3 s
#: before its first request on a 2-core host without bytecode, while one process runs a 200-case
#: BFCL category in 2 s at 0 ms and is not CPU-bound at 50 ms; two workers made such a run 2.4-2.9 s
#: slower at concurrency 8 and 32 alike (bench/README.md, "Sixth pass"). So a category (200 cases)
#: runs in one process, all 800 cases in two.
MIN_UNITS_PER_WORKER = 256
#: How often a worker checks that its parent is still there when the lifeline is silent.
PARENT_CHECK_S = 1.0
#: How long the parent waits for a stopped worker before killing it.
STOP_GRACE_S = 5.0


class WorkerDiedError(UserError):
    """A worker process ended without finishing or reporting an error (``kill -9``, OOM)."""


def available_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counter is not None:
        return max(1, counter() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def plan_workers(requested: int | None, units: int, concurrency: int) -> int:
    """How many workers to start for ``units`` units at ``concurrency`` in all.

    ``requested`` ``None`` means "as many as cores", but at least :data:`MIN_UNITS_PER_WORKER`
    units each; an explicit number is honoured. Either way never more workers than units or
    than concurrency slots (each worker needs one), and ``1`` means the single-process path.
    """
    if requested is not None and requested < 1:
        raise UserError(f"--workers must be 1 or more, got {requested}", hint="e.g. --workers 4, or leave it out")
    wanted = requested if requested is not None else min(available_cores(), max(1, units // MIN_UNITS_PER_WORKER))
    return max(1, min(wanted, units, concurrency))


def split_concurrency(total: int, workers: int) -> list[int]:
    """``total`` slots over ``workers`` as evenly as possible (the first ones get the rest)."""
    share, rest = divmod(total, workers)
    return [share + (1 if index < rest else 0) for index in range(workers)]


def deal_units(units: Sequence[Any], workers: int) -> list[list[Any]]:
    """Round-robin: worker ``k`` gets units ``k, k + workers, ...`` (a share of every stretch)."""
    return [list(units[index::workers]) for index in range(workers)]


# -- the worker side ---------------------------------------------------------------------
def _watch_parent(lifeline: Connection, parent_pid: int) -> None:
    """Exit the worker as soon as the parent closes the lifeline or is gone (``kill -9``)."""
    while True:
        try:
            if lifeline.poll(PARENT_CHECK_S):
                lifeline.recv()  # a message or EOF: either way, stop now
                break
        except (EOFError, OSError):
            break
        if os.getppid() != parent_pid:
            break
    os._exit(3)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a plain error carrying its text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any unpicklable exception is replaced, not lost
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _worker_main(
    entry: WorkerEntry,
    payload: Any,
    units: list[Any],
    concurrency: int,
    results: Connection,
    lifeline: Connection,
    parent_pid: int,
) -> None:
    """What a spawned worker runs: its units in its own event loop, results down the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops us
    threading.Thread(target=_watch_parent, args=(lifeline, parent_pid), daemon=True).start()
    send_lock = threading.Lock()

    def emit(result: Any) -> None:
        with send_lock:
            results.send(("result", result))

    try:
        value: Any = asyncio.run(entry(payload, units, concurrency, emit))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which re-raises it
        with send_lock:
            results.send(("error", _portable(exc), traceback.format_exc(limit=8)))
        return
    with send_lock:
        results.send(("done", value))


# -- the parent side ---------------------------------------------------------------------
@dataclass
class _Worker:
    index: int
    process: BaseProcess
    results: Connection
    lifeline: Connection
    units: int
    received: int = 0
    #: ``True`` once the worker said "done" or "error": its end is no death.
    reported: bool = False
    open: bool = True
    value: Any = None
    error: tuple[BaseException, str] | None = field(default=None, repr=False)


def _exit_text(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def _stop(workers: list[_Worker]) -> None:
    """Close every lifeline (the workers exit), then reap them; kill any that lingers."""
    for worker in workers:
        worker.lifeline.close()
    for worker in workers:
        worker.process.join(STOP_GRACE_S)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.results.close()


def run_sharded(
    units: Sequence[Any],
    entry: WorkerEntry,
    payload: Any,
    workers: int,
    concurrency: int,
    on_result: Callable[[Any], None],
    costs: Sequence[float] | None = None,
) -> list[Any]:
    """Run ``units`` over ``workers`` spawned processes; ``on_result(result)`` runs here, in the
    parent, for every result as it arrives. Returns each worker's return value, in worker order.

    ``costs`` (one per unit, e.g. expected requests): shards of equal expected work, each
    longest first, instead of round-robin.

    Blocks until every worker finished; call it from the thread that owns the store. The first
    worker error (or an error of ``on_result``) stops all workers and is raised; a worker that
    dies raises :class:`WorkerDiedError` (module docstring).
    """
    workers = max(1, min(workers, len(units)))
    context = get_context("spawn")
    started: list[_Worker] = []
    shards = deal_units(units, workers) if costs is None else balance_shards(units, costs, workers)
    try:
        for index, (shard, share) in enumerate(
            zip(shards, split_concurrency(max(concurrency, workers), workers), strict=True)
        ):
            results_in, results_out = context.Pipe(duplex=False)
            lifeline_in, lifeline_out = context.Pipe(duplex=False)
            process = context.Process(
                target=_worker_main,
                args=(entry, payload, shard, share, results_out, lifeline_in, os.getpid()),
                name=f"tooldiag-worker-{index + 1}",
                daemon=True,
            )
            process.start()
            results_out.close()  # the worker holds the only write end: its exit reads as EOF here
            lifeline_in.close()
            started.append(_Worker(index, process, results_in, lifeline_out, len(shard)))
        _collect(started, on_result)
        return [worker.value for worker in started]
    finally:
        _stop(started)


def _collect(workers: list[_Worker], on_result: Callable[[Any], None]) -> None:
    """Hand results to ``on_result`` until every worker ended; raise the first failure."""
    by_handle: dict[Any, _Worker] = {}
    for worker in workers:
        by_handle[worker.results] = worker
        by_handle[worker.process.sentinel] = worker
    while any(worker.open for worker in workers):
        handles = [h for h, w in by_handle.items() if w.open]
        for handle in connection.wait(handles):
            worker = by_handle[handle]
            if not worker.open:
                continue
            if handle is worker.results:
                _receive(worker, on_result)
            else:  # the process ended: what it sent is in the pipe, read it all
                while worker.open:
                    _receive(worker, on_result)
            if not worker.open:
                _check_end(worker, len(workers))


def _receive(worker: _Worker, on_result: Callable[[Any], None]) -> None:
    try:
        message = worker.results.recv()
    except (EOFError, OSError):  # the worker's end closed (it exited), or a message was cut short
        worker.open = False
        return
    kind = message[0]
    if kind == "result":
        worker.received += 1
        on_result(message[1])
    elif kind == "done":
        worker.reported, worker.value = True, message[1]
    elif kind == "error":
        worker.reported, worker.error = True, (message[1], message[2])
        worker.open = False


def _check_end(worker: _Worker, total: int) -> None:
    if worker.error is not None:
        error, trace = worker.error
        if not isinstance(error, UserError):  # a bug: keep where it happened in the worker
            error.add_note(f"in worker {worker.index + 1} of {total}:\n{trace}")
        raise error
    if not worker.reported:
        worker.process.join(STOP_GRACE_S)
        raise WorkerDiedError(
            f"worker {worker.index + 1} of {total} died ({_exit_text(worker.process.exitcode)}) after "
            f"{worker.received} of its {worker.units} units; every unit it finished is stored",
            hint="re-run the same command to resume: stored units are skipped, the rest run again",
        )
