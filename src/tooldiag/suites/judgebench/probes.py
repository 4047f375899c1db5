"""The ``order`` bias probe: an equivalent rewrite of a stored plan that no structural score can tell apart.

A judge that grades plans should not care in which of several *valid* orders two independent
calls were written, nor in which order a call's argument keys appear: the plan does the same
thing. ``tooldiag judgebench judge --probe order`` re-judges every plan in such a rewrite
(stored as ``variant="order"``), and the analysis reports how often a verdict changes
(:mod:`tooldiag.suites.judgebench.bias`). Any change is bias, because the rewrite keeps every
programmatic score, which :func:`order_rewrite` checks with :func:`~tooldiag.metrics.structural.score_plans`
for each rewrite it returns (an ``AssertionError``, never a silent skip).

What the rewrite may do
-----------------------
* **Calls**: the plan's calls in another topological order of its dependency graph. The graph
  is :mod:`~tooldiag.suites.judgebench.construct.topology`'s: an edge i -> j when a string of
  call i's output is an argument value of call j. A *generated* plan has no outputs of its own,
  so each of its calls borrows the recorded output of the reference call it corresponds to:
  the first unused reference call with the same name and equal arguments, else the first unused
  one with the same name (a call with an extra or missing key still reads and yields the same
  data). A call with no counterpart (a tool the reference does not use) has an unknown output:
  it is a barrier, after every earlier call and before every later one. A call whose argument
  text looks like a placeholder for another call's result (``$name``, ``${...}``, ``$1.field``, ``{{...}}``, ``<...>``,
  ``step 2``, ``call_1``, ``result of``, ``output of``) depends on every earlier call. When the
  record's reference has no recorded trace (only ``expected_tool_calls``), no output is known
  and the call order is kept.
* **The released sequence metric (Eq. 1b) is order-sensitive for independent calls**: it counts
  positional name matches, so swapping two independent calls with different names changes it
  whenever either position matched the reference. Only orders whose four programmatic scores
  (rounded as released) equal the plan's own are used. For a plan equal to the reference that
  leaves swaps of independent calls *with the same tool name* (loop items, parallel lookups of
  one tool); for a plan that already deviates, positions that match nothing may also move.
* **Argument keys**: every call with two or more top-level keys gets them in another order
  (nested objects are left as they are; values are never touched). Parameter structure compares
  key *sets*, so no score moves.

Each rewrite is seeded per plan (``sha256(seed|generator|record|difficulty)`` into
``random.Random``), so every judge and condition sees the same rewrite of a plan, and the same
seed gives the same rewrite on any machine. A plan with a single admissible order and no call
with two or more keys has no distinct rewrite: :func:`order_rewrite` returns ``None``, the judge
run counts it, and the analysis reports it beside the change rate (it is not in the rate's
denominator, which counts only plans that were rewritten and judged both ways).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tooldiag.errors import UserError
from tooldiag.metrics.structural import score_plans
from tooldiag.suites.judgebench.construct.topology import CallNode, calls_with_outputs, dependency_edges, strings_in
from tooldiag.suites.judgebench.records import JudgeBenchRecord

#: The probe names ``judge --probe`` accepts, and the ``variant`` each stores its verdicts under.
PROBES: tuple[str, ...] = ("order",)

#: Stop enumerating topological orders after this many (a 7-call plan with no edges has 5,040).
MAX_ORDERS = 1000

_PLACEHOLDER = re.compile(
    r"\$\{|\$[A-Za-z_]|\$\d+\.[A-Za-z_]|\{\{|<[^<>]{1,60}>|\bstep[ _-]?\d|\bcall[ _-]?\d|\bresult of\b|\boutput of\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Rewrite:
    """A plan rewritten by the order probe: the new calls and what moved."""

    calls: list[dict[str, Any]]
    #: ``order[k]`` is the index in the original plan of the rewritten plan's call k.
    order: tuple[int, ...]
    #: Calls whose argument keys were reordered (indices in the original plan).
    reordered_keys: tuple[int, ...]

    @property
    def moved_calls(self) -> bool:
        return self.order != tuple(range(len(self.order)))


def check_probes(probes: Sequence[str] | str) -> list[str]:
    """The requested probes (a comma list or names), each known, without repeats."""
    names = [p.strip() for p in (probes.split(",") if isinstance(probes, str) else probes) if p.strip()]
    unknown = [p for p in names if p not in PROBES]
    if unknown:
        raise UserError(f"unknown probe(s): {', '.join(unknown)}", hint=f"choose from {', '.join(PROBES)}")
    return list(dict.fromkeys(names))


def plan_seed(seed: int, generator: str, record_id: str, difficulty: str) -> int:
    """The per-plan seed: the first 8 bytes of sha256 over the run seed and the plan key."""
    digest = hashlib.sha256(f"{seed}|{generator}|{record_id}|{difficulty}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _arguments(call: dict[str, Any]) -> Any:
    args = call.get("arguments")
    if isinstance(args, str):
        try:
            return json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return args
    return args if args is not None else {}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def plan_edges(record: JudgeBenchRecord, calls: Sequence[dict[str, Any]]) -> set[tuple[int, int]]:
    """Dependency edges i -> j (i < j) of a plan (the reference's, or a generated one): module docstring."""
    reference = calls_with_outputs(record.expected_responses)
    n = len(calls)
    if len(reference) != len(record.expected_calls()):
        reference = []  # no recorded trace: no output is known
    used: set[int] = set()
    outputs: list[Any] = []
    known: list[bool] = []
    for call in calls:
        name, args = call.get("name"), _canonical(_arguments(call))
        free = [k for k, r in enumerate(reference) if k not in used and r.name == name]
        same = [k for k in free if _canonical(reference[k].arguments or {}) == args]
        match: int | None = (same or free)[0] if (same or free) else None
        if match is not None:
            used.add(match)
        outputs.append(reference[match].output if match is not None else None)
        known.append(match is not None)
    nodes = [CallNode(str(c.get("name")), _arguments(c), out) for c, out in zip(calls, outputs, strict=True)]
    edges = dependency_edges(nodes)
    for j in range(n):
        placeholder = any(_PLACEHOLDER.search(s) for s in strings_in(nodes[j].arguments))
        for i in range(j):
            if placeholder or not known[i] or not known[j]:
                edges.add((i, j))
    return edges


def topological_orders(n: int, edges: set[tuple[int, int]], limit: int = MAX_ORDERS) -> Iterator[tuple[int, ...]]:
    """Topological orders of the graph, the identity first, then in lexicographic order; at most ``limit``."""
    parents = {j: {i for i, b in edges if b == j} for j in range(n)}
    produced = 0
    order: list[int] = []
    placed: set[int] = set()

    def walk() -> Iterator[tuple[int, ...]]:
        nonlocal produced
        if produced >= limit:
            return
        if len(order) == n:
            produced += 1
            yield tuple(order)
            return
        for node in range(n):
            if node not in placed and parents[node] <= placed:
                order.append(node)
                placed.add(node)
                yield from walk()
                placed.discard(node)
                order.pop()
                if produced >= limit:
                    return

    yield from walk()


def _reorder_keys(arguments: Any, rng: random.Random) -> Any:
    """The same mapping with its top-level keys in another order (a non-identity permutation)."""
    keys = list(arguments)
    shuffled = keys[:]
    while shuffled == keys:
        rng.shuffle(shuffled)
    return {k: arguments[k] for k in shuffled}


def _text(calls: Sequence[dict[str, Any]]) -> str:
    return json.dumps([[c.get("name"), _arguments(c)] for c in calls], ensure_ascii=False, default=str)


def has_distinct_rewrite(record: JudgeBenchRecord, calls: Sequence[dict[str, Any]]) -> bool:
    """Whether :func:`order_rewrite` finds a rewrite for this plan (with any seed); cheap when a call has two keys."""
    if any(isinstance(_arguments(c), dict) and len(_arguments(c)) >= 2 for c in calls):
        return True
    return order_rewrite(record, calls, 0) is not None


def order_rewrite(record: JudgeBenchRecord, calls: Sequence[dict[str, Any]], seed: int) -> Rewrite | None:
    """The plan in another admissible call order with its argument keys reordered; ``None`` when
    no distinct rewrite exists (module docstring). ``seed`` is the per-plan seed (:func:`plan_seed`).

    Raises ``AssertionError`` if a returned rewrite's programmatic scores differ from the plan's.
    """
    rng = random.Random(seed)
    plan = [dict(c) for c in calls]
    n = len(plan)
    expected = record.expected_calls()
    original_text = _text(plan)
    candidates = []
    seen = {original_text}
    for order in topological_orders(n, plan_edges(record, plan)):
        text = _text([plan[i] for i in order])
        if text not in seen:
            seen.add(text)
            candidates.append(order)
    if candidates:
        scores = score_plans([expected] * (len(candidates) + 1), [plan, *([plan[i] for i in o] for o in candidates)])
        candidates = [o for o, s in zip(candidates, scores[1:], strict=True) if (s == scores[0]).all()]
    keyed = [i for i, c in enumerate(plan) if isinstance(_arguments(c), dict) and len(_arguments(c)) >= 2]
    if not candidates and not keyed:
        return None
    order = rng.choice(candidates) if candidates else tuple(range(n))
    rewritten = []
    for i in order:
        call = dict(plan[i])
        if i in keyed:
            call["arguments"] = _reorder_keys(_arguments(call), rng)
        rewritten.append(call)
    before, after = score_plans([expected, expected], [plan, rewritten])
    if not (before == after).all():
        raise AssertionError(f"order probe changed the programmatic scores of a {record.id} plan: {before} -> {after}")
    return Rewrite(rewritten, tuple(order), tuple(keyed))
