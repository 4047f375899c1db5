"""Versioned prompt templates, condition names and the C3 derangement."""

from __future__ import annotations

from collections import Counter

import pytest

from tooldiag.errors import UserError
from tooldiag.suites.judgebench.conditions import (
    CONDITIONS,
    derangement_basis,
    derangement_map,
    parse_conditions,
)
from tooldiag.suites.judgebench.prompts import load_rubrics, load_template, parse_template


def test_every_condition_has_a_versioned_template():
    for condition in CONDITIONS.values():
        template = load_template(condition.template)
        assert template.tag == f"{condition.template}@1"
        needs_reference = condition.reference is not None
        assert ("expected_responses" in template.placeholders) == needs_reference
    assert load_template("generator").role == "system"


def test_render_fills_placeholders_and_serialises_json():
    template = load_template("judge_with_gt")
    text = template.render(
        user_message="book it",
        available_tools=[{"type": "function", "function": {"name": "a"}}],
        generated_tool_calls=[{"function": {"name": "a", "arguments": {}}}],
        expected_responses='[{"role": "assistant"}]',
    )
    assert "book it" in text and '"name": "a"' in text and "{{" not in text
    assert '"tool_selection_accuracy": {"accuracy": <1.0|0.5|0.0>' in text  # JSON braces survive
    with pytest.raises(ValueError):
        template.render(user_message="x")


def test_half_default_prompt_differs_only_in_its_default():
    base = load_template("judge_without_gt").body
    half = load_template("judge_without_gt_half_default").body
    assert "Score 1.0 unless" in base and "score 0.5" in half and "Score 1.0 unless" not in half


def test_prompt_dir_overrides_and_bad_templates(tmp_path):
    (tmp_path / "judge_with_gt.txt").write_text(
        "---\nname: judge_with_gt\nversion: paper\nplaceholders: user_message\n---\nQ: {{user_message}}\n"
    )
    custom = load_template("judge_with_gt", tmp_path)
    assert custom.tag == "judge_with_gt@paper"
    assert custom.render(user_message="hi") == "Q: hi\n"
    assert load_template("judge_without_gt", tmp_path).tag == "judge_without_gt@1"  # falls back to the packaged one
    with pytest.raises(UserError, match="front matter"):
        parse_template("no header", "x")
    with pytest.raises(UserError, match="undeclared"):
        parse_template("---\nname: a\nversion: 1\n---\n{{oops}}", "x")
    with pytest.raises(UserError, match="version"):
        parse_template("---\nname: a\n---\nbody", "x")
    with pytest.raises(UserError, match="no prompt template"):
        load_template("nope")


def test_prometheus_rubrics_cover_every_metric():
    rubrics, tag = load_rubrics()
    assert set(rubrics) == {"tool_selection", "parameter_structure", "sequence", "coverage"}
    assert tag == "prometheus_rubrics@1"
    assert all("Score 5" in text for text in rubrics.values())


def test_parse_conditions():
    assert parse_conditions("with_gt, without_gt,with_gt") == ["with_gt", "without_gt"]
    assert parse_conditions("all") == list(CONDITIONS)
    with pytest.raises(UserError, match="unknown judge condition"):
        parse_conditions("with_gt,oracle")
    with pytest.raises(UserError):
        parse_conditions("")


def test_derangement_within_dag_type():
    groups = {"linear": [f"l{i}" for i in range(7)], "fan_in": ["f1", "f2"], "diamond": ["d1"]}
    mapping = derangement_map(groups, seed=42)
    assert mapping == derangement_map(groups, seed=42)  # seeded
    for ids in groups.values():
        targets = [mapping[i] for i in ids]
        assert sorted(targets) == sorted(ids)  # a permutation within the group
        if len(ids) > 1:
            assert all(mapping[i] != i for i in ids)  # no record keeps its own reference
    assert mapping["d1"] == "d1"  # a singleton keeps its own
    assert mapping["f1"] == "f2" and mapping["f2"] == "f1"


def test_derangement_falls_back_to_a_rotation():
    mapping = derangement_map({"x": ["a", "b", "c"]}, seed=1, max_shuffles=0)
    assert mapping == {"a": "b", "b": "c", "c": "a"}


def test_different_seeds_give_different_derangements_somewhere():
    groups = {"linear": [f"l{i}" for i in range(10)]}
    maps = {tuple(sorted(derangement_map(groups, seed=s).items())) for s in range(5)}
    assert len(maps) > 1
    assert derangement_basis(["b", "a"], 1) == derangement_basis(["a", "b"], 1) != derangement_basis(["a", "b"], 2)
    assert Counter(derangement_map(groups, 3).values()) == Counter(groups["linear"])
