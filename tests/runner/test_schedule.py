"""Longest-expected-first scheduling (:mod:`tooldiag.runner.schedule`) and the BFCL cost key."""

from __future__ import annotations

import heapq

import pytest

from tooldiag.runner.schedule import balance_shards, longest_first
from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.schedule import expected_requests, schedule_units


def pool_makespan(costs: list[int], slots: int) -> int:
    """When the last unit ends if ``slots`` workers pull ``costs`` in this order (unit time per cost)."""
    ends = [0] * slots
    for cost in costs:
        heapq.heappush(ends, heapq.heappop(ends) + cost)
    return max(ends)


def test_longest_first_is_descending_and_stable():
    units = [("a", 2), ("b", 5), ("c", 2), ("d", 9), ("e", 5)]
    assert [name for name, _ in longest_first(units, lambda unit: unit[1])] == ["d", "b", "e", "a", "c"]


def test_longest_first_removes_the_tail_of_a_long_unit_started_last():
    # 8 slots, 16 short chains then one long one: in the given order it runs alone at the end
    costs = [2] * 16 + [12]
    assert pool_makespan(costs, 8) == 16
    assert pool_makespan(longest_first(costs, float), 8) == 12  # the long chain overlaps the short ones


def test_shards_are_balanced_by_cost_and_listed_longest_first():
    units = ["a", "b", "c", "d", "e", "f"]
    costs = [1.0, 9.0, 1.0, 1.0, 4.0, 4.0]
    # greedy by hand: b(9)->0; e(4)->1; f(4)->1 (4 < 9); a, c, d (1 each) -> 1 is at 8: a->1 (9), c->0 (10)...
    shards = balance_shards(units, costs, 2)
    assert shards == [["b", "c"], ["e", "f", "a", "d"]]
    assert sorted(unit for shard in shards for unit in shard) == units
    # round-robin would give shard 0 b, d, f... = 14 and shard 1 a, c, e = 6
    assert [sum(costs[units.index(u)] for u in shard) for shard in shards] == [10.0, 10.0]


def test_shards_refuse_mismatched_costs():
    with pytest.raises(ValueError, match="2 units but 1 costs"):
        balance_shards(["a", "b"], [1.0], 2)


def test_bfcl_units_start_with_the_case_of_most_ground_truth_steps():
    cases = load_cases(["base"], limit=30)
    units = schedule_units([(case, 0) for case in cases])
    assert sorted(case.id for case, _ in units) == sorted(case.id for case in cases)  # same units
    counted = {case.id: len(case.ground_truth) + sum(map(len, case.ground_truth)) for case in cases}
    keys = [counted[case.id] for case, _ in units]
    assert keys == sorted(keys, reverse=True)
    assert expected_requests(units[0][0]) == max(counted.values())
    assert keys[0] > keys[-1]  # the slice has cases of different lengths, so the order is a real choice
