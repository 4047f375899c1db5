"""End to end from the command line against an OpenAI-compatible endpoint (a fake server on 127.0.0.1).

The server plays ``ref/halt-recoverable`` over HTTP: it reads the case's ground truth,
makes the first call of each turn, then halts with text; when a system message
arrives in the turn (SRI's reconciliation) it makes the remaining calls. So the
baseline fails cases SRI recovers, and the SRI run must show a positive Acc shift.
"""

import json

import pytest

from tests.support.fake_openai import FakeOpenAIServer, Reply
from tooldiag.cli.main import main
from tooldiag.suites.bfcl.data import case_by_id
from tooldiag.suites.bfcl.policies import ground_truth_call
from tooldiag.suites.bfcl.probes.policies import halt_recoverable_action
from tooldiag.trajectory import Message, ToolCall

IDS = ["multi_turn_base_1", "multi_turn_base_3"]  # ground-truth sizes [1, 2, 2, 1] and [1, 4]


def halting_responder(case):
    def respond(request):
        raw = request.body["messages"]
        messages = [
            Message(
                role=m["role"],
                content=m.get("content"),
                tool_calls=[
                    ToolCall(name=t["function"]["name"], raw_arguments=t["function"]["arguments"])
                    for t in m.get("tool_calls") or []
                ],
            )
            for m in raw
        ]
        turn = sum(1 for m in raw if m["role"] == "user") - 1
        kind, value = halt_recoverable_action(case.ground_truth[turn], messages)
        if kind == "text":
            return Reply.say(value)
        calls = [ground_truth_call(c, case.involved_classes, f"c{turn}_{i}") for i, c in enumerate(value)]
        return Reply.call(*((c.name, c.arguments) for c in calls))

    return respond


@pytest.fixture()
def server():
    cases = {cid: case_by_id(cid) for cid in IDS}

    def respond(request):
        first_user = next(m["content"] for m in request.body["messages"] if m["role"] == "user")
        case = next(c for c in cases.values() if c.turns[0][0]["content"] == first_user)
        return halting_responder(case)(request)

    with FakeOpenAIServer(responder=respond) as srv:
        yield srv


def cli(*args):
    main([str(a) for a in args])


def test_sri_from_the_cli_against_an_openai_endpoint_resumes_and_reports(server, tmp_path, capsys):
    common = ["run", "bfcl", "--model", "openai/fake-halter", "--base-url", server.base_url, "--ids", ",".join(IDS),
              "--no-cache", "--quiet", "--concurrency", "2"]  # fmt: skip
    cli(*common, "--run-dir", tmp_path / "base")
    cli(*common, "--probe", "sri", "--run-dir", tmp_path / "sri")
    systems = [m["content"] for r in server.requests for m in r.body["messages"] if m["role"] == "system"]
    assert systems and all(s.startswith("[SRI Reconciliation]") for s in systems)
    capsys.readouterr()

    cli(*common, "--probe", "sri", "--run-dir", tmp_path / "sri")  # resume: nothing left to run
    assert "0 cases run, 2 already finished" in capsys.readouterr().out

    cli("report", tmp_path / "sri", "--baseline", tmp_path / "base", "--format", "json")
    data = json.loads(capsys.readouterr().out)
    metrics = {(m["probe"], m["category"], m["metric"]): m["value"] for m in data["metrics"]}
    assert metrics[("sri", "base", "acc_baseline")] == 0.0
    assert metrics[("sri", "base", "acc")] == 100.0
    assert metrics[("sri", "base", "fired_rate")] == 100.0 and metrics[("sri", "base", "pass_to_fail")] == 0

    cli("report", tmp_path / "sri", "--baseline", tmp_path / "base")
    assert (
        "| openai/fake-halter | sri | base | 2 | 100.0 (0.0) | 100.0 (+100.0) | 0 | 2 | 100.0 | 2 |"
        in capsys.readouterr().out
    )


def test_cli_rejects_an_unknown_probe_and_a_foreign_baseline(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli("run", "bfcl", "--model", "ref/oracle", "--ids", "multi_turn_base_0", "--probe", "sri:nope",
            "--run-dir", tmp_path / "x", "--quiet")  # fmt: skip
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown probe 'sri:nope'" in err and "cri-bypass" in err
    cli(
        "run",
        "bfcl",
        "--model",
        "ref/oracle",
        "--ids",
        "multi_turn_base_0",
        "--run-dir",
        tmp_path / "oracle",
        "--quiet",
    )
    cli(
        "run",
        "bfcl",
        "--model",
        "ref/halt",
        "--ids",
        "multi_turn_base_0",
        "--probe",
        "sri",
        "--run-dir",
        tmp_path / "halt",
        "--quiet",
    )
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli("report", tmp_path / "halt", "--baseline", tmp_path / "oracle")
    assert "has no baseline of the same model" in capsys.readouterr().err


MIXED_IDS = ["multi_turn_base_1", "multi_turn_miss_func_3", "multi_turn_miss_param_0"]


def mixed_responder(cases):
    """Halts on call turns (completing them when reconciled); over-calls on the ask/refuse
    turn unless a system message told it not to, then refuses (miss_func) or asks (miss_param)."""

    def respond(request):
        raw = request.body["messages"]
        first_user = next(m["content"] for m in raw if m["role"] == "user")
        case = next(c for c in cases if c.turns[0][0]["content"] == first_user)
        turn = sum(1 for m in raw if m["role"] == "user") - 1
        last_user = max(i for i, m in enumerate(raw) if m["role"] == "user")
        this_turn = raw[last_user + 1 :]
        if not case.ground_truth[turn]:
            if any(m["role"] == "system" for m in this_turn):
                return Reply.say("Which file do you mean?" if case.category == "miss_param" else "I cannot do that.")
            if any(m["role"] == "tool" for m in this_turn) or turn + 1 >= len(case.ground_truth):
                return Reply.say("Done.")
            calls = [
                ground_truth_call(c, case.involved_classes, f"o{i}") for i, c in enumerate(case.ground_truth[turn + 1])
            ]
            return Reply.call(*((c.name, c.arguments) for c in calls))
        return halting_responder(case)(request)

    return respond


def test_every_probe_runs_end_to_end_against_an_openai_endpoint(tmp_path, capsys):
    from tooldiag.suites.bfcl.probes import PROBE_SPECS

    cases = [case_by_id(cid) for cid in MIXED_IDS]
    assert len({c.turns[0][0]["content"] for c in cases}) == len(cases)  # the responder tells them apart
    with FakeOpenAIServer(responder=mixed_responder(cases)) as srv:
        common = ["run", "bfcl", "--model", "openai/fake-mixed", "--base-url", srv.base_url,
                  "--ids", ",".join(MIXED_IDS), "--no-cache", "--quiet"]  # fmt: skip
        cli(*common, "--run-dir", tmp_path / "baseline")
        for spec in PROBE_SPECS:
            cli(*common, "--probe", spec, "--run-dir", tmp_path / spec.replace(":", "_"))
    capsys.readouterr()
    cli(
        "report",
        *(tmp_path / s.replace(":", "_") for s in PROBE_SPECS),
        "--baseline",
        tmp_path / "baseline",
        "-f",
        "json",
    )
    metrics = {
        (m["probe"], m["category"], m["metric"]): m["value"] for m in json.loads(capsys.readouterr().out)["metrics"]
    }
    for spec in PROBE_SPECS:
        assert metrics[(spec, "all", "n")] == 3 and metrics[(spec, "all", "unpaired")] == 0, spec
        for category in ("base", "miss_func", "miss_param"):
            fired = metrics[(spec, category, "fired_rate")]
            if spec.startswith("cri"):
                assert fired == (0.0 if category == "base" else 100.0), (spec, category)
            elif category == "base":
                assert fired == 100.0, spec  # the halt on base_1 turn 1 is not a question: no gate applies
    # the halting base case is recovered by every SRI variant (the responder heeds any system message)
    assert all(metrics[(s, "base", "fail_to_pass")] == 1 for s in PROBE_SPECS if s.startswith("sri"))
    assert (
        metrics[("cri-retry", "miss_func", "gar")] == 100.0
        and metrics[("cri-retry", "miss_func", "gar_baseline")] == 0.0
    )
