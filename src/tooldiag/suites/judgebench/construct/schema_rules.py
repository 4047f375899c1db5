"""What a valid tool schema is, and whether a JSON value fits one: the rules of the first two gates.

Paper 000 §3.1 gates "schemas" and "argument types" without spelling the rules out; these are
ours, chosen so that a record passing them is one every function-calling API accepts and every
argument the reference trace passes is one the schema allows. The type names are JSON Schema's
plus the BFCL spellings the released data uses (``dict`` = object, ``float`` = number, ``tuple``
= array, ``any``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tooldiag.suites.judgebench.construct.gate_values import is_number

#: Declared type -> what a JSON value of it must be.
KNOWN_TYPES = ("string", "integer", "number", "float", "boolean", "array", "tuple", "object", "dict", "any", "null")
_OBJECT_TYPES = ("object", "dict")
_ARRAY_TYPES = ("array", "tuple")
#: OpenAI's rule for function names (letters, digits, ``_``, ``-``; 64 at most), plus ``.`` (BFCL).
TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


def declared_types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    return (
        [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    )


def tool_problems(tool: Any, where: str) -> list[str]:
    """Why ``tool`` (an ``available_tools`` entry) is not a valid function schema; empty when it is."""
    if not isinstance(tool, dict):
        return [f"{where} is not an object"]
    if "function" in tool and tool.get("type") != "function":
        return [f"{where} has type {tool.get('type')!r}, not 'function'"]
    body = tool.get("function", tool)
    if not isinstance(body, dict):
        return [f"{where}.function is not an object"]
    name = body.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        return [f"{where} has an invalid name {name!r} (letters, digits, _ . -, at most 64)"]
    problems = []
    if not isinstance(body.get("description"), str) or not body["description"].strip():
        problems.append(f"tool {name} has no description")
    params = body.get("parameters")
    if not isinstance(params, dict):
        return [*problems, f"tool {name} has no parameters object"]
    if params.get("type") not in _OBJECT_TYPES:
        problems.append(f"tool {name}: parameters type is {params.get('type')!r}, not 'dict'/'object'")
    problems.extend(_object_problems(params, f"tool {name}"))
    return problems


def _object_problems(schema: dict[str, Any], where: str) -> list[str]:
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return [f"{where}: properties is not an object"]
    problems = []
    for key, spec in properties.items():
        problems.extend(property_problems(spec, f"{where}.{key}"))
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append(f"{where}: required is not a list of names")
    else:
        missing = [r for r in required if r not in properties]
        if missing:
            problems.append(f"{where}: required names {', '.join(missing)} that are not properties")
        if len(set(required)) != len(required):
            problems.append(f"{where}: required lists a name twice")
    return problems


def property_problems(spec: Any, where: str) -> list[str]:
    """Why one parameter schema is invalid: unknown type, bad enum, bad items or nested properties."""
    if not isinstance(spec, dict):
        return [f"{where} is not a schema object"]
    types = declared_types(spec)
    if not types:
        return [f"{where} has no type"]
    unknown = [t for t in types if t not in KNOWN_TYPES]
    if unknown:
        return [f"{where} has unknown type {unknown[0]!r}"]
    problems = []
    if "enum" in spec:
        enum = spec["enum"]
        if not isinstance(enum, list) or not enum:
            problems.append(f"{where}: enum is not a non-empty list")
        else:
            bad = [v for v in enum if value_problem(v, {"type": spec["type"]}, where) is not None]
            if bad:
                problems.append(f"{where}: enum value {bad[0]!r} is not of type {spec['type']}")
            if len({json.dumps(v, sort_keys=True) for v in enum}) != len(enum):
                problems.append(f"{where}: enum lists a value twice")
    if any(t in _ARRAY_TYPES for t in types) and "items" in spec:
        problems.extend(property_problems(spec["items"], f"{where}[]"))
    if any(t in _OBJECT_TYPES for t in types) and ("properties" in spec or "required" in spec):
        problems.extend(_object_problems(spec, where))
    if "default" in spec and spec["default"] is not None and value_problem(spec["default"], spec, where) is not None:
        problems.append(f"{where}: default {spec['default']!r} does not fit the schema")
    return problems


def _fits_type(value: Any, kind: str) -> bool:
    if kind == "any":
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return is_number(value) and float(value).is_integer()
    if kind in ("number", "float"):
        return is_number(value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in _ARRAY_TYPES:
        return isinstance(value, list)
    if kind in _OBJECT_TYPES:
        return isinstance(value, dict)
    return kind == "null" and value is None


def value_problem(value: Any, spec: dict[str, Any], where: str) -> str | None:
    """Why ``value`` does not fit ``spec`` (type, enum, array items, nested object), or ``None``."""
    types = declared_types(spec)
    if types and not any(_fits_type(value, t) for t in types):
        shown = "null" if value is None else type(value).__name__
        return f"{where} is {shown} {json.dumps(value, ensure_ascii=False)[:40]}, declared {'/'.join(types)}"
    enum = spec.get("enum")
    if isinstance(enum, list) and value not in enum:
        return f"{where} = {value!r} is not one of the enum {enum}"
    items = spec.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        for i, item in enumerate(value):
            problem = value_problem(item, items, f"{where}[{i}]")
            if problem:
                return problem
    if isinstance(value, dict) and isinstance(spec.get("properties"), dict):
        return object_problem(value, spec, where)
    return None


def object_problem(value: dict[str, Any], schema: dict[str, Any], where: str) -> str | None:
    """Required names present, no unknown name (unless ``additionalProperties`` is true), each value fits."""
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    missing = [r for r in required if r not in value]
    if missing:
        return f"{where}: required {', '.join(missing)} missing"
    if schema.get("additionalProperties") is not True:
        unknown = [k for k in value if k not in properties]
        if unknown:
            return f"{where}: unknown name {unknown[0]!r} (not in the schema)"
    for key, item in value.items():
        spec = properties.get(key)
        if isinstance(spec, dict):
            problem = value_problem(item, spec, f"{where}.{key}")
            if problem:
                return problem
    return None
