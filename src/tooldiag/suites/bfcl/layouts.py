"""The step layouts BFCL's handlers write into result files, and one decoder per layout.

A BFCL result file stores, per case, ``result[turn][step]``: the raw model response of
each step, in whatever shape the model's handler keeps it. ``bfcl evaluate`` turns a
step back into call strings with that handler's ``decode_execute(result,
has_tool_call_tag=False)`` and drops the step when the decode raises or yields nothing
(``eval_runner._evaluate_single_multi_turn_entry``). Each decoder below re-implements
one handler's ``decode_execute`` (bfcl-eval 2026.3.23), quirks included, and never
``eval``s anything:

``api_fc``
    API FC handlers (OpenAI, Claude, Mistral, ...): a step is a list of
    ``{name: arguments_json}`` dicts, or the reply text. ``convert_to_function_call``
    in ``model_handler/utils.py`` (our :func:`tooldiag.suites.bfcl.decode.convert_to_function_call`).
``json_list``
    Local FC handlers such as xLAM (``local_inference/salesforce_llama.py``,
    ``salesforce_qwen.py``): JSON-list text ``[{"name": ..., "arguments": {...}}]``,
    a single JSON object, or ``;``-separated objects; plain text fails to decode.
``tool_call_tags``
    Qwen-style FC handler (``local_inference/qwen_fc.py``): ``<tool_call>\\n{json}\\n</tool_call>``
    blocks anywhere in prose; blocks that are not JSON are skipped.
``fenced_python``
    Hammer (``local_inference/hammer.py``): a list fenced in triple backticks. BFCL
    strips the backticks and reads the rest with ``json.loads``; anything that is not
    JSON (Python literals with single quotes, a ``json`` language tag) decodes to no call.
``prompt``
    Prompt-mode handlers (``default_decode_execute_prompting``): ``[f(a=1), g(b='x')]``
    parsed with ``ast``; keyword arguments only (positional ones are dropped), bare
    names become strings, ``+5``/``not x`` on a constant become its negation, calls
    nested as argument values become call strings, and so on, as in BFCL.

The one deliberate difference: where BFCL's ``resolve_ast_by_type`` ``eval``s a binary
operation inside an argument value, we compute only arithmetic on number literals
(``+ - * / // % ** | & ^ << >>``, unary ``- + ~ not``; integer results bounded to
100,000 bits) and treat any other operation
(``'a' + 'b'``, ``len(x) + 1``, ...) as an undecodable step. BFCL's ``Lambda`` branch
always raises (it indexes ``value.body[0]``), so it needs no ``eval`` here either.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tooldiag.suites.bfcl.arithmetic import NUMBER_TYPES, ArithmeticRefused, binary, unary
from tooldiag.suites.bfcl.decode import DecodeError, convert_to_function_call
from tooldiag.trajectory import ToolCall

LAYOUT_NAMES = ("api_fc", "json_list", "tool_call_tags", "fenced_python", "prompt")


# -- json_list: SalesforceLlamaHandler / SalesforceQwenHandler.decode_execute ----------
def _json_list_parse(result: Any) -> list[tuple[Any, Any]]:
    try:
        function_calls = json.loads(result)
        if not isinstance(function_calls, list):
            function_calls = [function_calls]
    except json.JSONDecodeError:
        function_calls = [json.loads(call.strip()) for call in result.split(";")]
    return [(func_call["name"], func_call["arguments"]) for func_call in function_calls]


def decode_json_list(result: Any) -> list[str]:
    return [
        f"{name}({','.join([f'{k}={v!r}' for k, v in arguments.items()])})"
        for name, arguments in _json_list_parse(result)
    ]


# -- tool_call_tags: QwenFCHandler.decode_execute + _extract_tool_calls ----------------
_TOOL_CALL_BLOCK = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)


def _tags_parse(result: Any) -> list[tuple[Any, Any]]:
    tool_calls = []
    for match in _TOOL_CALL_BLOCK.findall(result):
        with contextlib.suppress(Exception):  # BFCL skips blocks that are not JSON
            tool_calls.append(json.loads(match))
    if any(type(item) != dict for item in tool_calls):  # noqa: E721 - BFCL's exact check
        raise DecodeError(f"a <tool_call> block is not a JSON object: {result!r:.200}")
    return [(item["name"], item["arguments"]) for item in tool_calls]


def decode_tool_call_tags(result: Any) -> list[str]:
    return convert_to_function_call([{name: arguments} for name, arguments in _tags_parse(result)])


# -- fenced_python: HammerHandler.decode_execute + xlam_json_to_python_tool_calls ------
def _fenced_parse(result: Any) -> list[tuple[Any, Any]]:
    result = result.replace("```", "")
    try:
        result = json.loads(result)
    except Exception:  # noqa: BLE001 - BFCL's bare except: anything not JSON is "no call"
        result = []
    if isinstance(result, list):
        tool_calls = result
    elif isinstance(result, dict):
        tool_calls = result.get("tool_calls", [])
    else:
        tool_calls = []
    if not isinstance(tool_calls, list):
        tool_calls = [tool_calls]
    return [(c.get("name", ""), c.get("arguments", {})) for c in tool_calls if isinstance(c, dict)]


def decode_fenced_python(result: Any) -> list[str]:
    return [
        f"{name}({', '.join([f'{key}={value!r}' for key, value in arguments.items()])})"
        for name, arguments in _fenced_parse(result)
    ]


# -- prompt: default_decode_execute_prompting, ast_parse, resolve_ast_* ----------------


class UnsafeExpression(DecodeError):
    """An argument value BFCL would ``eval`` and we will not: the step is undecodable."""


def _arithmetic(node: ast.AST) -> Any:
    """Numeric arithmetic on number literals: what ``eval`` of a BinOp gives, nothing more."""
    try:
        if isinstance(node, ast.Constant) and type(node.value) in NUMBER_TYPES:
            return node.value
        if isinstance(node, ast.UnaryOp):
            return unary(node.op, _arithmetic(node.operand))
        if isinstance(node, ast.BinOp):
            return binary(node.op, _arithmetic(node.left), _arithmetic(node.right))
    except ArithmeticRefused as exc:
        raise UnsafeExpression(str(exc)) from None
    raise UnsafeExpression(f"BFCL would eval {ast.unparse(node)!r}; only numeric arithmetic is computed")


def _resolve_value(value: ast.AST | None) -> Any:
    """``resolve_ast_by_type``, branch for branch (``None``, a ``**`` key, ends in its last raise)."""
    if isinstance(value, ast.Constant):
        return "..." if value.value is Ellipsis else value.value
    if isinstance(value, ast.UnaryOp):
        # BFCL: ``-value.operand.value`` whatever the operator (so ``+5`` -> -5, ``not True`` -> -1).
        if not isinstance(value.operand, ast.Constant) or type(value.operand.value) not in NUMBER_TYPES:
            raise DecodeError(f"unary operator on {ast.unparse(value.operand)!r}")
        number: Any = value.operand.value
        return -number
    if isinstance(value, ast.List):
        return [_resolve_value(v) for v in value.elts]
    if isinstance(value, ast.Dict):
        return {_resolve_value(k): _resolve_value(v) for k, v in zip(value.keys, value.values)}
    if isinstance(value, ast.BinOp):
        return _arithmetic(value)
    if isinstance(value, ast.Name):
        return value.id
    if isinstance(value, ast.Call):
        return ast.unparse(value) if len(value.keywords) == 0 else _resolve_call(value)
    if isinstance(value, ast.Tuple):
        return tuple(_resolve_value(v) for v in value.elts)
    if isinstance(value, ast.Lambda):
        raise DecodeError("lambda argument (BFCL's branch raises on value.body[0])")
    if isinstance(value, ast.Subscript):
        return ast.unparse(value.value) + "[" + ast.unparse(value.slice) + "]"
    raise DecodeError(f"Unsupported AST type: {type(value)}")


def _resolve_call(elem: ast.Call) -> dict[Any, dict[Any, Any]]:
    """``resolve_ast_call``: dotted name, keyword arguments only."""
    func_parts = []
    func_part = elem.func
    while isinstance(func_part, ast.Attribute):
        func_parts.append(func_part.attr)
        func_part = func_part.value
    if isinstance(func_part, ast.Name):
        func_parts.append(func_part.id)
    args_dict = {}
    for arg in elem.keywords:
        args_dict[arg.arg] = _resolve_value(arg.value)
    return {".".join(reversed(func_parts)): args_dict}


def _prompt_parse(result: Any) -> list[dict[Any, dict[Any, Any]]]:
    result = result.strip("`\n ")
    if not result.startswith("["):
        result = "[" + result
    if not result.endswith("]"):
        result = result + "]"
    cleaned_input = result.strip().strip("'")
    parsed = ast.parse(cleaned_input, mode="eval")
    if isinstance(parsed.body, ast.Call):
        return [_resolve_call(parsed.body)]
    if not isinstance(parsed.body, (ast.List, ast.Tuple, ast.Set)):
        raise DecodeError(f"{type(parsed.body).__name__} is not a list of calls")
    extracted = []
    for elem in parsed.body.elts:
        if not isinstance(elem, ast.Call):
            raise DecodeError(f"list item {ast.unparse(elem)!r} is not a call")
        extracted.append(_resolve_call(elem))
    return extracted


def parse_nested_value(value: Any) -> str:
    """BFCL's ``parse_nested_value``: dicts of dicts are rendered as calls."""
    if isinstance(value, dict):
        if all(isinstance(v, dict) for v in value.values()):
            func_name = list(value.keys())[0]  # noqa: RUF015 - IndexError on {} as in BFCL
            args = value[func_name]
            args_str = ", ".join(f"{k}={parse_nested_value(v)}" for k, v in args.items())
            return f"{func_name}({args_str})"
        return "{" + ", ".join(f"'{k}': {parse_nested_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def decode_prompt(result: Any) -> list[str]:
    """``default_decode_execute_prompting`` + ``decoded_output_to_execution_list``."""
    execution_list = []
    for function_call in _prompt_parse(result):
        for key, value in function_call.items():
            args_str = ", ".join(f"{k}={parse_nested_value(v)}" for k, v in value.items())
            execution_list.append(f"{key}({args_str})")
    return execution_list


def _prompt_pairs(result: Any) -> list[tuple[Any, Any]]:
    return [pair for call in _prompt_parse(result) for pair in call.items()]


# -- api_fc --------------------------------------------------------------------------
def _api_fc_pairs(result: Any) -> list[tuple[Any, Any]]:
    items = [result] if isinstance(result, dict) else result
    if not isinstance(items, list):
        return []
    return [pair for item in items if isinstance(item, dict) for pair in item.items()]


# -- registry ------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """One result layout: who writes it and how BFCL decodes it."""

    name: str
    handlers: str
    #: ``decode_execute(step, has_tool_call_tag=False)``: call strings, raises when BFCL's does.
    decode: Callable[[Any], list[str]]
    #: ``(name, arguments)`` pairs the handler reads from a step (raises when it cannot).
    pairs: Callable[[Any], list[tuple[Any, Any]]]
    #: Whether steps are text (every layout but ``api_fc``).
    text_steps: bool = True

    def tool_calls(self, step: Any) -> list[ToolCall]:
        """The calls this layout reads from ``step``, for the action classifier; never raises."""
        try:
            pairs = self.pairs(step)
        except Exception:  # noqa: BLE001 - an unreadable step holds no call
            return []
        return [_tool_call(name, arguments) for name, arguments in pairs]


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def _tool_call(name: Any, arguments: Any) -> ToolCall:
    name = str(name)
    if isinstance(arguments, str):
        return ToolCall.from_raw(name, arguments)
    if isinstance(arguments, dict):
        try:
            safe = _jsonable({str(k): v for k, v in arguments.items()})
        except (TypeError, ValueError, RecursionError) as exc:
            return ToolCall(
                name=name, raw_arguments=repr(arguments), parse_error=f"arguments not JSON-representable: {exc}"
            )
        return ToolCall.from_raw(name, safe)  # one rule for decoded arguments (nesting cap, unwritable ints)
    return ToolCall(
        name=name,
        raw_arguments=repr(arguments),
        parse_error=f"arguments are a {type(arguments).__name__}, not an object",
    )


LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        Layout(
            "api_fc",
            "API FC handlers (OpenAI, Claude, Mistral, ... with -FC)",
            convert_to_function_call,
            _api_fc_pairs,
            text_steps=False,
        ),
        Layout("json_list", "local FC handlers writing JSON lists (xLAM)", decode_json_list, _json_list_parse),
        Layout("tool_call_tags", "<tool_call> blocks with prose (Qwen FC)", decode_tool_call_tags, _tags_parse),
        Layout("fenced_python", "fenced lists (Hammer)", decode_fenced_python, _fenced_parse),
        Layout("prompt", "prompt-mode call lists [f(a=1)]", decode_prompt, _prompt_pairs),
    )
}


# -- detection -----------------------------------------------------------------------
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*(.*?)\s*(?:```\s*)?$", re.DOTALL)
_PROMPT_HEAD = re.compile(r"^\[?\s*[A-Za-z_][\w.]*\(")
_JSON_HEAD = re.compile(r"""^\[?\s*\{\s*["']name["']""")


def step_misfit(step: Any) -> str | None:
    """Why ``step`` fits no layout, or ``None`` when some layout can hold it."""
    if step is None or isinstance(step, (str, dict)):
        return None
    if isinstance(step, list):
        bad = next((item for item in step if not isinstance(item, dict)), None)
        if bad is None:
            return None
        return f"a list holding a {type(bad).__name__} (API FC steps hold {{name: arguments}} dicts)"
    return f"a {type(step).__name__} (steps are text, or lists of {{name: arguments}} dicts)"


def _decodes(layout: Layout, step: Any) -> bool:
    try:
        decoded = layout.decode(step)
    except Exception:  # noqa: BLE001
        return False
    return not (len(decoded) == 0 or (len(decoded) == 1 and len(decoded[0]) == 0))


def _literal_container(text: str) -> bool:
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except Exception:  # noqa: BLE001
            continue
        return isinstance(value, (list, dict))
    return False


def step_votes(step: Any) -> set[str]:
    """The layouts whose syntax this step shows (empty for plain text)."""
    if isinstance(step, (list, dict)):
        return {"api_fc"}
    if not isinstance(step, str):
        return set()
    votes = {name for name, layout in LAYOUTS.items() if layout.text_steps and _decodes(layout, step)}
    if "<tool_call>" in step:
        votes.add("tool_call_tags")
    fence = _FENCE.match(step)
    if fence and "prompt" not in votes and _literal_container(fence.group(1)):
        votes.add("fenced_python")
    stripped = step.strip("`\n ")
    if not votes and not step.lstrip().startswith("```"):
        if _JSON_HEAD.match(stripped):
            votes.add("json_list")
        elif _PROMPT_HEAD.match(stripped):
            votes.add("prompt")
    return votes


@dataclass
class Detection:
    """The layout a file's steps show, with the evidence."""

    #: ``None`` when no step shows any call syntax (text only: every layout grades it alike).
    layout: str | None
    votes: dict[str, int]
    steps: int


def detect_layout(steps: Iterable[Any]) -> Detection:
    """Pick the layout most steps show; ties go to the earlier one in :data:`LAYOUT_NAMES`
    (so JSON lists without fences read as ``json_list``, not ``fenced_python``)."""
    votes: Counter[str] = Counter()
    count = 0
    for step in steps:
        count += 1
        votes.update(step_votes(step))
    if not votes:
        return Detection(None, {}, count)
    best = max(LAYOUT_NAMES, key=lambda name: (votes[name], -LAYOUT_NAMES.index(name)))
    return Detection(best, {name: votes[name] for name in LAYOUT_NAMES if votes[name]}, count)
