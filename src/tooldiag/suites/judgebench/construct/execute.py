"""Deterministic tool execution from a schema: the ground truth comes from running the plan.

Why hashing: an output must be the same whenever the same tool gets the same arguments
(re-executing a record's plan must reproduce its trace, on any machine, in any process),
yet differ between arguments so that ids chain into each other. Every output field is
drawn from a SHA-256 digest of (tool name, canonical JSON of the arguments, field path);
nothing is evaluated, no model writes an output. Invalid arguments give an error output
(``{"error": ..., "error_type": ...}``), never an exception, as a real tool endpoint would.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

#: Literal pools used when an output spec asks for a ``kind`` (names, cities...).
DEFAULT_POOLS: dict[str, list[str]] = {
    "person": ["Dana Reyes", "Omar Haddad", "Priya Natarajan", "Lena Fischer", "Marcus Bell", "Yuki Tanaka"],
    "company": ["Acme Robotics", "Bluewave Foods", "Cobalt Analytics", "Delta Freight"],
    "city": ["Leeds", "Lyon", "Austin", "Porto"],
    "street": ["12 Mill Lane", "48 Harbour Road", "7 Orchard Way"],
}


def canonical_json(value: Any) -> str:
    """The one JSON spelling hashed and stored: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def execute(
    tool_schema: Mapping[str, Any], arguments: Any, pools: Mapping[str, list[str]] | None = None
) -> dict[str, Any]:
    """Run ``tool_schema`` (``{"name", "parameters", "returns"}``) on ``arguments``.

    Returns the fields of ``returns`` (values derived from the digest), or an error output
    when the arguments do not fit ``parameters`` (unknown, missing required, wrong type).
    """
    problem = validate_arguments(tool_schema.get("parameters") or {}, arguments)
    if problem is not None:
        kind, message = problem
        return {"error": message, "error_type": kind}
    seed = f"{tool_schema['name']}\n{canonical_json(arguments)}"
    properties = (tool_schema.get("returns") or {}).get("properties") or {}
    chosen_pools = pools or DEFAULT_POOLS
    return {name: make_value(spec, _digest_picker(seed, name), chosen_pools) for name, spec in properties.items()}


def _digest_picker(seed: str, path: str) -> Callable[[int], int]:
    counter = [0]

    def pick(n: int) -> int:
        counter[0] += 1
        digest = hashlib.sha256(f"{seed}\n{path}\n{counter[0]}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % max(n, 1)

    return pick


def make_value(spec: Mapping[str, Any], pick: Callable[[int], int], pools: Mapping[str, list[str]]) -> Any:
    """A value fitting ``spec``; ``pick(n)`` chooses an index below ``n`` (a digest or a seeded RNG).

    The generator uses the same function with its RNG to draw the literal arguments it
    states in the query, so outputs and literals share one notion of a well-formed value.
    """
    kind = spec.get("kind")
    typ = spec.get("type")
    if "enum" in spec:
        return spec["enum"][pick(len(spec["enum"]))]
    if "values" in spec:
        return spec["values"][pick(len(spec["values"]))]
    if typ == "boolean":
        return pick(2) == 1
    if typ == "integer":
        low, high = int(spec.get("minimum", 1)), int(spec.get("maximum", 100))
        return low + pick(high - low + 1)
    if typ == "number":
        low_c, high_c = (
            round(float(spec.get("minimum", 1)) * 100),
            round(float(spec.get("maximum", 1000)) * 100),
        )
        cents = low_c + pick(high_c - low_c + 1)
        if cents % 10 == 0:  # two significant decimals, so the stated text and the value agree
            cents += 1 if cents < high_c else -1
        return cents / 100
    if typ == "array":
        low, high = int(spec.get("minItems", 1)), int(spec.get("maxItems", 3))
        count = low + pick(high - low + 1)
        items = spec.get("items") or {"type": "string"}
        out: list[Any] = []
        for _ in range(count * 4):
            value = make_value(items, pick, pools)
            if value not in out:
                out.append(value)
            if len(out) == count:
                break
        return out
    if typ == "object":
        return {k: make_value(v, pick, pools) for k, v in (spec.get("properties") or {}).items()}
    if kind == "id" or kind == "code":
        return f"{spec.get('prefix', 'ID')}-{10000 + pick(90000)}"
    if kind == "date":
        return f"2025-{1 + pick(12):02d}-{1 + pick(28):02d}"
    if kind == "phone":
        return f"+1-555-{pick(10000):04d}"
    if kind == "email":
        person = _pool(pools, "person")[pick(len(_pool(pools, "person")))]
        return f"{person.lower().replace(' ', '.')}@{spec.get('domain', 'example.com')}"
    if kind in ("person", "company", "city", "street"):
        pool = _pool(pools, kind)
        return pool[pick(len(pool))]
    return f"{spec.get('prefix', 'VAL')}-{10000 + pick(90000)}"


def _pool(pools: Mapping[str, list[str]], kind: str) -> list[str]:
    return list(pools.get(kind) or DEFAULT_POOLS[kind])


# -- argument validation -------------------------------------------------------------------

_TYPE_NAMES = {"dict": "object", "float": "number", "tuple": "array"}


def validate_arguments(parameters: Mapping[str, Any], arguments: Any) -> tuple[str, str] | None:
    """``(error_type, message)`` for the first way ``arguments`` break ``parameters``, else ``None``."""
    if not isinstance(arguments, dict):
        return "invalid_arguments", "arguments must be a JSON object"
    properties = parameters.get("properties") or {}
    for name in sorted(arguments):
        if name not in properties:
            return "unknown_argument", f"unknown argument {name!r}"
    for name in parameters.get("required") or []:
        if name not in arguments:
            return "missing_argument", f"missing required argument {name!r}"
    for name in sorted(arguments):
        message = _type_problem(properties[name], arguments[name], name)
        if message is not None:
            return "wrong_type", message
    return None


def _type_problem(spec: Mapping[str, Any], value: Any, where: str) -> str | None:
    typ = _TYPE_NAMES.get(spec.get("type", ""), spec.get("type"))
    ok = {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }.get(str(typ), True)
    if not ok:
        return f"argument {where!r} must be {typ}, got {type(value).__name__}"
    if "enum" in spec and value not in spec["enum"]:
        return f"argument {where!r} must be one of {', '.join(map(str, spec['enum']))}"
    if typ == "array" and isinstance(spec.get("items"), dict):
        for i, item in enumerate(value):
            problem = _type_problem(spec["items"], item, f"{where}[{i}]")
            if problem is not None:
                return problem
    if typ == "object" and isinstance(spec.get("properties"), dict):
        inner = validate_arguments(spec, value)
        if inner is not None:
            return f"in {where!r}: {inner[1]}"
    return None


def record_executor(domain_key: str) -> Callable[[Mapping[str, Any], Any], dict[str, Any]]:
    """The executor of a generated record's tools: ``(offered tool entry, arguments) -> output``.

    A record offers its tools in the released layout (``{"type": "function", "function":
    {name, description, parameters}}``), which carries no output schema; the output schema and
    the literal pools live in the record's domain (``metadata.domain``). This resolves the
    entry's name in that domain and runs :func:`execute` exactly as the generator did, so the
    trace-consistency gate re-executes a record with nothing but the record. A name the domain
    does not define gives an error output, like any unknown tool.
    """
    from tooldiag.suites.judgebench.construct.domains import load_domains

    domain = load_domains().get(domain_key)

    def run(entry: Mapping[str, Any], arguments: Any) -> dict[str, Any]:
        function = entry.get("function", entry) if isinstance(entry, Mapping) else {}
        name = str(function.get("name", "")) if isinstance(function, Mapping) else ""
        if domain is None:
            return {"error": f"unknown domain {domain_key!r}", "error_type": "unknown_tool"}
        try:
            tool = domain.tool(name)
        except KeyError:
            return {"error": f"no tool {name!r} in domain {domain_key!r}", "error_type": "unknown_tool"}
        return execute(tool.schema(), arguments, domain.pools)

    return run
