"""Versioned prompt files of the toolkit."""

from __future__ import annotations

import pytest

from tooldiag.errors import UserError
from tooldiag.judges import load_prompt, parse_template


def test_template_renders_placeholders_json_and_keeps_braces() -> None:
    template = parse_template(
        '---\nname: t\nversion: 2\nplaceholders: a, b\n---\n\nA={{a}} B={{b}} {"json": true}\n\n', "t.txt"
    )
    assert template.tag == "t@2" and template.role == "user"
    assert template.render(a="x", b=[1]) == 'A=x B=[\n  1\n] {"json": true}\n'
    with pytest.raises(ValueError, match="needs b"):
        template.render(a="x")


def test_final_newline_can_be_switched_off() -> None:
    template = parse_template("---\nname: t\nversion: 1\nfinal_newline: no\n---\nbody\n", "t.txt")
    assert template.body == "body"


def test_front_matter_errors() -> None:
    with pytest.raises(UserError, match="no front matter"):
        parse_template("body", "t.txt")
    with pytest.raises(UserError, match="undeclared placeholders: x"):
        parse_template("---\nname: t\nversion: 1\n---\n{{x}}", "t.txt")


def test_packaged_prompts_load_by_name_and_suffix(tmp_path) -> None:
    assert load_prompt("tooldiag.classify", "action-class-judge-v2").placeholders == ("message_text",)
    assert load_prompt("tooldiag.suites.tau2", "confirm_judge_v1", suffix=".md").tag == "confirm_judge@1"
    (tmp_path / "action-class-judge-v2.txt").write_text("---\nname: mine\nversion: 9\n---\nmine\n")
    assert load_prompt("tooldiag.classify", "action-class-judge-v2", tmp_path).tag == "mine@9"
    with pytest.raises(UserError, match="no prompt template named 'nope'"):
        load_prompt("tooldiag.classify", "nope")
