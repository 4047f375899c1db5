"""tau2-bench 1.0.1: telecom (user-side tools), banking_knowledge, versions, oracle, infra errors, submissions.

Fixtures: :mod:`tests.suites.tau2.v101_fixtures` (written to shared/tau2/tau2-results-schema.md).
Expected values are counted by hand from the fixtures' docstrings, not taken from the code.
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb

import pytest

from tests.suites.tau2.conftest import AIRLINE_V1, REPO_ROOT, RETAIL_V0
from tests.suites.tau2.v101_fixtures import write_banking, write_submission, write_telecom
from tooldiag.cli.main import main
from tooldiag.suites.tau2.analysis import diagnose
from tooldiag.suites.tau2.cases import tau2_case_rows
from tooldiag.suites.tau2.domains import domain_tools
from tooldiag.suites.tau2.formats import render
from tooldiag.suites.tau2.reader import open_results
from tooldiag.suites.tau2.tau2_version import declared_version

SHARED_TAU2 = REPO_ROOT.parent / "shared" / "tau2"


@pytest.fixture
def telecom(tmp_path):
    return write_telecom(tmp_path)


def _row(report, domain):
    return next(r for r in report.table2 if r.domain == domain)


def _cell(row, view, name):
    return next(c for c in getattr(row, view) if c.task_class == name)


def test_telecom_write_events_are_the_agents_only(telecom):
    report = diagnose([telecom])
    # two agent writes (enable_roaming in roam/0 and roam/1); the user's toggle_roaming, reset_apn_settings
    # and reboot_device are WRITE user tools, but user-side: no write event
    assert [(e.simulation_id, e.tool) for e in report.events] == [("roam-0", "enable_roaming"),
                                                                  ("roam-1", "enable_roaming")]  # fmt: skip
    assert [e.deterministic.verdict for e in report.events] == ["consented", "no_request"]
    row = _row(report, "telecom")
    # user calls: roam/0 toggle_roaming; apn/0 and apn/1 reset + reboot; apn/2 check_status_bar (READ)
    assert (row.n_user_tool_calls, row.n_user_writes) == (6, 5)


def test_telecom_user_actions_are_not_the_agents_gold(telecom):
    report = diagnose([telecom])
    row = _row(report, "telecom")
    # roam has an agent action (tool_call-required); apn only user actions (user_only, neither class)
    assert report.task_classes[0].counts["tool_call"] == 1 and report.task_classes[0].counts["refuse"] == 0
    assert report.task_classes[0].counts["user_only"] == 1
    tool_call = _cell(row, "paper_classes", "tool_call")
    # roam/1 fails (the user never toggled roaming), yet the agent did its one action: the user's
    # toggle_roaming is not part of the agent's gold, so both roam simulations hit
    assert (tool_call.n_simulations, tool_call.gar.count, tool_call.acc.count) == (2, 2, 1)
    user_only = _cell(row, "write_split", "user_only")  # apn/0-2 (apn/3 is an infrastructure error)
    assert (user_only.n_simulations, user_only.gar.count, user_only.acc.count) == (3, 3, 2)


def test_telecom_user_calls_stay_visible_as_user_side(telecom):
    rows = {r.case_id: r for r in tau2_case_rows([telecom])}
    assert rows["roam-0"].extra["user_tool_calls"] == "toggle_roaming"
    assert rows["roam-1"].extra["user_tool_calls"] == ""
    # the agent's classes show its own calls only: roam/0 has two tool-call messages, no user one
    assert sum(turn.count("tool_call") for turn in rows["roam-0"].classes) == 2


def test_infrastructure_errors_are_counted_apart_and_left_out_of_pass_hat_k(telecom):
    row = _row(diagnose([telecom]), "telecom")
    assert row.n_infrastructure_errors == 1 and row.n_simulations == 5
    # by hand, tau2's definition (per task C(c, k)/C(n, k), averaged): roam 1 of 2, apn 2 of 3
    expected = {k: float((Fraction(comb(1, k), comb(2, k)) + Fraction(comb(2, k), comb(3, k))) / 2) for k in (1, 2)}
    assert row.pass_hat_k == pytest.approx(expected)
    assert row.pass_hat_k == pytest.approx({1: 7 / 12, 2: 1 / 6})
    # the leaderboard convention: apn 2 of 4
    assert row.pass_hat_k_infra_as_failure == pytest.approx({1: 0.5, 2: 1 / 12})
    md = render(diagnose([telecom]), "md")
    assert "| infra errors |" in md


def test_submission_pass_hat_k_compared_with_the_trajectories(tmp_path, telecom):
    submission = write_submission(tmp_path, {"telecom": {"pass_1": 60.0, "pass_2": 20.0, "pass_3": 10.0,
                                                         "pass_4": None}, "retail": {"pass_1": 70.0}})  # fmt: skip
    report = diagnose([telecom], submission=submission)
    rows = {r.k: r for r in report.submission.rows}
    assert rows[1].recomputed == pytest.approx(700 / 12) and rows[1].difference == pytest.approx(700 / 12 - 60)
    assert rows[2].recomputed == pytest.approx(100 / 6) and rows[2].difference == pytest.approx(100 / 6 - 20)
    assert rows[2].recomputed_infra_as_failure == pytest.approx(100 / 12)
    assert rows[3].recomputed is None and rows[3].difference is None  # k is capped at the fewest trials (2)
    assert 4 not in rows
    assert any("retail: in the submission, but no trajectories" in n for n in report.submission.notes)
    md = render(report, "md")
    assert "## Leaderboard submission vs trajectories (agent-t, tau2 1.0.1)" in md
    assert "| telecom | fake/agent-t | 1 | 60.0 | 58.3 | 50.0 | -1.7 |" in md


def test_submission_cli_prints_both_and_the_difference(tmp_path, telecom, capsys):
    submission = write_submission(tmp_path, {"telecom": {"pass_1": 50.0}}, version="0.2.1-dev")
    main(["tau2", "diagnose", str(telecom), "--submission", str(submission)])
    out = capsys.readouterr().out
    assert "| telecom | fake/agent-t | 1 | 50.0 | 58.3 | 50.0 | 8.3 |" in out
    assert "the submission says tau2 0.2.1-dev (pre-1.0); the trajectories read as 1.0.1" in out
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    with pytest.raises(SystemExit) as info:
        main(["tau2", "diagnose", str(telecom), "--submission", str(bad)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "no 'results' object" in err and "Traceback" not in err


def test_real_submission_files_are_read(telecom):
    sample = SHARED_TAU2 / "samples" / "submissions" / "claude-opus-4-5_sierra_2026-02-26" / "submission.json"
    if not sample.is_file():
        pytest.skip(f"{sample} not found (the shared folder must sit beside the repository)")
    report = diagnose([telecom], submission=sample)
    stated = json.loads(sample.read_text())["results"]["telecom"]["pass_1"]
    row = next(r for r in report.submission.rows if r.k == 1)
    assert row.submitted == stated and row.difference == pytest.approx(700 / 12 - stated)


def test_banking_knowledge_is_read_with_wrapped_tools(tmp_path):
    report = diagnose([write_banking(tmp_path)])
    # log_verification (WRITE) and the wrapped update_transaction_rewards_3847 (WRITE); the wrapped
    # get_debit_dispute_status_7483 is READ, unlock_discoverable_agent_tool GENERIC, the user's wrapper user-side
    assert [e.tool for e in report.events] == ["log_verification", "call_discoverable_agent_tool"]
    assert report.events[1].deterministic.verdict == "consented"
    row = _row(report, "banking_knowledge")
    assert _cell(row, "paper_classes", "tool_call").gar.count == 1
    assert (row.n_user_tool_calls, row.n_user_writes) == (1, 1)  # submit_cash_back_dispute_0589 is WRITE
    assert report.inputs[0].tau2_version == "1.0.0"
    assert any("1.0.1 changed banking grading" in w for w in report.warnings)


def test_write_tools_come_from_the_shipped_tool_types():
    facts_file = SHARED_TAU2 / "tau2-tools.json"
    if not facts_file.is_file():
        pytest.skip(f"{facts_file} not found")
    facts = json.loads(facts_file.read_text())
    for domain in ("airline", "retail", "telecom", "banking_knowledge"):
        tools = domain_tools(domain)
        expected = {t["name"] for t in facts["domains"][domain]["agent_tools"] if t["tool_type"] == "WRITE"}
        assert expected <= tools.write, domain
        assert len(tools.write) == facts["summary_counts"][domain]["agent_tools"]["WRITE"] + (
            1 if domain == "banking_knowledge" else 0  # rewrite_context, a WRITE retrieval tool
        )
    assert domain_tools("telecom").is_user_write("toggle_airplane_mode")
    assert not domain_tools("telecom").is_write("toggle_airplane_mode")  # a user tool, not the agent's
    assert "get_item_details" in domain_tools("retail").read
    assert "get_item_details" not in domain_tools("retail", version="pre-1.0").agent


@pytest.mark.parametrize(
    ("make", "version"),
    [(lambda tmp: RETAIL_V0, "pre-1.0"), (write_banking, "1.0.0"), (write_telecom, "1.0.1"), (lambda tmp: AIRLINE_V1,
                                                                                               "1.0.1")],
)  # fmt: skip
def test_version_detection(tmp_path, make, version):
    source = open_results(make(tmp_path))
    list(source.simulations())
    assert source.header.version == version


def test_version_from_a_simulation_field_when_the_header_has_none(tmp_path):
    data = json.loads(RETAIL_V0.read_text())
    data["simulations"][0]["mode"] = "half_duplex"
    path = tmp_path / "late.json"
    path.write_text(json.dumps(data))
    source = open_results(path)
    assert source.header.version == "pre-1.0"
    list(source.simulations())
    assert source.header.version == "1.0.0" and "mode" in source.header.version_evidence


def test_real_0x_telecom_sample_reads_as_pre_1_0():
    sample = SHARED_TAU2 / "samples" / "telecom_pr170_e2e_baseline_1sim.json"
    if not sample.is_file():
        pytest.skip(f"{sample} not found")
    report = diagnose([sample])
    assert report.inputs[0].tau2_version == "pre-1.0" and report.table2[0].domain == "telecom"


def test_declared_versions():
    assert [declared_version(v) for v in ("0.1.3", "v0.1.3", "0.2.1-dev", "1.0.0", "v1.0.1", "v2.0", None)] == [
        "pre-1.0", "pre-1.0", "pre-1.0", "1.0.0", "1.0.1", None, None]  # fmt: skip


def test_mixed_versions_warn_on_stderr_and_in_the_report(tmp_path, telecom, capsys):
    report = diagnose([telecom, RETAIL_V0])
    assert report.tau2_versions == ["pre-1.0", "1.0.1"]
    assert report.version_note and "different tau2 versions" in report.version_note
    assert report.version_note in report.warnings
    assert diagnose([telecom]).version_note is None
    main(["tau2", "diagnose", str(telecom), str(RETAIL_V0)])
    err = capsys.readouterr().err
    assert sum(line.startswith("warning: results of different tau2 versions") for line in err.splitlines()) == 1


def test_oracle_runs_are_flagged(tmp_path):
    report = diagnose([write_banking(tmp_path, oracle=True)])
    assert report.inputs[0].oracle and report.table2[0].oracle
    md = render(report, "md")
    assert "fake/agent-t [oracle]" in md and "oracle run" in md
