"""The LLM consent judge through the model backends, with a scripted fake provider."""

from __future__ import annotations

import json
import re

import pytest
from sklearn.metrics import cohen_kappa_score

from tests.suites.tau2.conftest import AIRLINE_V1, RETAIL_V0
from tooldiag.errors import ModelCallError, ModelCallErrorKind, UserError
from tooldiag.models.base import ModelBackend
from tooldiag.models.registry import provider
from tooldiag.suites.tau2.analysis import diagnose
from tooldiag.suites.tau2.formats import render
from tooldiag.suites.tau2.llm_judge import PROMPT_VERSION, parse_judge_reply, render_prompt
from tooldiag.trajectory import Emission

PROMPTS: list[str] = []


class ScriptedJudge(ModelBackend):
    """Consents iff the last user line says yes and the agent literally asked "Shall I proceed";
    answers garbage for bookings; ``fatal``/``flaky`` models fail."""

    def __init__(self, name: str) -> None:
        self.mode = name

    async def complete(self, request) -> Emission:
        prompt = request.messages[-1].content
        PROMPTS.append(prompt)
        if self.mode == "fatal":
            raise ModelCallError("401 unauthorized", status=401, kind=ModelCallErrorKind.FATAL)
        if self.mode == "flaky":
            raise ModelCallError("503 after retries", status=503)
        if '"name": "book_reservation"' in prompt:
            return Emission(text="I think the agent probably did ask, more or less.")
        transcript = prompt.split("Dialogue before the write")[1].split("The write (index")[0]
        user_lines = re.findall(r"^\[\d+\] user: (.*)$", transcript, re.MULTILINE)
        confirmed = bool(user_lines) and user_lines[-1].lower().startswith("yes") and "Shall I proceed" in transcript
        changed = "rather" in transcript
        body = json.dumps(
            {"confirmed": confirmed, "user_changed_answer": changed, "evidence_index": None, "reason": "scripted"}
        )
        return Emission(text=f"```json\n{body}\n```")


@provider("tau2fake")
def _make(name, options):
    return ScriptedJudge(name)


def test_parse_judge_reply_is_robust():
    assert parse_judge_reply('{"confirmed": true, "user_changed_answer": false, "reason": "ok"}') == (True, False, "ok")
    assert parse_judge_reply('Sure!\n```json\n{"Confirmed": "no"}\n```') == (False, None, "")
    assert parse_judge_reply('Verdict: {"confirmed": "yes", "reason": 3} and {"x": 1}') == (True, None, "")
    assert parse_judge_reply('{"verdict": "consented"}')[0] is None
    assert parse_judge_reply('{"confirmed": "maybe"}')[0] is None
    assert parse_judge_reply("no json here")[0] is None
    assert parse_judge_reply(None)[0] is None


def test_llm_judge_rows_nulls_and_kappa():
    PROMPTS.clear()
    report = diagnose([RETAIL_V0, AIRLINE_V1], judge="tau2fake/script")
    assert report.judge_model == "tau2fake/script" and report.judge_prompt == PROMPT_VERSION
    assert len(PROMPTS) == len(report.events) == 6
    llm = [e.llm.confirmed for e in report.events]
    assert llm == [
        False,
        True,
        False,
        False,
        True,
        None,
    ]  # retail 1/0 asked "Do you want me to proceed"; booking -> garbage
    assert report.events[1].llm.answer_changed is True
    assert report.events[5].llm.justification == "unparseable judge reply" and report.events[5].llm.raw
    airline = next(
        r for r in report.table3 if r.domain == "airline" and r.judge == "llm:tau2fake/script" and r.subset == "all"
    )
    assert (airline.n_events, airline.n_null, airline.gar.count) == (1, 1, 1)
    # Agreement on the same events (nulls excluded), checked against scikit-learn.
    paired = [e for e in report.events if e.llm.confirmed is not None]
    expected = cohen_kappa_score([e.deterministic.confirmed for e in paired], [e.llm.confirmed for e in paired])
    overall = next(a for a in report.agreement if a.agent_model == "(all)")
    assert overall.n_events == 5 and overall.n_null == 1
    assert abs(overall.kappa_confirmed - expected) < 1e-9
    assert overall.percent_agreement == pytest.approx(80.0)
    assert any("1 of 6 replies unusable" in w for w in report.warnings)
    markdown = render(report, "md")
    assert "## Judge agreement" in markdown and "null" in markdown


def test_prompt_carries_rule_window_and_call():
    report = diagnose([RETAIL_V0])
    event = report.events[0]
    prompt = render_prompt(event, "Obtain explicit user confirmation (yes) to proceed.")
    assert "Obtain explicit user confirmation (yes) to proceed." in prompt
    assert "[7] user: Yes, please go ahead." in prompt and "[0] agent: Hi! How can I help you today?" in prompt
    assert '"name": "cancel_pending_order"' in prompt and "(index 8)" in prompt
    assert not re.search(r"\$[a-z_]+", prompt)  # every placeholder substituted


def test_failed_requests_are_nulls_and_fatal_ones_stop(capsys):
    report = diagnose([RETAIL_V0], judge="tau2fake/flaky")
    assert all(e.llm.confirmed is None and e.llm.error == "503 after retries" for e in report.events)
    assert next(r for r in report.table3 if r.judge.startswith("llm") and r.subset == "all").n_null == 4
    with pytest.raises(UserError, match="judge tau2fake/fatal: 401 unauthorized"):
        diagnose([RETAIL_V0], judge="tau2fake/fatal")


def test_cli_with_judge_and_unknown_model(tmp_path, capsys):
    from tooldiag.cli.main import main

    out = tmp_path / "report.json"
    main(["tau2", "diagnose", str(RETAIL_V0), "--judge", "tau2fake/script", "--format", "json", "--out", str(out)])
    payload = json.loads(out.read_text())
    assert payload["judge_model"] == "tau2fake/script" and payload["agreement"][0]["n_events"] == 4
    with pytest.raises(SystemExit) as exit_info:
        main(["tau2", "diagnose", str(RETAIL_V0), "--judge", "nosuchprovider/x"])
    assert exit_info.value.code == 2
    assert "unknown model provider" in capsys.readouterr().err


def test_consent_reply_schema():
    from tooldiag.suites.tau2.llm_judge import ConsentReply, parse_consent_reply

    reply = ConsentReply.model_validate({"CONFIRMED": "Y", "user_changed_answer": "perhaps", "reason": ["x"]})
    assert (reply.confirmed, reply.user_changed_answer, reply.reason) == (True, None, "")
    assert parse_consent_reply('[{"confirmed": 0}]').confirmed is False  # inner objects count
    assert parse_consent_reply('{"confirmed": 2}') is None
