"""DataFrames and Parquet of the evidence: `load_cases`, `load_report`, `--format parquet`, the JSONL export.

The must-hold of issue 12: on a full 800-case run, `load_cases` has 800 rows whose `passed`
equals the export's, and the Parquet file of `tooldiag cases` round-trips to the same frame.

How list columns compare: `pandas.read_parquet` gives a list cell back as a numpy array (of
arrays, for `classes`); the frames are compared after turning those back into Python lists
(:func:`as_lists`), every other column (dtypes included) as it is.
"""

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest

import tooldiag
from tooldiag.cli.main import main


def as_lists(value):
    """A Parquet list cell (numpy arrays, nested) as the Python lists `load_cases` holds."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    return [as_lists(v) for v in value] if isinstance(value, list) else value


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """ref/overcall on every case of BFCL multi-turn (800, offline)."""
    run_dir = tmp_path_factory.mktemp("frames") / "overcall"
    tooldiag.run_bfcl("ref/overcall", run_dir)
    return run_dir


@pytest.fixture(scope="module")
def cases(full_run):
    return tooldiag.load_cases(full_run)


@pytest.fixture(scope="module")
def exported(full_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("frames") / "export.jsonl"
    main(["export", str(full_run), "--format", "jsonl", "--out", str(out)])
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_load_cases_has_800_rows_and_the_exports_passed(cases, exported):
    assert len(cases) == len(exported) == 800
    assert list(cases["case_id"]) == [row["case_id"] for row in exported]
    assert list(cases["passed"]) == [row["passed"] for row in exported]
    assert 0 < cases["passed"].sum() < 800  # both kinds occur: the comparison can fail
    assert list(cases.columns) == [
        "run", "case_id", "category", "gold_class", "classes", "n_turns", "n_emissions",
        "gold_hit", "passed", "error_type", "verdict", "errored",
    ]  # fmt: skip
    assert str(cases["passed"].dtype) == "boolean" and cases["n_turns"].dtype == "int64"
    first = cases.iloc[0]
    assert isinstance(first["classes"], list) and all(isinstance(turn, list) for turn in first["classes"])
    assert first["n_turns"] == len(first["classes"]) and first["n_emissions"] == sum(map(len, first["classes"]))


def test_cases_parquet_round_trips_to_load_cases(full_run, cases, tmp_path):
    out = tmp_path / "cases.parquet"
    main(["cases", str(full_run), "--format", "parquet", "--out", str(out)])
    read = pd.read_parquet(out)
    assert not isinstance(read["classes"].iloc[0], list)  # why as_lists is needed
    pdt.assert_frame_equal(read.assign(classes=read["classes"].map(as_lists)), cases)


def test_export_parquet_is_the_cases_frame(full_run, cases, tmp_path):
    out = tmp_path / "export.parquet"
    main(["export", str(full_run), "--format", "parquet", "--out", str(out)])
    read = pd.read_parquet(out)
    pdt.assert_frame_equal(read.assign(classes=read["classes"].map(as_lists)), cases)


def test_export_lines_carry_classes_user_messages_and_verdicts(cases, exported):
    keys = ["case_id", "category", "status", "passed", "error_type", "error_message", "turns"]
    assert all(list(row)[: len(keys)] == keys for row in exported)  # the keys it always had, first
    by_id = cases.set_index("case_id")
    for row in exported:
        expected = by_id.loc[row["case_id"]]
        emitted = [[e["action_class"] for e in turn if not e["injected"]] for turn in row["turns"]]
        assert emitted == expected["classes"]
        assert (row["gold_class"], row["gold_hit"], row["verdict"]) == (
            expected["gold_class"], expected["gold_hit"], expected["verdict"]
        )  # fmt: skip
        assert len(row["user_messages"]) == len(row["turns"])
        assert row["user_messages"][0] and all(set(m) == {"role", "content"} for m in row["user_messages"][0])
        assert row["user_messages"][0][0]["role"] == "user"
    assert {row["verdict"] for row in exported} >= {"masked", "ok"}


def test_export_scheme_classifies_each_emission(full_run, tmp_path, exported):
    from tooldiag.classify import classify

    out = tmp_path / "paper.jsonl"
    main(["export", str(full_run), "--scheme", "paper", "--out", str(out)])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["case_id"] for r in rows] == [r["case_id"] for r in exported]
    for row in rows[::40]:  # every category, every kind of emission of the policy
        for turn in row["turns"]:
            for e in turn:
                assert e["action_class"] == classify(e["text"], tool_calls=e["tool_calls"], scheme="paper")


def test_load_report_is_the_tidy_table_with_numbers(full_run, tmp_path, capsys):
    frame = tooldiag.load_report([full_run])
    assert list(frame["category"]) == ["base", "long_context", "miss_func", "miss_param"]
    assert frame["gar"].dtype == "float64" and frame["n"].dtype == "int64"
    miss_func = frame.set_index("category").loc["miss_func"]
    assert miss_func["gar"] == 0.0 and miss_func["acc"] > 50 and "masking" in miss_func["flags"]
    assert isinstance(miss_func["flags"], list)
    main(["report", str(full_run), "--format", "csv"])
    text_rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [float(r["acc"]) for r in text_rows] == pytest.approx(list(frame["acc"]), abs=1e-4)
    assert [r["flags"] for r in text_rows] == [";".join(flags) for flags in frame["flags"]]


def test_report_parquet_round_trips_to_load_report(full_run, tmp_path):
    out = tmp_path / "report.parquet"
    main(["report", str(full_run), "--format", "parquet", "--out", str(out)])
    read = pd.read_parquet(out)
    pdt.assert_frame_equal(read.assign(flags=read["flags"].map(as_lists)), tooldiag.load_report(full_run))


def test_report_parquet_needs_out(full_run, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", str(full_run), "--format", "parquet"])
    assert exc.value.code == 2 and "--format parquet writes a binary file" in capsys.readouterr().err


def test_probe_shifts_parquet_holds_the_tidy_rows_of_the_csv(tmp_path, capsys):
    for name, probe in (("base", None), ("sri", "sri")):
        tooldiag.run_bfcl("ref/overcall", tmp_path / name, categories=["miss_func"], limit=4, probe=probe)
    args = ["report", str(tmp_path / "sri"), "--baseline", str(tmp_path / "base")]
    main([*args, "--format", "csv"])
    text = pd.read_csv(io.StringIO(capsys.readouterr().out))
    main([*args, "--format", "parquet", "--out", str(tmp_path / "shifts.parquet")])
    frame = pd.read_parquet(tmp_path / "shifts.parquet")
    assert list(frame.columns) == ["model", "probe", "category", "metric", "value"] and len(frame) == len(text) > 0
    assert frame["value"].astype(float).round(4).tolist() == text["value"].astype(float).round(4).tolist()


def test_diagnose_parquet_is_the_log_report_frame(tmp_path):
    log = Path(__file__).parents[2] / "examples" / "agent_log.jsonl"
    main(["diagnose", str(log), "--format", "parquet", "--out", str(tmp_path / "log.parquet")])
    read = pd.read_parquet(tmp_path / "log.parquet")
    pdt.assert_frame_equal(read.assign(flags=read["flags"].map(as_lists)), tooldiag.load_report(log))


def test_empty_selection_is_a_typed_empty_frame(full_run):
    from tooldiag.report.frames import CASE_FRAME_COLUMNS, cases_frame

    rows = tooldiag.case_rows(full_run, verdicts=["ungraded"])
    frame = cases_frame(rows)
    assert rows == [] and list(frame.columns) == list(CASE_FRAME_COLUMNS) and len(frame) == 0
