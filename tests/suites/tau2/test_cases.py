"""tau2 evidence rows: they agree with Tables 2 and 3, and ``tooldiag tau2 cases`` / parquet / load_tau2."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pandas as pd
import pytest

import tooldiag
from tests.suites.tau2.conftest import AIRLINE_V1, RETAIL_V0
from tooldiag.cli.main import main
from tooldiag.errors import UserError
from tooldiag.suites.tau2.cases import (
    SHARED_COLUMNS,
    SIMULATION_EXTRA,
    WRITE_EXTRA,
    case_rows_frame,
    tau2_case_rows,
    tau2_evidence,
)
from tooldiag.suites.tau2.formats import csv_rows
from tooldiag.suites.tau2.schema import INFRASTRUCTURE_ERROR

FIXTURES = [RETAIL_V0, AIRLINE_V1]


@pytest.fixture(scope="module")
def evidence():
    return tau2_evidence(FIXTURES)


def assert_rows_agree_with_tables(evidence) -> None:
    """Per model, domain and Table 2 class: rows = sims, passed = Acc count, gold hits = GAR count; likewise Table 3."""
    report = evidence.report
    for row2 in report.table2:
        run = f"{row2.agent_model}{' (oracle)' if row2.oracle else ''} [{row2.domain}]"
        for cell in row2.paper_classes:
            rows = [r for r in evidence.simulations if r.run == run and r.category == cell.task_class]
            graded = [r for r in rows if not r.errored]
            assert len(graded) == cell.n_simulations
            assert sum(1 for r in graded if r.passed) == cell.acc.count
            assert sum(1 for r in graded if r.gold_hit) == cell.gar.count
            assert len({r.extra["task_id"] for r in graded}) == cell.n_tasks
            assert sum(1 for r in graded if r.verdict.value == "masked") == sum(
                1 for r in graded if r.passed and not r.gold_hit
            )
    for row3 in report.table3:
        if row3.judge != "deterministic":
            continue
        writes = [r for r in evidence.writes if r.extra["domain"] == row3.domain and row3.agent_model in r.run]
        if row3.subset != "all":
            writes = [r for r in writes if r.category == row3.subset]
        assert len(writes) == row3.n_events
        assert sum(1 for r in writes if r.gold_hit) == row3.gar.count
        assert sum(1 for r in writes if r.passed) == row3.acc.count
    assert len(evidence.writes) == len(report.events)


def test_rows_agree_with_table2_and_table3_on_the_fixtures(evidence):
    assert_rows_agree_with_tables(evidence)
    # retail task 5 is ask- and tool_call-required: two rows for each of its simulations
    assert Counter(r.category for r in evidence.simulations if r.extra["task_id"] == "5") == {"tool_call": 2, "ask": 2}


def test_rows_agree_with_the_tables_on_real_results(real_files):
    evidence = tau2_evidence(real_files)
    assert evidence.simulations and evidence.writes
    assert_rows_agree_with_tables(evidence)


def test_a_masked_simulation_and_a_masked_write(evidence):
    masked = [r for r in evidence.simulations if r.verdict.value == "masked"]
    # retail 24/0: ask-required, passed, never asked (Table 2: ask GAR 1 of 4, Acc 2 of 4)
    assert [(r.case_id, r.category) for r in masked] == [("r-24-0", "ask")]
    assert masked[0].passed and not masked[0].gold_hit and "ask" not in masked[0].emitted()
    write = next(r for r in evidence.writes if r.verdict.value == "masked")
    assert write.case_id == "a-14-0/write1" and write.extra["tool"] == "book_reservation"
    assert write.extra["consent"] == "unconfirmed" and write.extra["consent_verdict"] == "no_request"
    assert write.gold_class == "confirm" and write.passed


def test_classes_per_turn_and_the_write_prefix(evidence):
    row = next(r for r in evidence.simulations if r.case_id == "r-1-0")
    # the greeting is left out; the user's closing message gets no reply (an empty last turn)
    assert row.classes == (("tool_call", "tool_call", "confirm"), ("tool_call", "other"), ())
    assert row.error_type is None and row.extra["termination_reason"] == "user_stop"
    write = next(r for r in evidence.writes if r.case_id == "r-1-0/write1")
    assert write.classes == (("tool_call", "tool_call", "confirm"), ("tool_call",))  # up to the write itself
    assert write.extra["reply_kind"] == "agree" and write.extra["reply_index"] == 7


def test_error_rows(evidence):
    infra = [r for r in evidence.simulations if r.extra["termination_reason"] == INFRASTRUCTURE_ERROR]
    assert infra and all(r.errored and r.passed is None and r.verdict.value == "ungraded" for r in infra)
    assert all(r.error_type == INFRASTRUCTURE_ERROR for r in infra)
    max_steps = next(r for r in evidence.simulations if r.case_id == "r-1-1")
    assert max_steps.error_type == "max_steps" and max_steps.passed is False and not max_steps.errored


def test_a_classifier_gives_one_class_per_message(evidence):
    rows = tau2_case_rows([RETAIL_V0], tooldiag.classifier("paper"))
    default = {r.case_id: r for r in evidence.simulations}
    for row in rows:
        before = default[row.case_id]
        # the same messages per turn; a multi-label message (tool_call,confirm in one message) counts once
        assert len(row.classes) == len(before.classes)
        assert all(len(a) <= len(b) for a, b in zip(row.classes, before.classes))
    assert tau2_case_rows([RETAIL_V0], unit="write") == [r for r in evidence.writes if r.extra["domain"] == "retail"]


def test_bad_unit_and_verdict():
    with pytest.raises(UserError, match="unknown unit 'turn'"):
        tau2_case_rows([RETAIL_V0], unit="turn")
    with pytest.raises(UserError, match="unknown --verdict 'hidden'"):
        tooldiag.tau2_cases([RETAIL_V0], verdicts=["hidden"])


# -- DataFrames ------------------------------------------------------------------------------------
def test_load_tau2_tables(evidence):
    sims = tooldiag.load_tau2(FIXTURES)
    assert list(sims.columns) == [*SHARED_COLUMNS, *SIMULATION_EXTRA]
    assert len(sims) == len(evidence.simulations)
    writes = tooldiag.load_tau2(FIXTURES, table="writes")
    assert list(writes.columns) == [*SHARED_COLUMNS, *WRITE_EXTRA] and len(writes) == len(evidence.report.events)
    classes = tooldiag.load_tau2(FIXTURES, table="classes")
    ask = classes[(classes["domain"] == "retail") & (classes["task_class"] == "ask")].iloc[0]
    assert (ask["n"], ask["gar_count"], ask["acc_count"]) == (4, 1, 2) and ask["delta"] == pytest.approx(-0.25)
    passed = sims[(sims["domain"] == "retail") & (sims["category"] == "ask") & ~sims["errored"]]["passed"].sum()
    assert passed == ask["acc_count"]
    consent = tooldiag.load_tau2(FIXTURES, table="consent")
    airline = consent[(consent["domain"] == "airline") & (consent["subset"] == "all")].iloc[0]
    assert (airline["n"], airline["gar"], airline["acc"]) == (2, 0.5, 1.0)
    with pytest.raises(UserError, match="unknown tau2 table"):
        tooldiag.load_tau2(FIXTURES, table="turns")


# -- command line ----------------------------------------------------------------------------------
def run(capsys, *args):
    main(["tau2", *map(str, args)])
    return capsys.readouterr()


def fails(capsys, *args) -> str:
    with pytest.raises(SystemExit) as info:
        main(["tau2", *map(str, args)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("error: ")
    return err


def test_cases_table_and_filters(capsys):
    out = run(capsys, "cases", *FIXTURES).out
    assert out.splitlines()[-1] == "20 simulation rows: masked 1, ok 11, fail 6, ungraded 2"
    assert (
        "| fake/agent-a [retail] | r-24-0 | 24 | 0 | ask | ask | tool_call,confirm / other / – | no | yes | – |" in out
    )
    masked = run(capsys, "cases", *FIXTURES, "--verdict", "masked").out
    assert masked.count("| r-24-0 |") == 1 and masked.splitlines()[-1] == "1 simulation rows: masked 1"
    writes = run(capsys, "cases", *FIXTURES, "--unit", "write", "--category", "answer_changed").out
    assert writes.splitlines()[-1] == "1 write rows: ok 1" and "r-5-0/write1" in writes


def test_cases_jsonl_and_csv(capsys, evidence):
    lines = run(capsys, "cases", RETAIL_V0, "--unit", "write", "-f", "jsonl").out.splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["case_id"] for r in rows] == [r.case_id for r in evidence.writes if r.extra["domain"] == "retail"]
    assert rows[0]["classes"] == [["tool_call", "tool_call", "confirm"], ["tool_call"]]
    table = list(csv.DictReader(io.StringIO(run(capsys, "cases", RETAIL_V0, "-f", "csv").out)))
    assert len(table) == 12 and json.loads(table[0]["classes"])[0] == ["tool_call", "tool_call", "confirm"]
    assert list(table[0]) == [*SHARED_COLUMNS, *SIMULATION_EXTRA]


def _plain(frame: pd.DataFrame) -> list[dict]:
    """Rows as plain Python values (Parquet gives arrays for list cells, NaN for missing numbers)."""

    def value(v):
        if hasattr(v, "tolist"):
            v = v.tolist()
        if isinstance(v, list):
            return [value(x) for x in v]
        return None if v is None or (isinstance(v, float) and v != v) or v is pd.NA else v

    return [{k: value(v) for k, v in row.items()} for row in frame.to_dict("records")]


@pytest.mark.parametrize("unit", ["simulation", "write"])
def test_cases_parquet_round_trip(tmp_path, capsys, evidence, unit):
    out = tmp_path / "rows.parquet"
    assert f"wrote {out}" in run(capsys, "cases", *FIXTURES, "--unit", unit, "-f", "parquet", "-o", out).err
    rows = evidence.simulations if unit == "simulation" else evidence.writes
    assert _plain(pd.read_parquet(out)) == _plain(case_rows_frame(rows, unit))
    assert _plain(pd.read_parquet(out)) == [row.to_json() for row in rows]


def test_diagnose_parquet_round_trip(tmp_path, capsys, evidence):
    out = tmp_path / "d" / "report.parquet"
    run(capsys, "diagnose", *FIXTURES, "-f", "parquet", "-o", out)
    frame = pd.read_parquet(out)
    expected = csv_rows(evidence.report)
    assert len(frame) == len(expected) and list(frame["section"]) == [r["section"] for r in expected]
    table2 = frame[frame["section"] == "table2"]
    assert table2["gar_count"].tolist() == [r["gar_count"] for r in expected if r["section"] == "table2"]
    assert frame["n"].dtype.kind in "if"  # numbers, not text


def test_cases_bad_input(capsys):
    assert "unknown unit 'turn'" in fails(capsys, "cases", RETAIL_V0, "--unit", "turn")
    assert "unknown --verdict 'hidden'" in fails(capsys, "cases", RETAIL_V0, "--verdict", "hidden")
    assert "--format parquet writes a binary file" in fails(capsys, "cases", RETAIL_V0, "-f", "parquet")
    assert "--format parquet writes a binary file" in fails(capsys, "diagnose", RETAIL_V0, "-f", "parquet")
    assert "unknown format 'xml'" in fails(capsys, "cases", RETAIL_V0, "-f", "xml")
