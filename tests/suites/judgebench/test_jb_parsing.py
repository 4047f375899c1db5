"""Robust reading of judge and generator replies."""

from __future__ import annotations

import json

import pytest

from tooldiag.suites.judgebench.parsing import (
    calls_from_text,
    parse_judge_reply,
    parse_prometheus_reply,
    prometheus_to_unit,
    strip_reasoning,
)

VERDICT = {
    "tool_selection_accuracy": {"accuracy": 1.0, "justification": "right tools"},
    "parameter_structure_accuracy": {"accuracy": 0.5, "justification": "one extra key"},
    "sequence_accuracy": {"accuracy": 0.0, "justification": "wrong order"},
    "query_coverage_accuracy": {"accuracy": 1.0, "justification": "covered"},
    "overall_assessment": "fine",
}
VALUES = {"tool_selection": 1.0, "parameter_structure": 0.5, "sequence": 0.0, "coverage": 1.0}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(VERDICT),
        "```json\n" + json.dumps(VERDICT, indent=2) + "\n```",
        '<think>Let me weigh {the calls}. Maybe {"x": 1}.</think>\n' + json.dumps(VERDICT),
        "reasoning without an opening tag</think>" + json.dumps(VERDICT),
        "Here is my verdict:\n" + json.dumps(VERDICT) + "\nI hope this helps {really}.",
        "```\n" + json.dumps(VERDICT) + "\n```\nSecond thoughts: " + json.dumps({"tool_selection_accuracy": 0}),
        "<THINKING>\nhmm\n</THINKING>```JSON\n" + json.dumps(VERDICT) + "```",
    ],
    ids=["plain", "fenced", "think", "dangling-think", "trailing-text", "first-object-wins", "upper-case-tags"],
)
def test_judge_reply_shapes(text):
    verdict = parse_judge_reply(text)
    assert verdict is not None
    assert verdict.values == VALUES
    assert verdict.justifications["sequence"] == "wrong order"
    assert verdict.overall == "fine"


def test_numbers_as_strings_short_keys_and_bare_values():
    verdict = parse_judge_reply(
        json.dumps({"tool_selection": "0.5", "parameter_structure_accuracy": 1, "sequence": {"score": 0.75}})
    )
    assert verdict.values == {"tool_selection": 0.5, "parameter_structure": 1.0, "sequence": 0.75, "coverage": None}
    assert verdict.missing == ["coverage"]


@pytest.mark.parametrize("bad", [1.5, -0.1, "high", None, True, float("nan"), {"justification": "no score"}])
def test_values_that_are_not_scores_count_as_missing(bad):
    payload = dict(VERDICT, sequence_accuracy={"accuracy": bad} if not isinstance(bad, dict) else bad)
    verdict = parse_judge_reply(json.dumps(payload))  # NaN is written as the JSON extension NaN
    assert verdict is not None and verdict.values["sequence"] is None


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "I think the plan is good.",
        '```json\n{"tool_selection_accuracy": \n```',
        json.dumps({"score": 1}),
        "[1, 2]",
    ],
)
def test_unparseable_replies_give_none(text):
    assert parse_judge_reply(text) is None


def test_released_shape_round_trip():
    verdict = parse_judge_reply(json.dumps(VERDICT))
    again = parse_judge_reply(json.dumps(verdict.as_released()))
    assert again.values == VALUES


@pytest.mark.parametrize(
    ("text", "grade"),
    [
        ("Feedback: good plan. [RESULT] 4", 4),
        ("Feedback: x [RESULT] (2)", 2),
        ("<think>[RESULT] 1</think>Feedback: ok [RESULT] 5", 5),
        ("Feedback: meh.\nScore: 3", 3),
        ("Feedback: [RESULT] 1 ... on reflection [RESULT] 2", 2),
        ("Feedback: no score here", None),
        ("[RESULT] 9", None),
    ],
)
def test_prometheus_grades(text, grade):
    assert parse_prometheus_reply(text) == grade


def test_prometheus_mapping():
    assert [prometheus_to_unit(g) for g in range(1, 6)] == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_plans_written_as_text():
    assert calls_from_text('[{"name": "a", "arguments": {"x": 1}}]') == [{"name": "a", "arguments": {"x": 1}}]
    assert calls_from_text('```json\n[{"function": {"name": "a", "arguments": "{}"}}]\n```') == [
        {"name": "a", "arguments": "{}"}
    ]
    assert calls_from_text('{"tool_calls": [{"name": "b"}]}') == [{"name": "b", "arguments": {}}]
    assert calls_from_text("[]") == []
    assert calls_from_text("I will call a then b.") is None
    assert calls_from_text('[{"arguments": {}}]') is None


def test_strip_reasoning():
    assert strip_reasoning("<think>a</think>b<reasoning>c</reasoning>d") == "bd"
    assert strip_reasoning("a</think>b") == "b"
