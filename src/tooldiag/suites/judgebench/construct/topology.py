"""The six topologies as properties of the expected-call dependency graph, and their shapes.

The graph: one node per expected call, in trace order; an edge i -> j (i < j) when a string
value of call i's recorded output (a field value, or an item of a list field, at any depth)
is an argument value of call j (at any depth). Only strings count: numbers and booleans are
equal by chance too often (a count of 2, a ``true`` flag) to stand for data flow, and every
id the generator chains is a string. Two calls are *independent* when neither reaches the
other.

Classification, first match wins (so a graph has exactly one topology):

1. ``loop_like``: one call's list-valued output field has >= 2 of its items each passed to a
   separate call of one same tool.
2. ``diamond``: a call s feeds >= 2 pairwise-independent calls that all feed one call k.
3. ``fan_in``: a call has >= 2 pairwise-independent direct predecessors.
4. ``fan_out``: a call has >= 2 pairwise-independent direct successors.
5. ``optional_enrichment``: a triangle s -> e -> f with s -> f: f takes s's output directly
   and e's output as an extra (optional) argument; e is the call run because the condition
   stated in the query holds (the record's metadata names it).
6. ``linear``: the edges are exactly the path 0 -> 1 -> ... -> n-1.

Anything else is ``unclassified``. :data:`SHAPES` lists the graphs the generator builds per
topology and call count; each classifies back to its topology (tests check every one).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

TOPOLOGIES: tuple[str, ...] = ("linear", "fan_out", "fan_in", "diamond", "optional_enrichment", "loop_like")
UNCLASSIFIED = "unclassified"

#: Parents per node: ``SHAPES[topology][n]`` is a list of alternative shapes with n calls.
#: ``optional_enrichment`` shapes: nodes 0, 1, 2 are s, e, f; loop_like is built from its
#: list call (see :data:`LOOP_PREFIXES`), not from a fixed shape.
SHAPES: dict[str, dict[int, list[tuple[tuple[int, ...], ...]]]] = {
    "linear": {n: [tuple(() if j == 0 else (j - 1,) for j in range(n))] for n in (2, 3, 4, 5)},
    "fan_out": {
        3: [((), (0,), (0,))],
        4: [((), (0,), (0,), (0,)), ((), (0,), (1,), (1,))],
        5: [((), (0,), (0,), (0,), (0,)), ((), (0,), (1,), (1,), (1,)), ((), (0,), (0,), (0,), (1,))],
    },
    "fan_in": {
        3: [((), (), (0, 1))],
        4: [((), (0,), (), (1, 2)), ((), (), (0, 1), (2,))],
        5: [((), (0,), (1,), (), (2, 3))],
    },
    "diamond": {
        4: [((), (0,), (0,), (1, 2))],
        5: [((), (0,), (1,), (1,), (2, 3))],
    },
    "optional_enrichment": {
        3: [((), (0,), (0, 1))],
        4: [((), (0,), (0, 1), (2,))],
    },
}

#: loop_like: with or without one call before the list call; the items follow.
LOOP_PREFIXES = (0, 1)

#: The fewest and most calls each topology can take (loop_like: 1 list call + 2-3 items, +1 prefix).
CALL_RANGE: dict[str, tuple[int, int]] = {
    "linear": (2, 5),
    "fan_out": (3, 5),
    "fan_in": (3, 5),
    "diamond": (4, 5),
    "optional_enrichment": (3, 4),
    "loop_like": (3, 5),
}


@dataclass(frozen=True)
class CallNode:
    name: str
    arguments: Any
    output: Any


def calls_with_outputs(expected_responses: Any) -> list[CallNode]:
    """The calls of a trace (a list or its JSON string) with the output recorded for each."""
    messages = json.loads(expected_responses) if isinstance(expected_responses, str) else expected_responses
    outputs: dict[str, Any] = {}
    for message in messages or []:
        if isinstance(message, dict) and message.get("role") == "tool":
            content = message.get("content")
            with contextlib.suppress(TypeError, json.JSONDecodeError):
                content = json.loads(content) if isinstance(content, str) else content
            outputs[str(message.get("tool_call_id"))] = content
    calls = []
    for message in messages or []:
        if not isinstance(message, dict) or message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        raw = message["tool_calls"]
        items = json.loads(raw) if isinstance(raw, str) else raw
        for item in items or []:
            body = item.get("function", item)
            args = body.get("arguments")
            if isinstance(args, str):
                with contextlib.suppress(json.JSONDecodeError):
                    args = json.loads(args) if args.strip() else {}
            calls.append(CallNode(str(body.get("name")), args, outputs.get(str(item.get("id")))))
    return calls


def strings_in(value: Any) -> Iterator[str]:
    """Every string leaf of a JSON value (dict values, list items, nested)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def dependency_edges(calls: Sequence[CallNode]) -> set[tuple[int, int]]:
    """Edges i -> j: a string of call i's output is an argument value of call j (i < j)."""
    produced = [set(strings_in(c.output)) for c in calls]
    edges = set()
    for j, call in enumerate(calls):
        used = set(strings_in(call.arguments))
        for i in range(j):
            if produced[i] & used:
                edges.add((i, j))
    return edges


def classify(n: int, edges: set[tuple[int, int]], calls: Sequence[CallNode] = ()) -> str:
    """The topology of a graph with ``n`` nodes (rules in the module docstring, in order)."""
    reach = _reachability(n, edges)

    def independent(group: Sequence[int]) -> bool:
        return all(b not in reach[a] and a not in reach[b] for a, b in combinations(group, 2))

    succ = {i: sorted(j for a, j in edges if a == i) for i in range(n)}
    pred = {j: sorted(i for i, b in edges if b == j) for j in range(n)}
    if calls and _is_loop(calls):
        return "loop_like"
    for s in range(n):
        for k in range(n):
            middle = [b for b in succ[s] if k in succ[b]]
            if len(middle) >= 2 and any(independent(g) for g in combinations(middle, 2)):
                return "diamond"
    if any(len(pred[j]) >= 2 and any(independent(g) for g in combinations(pred[j], 2)) for j in range(n)):
        return "fan_in"
    if any(len(succ[i]) >= 2 and any(independent(g) for g in combinations(succ[i], 2)) for i in range(n)):
        return "fan_out"
    if any((s, f) in edges and (s, e) in edges and (e, f) in edges for s, e, f in combinations(range(n), 3)):
        return "optional_enrichment"
    if n >= 2 and edges == {(i, i + 1) for i in range(n - 1)}:
        return "linear"
    return UNCLASSIFIED


def derive_topology(expected_responses: Any) -> str:
    """The topology of a trace, from ``expected_responses`` alone (calls, outputs, reuse)."""
    calls = calls_with_outputs(expected_responses)
    return classify(len(calls), dependency_edges(calls), calls)


def shape_edges(parents: Sequence[Sequence[int]]) -> set[tuple[int, int]]:
    return {(i, j) for j, ps in enumerate(parents) for i in ps}


def _reachability(n: int, edges: set[tuple[int, int]]) -> dict[int, set[int]]:
    reach: dict[int, set[int]] = {i: set() for i in range(n)}
    for i in reversed(range(n)):
        for a, j in edges:
            if a == i:
                reach[i] |= {j} | reach[j]
    return reach


def _is_loop(calls: Sequence[CallNode]) -> bool:
    for i, call in enumerate(calls):
        if not isinstance(call.output, dict):
            continue
        for value in call.output.values():
            if not isinstance(value, list):
                continue
            items = {v for v in value if isinstance(v, str)}
            by_tool: dict[str, set[str]] = {}
            for later in calls[i + 1 :]:
                hit = items & set(strings_in(later.arguments))
                if len(hit) == 1:
                    by_tool.setdefault(later.name, set()).update(hit)
            if any(len(seen) >= 2 for seen in by_tool.values()):
                return True
    return False
