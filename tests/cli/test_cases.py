"""`tooldiag cases`: the rows behind Acc > GAR, derived again here from the stored trajectories.

The must-hold of issue 12: for ref/overcall on miss_func, `--verdict masked` lists exactly the
cases that BFCL passed and whose gold class (refuse) never appeared at a gold turn. The expected
list below is built without metrics/cases.py or the diagnostic adapter: each stored emission is
classified with `tooldiag.classify.classify`, and the gold turns come from BFCL's own case data
(the turn before each give-back turn of `missed_function`).
"""

import csv
import io
import json
from pathlib import Path

import pytest

import tooldiag
from tooldiag.classify import classify
from tooldiag.cli.main import main
from tooldiag.store import RunStore
from tooldiag.suites.bfcl.data import case_by_id
from tooldiag.suites.bfcl.ids import case_id_order

EXAMPLE_LOG = Path(__file__).resolve().parents[2] / "examples" / "agent_log.jsonl"
LIMIT = 20


@pytest.fixture(scope="module")
def overcall(tmp_path_factory):
    """ref/overcall on the first LIMIT miss_func cases (it calls where it should refuse)."""
    run_dir = tmp_path_factory.mktemp("cases") / "overcall"
    tooldiag.run_bfcl("ref/overcall", run_dir, categories=["miss_func"], limit=LIMIT)
    return run_dir


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """ref/oracle on two categories: tool_call gold (base) and ask gold (miss_param)."""
    run_dir = tmp_path_factory.mktemp("cases") / "oracle"
    tooldiag.run_bfcl("ref/oracle", run_dir, categories=["base", "miss_param"], limit=6)
    return run_dir


def cases_cli(capsys, *args):
    main(["cases", *map(str, args)])
    captured = capsys.readouterr()
    return captured.out, captured.err


def masked_by_hand(run_dir):
    """Passed cases in which no emission at a gold turn (turn before a give-back) is a refusal."""
    store = RunStore.open(run_dir, sort_key=case_id_order)  # BFCL's order (2 before 10), as `cases` lists them
    try:
        masked, unmasked = [], []
        for record in store.iter_cases():
            bfcl_case = case_by_id(record.case_id)
            gold_turns = {turn - 1 for turn in bfcl_case.missed_function}
            assert gold_turns and gold_turns == {t - 1 for t in record.trajectory.notes["give_back_turns"]}
            refused = any(
                classify(step.emission.text, tool_calls=step.emission.tool_calls) == "refuse"
                for turn in record.trajectory.turns
                if turn.index in gold_turns
                for step in turn.steps
                if not step.emission.injected
            )
            (masked if record.status == "done" and record.passed and not refused else unmasked).append(record.case_id)
        return masked, unmasked
    finally:
        store.close()


def test_masked_lists_exactly_the_passed_cases_without_a_refusal_at_a_gold_turn(overcall, capsys):
    expected, others = masked_by_hand(overcall)
    assert expected and others, "the limit must give both masked and other cases"
    out, err = cases_cli(capsys, overcall, "--verdict", "masked", "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["case_id"] for row in rows] == expected
    assert {row["verdict"] for row in rows} == {"masked"}
    assert all(row["passed"] is True and row["gold_hit"] is False for row in rows)
    assert f"{len(expected)} of {LIMIT} case(s) shown" in err and f"masked {len(expected)}" in err


def test_table_shows_each_turns_classes(overcall, capsys):
    out, err = cases_cli(capsys, overcall, "--verdict", "fail")
    assert "multi_turn_miss_func_" in out and "tool_call,other | tool_call,other" in out
    assert "masked" not in out.split("verdict", 1)[1]  # only fail rows below the header
    assert "of 20 case(s) shown" in err


def test_filters_category_and_class(mixed, capsys):
    out, _ = cases_cli(capsys, mixed, "--format", "jsonl")
    every = [json.loads(line) for line in out.splitlines()]
    assert {row["category"] for row in every} == {"base", "miss_param"} and len(every) == 12
    out, _ = cases_cli(capsys, mixed, "--category", "miss_param", "--format", "jsonl")
    assert [json.loads(line)["case_id"] for line in out.splitlines()] == [
        row["case_id"] for row in every if row["category"] == "miss_param"
    ]
    for action_class in ("ask", "tool_call", "refuse"):
        out, _ = cases_cli(capsys, mixed, "--class", action_class, "--format", "jsonl")
        kept = [json.loads(line)["case_id"] for line in out.splitlines()]
        assert kept == [row["case_id"] for row in every if any(action_class in turn for turn in row["classes"])]
    asked = [row for row in every if any("ask" in turn for turn in row["classes"])]
    assert asked and len(asked) < len(every), "the run must hold cases with and without an ask"


def test_csv_shape_and_repeated_verdicts(mixed, capsys):
    out, _ = cases_cli(capsys, mixed, "--format", "csv", "--verdict", "ok", "--verdict", "execution_failure")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == [
        "run", "case_id", "category", "gold_class", "classes", "gold_hit", "passed", "error_type", "verdict", "errored"
    ]  # fmt: skip
    assert rows and {row["verdict"] for row in rows} <= {"ok", "execution_failure"}
    assert all(isinstance(json.loads(row["classes"]), list) for row in rows)
    assert {row["run"] for row in rows} == {"ref/oracle"}


def test_agent_log_input_and_two_inputs(mixed, capsys):
    out, err = cases_cli(capsys, EXAMPLE_LOG, "--format", "jsonl", "--class", "confirm")
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows and all(any("confirm" in turn for turn in row["classes"]) for row in rows)
    assert {row["run"] for row in rows} == {"agent_log"} and "of 8 case(s) shown" in err
    out, _ = cases_cli(capsys, EXAMPLE_LOG, mixed, "--format", "jsonl")
    assert {json.loads(line)["run"] for line in out.splitlines()} == {"agent_log", "ref/oracle"}
    out, _ = cases_cli(capsys, EXAMPLE_LOG, mixed)  # two runs: the table gains a run column
    assert "agent_log" in out and "ref/oracle" in out


def test_same_run_twice_gets_distinct_names(mixed, capsys):
    out, _ = cases_cli(capsys, mixed, mixed, "--format", "jsonl", "--category", "base")
    assert {json.loads(line)["run"] for line in out.splitlines()} == {"ref/oracle (oracle)"}
    rows = tooldiag.case_rows([mixed, EXAMPLE_LOG], verdicts=["ok"])
    assert rows and {row.verdict.value for row in rows} == {"ok"}


@pytest.mark.parametrize(
    ("args", "message", "fix"),
    [
        (["--verdict", "masky"], "unknown --verdict 'masky'", "masked, execution_failure, ok, fail, ungraded"),
        (["--class", "toolcall"], "unknown --class 'toolcall'", "tool_call, ask, refuse, confirm, other"),
        (["--category", "miss_fun"], "no case of category 'miss_fun'", "categories: miss_func"),
        (["--format", "xlsx"], "unknown format 'xlsx'", "table, jsonl, csv, parquet"),
        (["--format", "parquet"], "--format parquet writes a binary file", "--out FILE.parquet"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(overcall, capsys, args, message, fix):
    with pytest.raises(SystemExit) as exc:
        main(["cases", str(overcall), *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("error: ") and message in err[0]
    assert err[1].startswith("  fix: ") and fix in err[1]


def bad_input(capsys, path):
    with pytest.raises(SystemExit) as exc:
        main(["cases", str(path)])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert captured.out == "" and len(err) == 2 and err[0].startswith("error: ") and err[1].startswith("  fix: ")
    return err


def test_judgebench_store_missing_path_empty_folder_and_unknown_file(tmp_path, capsys):
    tooldiag.judgebench_predict(tmp_path / "jb", ["ref/jb-perturb"], limit=1)
    err = bad_input(capsys, tmp_path / "jb")
    assert "is a judgebench store (judgebench.sqlite)" in err[0] and "tooldiag judgebench analyze" in err[1]
    err = bad_input(capsys, tmp_path / "nowhere")
    assert "nowhere: no such file or folder" in err[0]
    assert "BFCL run directory" in err[1] and "agent log" in err[1]
    (tmp_path / "empty").mkdir()
    assert "is an empty folder" in bad_input(capsys, tmp_path / "empty")[0]
    (tmp_path / "notes.txt").write_text("hello\n")
    assert "unknown kind of input" in bad_input(capsys, tmp_path / "notes.txt")[0]


def test_run_of_another_suite_is_refused(tmp_path, capsys):
    from tooldiag.trajectory import RunConfig

    RunStore.create_or_resume(tmp_path / "other", RunConfig(suite="tau2", model="m")).close()
    err = bad_input(capsys, tmp_path / "other")
    assert "holds a tooldiag run of the 'tau2' suite, not a BFCL run" in err[0]


def test_a_bad_input_fails_before_any_input_is_read(overcall, tmp_path, capsys):
    err = bad_input(capsys, tmp_path / "missing")  # alone
    assert err == bad_input_after(capsys, overcall, tmp_path / "missing")


def bad_input_after(capsys, good, bad):
    with pytest.raises(SystemExit):
        main(["cases", str(good), str(bad)])
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


def test_tau2_results_file_gives_the_rows_of_tau2_cases(capsys):
    results = Path(__file__).parents[1] / "data" / "tau2" / "retail_v0.json"
    main(["cases", str(results), "--format", "jsonl"])
    via_cases = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    main(["tau2", "cases", str(results), "--format", "jsonl"])
    via_tau2 = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert via_cases == via_tau2
    assert {row["verdict"] for row in via_cases} >= {"masked", "ok", "fail"}
