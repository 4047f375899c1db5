"""The shared worker pool: bounded, ordered dispatch, results handed over at once, first error stops it."""

from __future__ import annotations

import asyncio

import pytest

from tooldiag.runner import run_pool


def test_bounded_and_every_unit_once_in_order() -> None:
    in_flight, peak, started, results = 0, 0, [], []

    async def work(unit: int) -> int:
        nonlocal in_flight, peak
        started.append(unit)
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001 * (unit % 3))
        in_flight -= 1
        return unit * 10

    asyncio.run(run_pool(list(range(20)), work, 4, lambda unit, result: results.append((unit, result))))
    assert peak == 4
    assert started == list(range(20))  # dispatched in the order given
    assert sorted(results) == [(u, u * 10) for u in range(20)]


def test_result_is_committed_before_the_worker_takes_another_unit() -> None:
    log: list[str] = []

    async def work(unit: str) -> str:
        log.append(f"work {unit}")
        await asyncio.sleep(0)
        return unit

    asyncio.run(run_pool(["a", "b"], work, 1, lambda unit, _: log.append(f"commit {unit}")))
    assert log == ["work a", "commit a", "work b", "commit b"]


def test_empty_and_nonpositive_concurrency() -> None:
    seen: list[int] = []

    async def work(unit: int) -> None:
        seen.append(unit)

    asyncio.run(run_pool([], work, 8))
    asyncio.run(run_pool([1, 2], work, 0))  # at least one worker
    assert seen == [1, 2]


def test_first_error_cancels_the_rest_and_surfaces_unwrapped() -> None:
    finished: list[int] = []
    cancelled: list[int] = []

    async def work(unit: int) -> None:
        if unit == 1:
            raise KeyError("fatal")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(unit)
            raise
        finished.append(unit)

    with pytest.raises(KeyError, match="fatal"):
        asyncio.run(run_pool(list(range(6)), work, 3))
    assert finished == [] and sorted(cancelled) == [0, 2]  # units 3.. never started


def test_an_error_in_the_result_callback_stops_the_pool() -> None:
    async def work(unit: int) -> int:
        return unit

    def commit(unit: int, result: int) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        asyncio.run(run_pool([1, 2, 3], work, 2, commit))


def test_cancelling_the_caller_cancels_the_workers() -> None:
    cancelled: list[int] = []

    async def work(unit: int) -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(unit)
            raise

    async def main() -> None:
        task = asyncio.create_task(run_pool([1, 2, 3], work, 2))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert sorted(cancelled) == [1, 2]
