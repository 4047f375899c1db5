"""JSON extraction from replies written for people."""

from __future__ import annotations

from tooldiag.judges import BY_POSITION, Extraction, json_values, strip_reasoning


def test_fenced_blocks_first_then_whole_then_scan() -> None:
    reply = 'Here: {"a": 1}\n```json\n{"b": 2}\n```\nand [3]'
    assert json_values(reply) == [{"b": 2}, {"a": 1}, {"b": 2}, [3]]  # the whole text is scanned too


def test_prose_around_an_object_and_broken_candidates() -> None:
    assert json_values('Verdict: {"x": {"y": 1}} trailing {not json') == [{"x": {"y": 1}}]
    assert json_values("no json at all") == [] and json_values(None) == []


def test_nested_offers_inner_objects_and_openers_limit_the_scan() -> None:
    assert json_values('x {"x": {"y": 1}}', Extraction(nested=True)) == [{"x": {"y": 1}}, {"y": 1}]
    assert json_values('[{"y": 1}]') == [[{"y": 1}]]
    assert json_values('x [{"y": 1}]') == [[{"y": 1}]]
    assert json_values('[{"y": 1}]', BY_POSITION) == [{"y": 1}]


def test_reasoning_is_dropped() -> None:
    assert strip_reasoning('<think>{"a": 1}</think> {"b": 2}') == '{"b": 2}'
    assert strip_reasoning('thinking aloud {"a": 1}</think>{"b": 2}') == '{"b": 2}'
    assert json_values('<think>{"a": 1}</think> ok {"b": 2}') == [{"b": 2}]


def test_by_position_keeps_reasoning_and_ignores_fence_priority() -> None:
    reply = '<think>{"a": 1}</think> {"b": 2} ```json\n{"c": 3}\n```'
    assert json_values(reply, BY_POSITION) == [{"a": 1}, {"b": 2}, {"c": 3}]
