"""`judgebench import`: released judge-output rows -> store -> `analyze`, against cells computed by hand.

The fixture rows follow the released schema (notes §5, SyGra ``task_executor.py``). Their plans
are built so that the programmatic scores follow from the reference's length n alone (the
chosen records have n distinct tool names): the reference itself scores (1, 1, 1, 1); its first
call alone scores (1/n, 1, 1/n, 1/n); one unknown tool scores (0, 0, 0, 0). The expected cell
alignments are then 100 x the mean over rows of the mean over metrics of 1 - |p - l| (paper
Eqs. 4a-5a; a metric the judge left out counts 0), written out here in plain Python.
"""

from __future__ import annotations

import json

import pytest

import tooldiag
from tooldiag.cli.main import main
from tooldiag.errors import UserError
from tooldiag.suites.judgebench.loaders import load_records

RECORDS = {
    "linear": "linear_it_laptop_replacement",
    "fan_out": "fan_out_logistics_order_options",
    "fan_in": "fan_in_it_design_license",
}
KEYS = ("tool_selection_accuracy", "parameter_structure_accuracy", "sequence_accuracy", "query_coverage_accuracy")


@pytest.fixture(scope="module")
def records():
    loaded = {r.id: r for r in load_records("builtin")}
    return {dag: loaded[rid] for dag, rid in RECORDS.items()}


def openai(calls):
    return [{"function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]


def plan_and_scores(record, kind):
    """(generated_tool_calls, programmatic scores by hand) for one plan kind."""
    expected = record.expected_calls()
    n = len(expected)
    assert len({c["name"] for c in expected}) == n  # the hand formulas need distinct names
    if kind == "exact":
        return openai(expected), (1.0, 1.0, 1.0, 1.0)
    if kind == "first":
        third = round(1 / n, 4)
        return openai(expected[:1]), (third, 1.0, third, third)
    if kind == "unknown":
        return [{"function": {"name": "no_such_tool", "arguments": {}}}], (0.0, 0.0, 0.0, 0.0)
    assert kind == "empty"
    return [], None


def reply(values):
    """A released judge reply; ``None`` in ``values`` leaves that metric out."""
    out = {k: {"accuracy": v, "justification": "fixture"} for k, v in zip(KEYS, values, strict=True) if v is not None}
    out["overall_assessment"] = "fixture"
    return out


def row(record, generator, difficulty, kind, gt, no_gt, *, keys=True, programmatic=None):
    calls, scores = plan_and_scores(record, kind)
    out = {
        "id": record.id,
        "dag_type": record.dag_type,
        "user_message": record.query(difficulty),
        "generated_tool_calls": calls,
        "judge_response": reply(gt) if gt is not None else None,
        "judge_response_no_gt": reply(no_gt) if no_gt is not None else None,
    }
    reported = programmatic or scores
    if reported is not None:
        out["programmatic_judge_response"] = {k: {"accuracy": v} for k, v in zip(KEYS, reported, strict=True)}
    if keys:
        out["generator"], out["difficulty"] = generator, difficulty
    return out, scores


#: (dag, generator, difficulty, plan kind, with-GT values, without-GT values); None = null verdict.
ROWS = [
    ("linear", "gen_a", "easy", "exact", (1.0, 1.0, 1.0, 1.0), (1.0, 0.5, 1.0, 1.0)),
    ("fan_out", "gen_a", "easy", "first", (0.5, 1.0, 0.0, 0.5), (1.0, 1.0, 1.0, 1.0)),
    ("fan_in", "gen_a", "easy", "unknown", (0.0, 0.5, 0.0, None), None),
    ("linear", "gen_a", "hard", "first", (0.0, 1.0, 0.5, 0.5), (0.5, 0.5, 0.5, 0.5)),
    ("fan_out", "gen_a", "hard", "empty", (1.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 1.0)),
    ("linear", "gen_b", "easy", "unknown", (0.0, 0.0, 0.0, 0.0), (1.0, 1.0, 1.0, 1.0)),
    ("fan_in", "gen_b", "easy", "exact", (1.0, 1.0, 0.5, 1.0), (1.0, 1.0, 1.0, 1.0)),
]


def by_hand(rows):
    """(generator, difficulty, condition) -> (n, 100 x mean alignment) over the rows that count."""
    sums: dict[tuple[str, str, str], list[float]] = {}
    for (_, generator, difficulty, _, gt, no_gt), scores in rows:
        if scores is None:  # an empty plan is attrition, never in a cell
            continue
        for condition, values in (("with_gt", gt), ("without_gt", no_gt)):
            if values is None:  # a null verdict is excluded
                continue
            mu = [0.0 if ell is None else 1 - abs(p - ell) for p, ell in zip(scores, values, strict=True)]
            sums.setdefault((generator, difficulty, condition), []).append(sum(mu) / 4)
    return {key: (len(v), 100 * sum(v) / len(v)) for key, v in sums.items()}


def write_fixture(path, records, rows=ROWS, *, keys=True, wrong_programmatic_at=None):
    lines, scored = [], []
    for i, spec in enumerate(rows):
        dag, generator, difficulty, kind, gt, no_gt = spec
        wrong = (0.5, 1.0, 0.5, 0.5) if i == wrong_programmatic_at else None
        out, scores = row(records[dag], generator, difficulty, kind, gt, no_gt, keys=keys, programmatic=wrong)
        lines.append(json.dumps(out))
        scored.append((spec, scores))
    path.write_text("\n".join(lines) + "\n")
    return scored


def cells_of(run):
    report = tooldiag.judgebench_analyze(run, resamples=50, workers=1)
    cells = report.tables["cells"]
    return {
        (r.judge, r.generator, r.difficulty, r.condition): (int(r.n), float(r.alignment))
        for r in cells.itertuples(index=False)
    }


def test_imported_rows_reproduce_hand_computed_cells(tmp_path, records):
    source = tmp_path / "judge_fixture_judge.jsonl"
    scored = write_fixture(source, records, wrong_programmatic_at=1)
    run = tmp_path / "run"
    summary = tooldiag.judgebench_import([source], run, records="builtin")
    (item,) = summary.files
    assert (item.layout, item.judge, item.rows) == ("released", "fixture_judge", len(ROWS))
    assert item.plan_statuses == {"ok": 6, "empty": 1}
    assert item.predictions_stored == 7 and item.verdicts_stored == 14  # a null verdict is stored too
    assert item.verdict_statuses[("without_gt", "null")] == 1
    # row 2 reports (0.5, 1, 0.5, 0.5) instead of (1/4, 1, 1/4, 1/4): three metrics differ, param does not
    assert (item.checked, item.mismatches) == (6, 1)
    assert item.mismatch_metrics == {"tool_selection": 1, "sequence": 1, "coverage": 1}
    expected = by_hand(scored)
    got = cells_of(run)
    assert set(got) == {("fixture_judge", *key) for key in expected}
    for key, (n, alignment) in expected.items():
        n_got, alignment_got = got[("fixture_judge", *key)]
        assert n_got == n and alignment_got == pytest.approx(alignment, abs=1e-9), key
    # one value written out in full: gen_a easy with GT = rows 1-3,
    # (1+1+1+1)/4, then fan_out n=4: (1-|.25-.5|, 1, 1-.25, 1-|.25-.5|)/4, then (1, .5, 1, 0)/4
    assert got[("fixture_judge", "gen_a", "easy", "with_gt")][1] == pytest.approx(
        100 * (1 + (0.75 + 1 + 0.75 + 0.75) / 4 + 2.5 / 4) / 3
    )


def test_reimport_is_idempotent_and_a_conflict_is_refused(tmp_path, records):
    source = tmp_path / "judge_j.jsonl"
    write_fixture(source, records)
    run = tmp_path / "run"
    tooldiag.judgebench_import([source], run, records="builtin")
    before = cells_of(run)
    again = tooldiag.judgebench_import([source], run)  # records now come from the run directory
    (item,) = again.files
    assert (item.predictions_stored, item.verdicts_stored) == (0, 0)
    assert (item.predictions_skipped, item.verdicts_skipped) == (7, 14)
    assert cells_of(run) == before
    changed = list(ROWS)
    changed[0] = ("linear", "gen_a", "easy", "exact", (0.5, 1.0, 1.0, 1.0), (1.0, 0.5, 1.0, 1.0))
    write_fixture(source, records, changed)
    with pytest.raises(UserError, match=r"judge_j\.jsonl:1: judge j's with_gt verdict on gen_a\|linear_it"):
        tooldiag.judgebench_import([source], run)
    assert cells_of(run) == before  # nothing of the refused file was written


def test_a_second_judge_shares_the_plans_and_options_fill_missing_keys(tmp_path, records):
    run = tmp_path / "run"
    first = tmp_path / "judge_a.jsonl"
    write_fixture(first, records)
    tooldiag.judgebench_import([first], run, records="builtin")
    rows = [r for r in ROWS if r[1] == "gen_b"]
    second = tmp_path / "gen_b_easy.jsonl"
    scored = write_fixture(second, records, rows, keys=False)
    with pytest.raises(UserError, match="names no generator"):
        tooldiag.judgebench_import([second], run, judge="b")
    summary = tooldiag.judgebench_import([second], run, judge="b", generator="gen_b", difficulty="easy")
    (item,) = summary.files
    assert (item.predictions_stored, item.predictions_skipped, item.verdicts_stored) == (0, 2, 4)
    got = cells_of(run)
    for key, value in by_hand(scored).items():
        assert got[("b", *key)][0] == value[0] and got[("b", *key)][1] == pytest.approx(value[1])


def test_runner_layout_and_json_strings(tmp_path, records):
    folder = tmp_path / "gen_c" / "judged_by_qwq"
    folder.mkdir(parents=True)
    out, scores = row(records["linear"], "", "medium", "first", (0.5, 1.0, 0.5, 0.5), (1.0, 1.0, 1.0, 1.0), keys=False)
    out["generated_tool_calls"] = json.dumps(out["generated_tool_calls"])
    out["judge_response"] = "<think>hm</think>```json\n" + json.dumps(out["judge_response"]) + "\n```"
    path = folder / "judge_gen_c_qwq_medium_output_2025.json"
    path.write_text(json.dumps([out]))
    summary = tooldiag.judgebench_import([path], tmp_path / "run", records="builtin")
    assert (summary.files[0].layout, summary.files[0].judge) == ("runner", "qwq")
    got = cells_of(tmp_path / "run")
    third = round(1 / 3, 4)
    assert got[("qwq", "gen_c", "medium", "with_gt")] == (1, pytest.approx(100 * (1 - abs(third - 0.5)) * 3 / 4 + 25))
    assert scores == (third, 1.0, third, third)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"question": "q", "answer": "a"}\n', "judge_x.jsonl:1: not an AgentJudgeBench judge-output row"),
        ('{"id": "x", "generated_tool_calls": []}\n', "judge_x.jsonl:1: the row has no judge_response"),
        ("not json\n", "judge_x.jsonl:1: not valid JSON"),
        (
            '{"id": "nope", "generated_tool_calls": [], "judge_response": null, '
            '"generator": "g", "difficulty": "easy"}\n',
            "judge_x.jsonl:1: record id 'nope' is not among the records",
        ),
        (
            '{"id": "x", "generated_tool_calls": [], "judge_response": null, '
            '"generator": "g", "difficulty": "extreme"}\n',
            "difficulty 'extreme' is not one of",
        ),
    ],
)
def test_foreign_rows_are_one_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "judge_x.jsonl"
    path.write_text(content)
    with pytest.raises(SystemExit) as exit_info:
        main(["judgebench", "import", str(path), "--run-dir", str(tmp_path / "run"), "--records", "builtin"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_a_file_without_a_judge_name_needs_judge(tmp_path, records):
    path = tmp_path / "outputs.jsonl"
    write_fixture(path, records, ROWS[:1])
    with pytest.raises(UserError, match="cannot tell the judge"):
        tooldiag.judgebench_import([path], tmp_path / "run", records="builtin")
    summary = tooldiag.judgebench_import([path], tmp_path / "run", records="builtin", judge="mine")
    assert summary.files[0].judge == "mine"


def test_cli_prints_the_summary_and_the_mismatches(tmp_path, capsys, records):
    source = tmp_path / "judge_cli.jsonl"
    write_fixture(source, records, wrong_programmatic_at=3)
    main(["judgebench", "import", str(source), "--run-dir", str(tmp_path / "run"), "--records", "builtin"])
    out = capsys.readouterr().out
    assert "(released layout, judge cli): 7 rows" in out
    assert "programmatic cross-check: 6 rows compared, 1 differ" in out
    assert "judge_cli.jsonl:4 linear_it_laptop_replacement: released (0.5, 1.0, 0.5, 0.5)" in out
    main(["judgebench", "import", str(source), "--run-dir", str(tmp_path / "run")])
    assert "0 stored, 7 already stored" in capsys.readouterr().out
