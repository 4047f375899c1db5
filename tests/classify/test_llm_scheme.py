"""The optional ``llm`` scheme, with a scripted judge registered as a provider."""

import json
from typing import ClassVar

import pytest

from tooldiag.classify import ActionClass
from tooldiag.classify.llm import LLMClassifier, parse_judge_answer
from tooldiag.cli.main import main
from tooldiag.errors import UserError
from tooldiag.models.base import ModelBackend
from tooldiag.models.registry import provider
from tooldiag.trajectory import Emission


class ScriptedJudge(ModelBackend):
    """Answers 'refuse' for messages mentioning 'pay grade', garbage for 'garble', else 'other'."""

    prompts: ClassVar[list[str]] = []

    async def complete(self, request):
        prompt = request.messages[-1].content
        ScriptedJudge.prompts.append(prompt)
        message = prompt.rsplit("<<<", 1)[1]
        if "garble" in message:
            return Emission(text="I think it's probably a refusal")
        label = "refuse" if "pay grade" in message else "other"
        return Emission(text=f'Answer: {{"action_class": "{label}"}}')


@provider("scriptedjudge")
def _make(name, options):
    return ScriptedJudge()


def test_parse_judge_answer():
    assert parse_judge_answer('{"action_class": "ask"}') is ActionClass.ASK
    assert parse_judge_answer('sure {"x": 1} then {"action_class": "CONFIRM"}') is ActionClass.CONFIRM
    assert parse_judge_answer('{"action_class": "tool_call"}') is None  # calls are decided by syntax
    assert parse_judge_answer("no json") is None and parse_judge_answer(None) is None


def test_llm_classifier_uses_judge_and_syntax():
    ScriptedJudge.prompts.clear()
    judge = LLMClassifier("scriptedjudge/x")
    items = [
        ("That is above my pay grade.", False),
        ("[ls(a=True)]", False),
        ("", False),
        ("Which file? garble", False),
    ]
    assert judge.classify_many(items) == [ActionClass.REFUSE, ActionClass.TOOL_CALL, ActionClass.OTHER, ActionClass.ASK]
    assert len(ScriptedJudge.prompts) == 2  # tool call and empty text never reach the judge
    assert judge.fallbacks == 1  # the garbled answer fell back to the default rules


def test_llm_fallback_rules_take_the_cue_extensions(tmp_path, monkeypatch):
    from tooldiag.classify import get_classifier

    ext = tmp_path / "cues.json"
    ext.write_text(json.dumps({"refuse": ["garble"]}))
    garbled = [("Which file? garble", False)]  # the scripted judge garbles this answer
    assert get_classifier("llm", judge="scriptedjudge/x").classify_many(garbled) == [ActionClass.ASK]
    assert get_classifier("llm", judge="scriptedjudge/x", cue_files=[ext]).classify_many(garbled) == [
        ActionClass.REFUSE
    ]
    monkeypatch.setenv("TOOLDIAG_CUES", str(ext))
    assert LLMClassifier("scriptedjudge/x").classify_many(garbled) == [ActionClass.REFUSE]


def test_llm_scheme_needs_a_model(monkeypatch):
    monkeypatch.delenv("TOOLDIAG_CLASSIFY_MODEL", raising=False)
    with pytest.raises(UserError, match="needs a judge model"):
        from tooldiag.classify import classify

        classify("hi", scheme="llm")


def test_llm_scheme_through_classify(monkeypatch):
    from tooldiag.classify import classify

    monkeypatch.setenv("TOOLDIAG_CLASSIFY_MODEL", "scriptedjudge/x")
    assert classify("Above my pay grade.", scheme="llm") is ActionClass.REFUSE


def test_report_with_llm_scheme(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    log.write_text(
        json.dumps(
            {
                "id": 1,
                "gold_class": "refuse",
                "passed": True,
                "messages": [
                    {"role": "user", "content": "Do X"},
                    {"role": "assistant", "content": "Above my pay grade."},
                ],
            }
        )
        + "\n"
    )
    out = tmp_path / "r.json"
    monkeypatch.delenv("TOOLDIAG_CLASSIFY_MODEL", raising=False)
    main(["diagnose", str(log), "--scheme", "llm", "--judge", "scriptedjudge/x", "--format", "json", "--out", str(out)])
    assert json.loads(out.read_text())["runs"][0]["categories"]["refuse"]["gar"] == 100.0


def test_classify_cli_with_judge(tmp_path, capsys):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"role": "assistant", "content": "Above my pay grade, sorry."}) + "\n")
    main(["classify", str(path), "--scheme", "llm", "--judge", "scriptedjudge/x"])
    assert json.loads(capsys.readouterr().out)["action_class"] == "refuse"


class CountingJudge(ModelBackend):
    """Answers 'ask' after a short wait, recording the most requests in flight at once."""

    in_flight = 0
    peak = 0

    async def complete(self, request):
        import asyncio

        CountingJudge.in_flight += 1
        CountingJudge.peak = max(CountingJudge.peak, CountingJudge.in_flight)
        await asyncio.sleep(0.002)
        CountingJudge.in_flight -= 1
        return Emission(text='```json\n{"action_class": "ask"}\n```')


@provider("countingjudge")
def _make_counting(name, options):
    return CountingJudge()


def test_llm_classifier_requests_are_bounded_and_ordered():
    from tooldiag.classify.llm import DEFAULT_CONCURRENCY

    CountingJudge.peak = 0
    judge = LLMClassifier("countingjudge/x")
    items = [(f"message {i}", False) for i in range(30)] + [("[ls(a=True)]", False)]
    labels = judge.classify_many(items)
    assert labels == [ActionClass.ASK] * 30 + [ActionClass.TOOL_CALL]
    assert CountingJudge.peak == DEFAULT_CONCURRENCY  # bounded (it was an unbounded gather)


def test_judge_prompt_is_the_versioned_file():
    from tooldiag.classify.llm import PROMPT_VERSION, judge_prompt, judge_template

    prompt = judge_prompt("Which folder?")
    assert prompt.startswith("You label one message") and prompt.endswith("<<<\nWhich folder?\n>>>")
    assert judge_template().placeholders == ("message_text",) and PROMPT_VERSION == "action-class-judge-v2"
