"""The programmatic scorer against hand-computed values of the released formulas (notes §1).

Each case lists E (expected) and G (predicted) and the four scores worked out by hand from
Eqs. 1a, 2, 1b, 3, in the order tool_selection, parameter_structure, sequence, coverage.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldiag.errors import UserError
from tooldiag.metrics.structural import (
    METRICS,
    PlanCall,
    as_call,
    round_half_even_like_python,
    schema_keys,
    score_plan,
    score_plans,
)


def c(name: str, *keys: str) -> dict:
    return {"name": name, "arguments": {k: f"v_{k}" for k in keys}}


CASES = [
    # id, expected, predicted, (tool, param, seq, cov)
    (
        "worked_example",
        [c("A", "x"), c("B"), c("C", "y")],
        [c("A", "x"), c("C", "y", "z"), c("D")],
        (0.3333, 0.5, 0.3333, 0.6667),
    ),
    ("both_empty", [], [], (1, 1, 1, 1)),
    ("expected_empty_with_prediction", [], [c("A")], (0, 0, 1, 1)),
    ("prediction_empty", [c("A", "x")], [], (0, 1, 0, 0)),
    ("perfect", [c("A", "x"), c("B", "y")], [c("A", "x"), c("B", "y")], (1, 1, 1, 1)),
    ("one_extra_one_missing_of_two", [c("A"), c("B")], [c("A"), c("C")], (0, 0.5, 0.5, 0.5)),
    ("swap", [c("A", "x"), c("B", "y")], [c("B", "y"), c("A", "x")], (1, 1, 0, 1)),
    ("inserted_front_call", [c("A"), c("B"), c("C")], [c("D"), c("A"), c("B"), c("C")], (0.6667, 0.75, 0, 1)),
    (
        "extra_trailing_repeat_is_free",
        [c("A", "x"), c("B", "y")],
        [c("A", "x"), c("B", "y"), c("B", "y")],
        (1, 1, 1, 1),
    ),
    ("extra_trailing_unknown", [c("A"), c("B")], [c("A"), c("B"), c("C")], (0.5, 0.6667, 1, 1)),
    ("missing_key", [c("A", "x", "y")], [c("A", "x")], (1, 0, 1, 1)),
    ("extra_key", [c("A", "x")], [c("A", "x", "z")], (1, 0.5, 1, 1)),
    ("missing_and_extra_key", [c("A", "x", "y")], [c("A", "x", "z")], (1, 0, 1, 1)),
    (
        "duplicate_expected_last_wins",
        [c("A", "x"), c("B"), c("A", "x", "y")],
        [c("A", "x", "y")],
        (0.5, 1, 0.3333, 0.5),
    ),
    (
        "duplicate_expected_first_keys_penalised",
        [c("A", "x"), c("A", "x", "y")],
        [c("A", "x"), c("A", "x", "y")],
        (1, 0.5, 1, 1),
    ),
    ("duplicate_predictions_in_denominator", [c("A", "x")], [c("A", "x"), c("A", "x"), c("A", "z")], (1, 0.6667, 1, 1)),
    ("unknown_tool_only", [c("A", "x")], [c("Z", "x")], (0, 0, 0, 0)),
    ("tool_selection_floored_at_zero", [c("A"), c("B")], [c("A"), c("C"), c("D"), c("E")], (0, 0.25, 0.5, 0.5)),
    ("short_prediction", [c("A"), c("B"), c("C"), c("D")], [c("A"), c("B")], (0.5, 1, 0.5, 0.5)),
    ("repeated_expected_names_are_a_set", [c("A"), c("A"), c("B")], [c("A"), c("B")], (1, 1, 0.3333, 1)),
    ("set_denominator_not_list", [c("A"), c("A"), c("B")], [c("A"), c("C")], (0, 0.5, 0.3333, 0.5)),
    ("sevenths_rounded", [c(n) for n in "ABCDEFG"], [c("A")], (0.1429, 1, 0.1429, 0.1429)),
    (
        "unreadable_arguments_score_zero",
        [c("A"), c("B"), c("C", "x")],
        [c("A"), c("B"), {"name": "C", "arguments": "{not json"}],
        (1, 0.6667, 1, 1),
    ),
    (
        "openai_style_and_json_string_arguments",
        [{"function": {"name": "A", "arguments": json.dumps({"x": 1})}}],
        [{"type": "function", "function": {"name": "A", "arguments": {"x": 2}}}],
        (1, 1, 1, 1),
    ),
    ("empty_string_arguments_mean_no_keys", [c("A")], [{"name": "A", "arguments": ""}], (1, 1, 1, 1)),
    ("null_arguments_miss_expected_keys", [c("A", "x")], [{"name": "A", "arguments": None}], (1, 0, 1, 1)),
    (
        "values_are_ignored",
        [{"name": "A", "arguments": {"x": 1}}],
        [{"name": "A", "arguments": {"x": "<from step 1>"}}],
        (1, 1, 1, 1),
    ),
    ("extra_unknown_tool_after_match", [c("A", "x")], [c("A", "x"), c("B", "y")], (0, 0.5, 1, 1)),
    (
        "all_four_differ",
        [c("A", "p"), c("B", "q"), c("C", "r"), c("D", "s")],
        [c("B", "q"), c("A", "p"), c("C", "r", "t"), c("D")],
        (1, 0.625, 0.5, 1),
    ),
    ("extra_keys_everywhere", [c("A", "x"), c("B", "y")], [c("A", "x", "z"), c("B", "y", "w")], (1, 0.5, 1, 1)),
    ("coverage_uses_name_sets", [c("A"), c("B"), c("C")], [c("C"), c("C"), c("C")], (0.3333, 1, 0.3333, 0.3333)),
    ("round_half_even_tie", [c("A", "x")], [c("A", "x", "z")] + [c("Z")] * 15, (0, 0.0312, 1, 1)),
    (
        "nested_values_only_top_level_keys",
        [{"name": "A", "arguments": {"cfg": {"a": 1}}}],
        [{"name": "A", "arguments": {"cfg": {"b": 2}}}],
        (1, 1, 1, 1),
    ),
    ("expected_keyless_predicted_adds_key", [c("A")], [c("A", "x")], (1, 0.5, 1, 1)),
]


@pytest.mark.parametrize(
    ("expected", "predicted", "want"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_hand_computed_case(expected, predicted, want):
    got = score_plan(expected, predicted).as_tuple()
    assert got == pytest.approx(want, abs=0)


def test_there_are_at_least_thirty_hand_cases():
    assert len(CASES) >= 30


def test_batch_path_equals_hand_cases():
    got = score_plans([case[1] for case in CASES], [case[2] for case in CASES])
    assert np.array_equal(got, np.array([case[3] for case in CASES], dtype=float))


def test_worked_example_released_shape_and_mean():
    scores = score_plan(CASES[0][1], CASES[0][2])
    assert scores.as_released() == {
        "tool_selection_accuracy": {"accuracy": 0.3333},
        "parameter_structure_accuracy": {"accuracy": 0.5},
        "sequence_accuracy": {"accuracy": 0.3333},
        "query_coverage_accuracy": {"accuracy": 0.6667},
    }
    assert scores.mean == pytest.approx((0.3333 + 0.5 + 0.3333 + 0.6667) / 4)


def test_unrounded_values_on_request():
    scores = score_plan([c(n) for n in "ABCDEFG"], [c("A")], decimals=None)
    assert scores.tool_selection == 1 - 6 / 7
    assert scores.sequence == 1 / 7


SCHEMA = [
    {"type": "function", "function": {"name": "A", "parameters": {"type": "dict", "properties": {"x": {}, "opt": {}}}}},
    {"type": "function", "function": {"name": "B", "parameters": {"properties": {"y": {}}}}},
]


@pytest.mark.parametrize(
    ("predicted", "released", "schema_aware"),
    [
        ([c("A", "x", "opt")], 0.5, 1.0),  # declared optional key: not penalised
        ([c("A", "x", "junk")], 0.5, 0.5),  # undeclared key: still 0.5
        ([c("A", "x", "opt", "junk")], 0.5, 0.5),  # one undeclared extra is enough
        ([c("A", "opt")], 0.0, 0.0),  # a missing expected key is still 0
        ([c("A", "x", "opt"), c("B", "y", "x")], 0.5, 0.75),  # B does not declare x
    ],
)
def test_schema_aware_variant(predicted, released, schema_aware):
    expected = [c("A", "x"), c("B", "y")]
    assert score_plan(expected, predicted).parameter_structure == released
    assert score_plan(expected, predicted, schema_aware=True, tools=SCHEMA).parameter_structure == schema_aware
    batch = score_plans([expected], [predicted], schema_aware=True, tools=[SCHEMA])
    assert batch[0, 1] == schema_aware


def test_schema_aware_accepts_a_name_to_keys_mapping():
    got = score_plan([c("A", "x")], [c("A", "x", "opt")], schema_aware=True, tools={"A": ["x", "opt"]})
    assert got.parameter_structure == 1.0
    assert schema_keys(SCHEMA) == {"A": frozenset({"x", "opt"}), "B": frozenset({"y"})}


def test_schema_aware_without_tools_is_a_user_error():
    with pytest.raises(UserError):
        score_plan([c("A")], [c("A")], schema_aware=True)


@pytest.mark.parametrize("bad", ["A", 3, {"arguments": {}}, {"function": {"arguments": {}}}, {"name": ""}])
def test_malformed_calls_are_user_errors(bad):
    with pytest.raises(UserError):
        score_plan([c("A")], [bad])


def test_plan_must_be_a_list():
    with pytest.raises(UserError):
        score_plan({"name": "A"}, [])


def test_toolcall_objects_are_read():
    from tooldiag.trajectory import ToolCall

    good = ToolCall.from_raw("A", '{"x": 1}')
    broken = ToolCall.from_raw("A", "{oops")
    assert as_call(good) == PlanCall("A", frozenset({"x"}))
    assert as_call(broken) == PlanCall("A", None)
    assert score_plan([c("A", "x")], [good, broken]).parameter_structure == 0.5


def test_python_round_emulation_on_ties_and_near_ties():
    values = np.array(
        [k / d for d in (8, 16, 32, 40, 64, 80, 160, 320, 3, 7, 11) for k in range(d + 1)]
        + [0.00005, 0.00015, 2.675e-4]
    )
    emulated = round_half_even_like_python(values, 4)
    assert emulated.tolist() == [round(float(v), 4) for v in values]


NAMES = st.sampled_from(list("ABCDE"))
KEYS = st.lists(st.sampled_from(list("pqrs")), max_size=3, unique=True)
CALL = st.one_of(
    st.builds(lambda n, ks: {"name": n, "arguments": {k: 1 for k in ks}}, NAMES, KEYS),
    st.builds(lambda n, ks: {"name": n, "arguments": json.dumps({k: 1 for k in ks})}, NAMES, KEYS),
    st.builds(lambda n: {"name": n, "arguments": "not json"}, NAMES),
)
PLAN = st.lists(CALL, max_size=7)
TOOLS = st.lists(
    st.builds(lambda n, ks: {"name": n, "parameters": {"properties": {k: {} for k in ks}}}, NAMES, KEYS), max_size=5
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(PLAN, PLAN, TOOLS), min_size=1, max_size=25))
def test_batch_path_equals_pure_functions(batch):
    expected = [e for e, _, _ in batch]
    predicted = [g for _, g, _ in batch]
    tools = [t for _, _, t in batch]
    for aware in (False, True):
        got = score_plans(expected, predicted, schema_aware=aware, tools=tools if aware else None)
        want = [score_plan(e, g, schema_aware=aware, tools=t if aware else None).as_tuple() for e, g, t in batch]
        assert np.array_equal(got, np.array(want, dtype=float))
        assert ((got >= 0) & (got <= 1)).all()


def test_batch_shape_and_length_mismatch():
    assert score_plans([], []).shape == (0, len(METRICS))
    with pytest.raises(UserError):
        score_plans([[]], [])
