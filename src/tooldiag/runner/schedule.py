"""The order units start in, and how they are split over processes: longest expected first.

Why: a run's units are chains of sequential requests of very different lengths (a BFCL case is
2 to 15 requests). The pool keeps ``concurrency`` units in flight only while some are left to
start; if a long unit starts last, the run ends with one chain running alone and the other
slots idle, so the wall time overshoots ``requests x latency / concurrency``. Starting the
longest expected units first (LPT, "longest processing time first") leaves only short units
for the end, where they fill the slots evenly.

Both functions are pure and stable (units of equal cost keep the caller's order), and they only
change *when* a unit runs, never what it does: the store keys every result by its unit and
reads them back in its own order, so results stay identical case by case.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import TypeVar

Unit = TypeVar("Unit")


def longest_first(units: Sequence[Unit], cost: Callable[[Unit], float]) -> list[Unit]:
    """``units`` by descending ``cost``; ties keep their given order (``sorted`` is stable)."""
    return sorted(units, key=lambda unit: -cost(unit))


def balance_shards(units: Sequence[Unit], costs: Sequence[float], shards: int) -> list[list[Unit]]:
    """Split ``units`` into ``shards`` lists of about equal total cost (greedy LPT).

    Units are taken longest first and each goes to the shard with the least cost so far (the
    lowest index on a tie), so every shard also lists its units longest first. Round-robin
    dealing ignores cost: a shard can end with seconds of work left while the others idle.
    """
    if len(units) != len(costs):
        raise ValueError(f"{len(units)} units but {len(costs)} costs")
    shards = max(1, shards)
    order = longest_first(range(len(units)), lambda index: costs[index])
    loads = [(0.0, shard) for shard in range(shards)]  # a heap of (cost so far, shard index)
    dealt: list[list[Unit]] = [[] for _ in range(shards)]
    for index in order:
        load, shard = heapq.heappop(loads)
        dealt[shard].append(units[index])
        heapq.heappush(loads, (load + costs[index], shard))
    return dealt
