"""One bounded, cancellable worker pool for units of model work.

Why one pool: four idioms (semaphore + gather, unbounded gather, TaskGroup workers) had drifted
apart in what they bound, what they cancel and what a fatal error leaves running. Here
``concurrency`` workers pull from one shared iterator, so at most that many units are in
flight and each unit goes to exactly one worker, in the order given. Resuming is the caller's
business: it passes only the units that remain. Each result is handed to ``on_result`` inside
the worker as soon as it is ready, so the caller can commit it at once and a run killed at any
moment loses nothing that finished.

The first exception a unit raises (a fatal model error, a store failure) cancels every other
worker and is re-raised itself, not wrapped in an exception group; units that finished stay
committed. Cancelling the task that awaits :func:`run_pool` cancels all workers too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

Unit = TypeVar("Unit")
Result = TypeVar("Result")


async def run_pool(
    units: Sequence[Unit],
    work: Callable[[Unit], Awaitable[Result]],
    concurrency: int,
    on_result: Callable[[Unit, Result], None] | None = None,
) -> None:
    """Run ``work`` over ``units`` with at most ``concurrency`` in flight; the first error cancels the rest.

    ``on_result(unit, result)`` runs in the worker right after its unit finished (commit and report
    there); an exception it raises stops the pool like one raised by ``work``.
    """
    if not units:
        return
    iterator = iter(units)

    async def worker() -> None:
        for unit in iterator:  # one shared iterator: each unit goes to exactly one worker
            result = await work(unit)
            if on_result is not None:
                on_result(unit, result)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(concurrency, len(units)))):
                group.create_task(worker())
    except BaseExceptionGroup as group_error:  # surface the first failure itself, not the group
        raise group_error.exceptions[0] from None
