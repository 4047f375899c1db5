"""Gates 4-6 of paper 000 §3.1: argument sufficiency, grounding, query naturalness.

These compare the query with the plan: every argument value must come from the query or an
earlier output, every value the query states must be used and every output must feed something,
and the easy query must read as a person's request. What "stated" and "used" mean is defined once
in ``gate_values.py``; the rules are written in docs/judgebench.md ("Quality gates").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tooldiag.suites.judgebench.construct.gate_values import (
    as_dict,
    candidate_values,
    contains_phrase,
    dates_in,
    fold,
    is_number,
    leaves,
    numbers_in,
    same_number,
    words_in,
)
from tooldiag.suites.judgebench.construct.record_view import (
    GateResult,
    PlanCall,
    RecordView,
    function_body,
    gate_result,
    view_of,
)

#: A free-text argument is sufficient when this share of its content words is in the query or earlier outputs.
FREE_TEXT_COVERAGE = 0.5
#: Words of a boolean parameter's name that say nothing about which behaviour the query asks for.
_FLAG_TEXT = "is has include includes enable enabled use with should allow flag do only"
_FLAG_WORDS = frozenset(_FLAG_TEXT.split())


@dataclass(frozen=True)
class _Stated:
    """What a text states, in the forms the comparisons use."""

    folded: str
    words: frozenset[str]
    numbers: tuple[float, ...]
    dates: frozenset[str]


def _stated(text: str) -> _Stated:
    return _Stated(fold(text), frozenset(words_in(text)), tuple(numbers_in(text)), frozenset(dates_in(text)))


@dataclass(frozen=True)
class _Sources:
    """Where an argument value may come from: the query, and the outputs of earlier turns."""

    query: _Stated
    strings: frozenset[str]  # folded string leaves of earlier outputs
    numbers: tuple[float, ...]  # numeric leaves (and numeric strings) of earlier outputs
    words: frozenset[str]  # content words of earlier output strings


def _sources(query: _Stated, outputs: list[Any]) -> _Sources:
    strings, numbers, words = set(), [], set()
    for leaf in (v for out in outputs for v in leaves(out)):
        if is_number(leaf):
            numbers.append(float(leaf))
        elif isinstance(leaf, str):
            strings.add(fold(leaf))
            words.update(words_in(leaf))
            numbers.extend(_numeric_string(leaf))
    return _Sources(query, frozenset(strings), tuple(numbers), frozenset(words))


def _numeric_string(text: str) -> list[float]:
    try:
        return [float(text.replace(",", ""))]
    except ValueError:
        return []


def _earlier_outputs(view: RecordView, call: PlanCall) -> list[Any]:
    return [c.output for c in view.calls if c.turn < call.turn and c.has_output]


def argument_sufficiency(record: Mapping[str, Any], **context: Any) -> GateResult:
    """Every argument value is stated in the easy query or is a value of an earlier call's output.

    Stated means, after folding case and spaces: a string occurs in the query as whole words
    (``high`` in ``high-priority``) or equals a string of an earlier output (an element of an
    earlier list included: loop_like's items); a number equals one the query writes in any usual
    spelling (``12,500``, ``$642.30``, ``15%``, ``twenty``) or an earlier output's number; a date
    equals a date of the query in ISO or written form. A string of two or more words that is not
    stated whole is free text (a message, a summary): its facts (ids, numbers, emails, dates,
    quoted parts) must each be stated, and at least half of its other content words must occur in
    the query or earlier outputs (first five letters, so ``rerouted`` covers ``reroute``). A boolean
    is stated when a content word of its parameter's name (``retired`` of ``include_retired``)
    occurs in the query. A value equal to the schema's ``default``, and ``null``, need no statement.
    Only outputs of earlier assistant turns count: calls of one turn run in parallel.
    """
    view = view_of(record, context)
    query = _stated(view.query)
    problems = []
    for call in view.calls:
        if not isinstance(call.arguments, dict):
            continue
        sources = _sources(query, _earlier_outputs(view, call))
        properties = as_dict(as_dict(as_dict(view.tool_body(call.name)).get("parameters")).get("properties"))
        for key, value in call.arguments.items():
            missing = _unstated(value, key, as_dict(properties.get(key)), sources)
            if missing is not None:
                problems.append(
                    f"call {call.index + 1} ({call.name}).{key} = {json.dumps(missing, ensure_ascii=False)[:60]} "
                    "is neither in the query nor an earlier output"
                )
    return gate_result("argument_sufficiency", problems)


def _unstated(value: Any, name: str, spec: dict[str, Any], sources: _Sources) -> Any:
    """The first part of ``value`` that is not stated, or ``None`` when all of it is."""
    if value is None or ("default" in spec and spec["default"] == value and type(spec["default"]) is type(value)):
        return None
    if isinstance(value, dict):
        inner = as_dict(spec.get("properties"))
        for key, item in value.items():
            missing = _unstated(item, key, as_dict(inner.get(key)), sources)
            if missing is not None:
                return missing
        return None
    if isinstance(value, list):
        items = as_dict(spec.get("items"))
        for item in value:
            missing = _unstated(item, name, items, sources)
            if missing is not None:
                return missing
        return None
    if isinstance(value, bool):
        return None if _flag_stated(name, sources.query) else value
    if is_number(value):
        return None if _number_stated(float(value), sources) else value
    if isinstance(value, str):
        return None if _string_stated(value, sources) else value
    return value


def _flag_stated(name: str, query: _Stated) -> bool:
    parts = [p for p in re.split(r"_|(?<=[a-z])(?=[A-Z])", name) if p]
    words = [p.casefold() for p in parts if len(p) >= 3 and p.casefold() not in _FLAG_WORDS]
    return not words or any(_word_covered(w, query.words) for w in words)


def _number_stated(value: float, sources: _Sources) -> bool:
    return any(same_number(value, n) for n in (*sources.query.numbers, *sources.numbers))


def _word_covered(word: str, pool: frozenset[str]) -> bool:
    if word in pool:
        return True
    return len(word) >= 5 and any(len(w) >= 5 and w[:5] == word[:5] for w in pool)


def _string_stated(value: str, sources: _Sources, *, free_text: bool = True) -> bool:
    folded = fold(value)
    if not folded or contains_phrase(sources.query.folded, folded) or folded in sources.strings:
        return True
    iso = folded.upper().replace(" ", "T")
    if iso in sources.query.dates or any(iso == d.upper() for d in sources.query.dates):
        return True
    number = _numeric_string(value)
    if number and _number_stated(number[0], sources):
        return True
    if not free_text or len(folded.split()) < 2:
        return False
    facts = candidate_values(value)
    for fact in facts:
        stated = (
            any(_number_stated(n, sources) for n in fact.numbers)
            if fact.kind == "number"
            else _string_stated(fact.text, sources, free_text=False)
        )
        if not stated:
            return False
    fact_words = {w for fact in facts for w in words_in(fact.text)}
    content = [w for w in words_in(value) if w not in fact_words and not any(c.isdigit() for c in w)]
    if not content:
        return True
    pool = sources.query.words | sources.words
    covered = sum(1 for w in content if _word_covered(w, pool))
    return covered >= FREE_TEXT_COVERAGE * len(content)


# ---------------------------------------------------------------------------- 5. grounding


def grounding(record: Mapping[str, Any], **context: Any) -> GateResult:
    """No value in the query that the plan does not use, and no output that nothing uses.

    Values of the query (quoted strings, emails, dates, ids with digits, numbers: see
    ``gate_values.candidate_values``) must each occur in some argument of some call (as whole
    words of a string argument, or as an equal number). Call j *uses* call i (an edge of the
    dependency graph) when i's assistant turn is earlier and a value of i's output (a field value,
    a list element, recursively; booleans never count) equals an argument value of j, or an output
    string of three or more characters, or an output number of two or more digits, occurs inside a
    string argument of j (``Replace screen on LT-8812``). A call nothing uses is a *sink*; sinks are
    allowed only where the topology ends: the last call of every record; in ``fan_out`` the calls
    from the last used one to the end (the parallel branches); in ``loop_like`` every call of the
    repeated tool (its iterations); in ``optional_enrichment`` one more sink (the conditional call,
    whose output is used only if the query's condition holds).
    """
    view = view_of(record, context)
    problems = []
    arguments = [leaf for call in view.calls for leaf in leaves(call.arguments)]
    strings = [fold(a) for a in arguments if isinstance(a, str)]
    numbers = [float(a) for a in arguments if is_number(a)]
    numbers += [n for a in arguments if isinstance(a, str) for n in numbers_in(a)]
    for candidate in candidate_values(view.query):
        if not _candidate_used(candidate.kind, candidate.text, candidate.numbers, strings, numbers):
            problems.append(f"the query states {candidate.text!r} ({candidate.kind}) but no argument uses it")
    problems.extend(_dangling(view))
    return gate_result("grounding", problems)


def _candidate_used(kind: str, text: str, values: tuple[float, ...], strings: list[str], numbers: list[float]) -> bool:
    folded = fold(text)
    if any(s == folded or contains_phrase(s, folded) for s in strings):
        return True
    if kind == "number":
        return any(same_number(v, n) for v in values for n in numbers)
    if kind == "date":
        isos = [d.casefold() for d in dates_in(text)]
        return any(iso in s for iso in isos for s in strings)
    return False


def dependants(view: RecordView) -> dict[int, set[int]]:
    """Call index -> indices of the later calls that use one of its output values (see :func:`grounding`)."""
    graph: dict[int, set[int]] = {call.index: set() for call in view.calls}
    for source in view.calls:
        if not source.has_output:
            continue
        outputs = [v for v in leaves(source.output) if not isinstance(v, bool) and v is not None and v != ""]
        for target in view.calls:
            if target.turn > source.turn and any(_uses(o, a) for o in outputs for a in leaves(target.arguments)):
                graph[source.index].add(target.index)
    return graph


def _uses(output: Any, argument: Any) -> bool:
    if isinstance(argument, bool) or argument is None:
        return False
    if is_number(output):
        if is_number(argument):
            return same_number(float(output), float(argument))
        if isinstance(argument, str):
            if _numeric_string(argument) and same_number(float(output), _numeric_string(argument)[0]):
                return True
            big = abs(output) >= 10 or not float(output).is_integer()
            return big and any(same_number(float(output), n) for n in numbers_in(argument))
        return False
    if isinstance(output, str):
        if is_number(argument):
            return bool(_numeric_string(output)) and same_number(_numeric_string(output)[0], float(argument))
        if isinstance(argument, str):
            out, arg = fold(output), fold(argument)
            return out == arg or (len(out) >= 3 and contains_phrase(arg, out))
    return False


def _dangling(view: RecordView) -> list[str]:
    if not view.calls:
        return []
    graph = dependants(view)
    last = len(view.calls) - 1
    allowed = {last}
    dag = view.dag_type
    if dag == "fan_out":
        used = [i for i, targets in graph.items() if targets]
        allowed.update(range(max(used) + 1 if used else 0, last + 1))
    elif dag == "loop_like":
        names = [c.name for c in view.calls]
        allowed.update(c.index for c in view.calls if names.count(c.name) > 1)
    sinks = [i for i, targets in graph.items() if not targets and i not in allowed]
    if dag == "optional_enrichment" and sinks:
        sinks = sinks[1:]  # the conditional call
    return [
        f"call {i + 1} ({view.calls[i].name}): no later call uses its output "
        f"(in {dag or 'a record'} only the final call(s) may be sinks)"
        for i in sinks
    ]


# ---------------------------------------------------------------------------- 6. query naturalness

_CODE_SYNTAX = (
    (re.compile(r"[{}]"), "braces"),
    (re.compile(r"\[\s*[\"']|[\"']\s*\]"), "brackets around quotes"),
    (re.compile(r"[\"']\w+[\"']\s*:"), "a JSON key"),
    (re.compile(r"\b[A-Za-z_]\w*\s*=\s*\S"), "key=value"),
    (re.compile(r"`"), "backticks"),
    (re.compile(r"\b[A-Za-z]\w*_\w*\s*\("), "a function call"),
)


def _identifier_like(name: str) -> bool:
    return "_" in name.strip("_") or re.search(r"[a-z][A-Z]", name) is not None


def query_naturalness(record: Mapping[str, Any], **context: Any) -> GateResult:
    """The easy query reads as a person's request: no parameter names, no JSON or code syntax.

    Forbidden: a parameter name of a tool the plan calls, or the name of any offered tool, when
    it is an identifier (snake_case or camelCase: ``employee_id``, ``startDate``), as a whole word
    in any case; braces, brackets around quotes, a quoted JSON key (``"id":``), ``key=value``,
    backticks, and call syntax (``get_order(``). Allowed (the paper's easy queries are explicit):
    ids and literal values (``INC-40188``, ``'wrong size'``, ``2025-10-08T06:00``); any text that
    is an argument value of the plan is removed before the checks, so a literal value may contain
    anything; single-word parameter names (``priority``, ``city``) are ordinary words.
    """
    view = view_of(record, context)
    text = view.query
    for value in sorted({a for c in view.calls for a in leaves(c.arguments) if isinstance(a, str) and a}, key=len)[
        ::-1
    ]:
        text = re.sub(re.escape(value), " ", text, flags=re.IGNORECASE)
    names: set[str] = set()
    called = {c.name for c in view.calls}
    for tool in view.tools or []:
        body = as_dict(function_body(tool))
        name = body.get("name")
        if isinstance(name, str) and _identifier_like(name):
            names.add(name)
        if name in called:
            properties = as_dict(as_dict(body.get("parameters")).get("properties"))
            names.update(k for k in properties if isinstance(k, str) and _identifier_like(k))
    folded = text.casefold()
    problems = [f"names the identifier {n!r}" for n in sorted(names) if contains_phrase(folded, n.casefold())]
    problems.extend(f"has code syntax ({label})" for pattern, label in _CODE_SYNTAX if pattern.search(text))
    return gate_result("query_naturalness", problems)
