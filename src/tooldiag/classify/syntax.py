"""Is there a tool call in this emission? Syntax rules, never execution.

Local-model handlers save calls as text, so the classifier has to find them in strings
(paper 001 §3.1: "tool_call is decided from the emission's syntax"). Two layers:

* :func:`paper_text_is_tool_call` and :func:`paper_normalize` reproduce the paper's
  released rules (notes ``action-classes.md`` §1): four start-of-text / tag patterns,
  plus a normalisation step that rewrites whole-emission call structures (``{tool:
  args}``, ``{"name", "arguments"}``, a fenced literal) to the canonical JSON list.
* :func:`text_holds_tool_call` is the ``default`` scheme's superset: it adds marker
  tags of other chat templates, fenced call blocks after a line of prose, and Python
  call syntax (``cd(folder='x')``) read with :mod:`ast` *parsing* only.

Model text is parsed with ``json.loads``, ``ast.literal_eval`` and ``ast.parse``; it is
never evaluated. Every function here returns a value for any input and never raises.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

#: Inputs longer than this are not handed to the parsers (the regex rules still run).
MAX_PARSE_CHARS = 200_000

# -- the paper's four syntax rules (notes §1) ---------------------------------------
_PY_LIST_START = re.compile(r"\s*\[\s*[A-Za-z_][A-Za-z0-9_]*\s*\(")
_TOOL_CALL_TAG = re.compile(r"<tool_call\b", re.IGNORECASE)
_JSON_LIST_START = re.compile(r"\s*\[\s*\{\s*[\"']name[\"']\s*:")
_JSON_OBJECT_START = re.compile(r"\s*\{\s*[\"']name[\"']\s*:\s*[\"'][A-Za-z_][A-Za-z0-9_]*[\"']\s*,")
_ARGUMENTS_KEY = re.compile(r"[\"'](?:arguments|parameters)[\"']\s*:")


def paper_text_is_tool_call(text: str) -> bool:
    """The paper's syntax test on one string (notes §1, rules 1-4).

    (1) starts with ``[`` identifier ``(``; (2) ``<tool_call`` anywhere, any case;
    (3) starts with ``[{"name":`` in either quote style; (4) starts with a single
    ``{"name": "<identifier>",`` object that later has an ``"arguments"`` or
    ``"parameters"`` key.
    """
    if not text:
        return False
    if _PY_LIST_START.match(text) or _TOOL_CALL_TAG.search(text) or _JSON_LIST_START.match(text):
        return True
    head = _JSON_OBJECT_START.match(text)
    return bool(head and _ARGUMENTS_KEY.search(text, head.end()))


# -- normalisation of whole-emission call structures (notes §1) ---------------------
def _named_call(name: Any, arguments: Any) -> dict[str, Any] | None:
    if isinstance(name, str) and isinstance(arguments, dict):
        return {"name": name, "arguments": arguments}
    return None


_NAME_KEY_PAIRS = (("name", "arguments"), ("name", "parameters"), ("tool_call", "arguments"), ("action", "arguments"))


def _call_from_mapping(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    keys = set(value)
    for name_key, args_key in _NAME_KEY_PAIRS:
        if keys == {name_key, args_key}:
            return _named_call(value[name_key], value[args_key])
    if len(value) == 1:
        ((name, arguments),) = value.items()
        return _named_call(name, arguments)
    return None


def calls_from_value(value: Any) -> list[dict[str, Any]] | None:
    """The calls a decoded structure spells, or ``None`` if it is not wholly calls.

    Accepted shapes (paper normalisation): a non-empty list whose every item is a
    call; one call object (``{"name","arguments"}``, ``{"name","parameters"}``,
    ``{"tool_call","arguments"}``, ``{"action","arguments"}`` or ``{tool: {args}}``);
    or ``{"tools": [names], "arguments": {name: args}}``.
    """
    if isinstance(value, list):
        calls = [_call_from_mapping(item) for item in value]
        if not calls or any(call is None for call in calls):
            return None
        return calls  # type: ignore[return-value]
    if isinstance(value, dict):
        direct = _call_from_mapping(value)
        if direct is not None:
            return [direct]
        if set(value) == {"tools", "arguments"}:
            tools, by_tool = value["tools"], value["arguments"]
            if not isinstance(tools, list) or not isinstance(by_tool, dict) or not tools:
                return None
            out = []
            for name in tools:
                if not isinstance(name, str) or name not in by_tool:
                    return None
                call = _named_call(name, by_tool[name])
                if call is None:
                    return None
                out.append(call)
            return out
    return None


def _whole_fence_body(text: str) -> str | None:
    """The body of a triple-backtick fence that makes up the whole emission."""
    stripped = text.strip()
    if not stripped.startswith("```"):
        return None
    lines = stripped.splitlines()[1:]
    if lines and lines[-1].strip().startswith("```"):
        lines = lines[:-1]
    body = "\n".join(lines).strip()
    return body or None


def _parse_literal(text: str) -> Any:
    """``ast.literal_eval`` then ``json.loads``; a sentinel when neither parses."""
    if len(text) > MAX_PARSE_CHARS:
        return _NO_VALUE
    for parser in (ast.literal_eval, json.loads):
        try:
            return parser(text)
        except Exception:  # noqa: BLE001 - SyntaxError, ValueError, TypeError, RecursionError, MemoryError
            continue
    return _NO_VALUE


_NO_VALUE = object()


def _canonical(calls: list[dict[str, Any]]) -> str:
    return json.dumps(calls, ensure_ascii=True, separators=(",", ":"), default=str)


def paper_normalize(emission: Any) -> Any:
    """The paper's ``normalize_emission``: whole-emission calls become ``[{"name","arguments"}]`` JSON.

    Strings already caught by the syntax rules and prose come back unchanged; a
    structured value (list/dict) that is wholly calls, or a string (optionally inside
    one triple-backtick fence) starting with ``{`` or ``[{`` that parses to calls, is
    rewritten. Anything else is returned as given.
    """
    if isinstance(emission, str) and paper_text_is_tool_call(emission):
        return emission
    if isinstance(emission, (list, dict)):
        calls = calls_from_value(emission)
        if calls is not None:
            return _canonical(calls)
        return emission
    if not isinstance(emission, str):
        return emission
    body = _whole_fence_body(emission)
    if body is None:
        body = emission.strip()
    if not (body.startswith("[{") or body.startswith("{")):
        return emission
    value = _parse_literal(body)
    if value is _NO_VALUE:
        return emission
    calls = calls_from_value(value)
    return _canonical(calls) if calls is not None else emission


def structured_call_names(emission: Any) -> list[str]:
    """Tool names in a raw API-handler emission ``[{name: args}, ...]`` or ``{name: args}``.

    BFCL's API handlers store calls this way, with the arguments as a JSON *string*
    (so :func:`calls_from_value` does not accept them). ``[]`` holds no name.
    """
    items = emission if isinstance(emission, list) else [emission]
    names: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            return []
        names.extend(str(key) for key in item)
    return names


#: A reasoning block (``<think>``, ``<thinking>``, ``<reasoning>``; an unclosed one runs to the end):
#: what a model wrote while thinking is not its answer. The one pattern the language detector, the
#: default rules, the learned model's features and the fenced-call test all remove.
REASONING_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)


# -- the default scheme's extensions ----------------------------------------------
_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.DOTALL)
#: A fence whose tag says Python (or says nothing), with the tag and the body apart.
_PYTHON_FENCE = re.compile(
    r"```[ \t]*(python|py|tool_code|tool_call|)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE
)


def _is_call_node(node: ast.AST, *, need_keywords: bool) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    while isinstance(func, ast.Attribute):
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    return bool(node.keywords) or not need_keywords


#: How a call expression, or a list / tuple of calls, can begin: ``f(``, ``[a.b(``, ``(f(``.
_CALL_SHAPE = re.compile(r"[\[(]?\s*[A-Za-z_][\w.]*\s*\(")


def python_call_syntax(text: str) -> bool:
    """True when ``text`` parses (never runs) as ``[f(a=1), g()]`` or a bare ``f(a=1, ...)``.

    A bare single call needs at least one keyword argument, so that prose such as
    ``Hello(world)`` is not mistaken for a call.
    """
    body = text.strip()
    if not body or len(body) > MAX_PARSE_CHARS or not _CALL_SHAPE.match(body) or not body.endswith((")", "]", ",")):
        return False  # cannot be a call, a list or a tuple of calls: skip the parser
    try:
        tree = ast.parse(body, mode="eval").body
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError
        return False
    if isinstance(tree, (ast.List, ast.Tuple)):
        return bool(tree.elts) and all(_is_call_node(elt, need_keywords=False) for elt in tree.elts)
    return _is_call_node(tree, need_keywords=True)


def python_call_block(text: str) -> bool:
    """True when ``text`` parses (never runs) as calls, one statement per line (Hammer, xLAM
    in a ```python fence): ``send_message(receiver_id="U2", message="x")\nview_messages_sent()``.

    Every statement must be an expression whose value is a call on a (dotted) name, and
    there must be at least two calls or one with a keyword argument; a ``def``, ``class``,
    ``import`` or assignment anywhere makes it a program, not a list of calls.
    """
    body = text.strip()
    if not body or "\n" not in body or len(body) > MAX_PARSE_CHARS or not _CALL_SHAPE.match(body):
        return False
    if not body.endswith(")"):
        return False
    try:
        statements = ast.parse(body, mode="exec").body
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError
        return False
    calls = [statement.value for statement in statements if isinstance(statement, ast.Expr)]
    if not calls or len(calls) < len(statements) or not all(_is_call_node(c, need_keywords=False) for c in calls):
        return False
    return len(calls) >= 2 or _is_call_node(calls[0], need_keywords=True)


_EMBEDDED_LIST_START = re.compile(r"\[\s*[A-Za-z_][A-Za-z0-9_.]*\s*\(")


def embedded_call_list(text: str, *, max_starts: int = 10, max_ends: int = 8, window: int = 5000) -> bool:
    """A ``[f(a=1), ...]`` call list after some prose ("I will now trade. [place_order(...)]").

    Each candidate ``[name(`` is tried against the next few ``]`` within ``window``
    characters; a candidate counts when it parses as a list of calls and at least one
    call has a keyword argument or a tool-like name (snake_case or camelCase), so that
    "[see(above)]" in prose does not; or when it closes the emission right after a colon
    or a line break ("I'll list them first: [ls()]"), where a harness would look for it.
    """
    for start_match in list(_EMBEDDED_LIST_START.finditer(text))[:max_starts]:
        start = start_match.start()
        end = start
        for _ in range(max_ends):
            end = text.find("]", end + 1, start + window)
            if end < 0:
                break
            candidate = text[start : end + 1]
            if python_call_syntax(candidate) and (
                _has_keyword_call(candidate) or _closes_after_lead_in(text, start, end)
            ):
                return True
    return False


def fenced_python_calls(text: str, max_fences: int = 8) -> bool:
    """A ```python (or untagged) fence anywhere in the answer whose body is only calls on
    plain names ("Booking it now:\n```python\nbook_flight(travel_from='SFO', ...)\n```"), the
    layout of xLAM- and Hammer-style handlers that put prose or a think block around the calls.

    Calls on dotted names (``df.groupby(by="x")``) are library code in an explanation, not a
    tool call, and a fence inside a reasoning block is not the answer.
    """
    if "<" in text:
        text = REASONING_BLOCK.sub(" ", text)
    for match in itertools.islice(_PYTHON_FENCE.finditer(text), max_fences):
        body = match.group(2).strip()
        if not body or not (python_call_syntax(body) or python_call_block(body) or _bare_tool_call(body)):
            continue
        try:
            tree = ast.parse(body, mode="exec")
        except Exception:  # noqa: BLE001 - parsed above; any failure here means "not a call list"
            continue
        outer = _outer_calls(tree)
        if outer and all(isinstance(call.func, ast.Name) for call in outer):
            return True
    return False


_BARE_TOOL_CALL = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+|[a-z0-9][A-Z][A-Za-z0-9]*)+\(\)")


def _bare_tool_call(body: str) -> bool:
    """One argument-less call of a tool-like name (snake_case or camelCase), alone in its fence:
    ```python\nlist_all_users()\n``` (prose "see()" has no such name)."""
    return bool(_BARE_TOOL_CALL.fullmatch(body))


def _outer_calls(tree: ast.Module) -> list[ast.Call]:
    """The calls a call-list body is made of (its statements, or the elements of its list)."""
    out: list[ast.Call] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Expr):
            continue
        value = statement.value
        items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        out.extend(item for item in items if isinstance(item, ast.Call))
    return out


def _closes_after_lead_in(text: str, start: int, end: int) -> bool:
    """The span ``text[start:end+1]`` ends the text and follows a colon or a line break."""
    if text[end + 1 :].strip():
        return False
    lead = text[:start].rstrip(" \t")
    return not lead or lead.endswith((":", "\n"))


def _has_keyword_call(text: str) -> bool:
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except Exception:  # noqa: BLE001 - any text that does not parse holds no keyword call
        return False
    if not isinstance(tree, ast.List):
        return False
    for element in tree.elts:
        if not isinstance(element, ast.Call):
            continue
        name = element.func.attr if isinstance(element.func, ast.Attribute) else getattr(element.func, "id", "")
        if element.keywords or "_" in name or name != name.lower():
            return True
    return False


def _json_call_payload(body: str) -> bool:
    stripped = body.strip()
    if not (stripped.startswith("{") or stripped.startswith("[")):
        return False
    if paper_text_is_tool_call(stripped):
        return True
    value = _parse_literal(stripped)
    if value is _NO_VALUE:
        return _leading_json_call(stripped)
    if calls_from_value(value) is not None:
        return True
    return _openai_style_calls(value) or _function_keyed_calls(value)


def _leading_json_call(text: str) -> bool:
    """A JSON call object or list that opens the text, with prose after it
    ('{"function": "translate_text", ...}\n\nI'll have the German version in a sec!')."""
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return False
    if not text[end:].strip():
        return False  # the whole text: the other tests have judged it
    return calls_from_value(value) is not None or _openai_style_calls(value) or _function_keyed_calls(value)


#: Argument keys of the call shapes :func:`_function_keyed_calls` accepts.
_ARGUMENT_KEYS = ("arguments", "parameters", "args")


def _function_keyed_calls(value: Any) -> bool:
    """Call objects the paper's normalisation does not list (kept out of it, so the ``paper``
    scheme stays as released): ``{"function": "name", "arguments": {...}}`` and
    ``{"type": "function", "name": "name", "parameters": {...}}``, alone or in a list."""
    return _every_call_object(value, _function_keyed_call)


def _function_keyed_call(item: dict[str, Any]) -> bool:
    if item.get("type", "function") != "function" or len(set(item) - {"type", "id"}) != 2:
        return False
    name = item.get("function", item.get("name"))
    arguments = next((item[key] for key in _ARGUMENT_KEYS if key in item), None)
    return isinstance(name, str) and bool(name) and isinstance(arguments, dict)


def _every_call_object(value: Any, is_call: Callable[[dict[str, Any]], bool]) -> bool:
    """``value`` (one object or a non-empty list of them) holds only objects ``is_call`` accepts."""
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(item, dict) and is_call(item) for item in items)


_LINE_OPENS_JSON = re.compile(r"\n[ \t]*(?=[\[{])")


def _json_call_after_prose(text: str, max_starts: int = 5) -> bool:
    """A JSON call payload that starts a line after some prose and runs to the end of the text
    ("Sure, I'll check.\n\n{"name": "get_order_details", "arguments": {...}}")."""
    starts = itertools.islice(_LINE_OPENS_JSON.finditer(text), max_starts)
    return any(_json_call_payload(text[match.end() :]) for match in starts)


def _openai_style_calls(value: Any) -> bool:
    """``{"tool_calls": [...]}``, ``{"function": {"name": ...}}`` or a list of those."""
    return _every_call_object(value, _openai_style_call)


def _openai_style_call(item: dict[str, Any]) -> bool:
    if isinstance(item.get("tool_calls"), list) and item["tool_calls"]:
        return True
    function = item.get("function")
    return isinstance(function, dict) and isinstance(function.get("name"), str)


@lru_cache(maxsize=64)
def _marker_pattern(markers: tuple[str, ...]) -> re.Pattern[str] | None:
    """One case-insensitive search for any marker (a C-level scan instead of one ``in`` per marker)."""
    literal = sorted({marker.lower() for marker in markers if marker}, key=lambda m: (-len(m), m))
    return re.compile("|".join(map(re.escape, literal)), re.IGNORECASE) if literal else None


@lru_cache(maxsize=64)
def _marker_openers(markers: tuple[str, ...]) -> frozenset[str] | None:
    """One caseless character of each marker ("<" of "<tool_call", "[" of "functools["), else ``None``.

    An ASCII character that is no letter or digit has no other case, so a case-insensitive
    match of the marker needs it in the text as it is: most emissions hold neither "<" nor
    "[" and skip the case-insensitive scan. A marker without such a character gives ``None``
    (every text is scanned).
    """
    anchors = set()
    for marker in markers:
        if not marker:
            continue
        anchor = next((char for char in marker if char.isascii() and not char.isalnum()), None)
        if anchor is None:
            return None
        anchors.add(anchor)
    return frozenset(anchors) if anchors else None


def _may_hold_marker(text: str, markers: tuple[str, ...]) -> bool:
    openers = _marker_openers(markers)
    return openers is None or any(opener in text for opener in openers)


def _may_hold_call_syntax(text: str) -> bool:
    """Could any call syntax below (not the markers) be in ``text``? Most emissions are prose without these.

    Every test after the markers needs one of four characters: the paper's rules ``[``,
    ``<tool_call`` or ``{``; the normalisation and JSON payloads ``{`` or ``[``; Python call
    syntax (whole, per line, fenced or embedded) an opening ``(``. Four C-level ``in`` tests
    replace a dozen regex scans and parser guards on plain text.
    """
    return "(" in text or "[" in text or "{" in text or "<" in text


def text_holds_tool_call(text: str, markers: Iterable[str] = ()) -> bool:
    """The ``default`` scheme's syntax test: the paper's rules and normalisation, plus

    * any marker of ``markers`` (chat-template call tags such as ``<function=``,
      ``[TOOL_CALLS]``, ``<|python_tag|>``), case-insensitive;
    * the whole text, or the body of a whole-emission fence, in Python call syntax (a call
      list, one call, or one call per line: :func:`python_call_block`);
    * a fenced block anywhere whose body is a JSON/literal call payload;
    * a ``[f(a=1)]`` call list after prose (:func:`embedded_call_list`).
    """
    if not text or not text.strip():
        return False
    marker_pattern = _marker_pattern(tuple(markers))
    if marker_pattern is not None and _may_hold_marker(text, tuple(markers)) and marker_pattern.search(text):
        return True
    if not _may_hold_call_syntax(text):
        return False  # prose: every test below needs one of "( [ { <" (see _may_hold_call_syntax)
    if paper_text_is_tool_call(text):
        return True
    if "{" in text and paper_normalize(text) != text:  # it only rewrites text that opens with "{" or "[{"
        return True
    body = _whole_fence_body(text)
    if python_call_syntax(body if body is not None else text):
        return True
    if python_call_block(body if body is not None else text):
        return True
    if _json_call_payload(text):
        return True
    if "[" in text and len(text) <= MAX_PARSE_CHARS and embedded_call_list(text):
        return True
    if ("\n{" in text or "\n[" in text) and len(text) <= MAX_PARSE_CHARS and _json_call_after_prose(text):
        return True
    if "```" in text and len(text) <= MAX_PARSE_CHARS:
        for match in _FENCE.finditer(text):
            if _json_call_payload(match.group(1)):
                return True
        if fenced_python_calls(text):
            return True
    return False
