"""BFCL function docs -> OpenAI function-calling tools.

Mirrors ``convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)``
and ``_cast_to_openai_type`` in ``bfcl_eval/model_handler/utils.py`` (2026.3.23):
``parameters.type`` forced to ``object``; Gorilla types mapped to OpenAPI types
(``dict -> object``, ``float -> number`` plus ``format: float`` and the description
suffix " This is a float type value.", unknown -> ``string``); the non-standard
``response`` field is kept, as BFCL's OpenAI handler keeps it.

Why :func:`to_tool_specs` remembers what it built: every case of a category carries the same
docs (freshly parsed per case), and converting them (a deep copy, the type casts, pydantic
validation of each :class:`ToolSpec`) was 5 % of a run's CPU (issue 16, bench/README.md
"Fourth pass"). A tool set is converted once, keyed by its docs' JSON text (which tells apart
key order, ``1`` from ``1.0``, anything that changes the result), and every case with that set
gets the same list of the same specs: tools are values (``ToolListEncoder``'s rule), so nobody
edits them in place, and the one list lets the request encoder reuse its JSON across cases.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from tooldiag.trajectory import ToolSpec

#: ``GORILLA_TO_OPENAPI`` (constants/type_mappings.py).
GORILLA_TO_OPENAPI = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
    "dict": "object", "object": "object", "tuple": "array", "any": "string",
    "byte": "integer", "short": "integer", "long": "integer", "double": "number",
    "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
    "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
    "String": "string", "Bigint": "integer",
}  # fmt: skip


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    for value in properties.values():
        if "type" not in value:
            value["type"] = "string"
        else:
            var_type = value["type"]
            if var_type == "float":
                value["format"] = "float"
                value["description"] += " This is a float type value."
            value["type"] = GORILLA_TO_OPENAPI.get(var_type, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast(value["properties"])
            elif "items" in value:
                items = value["items"]
                items["type"] = GORILLA_TO_OPENAPI[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = GORILLA_TO_OPENAPI[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast(items["properties"])
    return properties


def convert_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """One BFCL doc -> the ``function`` object BFCL's OpenAI handler sends."""
    item = copy.deepcopy(doc)
    if "." in item["name"]:
        item["name"] = re.sub(r"\.", "_", item["name"])
    item["parameters"]["type"] = "object"
    item["parameters"]["properties"] = _cast(item["parameters"]["properties"])
    return item


def to_openai_tools(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": convert_doc(d)} for d in docs]


#: Bounds of the caches below: far more tool sets and docs than BFCL has (8 classes), so in
#: practice every one is built once; past the bound a cache starts again rather than grow.
_CACHE_LIMIT = 512
#: A tool set's docs as JSON text -> its specs (one list shared by every case with that set).
_SPEC_LISTS: dict[str, list[ToolSpec]] = {}
#: One doc as JSON text -> its spec (shared by the tool sets that hold the doc).
_SPECS: dict[str, ToolSpec] = {}


def _remember(cache: dict[str, Any], key: str, value: Any) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value


def _build_spec(doc: dict[str, Any]) -> ToolSpec:
    item = convert_doc(doc)
    extra = {k: v for k, v in item.items() if k not in ("name", "description", "parameters")}
    return ToolSpec(
        name=item["name"], description=item.get("description", ""), parameters=item["parameters"], extra=extra
    )


def _spec(doc: dict[str, Any]) -> ToolSpec:
    try:
        key = json.dumps(doc)
    except (TypeError, ValueError):  # not JSON (no BFCL doc): built each time
        return _build_spec(doc)
    spec = _SPECS.get(key)
    if spec is None:
        spec = _build_spec(doc)
        _remember(_SPECS, key, spec)
    return spec


def to_tool_specs(docs: list[dict[str, Any]]) -> list[ToolSpec]:
    """Docs as :class:`ToolSpec` (``response`` kept in ``extra``).

    The list (and its specs) is shared with every other call for the same docs (module
    docstring): treat it as a value; build a new list rather than edit it in place.
    """
    try:
        key = json.dumps(docs)
    except (TypeError, ValueError):  # not JSON (no BFCL doc): built each time
        return [_build_spec(doc) for doc in docs]
    specs = _SPEC_LISTS.get(key)
    if specs is None:
        specs = [_spec(doc) for doc in docs]
        _remember(_SPEC_LISTS, key, specs)
    return specs
