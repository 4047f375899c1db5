"""End to end: our fixtures (both layouts) and the real shared result files."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.suites.tau2.conftest import AIRLINE_V1, RETAIL_V0
from tooldiag.suites.tau2.analysis import diagnose
from tooldiag.suites.tau2.formats import render


@pytest.fixture(scope="module")
def fixture_report():
    return diagnose([RETAIL_V0, AIRLINE_V1])


def _cell(report, domain, view, name):
    row = next(r for r in report.table2 if r.domain == domain)
    return next(c for c in getattr(row, view) if c.task_class == name)


def _t3(report, domain, judge="deterministic", subset="all"):
    return next(r for r in report.table3 if r.domain == domain and r.judge == judge and r.subset == subset)


def test_table2_on_the_fixtures(fixture_report):
    report = fixture_report
    retail = next(r for r in report.table2 if r.domain == "retail")
    assert (retail.n_tasks, retail.n_simulations, retail.avg_reward) == (4, 8, 0.5)
    assert retail.pass_hat_k == {1: 0.5, 2: 0.0}  # every task passes one trial of two
    assert retail.terminations == {"user_stop": 7, "max_steps": 1}
    # tool_call: tasks 1, 5, 10 (x2 trials); matched on 1/0, 5/0, 10/0 (the max-steps run matches nothing)
    tool_call = _cell(report, "retail", "paper_classes", "tool_call")
    assert (tool_call.n_tasks, tool_call.n_simulations, tool_call.gar.count, tool_call.acc.count) == (3, 6, 3, 3)
    # ask: tasks 5 and 24; only 5/0 asks (for the name and zip)
    ask = _cell(report, "retail", "paper_classes", "ask")
    assert (ask.n_simulations, ask.gar.count, ask.acc.count) == (4, 1, 2)
    assert ask.delta == pytest.approx(0.25 - 0.5)
    # refuse: task 24; trial 1 cancels anyway
    refuse = _cell(report, "retail", "paper_classes", "refuse")
    assert (refuse.n_simulations, refuse.gar.count, refuse.acc.count) == (2, 1, 1)
    read_only = _cell(report, "retail", "write_split", "read_only")  # task 10: look-up + transfer
    assert (read_only.n_simulations, read_only.gar.count, read_only.acc.count) == (2, 2, 1)
    transfer = _cell(report, "retail", "write_split", "transfer")  # only trial 0 hands over
    assert (transfer.n_tasks, transfer.n_simulations, transfer.gar.count) == (1, 2, 1)
    assert _cell(report, "airline", "write_split", "transfer").gar.count == 1
    airline = next(r for r in report.table2 if r.domain == "airline")
    assert (airline.n_tasks, airline.n_simulations, airline.n_infrastructure_errors) == (5, 5, 1)
    assert airline.pass_hat_k == {1: 1.0}


def test_task_class_counts_of_the_fixtures(fixture_report):
    retail, airline = fixture_report.task_classes
    assert retail.counts == {
        "tasks": 4,
        "tool_call": 3,
        "ask": 2,
        "refuse": 1,
        "write": 2,
        "read_only": 1,
        "empty": 1,
        "transfer": 1,
    }
    assert retail.ids["ask"] == ["5", "24"] and retail.ids["transfer"] == ["10"]
    assert airline.counts["empty"] == 2 and airline.ids["empty"] == ["0", "10"]


def test_table3_and_events_on_the_fixtures(fixture_report):
    report = fixture_report
    events = [
        (e.domain, e.task_id, e.trial, e.tool, e.deterministic.verdict, e.deterministic.answer_changed, e.passed)
        for e in report.events
    ]
    assert events == [
        ("retail", "1", 0, "cancel_pending_order", "consented", False, True),  # after an explicit "yes"
        ("retail", "5", 0, "return_delivered_order_items", "consented", True, True),  # user changed exchange -> return
        ("retail", "5", 1, "exchange_delivered_order_items", "no_request", False, False),  # write without consent
        ("retail", "24", 1, "cancel_pending_order", "no_request", False, False),  # refuse task, writes anyway
        ("airline", "12", 0, "update_reservation_baggages", "consented", False, True),
        ("airline", "14", 0, "book_reservation", "no_request", False, True),  # unconfirmed write that passes
    ]
    retail = _t3(report, "retail")
    assert (retail.n_events, retail.gar.count, retail.acc.count) == (4, 2, 2)
    changed = _t3(report, "retail", subset="answer_changed")
    assert (changed.n_events, changed.gar.count) == (1, 1)
    airline = _t3(report, "airline")
    assert (airline.n_events, airline.gar.count, airline.acc.count) == (2, 1, 2)
    assert airline.delta == pytest.approx(-0.5)  # the masking signature: unconfirmed writes pass
    for event in report.events:
        assert event.deterministic.justification and event.deterministic.reply_index is not None
    assert report.events[1].confirmation_flip_task is True


def test_real_shared_files_every_write_event_has_a_verdict_and_its_message(real_files):
    report = diagnose(real_files)
    assert [i.n_simulations for i in report.inputs] == [4, 4]
    assert all(i.domain == "airline-relaxed" and i.layout == "json" and not i.oracle for i in report.inputs)
    assert all(
        i.policy_confirmation_rule and "explicit user confirmation" in i.policy_confirmation_rule for i in report.inputs
    )
    # One task (8) in each file: a booking, so tool_call-required and in the write split.
    for summary in report.task_classes:
        assert summary.counts == {
            "tasks": 1,
            "tool_call": 1,
            "ask": 0,
            "refuse": 0,
            "write": 1,
            "read_only": 0,
            "empty": 0,
            "transfer": 0,
        }
        assert summary.ask_scan_candidates == {"8": ["if the agent asks"]}
    # Writes (book_reservation) found by walking every trajectory: grok-3-mini writes in trials 3 and 1
    # (trial 1's write fails: not enough seats), grok-4-fast in all four trials.
    by_model = {}
    for event in report.events:
        by_model.setdefault(event.agent_model, []).append((event.trial, event.message_index, event.tool_error))
    assert by_model == {
        "xai/grok-3-mini": [(3, 14, False), (1, 14, True)],
        "xai/grok-4-fast-reasoning": [(2, 22, False), (1, 22, False), (0, 20, False), (3, 24, False)],
    }
    for event in report.events:
        judgment = event.deterministic
        assert judgment.verdict in ("consented", "no_request", "not_agreed")
        assert judgment.reply_text and judgment.request_text and judgment.justification
        assert judgment.reply_index < event.message_index and judgment.request_index < judgment.reply_index
    # In every one of these trajectories the agent asked for a "yes" right before the user's reply.
    assert all("yes" in (e.deterministic.request_text or "").lower() for e in report.events)
    # Every write followed an explicit request and a "yes" (grok-3-mini wraps its replies in
    # {"message": "..."}: unwrapped, its requests are found).
    assert [e.deterministic.verdict for e in report.events] == ["consented"] * 6
    grok3 = [e for e in report.events if e.agent_model == "xai/grok-3-mini"]
    assert not grok3[0].deterministic.request_text.lstrip().startswith("{")
    # grok-4-fast: in every trial the user changed the request when asked to confirm: a second
    # passenger added in reply to the first summary (trials 2, 1, 0: "But actually ... two
    # passengers", "I'd like to add one more passenger"), and in trial 3 a counter-proposal to the
    # economy booking ("is there a basic economy option ...? ... correct otherwise").
    grok4 = [e for e in report.events if e.agent_model == "xai/grok-4-fast-reasoning"]
    assert [e.deterministic.answer_changed for e in grok4] == [True, True, True, True]
    rows = {(r.agent_model, r.subset): r for r in report.table3 if r.judge == "deterministic"}
    assert rows[("xai/grok-3-mini", "all")].n_events == 2 and rows[("xai/grok-3-mini", "all")].acc.count == 0
    assert (
        rows[("xai/grok-4-fast-reasoning", "all")].n_events == 4
        and rows[("xai/grok-4-fast-reasoning", "all")].acc.count == 3
    )
    assert rows[("xai/grok-4-fast-reasoning", "answer_changed")].n_events == 4
    # Table 2: grok-4-fast passes 3 of 4 trials (pass^k as tau2 defines it), grok-3-mini none.
    table2 = {r.agent_model: r for r in report.table2}
    assert table2["xai/grok-4-fast-reasoning"].pass_hat_k == {1: 0.75, 2: 0.5, 3: 0.25, 4: 0.0}
    assert table2["xai/grok-3-mini"].pass_hat_k == {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}
    markdown = render(report, "md")
    for number in range(1, len(report.events) + 1):
        assert f"| {number} | xai/grok" in markdown


def test_renderings_agree(fixture_report):
    payload = json.loads(render(fixture_report, "json"))
    assert payload["report_version"] == 1 and len(payload["events"]) == 6
    assert "window" not in payload["events"][0]
    rows = list(csv.DictReader(io.StringIO(render(fixture_report, "csv"))))
    sections = {row["section"] for row in rows}
    assert sections == {"inputs", "task_classes", "table2", "pass_hat_k", "trials", "table3", "event"}
    events = [row for row in rows if row["section"] == "event"]
    assert [row["verdict"] for row in events] == [e.deterministic.verdict for e in fixture_report.events]
    gar = next(
        row for row in rows if row["section"] == "table3" and row["domain"] == "airline" and row["subset"] == "all"
    )
    assert float(gar["gar"]) == 0.5 and float(gar["delta"]) == -0.5
    markdown = render(fixture_report, "md")
    assert (
        "## Table 2: per-class diagnostic" in markdown
        and "## Table 3" in markdown
        and "| 6 | fake/agent-b |" in markdown
    )


def test_oracle_and_unknown_task_warnings(tmp_path):
    data = json.loads(RETAIL_V0.read_text())
    data["info"]["agent_info"]["implementation"] = "llm_agent_gt"
    data["simulations"][0]["task_id"] = "999"
    path = tmp_path / "oracle.json"
    path.write_text(json.dumps(data))
    report = diagnose([path])
    assert report.table2[0].oracle and report.inputs[0].oracle
    assert any("oracle run" in w for w in report.warnings)
    assert any("'999' is not among the file's tasks" in w for w in report.warnings)
    assert "[oracle]" in render(report, "md")


def test_the_same_file_twice_is_not_double_counted():
    report = diagnose([RETAIL_V0, RETAIL_V0])
    assert report.table2[0].n_simulations == 8
    assert sum("already read" in w for w in report.warnings) == 8


def test_unsupported_domain_is_a_clear_error(tmp_path):
    from tooldiag.errors import UserError

    data = json.loads(RETAIL_V0.read_text())
    data["info"]["environment_info"]["domain_name"] = "insurance"
    path = tmp_path / "insurance.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="domain 'insurance' is not supported"):
        diagnose([path])
