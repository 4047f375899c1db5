"""AgentJudgeBench records: one planning task with its tools and verified reference trace.

The field names are those of the released rewritten file ``bfcl_agentic_rewritten.jsonl``
(notes §5): ``id``, ``dag_type``, ``user_message`` (easy query), ``query_medium``,
``query_hard``, ``system_prompt``, ``available_tools``, ``expected_responses``,
``expected_tool_calls``. Object columns may arrive as JSON strings (the Hugging Face
datasets store them that way); they are decoded here. Unknown columns (``tools``,
``thoughts``, ``metadata``...) are ignored.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tooldiag.trajectory import ToolSpec

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")

#: The six DAG topologies of the benchmark (data spelling, with underscores).
DAG_TYPES: tuple[str, ...] = ("linear", "fan_out", "fan_in", "diamond", "optional_enrichment", "loop_like")

#: BFCL-style type names that OpenAI-style function calling does not accept.
_TYPE_FIXES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}


def _decode_json(value: Any, field: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{field} is a string but not valid JSON ({exc.msg})") from None
    return value


class JudgeBenchRecord(BaseModel):
    """One benchmark record; every difficulty shares the tools and the reference trace."""

    model_config = ConfigDict(extra="ignore")

    id: str
    dag_type: str
    #: The easy query (the original user message).
    user_message: str
    query_medium: str | None = None
    query_hard: str | None = None
    rewrite_medium_status: str | None = None
    rewrite_hard_status: str | None = None
    system_prompt: str = ""
    #: OpenAI-style tool schemas ``{"type": "function", "function": {...}}``.
    available_tools: list[dict[str, Any]] = Field(default_factory=list)
    #: The reference conversation: assistant turns with ``tool_calls`` and tool results.
    expected_responses: list[dict[str, Any]] = Field(default_factory=list)
    #: Flat ``[{"name", "arguments"}]``; derived from ``expected_responses`` when absent.
    expected_tool_calls: list[dict[str, Any]] | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("dag_type", mode="before")
    @classmethod
    def _dag_spelling(cls, value: Any) -> Any:
        return value.strip().replace("-", "_") if isinstance(value, str) else value

    @field_validator("available_tools", "expected_responses", "expected_tool_calls", mode="before")
    @classmethod
    def _json_columns(cls, value: Any, info: Any) -> Any:
        return _decode_json(value, info.field_name)

    @field_validator("available_tools", mode="after")
    @classmethod
    def _tools_named(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, tool in enumerate(value):
            body = tool.get("function", tool)
            name = body.get("name") if isinstance(body, dict) else None
            if not isinstance(name, str) or not name:
                raise ValueError(f"tool {i} has no name (write {{'type': 'function', 'function': {{'name': ...}}}})")
        return value

    @model_validator(mode="after")
    def _reference_calls_named(self) -> JudgeBenchRecord:
        for i, call in enumerate(self.expected_calls()):
            if not isinstance(call.get("name"), str) or not call["name"]:
                raise ValueError(f"reference call {i} in expected_responses has no tool name")
        return self

    # ------------------------------------------------------------------ queries

    def query(self, difficulty: str) -> str | None:
        """The user query at ``difficulty`` (``None`` when this record has no such rewrite)."""
        if difficulty == "easy":
            return self.user_message
        if difficulty == "medium":
            return self.query_medium
        if difficulty == "hard":
            return self.query_hard
        raise ValueError(f"unknown difficulty {difficulty!r}")

    # ------------------------------------------------------------------ reference

    def expected_calls(self) -> list[dict[str, Any]]:
        """The reference plan, flat and ordered, as ``[{"name", "arguments"}]``.

        Released rule (``extract_tool_calls``): the assistant messages of
        ``expected_responses`` that carry ``tool_calls`` (a JSON string or a list), in order;
        tool messages are ignored. Falls back to ``expected_tool_calls`` when the
        conversation holds no call.
        """
        calls: list[dict[str, Any]] = []
        for message in self.expected_responses:
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            raw = message.get("tool_calls")
            if not raw:
                continue
            try:
                items = _decode_json(raw, "tool_calls")
            except ValueError:
                continue
            for item in items if isinstance(items, list) else []:
                if not isinstance(item, dict):
                    continue
                function = item.get("function")
                body = function if isinstance(function, dict) else item
                args = body.get("arguments")
                if isinstance(args, str):
                    with contextlib.suppress(json.JSONDecodeError):
                        args = json.loads(args) if args.strip() else {}
                calls.append({"name": body.get("name"), "arguments": args if args is not None else {}})
        if not calls and self.expected_tool_calls:
            return copy.deepcopy(self.expected_tool_calls)
        return calls

    # ------------------------------------------------------------------ tools

    def tool_specs(self) -> list[ToolSpec]:
        """The available tools as :class:`ToolSpec`, with BFCL type names made OpenAI-valid."""
        specs = []
        for tool in self.available_tools:
            body = tool.get("function", tool)
            params = _openai_types(copy.deepcopy(body.get("parameters") or {"type": "object", "properties": {}}))
            specs.append(ToolSpec(name=body["name"], description=body.get("description", ""), parameters=params))
        return specs

    def tool_names(self) -> list[str]:
        return [tool.get("function", tool).get("name") for tool in self.available_tools]

    def fingerprint(self) -> str:
        """Content hash: a run directory refuses a record whose id matches but content differs."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _openai_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "type" and isinstance(value, str):
                out[key] = _TYPE_FIXES.get(value, value)
            else:
                out[key] = _openai_types(value)
        return out
    if isinstance(schema, list):
        return [_openai_types(v) for v in schema]
    return schema
