"""Synthetic AgentJudgeBench records: plan a DAG over a domain's tools, execute it, write the query.

Per record: pick the topology (counts allocated by largest remainder from the requested
frequencies) and domain, choose a shape (:data:`~.topology.SHAPES`), assign tools so that
every edge is an id output feeding a parameter of the same name, draw the literal
arguments, EXECUTE the calls in order (:func:`~.execute.execute`; later calls take their
chained arguments from earlier outputs), and keep the plan only when
:func:`~.topology.derive_topology` of the executed trace equals the topology asked for
(a chance equality between values would add an edge). Then the offered tools (about four
per used tool, near-miss distractors first) and the template query.

Determinism: the allocation and the order of topologies and domains come from
``random.Random(seed)``; each record attempt draws from its own ``random.Random`` seeded by
SHA-256 of (seed, index, attempt), so regenerating one record leaves the others unchanged.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.judgebench.construct.domains import Domain, ToolDef, domain_keys, load_domains
from tooldiag.suites.judgebench.construct.execute import execute, make_value
from tooldiag.suites.judgebench.construct.query import Condition, PlannedCall, write_query
from tooldiag.suites.judgebench.construct.topology import (
    CALL_RANGE,
    LOOP_PREFIXES,
    SHAPES,
    TOPOLOGIES,
    derive_topology,
)

GENERATOR_VERSION = "tooldiag-construct/1"

#: Paper 000, App. C (Table 7): the released topology shares.
PAPER_FREQUENCIES: dict[str, float] = {
    "linear": 0.213,
    "fan_out": 0.105,
    "fan_in": 0.275,
    "diamond": 0.132,
    "optional_enrichment": 0.216,
    "loop_like": 0.059,
}

#: Call-count weights per topology, chosen so the default mean is near the paper's 3.3.
CALL_WEIGHTS: dict[str, dict[int, float]] = {
    "linear": {2: 0.45, 3: 0.35, 4: 0.12, 5: 0.08},
    "fan_out": {3: 0.7, 4: 0.2, 5: 0.1},
    "fan_in": {3: 0.7, 4: 0.2, 5: 0.1},
    "diamond": {4: 0.85, 5: 0.15},
    "optional_enrichment": {3: 0.8, 4: 0.2},
}

#: How many fresh draws one attempt may take to find a plan that classifies back.
_PLAN_TRIES = 60

Gates = Callable[[dict[str, Any]], list[str]]


@dataclass(frozen=True)
class Attempt:
    """One gated attempt at record ``index``: the gates it failed (empty: kept)."""

    index: int
    attempt: int
    dag_type: str
    domain: str
    failures: tuple[str, ...]


@dataclass
class GenerationResult:
    records: list[dict[str, Any]]
    #: every gated attempt, in order (a gate report counts pass / fail / regenerated from these).
    attempts: list[Attempt] = field(default_factory=list)
    #: indexes whose every attempt failed a gate (left out of ``records``).
    dropped: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Settings:
    domains: tuple[str, ...]
    topologies: tuple[str, ...]
    frequencies: dict[str, float]
    tools_per_record: tuple[int, int]
    calls: tuple[int, int]


# -- input checks ----------------------------------------------------------------------------


def check_settings(
    domains: Sequence[str] | None,
    topologies: Sequence[str] | None,
    frequencies: Mapping[str, float] | None,
    tools_per_record: tuple[int, int],
    calls: tuple[int, int],
) -> Settings:
    """Refuse impossible requests with one line and the fix (CLI: exit 2)."""
    known_domains = domain_keys()
    chosen_domains = tuple(dict.fromkeys(domains or known_domains))
    bad = [d for d in chosen_domains if d not in known_domains]
    if bad or not chosen_domains:
        raise UserError(f"unknown domain: {', '.join(bad) or '(none given)'}", hint="use " + ", ".join(known_domains))
    chosen_topologies = tuple(dict.fromkeys(topologies or (frequencies or PAPER_FREQUENCIES)))
    bad = [t for t in chosen_topologies if t not in TOPOLOGIES]
    if bad or not chosen_topologies:
        raise UserError(f"unknown topology: {', '.join(bad) or '(none given)'}", hint="use " + ", ".join(TOPOLOGIES))
    low, high = calls
    if low > high:
        raise UserError(f"--calls {low}-{high}: the minimum is above the maximum", hint="write --calls 2-5")
    if low < 2 or high > 5:
        raise UserError(f"--calls {low}-{high} is outside 2-5", hint="plans have 2 to 5 calls; write e.g. --calls 2-5")
    t_low, t_high = tools_per_record
    if t_low > t_high:
        raise UserError(
            f"--tools-per-record {t_low}-{t_high}: the minimum is above the maximum",
            hint="write --tools-per-record 8-19",
        )
    if t_low < high:
        raise UserError(
            f"--tools-per-record {t_low}-{t_high} is below --calls {low}-{high}: a record must offer every tool "
            f"its plan may call",
            hint=f"offer at least {high} tools (--tools-per-record {high}-{max(high, t_high)}) or lower --calls",
        )
    pool = min(len(load_domains()[d].all_tools()) for d in chosen_domains)
    if t_high > pool:
        raise UserError(
            f"--tools-per-record {t_low}-{t_high}: the chosen domains have only {pool} tools each",
            hint=f"ask for at most {pool} tools per record",
        )
    unfit = [t for t in chosen_topologies if CALL_RANGE[t][1] < low or CALL_RANGE[t][0] > high]
    if unfit:
        need = ", ".join(f"{t} needs {CALL_RANGE[t][0]}-{CALL_RANGE[t][1]}" for t in unfit)
        raise UserError(f"--calls {low}-{high} fits no plan of {need}", hint="widen --calls or drop those topologies")
    weights = {t: float((frequencies or PAPER_FREQUENCIES).get(t, 0.0)) for t in chosen_topologies}
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise UserError("topology frequencies must be non-negative and not all zero", hint="e.g. linear=0.5,fan_in=0.5")
    total = sum(weights.values())
    return Settings(
        chosen_domains, chosen_topologies, {t: w / total for t, w in weights.items()}, (t_low, t_high), (low, high)
    )


def allocate(n: int, frequencies: Mapping[str, float]) -> dict[str, int]:
    """Counts per topology summing to ``n``, by largest remainder (ties: the given order)."""
    exact = {t: n * f for t, f in frequencies.items()}
    counts = {t: int(v) for t, v in exact.items()}
    order = sorted(frequencies, key=lambda t: (-(exact[t] - counts[t]), list(frequencies).index(t)))
    for t in order[: n - sum(counts.values())]:
        counts[t] += 1
    return counts


# -- one record ----------------------------------------------------------------------------------


def _record_rng(seed: int, index: int, attempt: int) -> random.Random:
    digest = hashlib.sha256(f"judgebench-construct/{seed}/{index}/{attempt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def record_id(seed: int, index: int) -> str:
    return hashlib.sha256(f"judgebench-construct/{seed}/{index}".encode()).hexdigest()[:32]


def _literal(domain: Domain, spec: Mapping[str, Any], rng: random.Random) -> Any:
    spec = dict(spec)
    if spec.get("kind") == "email":
        spec["domain"] = domain.email_domain
    if spec.get("type") == "array" and isinstance(spec.get("items"), dict) and spec["items"].get("kind") == "email":
        spec["items"] = {**spec["items"], "domain": domain.email_domain}
    return make_value(spec, rng.randrange, domain.pools)


def _literal_arguments(
    domain: Domain, tool: ToolDef, rng: random.Random, shared: dict[str, Any], *, literal_ids: bool
) -> dict[str, Any]:
    """Required literal parameters, some optional ones (2-4 on a configuration tool)."""
    args: dict[str, Any] = {}
    optional = [p for p in tool.params if p not in tool.required and p not in tool.id_params]
    wanted = set(rng.sample(optional, min(len(optional), rng.randint(2, 4)))) if tool.slot == "config" else set()
    for name, spec in tool.params.items():
        if name in tool.id_params:
            if literal_ids and name in tool.required:
                prefix = domain.entities[tool.id_params[name]].prefix
                args[name] = shared.setdefault(name, f"{prefix}-{rng.randint(10000, 99999)}")
            continue
        if (
            name in tool.required
            or name in wanted
            or (tool.slot != "config" and name in optional and rng.random() < 0.3)
        ):
            args[name] = shared.setdefault(name, _literal(domain, spec, rng))
    return args


def _fits(tool: ToolDef, parent_tools: Sequence[ToolDef]) -> dict[str, int] | None:
    """Parameter -> parent position, feeding each parent into a distinct id parameter of ``tool``
    (matching output field name to parameter name), covering every required id parameter."""

    def search(k: int, taken: dict[str, int]) -> dict[str, int] | None:
        if k == len(parent_tools):
            return taken if all(p in taken for p in tool.required if p in tool.id_params) else None
        for param in tool.id_params:
            if param not in taken and param in parent_tools[k].id_fields:
                found = search(k + 1, {**taken, param: k})
                if found is not None:
                    return found
        return None

    return search(0, {})


def _assign(domain: Domain, parents: Sequence[Sequence[int]], rng: random.Random, topology: str) -> list[Any] | None:
    """Tools for every node of ``parents`` (distinct tools), with the parameter each parent feeds."""
    core = list(domain.core.values())
    chosen: list[tuple[ToolDef, dict[str, int]]] = []

    def allowed(j: int) -> list[ToolDef]:
        if topology == "optional_enrichment" and j < 3:
            return [domain.core[("lookup", "extra", "primary")[j]]]
        pool = core[:]
        rng.shuffle(pool)
        return pool

    def search(j: int) -> bool:
        if j == len(parents):
            return _consistent(chosen)
        used = {t.name for t, _ in chosen}
        for tool in allowed(j):
            if tool.name in used:
                continue
            if parents[j]:
                fed = _fits(tool, [chosen[i][0] for i in parents[j]])
                if fed is None:
                    continue
                feeds = {param: parents[j][k] for param, k in fed.items()}
            else:
                feeds = {}
            chosen.append((tool, feeds))
            if search(j + 1):
                return True
            chosen.pop()
        return False

    return chosen if search(0) else None


def _consistent(chosen: Sequence[tuple[ToolDef, dict[str, int]]]) -> bool:
    """No call states an id in the query that another call of the plan produces (it would name a
    different customer than the one looked up)."""
    produced = {f for tool, _ in chosen for f in tool.id_fields}
    return not any(p in produced for tool, feeds in chosen if not feeds for p in tool.required if p in tool.id_params)


def _execute_plan(domain: Domain, assignment: list[Any], rng: random.Random) -> list[PlannedCall]:
    shared: dict[str, Any] = {}
    calls: list[PlannedCall] = []
    for tool, feeds in assignment:
        args = _literal_arguments(domain, tool, rng, shared, literal_ids=not feeds)
        for param, parent in feeds.items():
            args[param] = calls[parent].output[param]
        calls.append(_run(domain, tool, args, feeds))
    return calls


def _run(domain: Domain, tool: ToolDef, args: dict[str, Any], sources: dict[str, int], loop_of: int | None = None):
    ordered = {k: args[k] for k in tool.params if k in args}
    return PlannedCall(tool, ordered, sources, execute(tool.schema(), ordered, domain.pools), loop_of)


def _loop_plan(domain: Domain, rng: random.Random) -> list[PlannedCall]:
    shared: dict[str, Any] = {}
    prefix = rng.choice(LOOP_PREFIXES)
    calls: list[PlannedCall] = []
    if prefix:
        lookup = domain.core["lookup"]
        calls.append(_run(domain, lookup, _literal_arguments(domain, lookup, rng, shared, literal_ids=True), {}))
        list_tool = domain.core["list"]
        args = _literal_arguments(domain, list_tool, rng, shared, literal_ids=False)
        args[domain.entities["P"].field] = calls[0].output[domain.entities["P"].field]
        calls.append(_run(domain, list_tool, args, {domain.entities["P"].field: 0}))
    else:
        list_tool = domain.core[rng.choice(("open_list", "list"))]
        calls.append(_run(domain, list_tool, _literal_arguments(domain, list_tool, rng, shared, literal_ids=True), {}))
    source = len(calls) - 1
    r_field = domain.entities["R"].field
    item_tool = domain.core[rng.choice(("record_view", "part_a", "part_b"))]
    literal = _literal_arguments(domain, item_tool, rng, shared, literal_ids=False)
    for item in calls[source].output[r_field + "s"]:
        calls.append(_run(domain, item_tool, {**literal, r_field: item}, {r_field: source}, loop_of=source))
    return calls


def _weighted(rng: random.Random, weights: Mapping[int, float]) -> int:
    sizes = sorted(weights)
    return rng.choices(sizes, weights=[weights[s] for s in sizes])[0]


def plan_record(
    domain: Domain, topology: str, rng: random.Random, calls_range: tuple[int, int]
) -> tuple[list[PlannedCall], Condition | None]:
    """Executed calls of one plan whose trace classifies as ``topology``."""
    low, high = calls_range
    for _ in range(_PLAN_TRIES):
        if topology == "loop_like":
            calls = _loop_plan(domain, rng)
        else:
            weights = {n: w for n, w in CALL_WEIGHTS[topology].items() if low <= n <= high}
            shapes = SHAPES[topology][_weighted(rng, weights)]
            assignment = _assign(domain, rng.choice(shapes), rng, topology)
            if assignment is None:
                continue
            calls = _execute_plan(domain, assignment, rng)
        if not low <= len(calls) <= high or any("error" in c.output for c in calls):
            continue
        if derive_topology(trace_messages(calls)) != topology:
            continue
        condition = None
        if topology == "optional_enrichment":
            flag_field, true_text, false_text = domain.flag
            value = bool(calls[0].output[flag_field])
            condition = Condition(
                0, flag_field, value, true_text if value else false_text, 1, 2, domain.entities["X"].field
            )
        return calls, condition
    raise RuntimeError(f"no {topology} plan in domain {domain.key} within {_PLAN_TRIES} draws (data file too sparse)")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def trace_messages(calls: Sequence[PlannedCall]) -> list[dict[str, Any]]:
    """The reference conversation: one assistant turn per call, each followed by its tool turn."""
    messages: list[dict[str, Any]] = []
    for k, call in enumerate(calls, start=1):
        step = f"step{k}"
        tool_call = {
            "function": {"name": call.tool.name, "arguments": _dumps(call.arguments)},
            "type": "function",
            "id": step,
        }
        messages.append(
            {"role": "assistant", "content": "", "reasoning_content": "", "tool_calls": _dumps([tool_call])}
        )
        messages.append({"role": "tool", "content": _dumps(call.output), "tool_call_id": step, "name": call.tool.name})
    return messages


def _offered(
    domain: Domain, calls: Sequence[PlannedCall], rng: random.Random, bounds: tuple[int, int]
) -> list[ToolDef]:
    """The plan's tools plus distractors (near misses of the used tools first), about 4x as many."""
    used = list(dict.fromkeys(c.tool.name for c in calls))
    low, high = bounds
    target = max(len(used), min(high, max(low, round(len(used) * rng.uniform(3.4, 4.6)))))
    near = [t for t in domain.distractors if t.distractor_of in used]
    rest = [t for t in domain.all_tools() if t.name not in used and t not in near]
    rng.shuffle(near)
    rng.shuffle(rest)
    offered = [domain.tool(name) for name in used] + (near + rest)[: target - len(used)]
    rng.shuffle(offered)
    return offered


def build_record(
    seed: int, index: int, attempt: int, domain: Domain, topology: str, settings: Settings
) -> dict[str, Any]:
    """One record in the released schema (object columns as JSON strings)."""
    rng = _record_rng(seed, index, attempt)
    calls, condition = plan_record(domain, topology, rng, settings.calls)
    query = write_query(domain, calls, rng, condition)
    offered = _offered(domain, calls, rng, settings.tools_per_record)
    tools_json = _dumps([t.offered() for t in offered])
    flat = [{"name": c.tool.name, "arguments": c.arguments} for c in calls]
    steps = []
    for k, call in enumerate(calls, start=1):
        inputs = ", ".join(f"{p} from step{i + 1}" for p, i in call.sources.items())
        steps.append(f"step{k} {call.tool.name}" + (f" ({inputs})" if inputs else ""))
    metadata: dict[str, Any] = {
        "source_id": f"construct-{seed}-{index}",
        "user_utterance": query,
        "bfcl_type": "agentic",
        "generation_type": "synthetic_dag",
        "tool_call_eval_result": "executed",
        "args_format_type": "json",
        "dag_formation_strategy": topology,
        "all_tool_calls_success": True,
        "domain": domain.key,
        "seed": seed,
        "index": index,
        "attempt": attempt,
        "generator": GENERATOR_VERSION,
        "query_source": "template",
        "edges": sorted([i + 1, j + 1] for j, c in enumerate(calls) for i in set(c.sources.values())),
    }
    if condition is not None:
        metadata["condition"] = {
            "step": f"step{condition.step + 1}",
            "field": condition.field,
            "equals": condition.equals,
            "text": condition.text,
            "enrichment_step": f"step{condition.enrichment + 1}",
            "consumer_step": f"step{condition.consumer + 1}",
            "argument": condition.argument,
        }
    return {
        "id": record_id(seed, index),
        "dag_type": topology,
        "user_message": query,
        "system_prompt": domain.system_prompt,
        "available_tools": tools_json,
        "tools": tools_json,
        "expected_responses": _dumps(trace_messages(calls)),
        "expected_tool_calls": _dumps(flat),
        "expected_response": _dumps(flat),
        "thoughts": f"{topology} plan over {len(calls)} calls: " + "; ".join(steps) + ".",
        "metadata": _dumps(metadata),
    }


# -- many records --------------------------------------------------------------------------------


def generate_records(
    n: int,
    seed: int,
    *,
    domains: Sequence[str] | None = None,
    topologies: Sequence[str] | None = None,
    frequencies: Mapping[str, float] | None = None,
    tools_per_record: tuple[int, int] = (8, 19),
    calls: tuple[int, int] = (2, 5),
    gates: Gates | None = None,
    max_attempts: int = 5,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> GenerationResult:
    """``n`` records for ``seed`` (byte-identical for the same arguments).

    ``gates(record) -> failed gate names``: a record failing any is rebuilt from a fresh draw,
    up to ``max_attempts`` attempts; every attempt is logged in the result. ``on_record``
    hears of each finished index (a progress bar).
    """
    if n < 0:
        raise UserError(f"--n must be at least 0, got {n}", hint="e.g. --n 100")
    if max_attempts < 1:
        raise UserError(f"max_attempts must be at least 1, got {max_attempts}", hint="e.g. 5")
    settings = check_settings(domains, topologies, frequencies, tools_per_record, calls)
    master = random.Random(seed)
    counts = allocate(n, settings.frequencies)
    labels = [t for t in settings.topologies for _ in range(counts[t])]
    master.shuffle(labels)
    order: list[str] = []
    while len(order) < n:
        cycle = list(settings.domains)
        master.shuffle(cycle)
        order.extend(cycle)
    loaded = load_domains()
    result = GenerationResult([])
    for index, (topology, domain_key) in enumerate(zip(labels, order, strict=False)):
        for attempt in range(max_attempts):
            record = build_record(seed, index, attempt, loaded[domain_key], topology, settings)
            failures = tuple(gates(record)) if gates is not None else ()
            result.attempts.append(Attempt(index, attempt, topology, domain_key, failures))
            if not failures:
                result.records.append(record)
                break
        else:
            result.dropped.append(index)
        if on_record is not None:
            on_record(record)
    return result


def record_line(record: Mapping[str, Any]) -> str:
    """One JSONL line (sorted keys, UTF-8 kept): the byte-identical file format."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True)
