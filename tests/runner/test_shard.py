"""The suite-free sharding of :mod:`tooldiag.runner.shard`: how units and slots are dealt, and
that results, return values and errors cross the process boundary intact."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tooldiag.errors import UserError
from tooldiag.runner.shard import deal_units, plan_workers, run_sharded, split_concurrency


async def square_units(payload: int, units: list[int], concurrency: int, emit: Callable[[Any], None]) -> Any:
    """A worker entry: emits ``unit ** payload`` for each unit, returns its units and its slots."""
    for unit in units:
        emit((unit, unit**payload))
    return units, concurrency


async def refuse(payload: str, units: list[int], concurrency: int, emit: Callable[[Any], None]) -> Any:
    emit((units[0], 0))
    raise UserError(payload, hint="the hint survives")


def test_units_are_dealt_round_robin_and_slots_split_evenly():
    assert deal_units(list(range(7)), 3) == [[0, 3, 6], [1, 4], [2, 5]]
    assert split_concurrency(8, 3) == [3, 3, 2]
    assert sum(split_concurrency(31, 4)) == 31


def test_the_worker_count_is_capped_by_units_and_slots():
    assert plan_workers(4, units=3, concurrency=8) == 3
    assert plan_workers(4, units=100, concurrency=2) == 2
    assert plan_workers(1, units=100, concurrency=8) == 1
    assert plan_workers(None, units=10, concurrency=8) == 1  # too few units to pay for a process
    assert plan_workers(None, units=200, concurrency=32) == 1  # one BFCL category: a process's start-up costs more
    with pytest.raises(UserError, match="--workers must be 1 or more"):
        plan_workers(0, units=10, concurrency=8)


def test_every_result_reaches_the_parent_once_with_each_workers_return_value():
    received: list[tuple[int, int]] = []
    values = run_sharded(list(range(10)), square_units, 2, 3, 7, received.append)
    assert sorted(received) == [(unit, unit * unit) for unit in range(10)]
    assert values == [([0, 3, 6, 9], 3), ([1, 4, 7], 2), ([2, 5, 8], 2)]


def test_a_worker_error_stops_the_run_and_is_raised_in_the_parent_with_its_hint():
    received: list[tuple[int, int]] = []
    with pytest.raises(UserError, match="no such model") as caught:
        run_sharded([1, 2, 3, 4], refuse, "no such model", 2, 2, received.append)
    assert caught.value.hint == "the hint survives"
    assert received  # what arrived before the error was handed over
