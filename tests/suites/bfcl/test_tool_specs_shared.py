"""Tool specs built once per tool set (issue 16): the same specs as a fresh conversion, for every
tool set of every BFCL case (given-back docs included), shared only where the docs are the same."""

from __future__ import annotations

import copy
import json

import pytest

from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.tools import _build_spec, to_tool_specs


@pytest.fixture(scope="module")
def cases():
    return load_cases()


def _tool_sets(case):
    """Every tool list a rollout of ``case`` offers: the first, then one per give-back turn."""
    docs = list(case.functions)
    yield list(docs)
    for turn in sorted(case.missed_function):
        docs.extend(case.missed_function[turn])
        yield list(docs)


def _encoded(specs) -> str:
    return json.dumps([spec.to_openai() for spec in specs], ensure_ascii=False)


def test_every_tool_set_of_every_case_converts_as_a_fresh_build(cases):
    seen = 0
    for case in cases:
        for docs in _tool_sets(case):
            untouched = copy.deepcopy(docs)
            fresh = [_build_spec(copy.deepcopy(doc)) for doc in docs]
            shared = to_tool_specs(docs)
            assert shared == fresh, case.id
            assert _encoded(shared) == _encoded(fresh)  # the request body's bytes
            assert docs == untouched  # the case's docs are not edited by the conversion
            seen += 1
    assert seen > len(cases) == 800


def test_the_same_docs_give_the_same_list_and_other_docs_another(cases):
    case = next(c for c in cases if c.missed_function)
    first = to_tool_specs(list(case.functions))
    again = to_tool_specs(json.loads(json.dumps(case.functions)))  # equal docs, other objects (a later case)
    assert again is first
    grown = to_tool_specs(list(case.functions) + next(iter(case.missed_function.values())))
    assert grown is not first and len(grown) > len(first)
    assert all(a is b for a, b in zip(grown, first, strict=False))  # a doc's spec is shared across sets


def test_docs_that_differ_only_in_a_type_or_key_order_are_not_confused():
    def doc(default, order=("name", "description", "parameters")):
        body = {
            "name": "f.g",
            "description": "d",
            "parameters": {
                "type": "dict",
                "properties": {"x": {"type": "float", "description": "x", "default": default}},
            },
        }
        return {key: body[key] for key in order}

    as_int, as_float = to_tool_specs([doc(1)]), to_tool_specs([doc(1.0)])
    assert as_int is not as_float
    assert json.dumps(as_int[0].parameters) != json.dumps(as_float[0].parameters)
    reordered = to_tool_specs([doc(1, order=("description", "name", "parameters"))])
    assert reordered is not as_int and reordered[0] == as_int[0]  # same spec; the cache is keyed by the text
    assert as_int[0].name == "f_g" and as_int[0].parameters["properties"]["x"]["format"] == "float"


def test_a_doc_that_is_not_json_is_converted_without_the_cache():
    docs = [{"name": "f", "description": "d", "parameters": {"type": "dict", "properties": {}}, "response": {1, 2}}]
    first, second = to_tool_specs(docs), to_tool_specs(docs)
    assert first == second and first is not second
