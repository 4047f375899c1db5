"""BFCL function docs -> OpenAI function-calling tools.

Mirrors ``convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)``
and ``_cast_to_openai_type`` in ``bfcl_eval/model_handler/utils.py`` (2026.3.23):
``parameters.type`` forced to ``object``; Gorilla types mapped to OpenAPI types
(``dict -> object``, ``float -> number`` plus ``format: float`` and the description
suffix " This is a float type value.", unknown -> ``string``); the non-standard
``response`` field is kept, as BFCL's OpenAI handler keeps it.
"""

from __future__ import annotations

import copy
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


def to_tool_specs(docs: list[dict[str, Any]]) -> list[ToolSpec]:
    """Docs as :class:`ToolSpec` (``response`` kept in ``extra``)."""
    specs = []
    for doc in docs:
        item = convert_doc(doc)
        extra = {k: v for k, v in item.items() if k not in ("name", "description", "parameters")}
        specs.append(
            ToolSpec(
                name=item["name"], description=item.get("description", ""), parameters=item["parameters"], extra=extra
            )
        )
    return specs
