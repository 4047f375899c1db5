"""Decode a model step into BFCL call strings, as BFCL's FC handlers do.

BFCL's OpenAI FC handler stores a step as ``[{name: arguments_json}, ...]`` when the
message has tool calls and as the message text otherwise, then decodes it with
``convert_to_function_call``: ``json.loads`` each argument string and build
``name(k=repr(v),...)``. Text (or ``None``) makes the decode raise; an empty list
decodes to ``[]``. Either way the turn ends there, and the grader drops the step.

Whatever makes BFCL's decode raise makes this one raise :class:`DecodeError`: invalid
JSON, an integer of more than 4300 digits (Python's int-from-str limit, the same in
BFCL's process), nesting past the recursion limit; so such a step ends the turn here as
it does in BFCL, instead of failing the case.
"""

from __future__ import annotations

import json
from typing import Any

from tooldiag.suites.bfcl.executor import render_call
from tooldiag.trajectory import Emission, ToolCall


class DecodeError(Exception):
    """The step holds no decodable call list (BFCL's decode raised)."""


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def _arguments_item(call: ToolCall) -> str | None:
    """The arguments as the OpenAI SDK hands them to BFCL: the raw text, else ``None``.

    A server that sends no ``arguments`` (or ``null``) gives BFCL ``None``, on which its
    decode fails and the turn ends; it is not read as a call without arguments.
    """
    if call.raw_arguments is not None:
        return call.raw_arguments
    if call.arguments is not None:  # built by a harness-side policy, not parsed from text
        return json.dumps(call.arguments)
    return None


def fc_result_item(emission: Emission) -> Any:
    """The step as BFCL's OpenAI FC handler records it in ``result``."""
    if emission.tool_calls:
        return [{call.name: _arguments_item(call)} for call in emission.tool_calls]
    return emission.text


def convert_to_function_call(function_call_list: Any) -> list[str]:
    """BFCL's ``convert_to_function_call`` without ever executing anything."""
    if type(function_call_list) == dict:  # noqa: E721
        function_call_list = [function_call_list]
    if function_call_list is None:
        raise DecodeError("the step holds no tool call (None)")
    if isinstance(function_call_list, str):
        if function_call_list == "":
            return []
        raise DecodeError("the step is text, not a tool-call list")
    calls: list[str] = []
    for function_call in function_call_list:
        if not isinstance(function_call, dict):
            raise DecodeError(f"step item is a {type(function_call).__name__}, not a {{name: arguments}} dict")
        for name, value in function_call.items():
            if type(value) == str:  # noqa: E721
                try:
                    value = json.loads(value)
                except (ValueError, RecursionError) as exc:
                    # ValueError covers JSONDecodeError and an integer past Python's
                    # 4300-digit limit; RecursionError, nesting past the recursion limit.
                    # BFCL's ``json.loads`` raises the same, and its handler ends the turn.
                    raise DecodeError(f"arguments of {name!r} are not valid JSON: {_short(exc)}") from exc
            if not isinstance(value, dict):
                raise DecodeError(f"arguments of {name!r} are a {type(value).__name__}, not an object")
            try:
                calls.append(render_call(str(name), value))
            except (ValueError, RecursionError) as exc:  # BFCL's ``repr`` raises the same
                raise DecodeError(f"arguments of {name!r} cannot be written as a call: {_short(exc)}") from exc
    return calls


def fc_decode(emission: Emission) -> list[str]:
    """Decode one of our emissions exactly as BFCL decodes the same OpenAI response."""
    return convert_to_function_call(fc_result_item(emission))


def is_empty_execute_response(decoded: list) -> bool:
    """BFCL's ``is_empty_execute_response``: ``[]`` or ``[[]]``-like."""
    return len(decoded) == 0 or (len(decoded) == 1 and len(decoded[0]) == 0)
