"""CLI: judgebench predict/judge/analyze/records, score-plan, the demo entry point, and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tooldiag.cli.main import main


def test_predict_judge_analyze(tmp_path, capsys):
    run = str(tmp_path / "run")
    main(
        [
            "judgebench",
            "predict",
            "-g",
            "ref/jb-perturb",
            "--run-dir",
            run,
            "--limit",
            "12",
            "--difficulties",
            "easy,hard",
            "-q",
        ]
    )
    main(
        [
            "judgebench",
            "judge",
            "-j",
            "ref/jb-exact",
            "-j",
            "ref/jb-anchored",
            "--run-dir",
            run,
            "-q",
            "--conditions",
            "with_gt,without_gt,corrupted_gt",
        ]
    )
    capsys.readouterr()
    main(["judgebench", "analyze", "--run-dir", run, "--resamples", "200"])
    out = capsys.readouterr().out
    assert "| generator | judge | with_gt easy | with_gt hard | without_gt easy |" in out
    assert "ref/jb-anchored" in out and "Decision guide" in out
    report = json.loads((tmp_path / "run" / "report" / "report.json").read_text())
    lift = {r["judge"]: r["delta_pp"] for r in report["tables"]["contrasts"] if r["contrast"] == "gt_lift"}
    assert lift["ref/jb-exact"] == 0 and lift["ref/jb-anchored"] > 0
    assert (tmp_path / "run" / "report" / "tables" / "table2.csv").exists()
    # the same commands again change nothing
    main(["judgebench", "judge", "-j", "ref/jb-exact", "--run-dir", run, "-q", "--conditions", "with_gt"])
    assert "ran 0 (nothing new)" in capsys.readouterr().out.replace("\n", " ")


def test_analyze_with_the_schema_aware_scorer(tmp_path, capsys):
    run = str(tmp_path / "run")
    main(["judgebench", "predict", "-g", "ref/jb-sloppy", "--run-dir", run, "--limit", "8", "-q"])
    main(["judgebench", "judge", "-j", "ref/jb-exact", "--run-dir", run, "-q", "--conditions", "with_gt"])
    main(
        [
            "judgebench",
            "analyze",
            "--run-dir",
            run,
            "--resamples",
            "50",
            "--scorer",
            "schema_aware",
            "--formats",
            "json",
            "--out",
            str(tmp_path / "sa"),
        ]
    )
    payload = json.loads((tmp_path / "sa" / "report.json").read_text())
    assert payload["extras"]["scorer"] == "schema_aware"
    assert not (tmp_path / "sa" / "report.md").exists()


def test_records_command(capsys):
    main(["judgebench", "records"])
    out = capsys.readouterr().out
    assert "36 records" in out and "loop_like: 6" in out and "with a hard query: 36" in out


def test_score_plan_file_and_stdin(tmp_path, capsys):
    lines = [
        {
            "id": "w",
            "expected": [
                {"name": "A", "arguments": {"x": 1}},
                {"name": "B", "arguments": {}},
                {"name": "C", "arguments": {"y": 1}},
            ],
            "predicted": [
                {"function": {"name": "A", "arguments": '{"x": 2}'}},
                {"function": {"name": "C", "arguments": {"y": 1, "z": 2}}},
                {"name": "D", "arguments": {}},
            ],
        },
        {"expected": [], "predicted": []},
    ]
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    main(["score-plan", str(path)])
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert out[0] == {
        "id": "w",
        "tool_selection": 0.3333,
        "parameter_structure": 0.5,
        "sequence": 0.3333,
        "coverage": 0.6667,
    }
    assert out[1] == {"tool_selection": 1.0, "parameter_structure": 1.0, "sequence": 1.0, "coverage": 1.0}
    proc = subprocess.run(
        [sys.executable, "-m", "tooldiag", "score-plan", "-"], input=path.read_text(), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x) for x in proc.stdout.splitlines()] == out
    schema_line = {
        "expected": [{"name": "A", "arguments": {"x": 1}}],
        "predicted": [{"name": "A", "arguments": {"x": 1, "opt": 2}}],
        "tools": [{"type": "function", "function": {"name": "A", "parameters": {"properties": {"x": {}, "opt": {}}}}}],
    }
    aware = tmp_path / "aware.jsonl"
    aware.write_text(json.dumps(schema_line) + "\n")
    main(["score-plan", str(aware), "--schema-aware", "-o", str(tmp_path / "aware.out")])
    assert json.loads((tmp_path / "aware.out").read_text())["parameter_structure"] == 1.0


@pytest.mark.parametrize(
    ("args", "content", "message"),
    [
        (["score-plan", "{d}/in.jsonl"], '{"expected": []}\n', 'lacks "expected" or "predicted"'),
        (["score-plan", "{d}/in.jsonl"], "not json\n", "in.jsonl:1 is not valid JSON"),
        (
            ["score-plan", "{d}/in.jsonl"],
            '{"expected": [], "predicted": [{"arguments": {}}]}\n',
            "in.jsonl:1: tool call without a name",
        ),
        (["score-plan", "{d}/in.jsonl", "--schema-aware"], '{"expected": [], "predicted": []}\n', 'no "tools" list'),
        (["score-plan", "{d}/missing.jsonl"], None, "is not a file"),
        (
            ["judgebench", "predict", "-g", "ref/jb-oracle", "--run-dir", "{d}/r", "--records", "{d}/nope.jsonl"],
            None,
            "does not exist",
        ),
        (
            ["judgebench", "predict", "-g", "ref/jb-oracle", "--run-dir", "{d}/r", "--difficulties", "easy,extreme"],
            None,
            "unknown difficulty",
        ),
        (["judgebench", "predict", "-g", "nonsense", "--run-dir", "{d}/r"], None, "has no provider"),
        (
            ["judgebench", "predict", "-g", "ref/jb-oracle", "--run-dir", "{d}/r", "--thinking", "maybe"],
            None,
            "--thinking must be on or off",
        ),
        (
            ["judgebench", "predict", "-g", "ref/jb-oracle", "--run-dir", "{d}/r", "--temperature", "warm"],
            None,
            "--temperature must be a number",
        ),
        (["judgebench", "judge", "-j", "ref/jb-exact", "--run-dir", "{d}/none"], None, "holds no judgebench run"),
        (
            ["judgebench", "judge", "-j", "ref/jb-exact", "--run-dir", "{d}/none", "--conditions", "gt"],
            None,
            "unknown judge condition",
        ),
        (["judgebench", "analyze", "--run-dir", "{d}/none"], None, "holds no judgebench run"),
        (["judgebench", "analyze", "--run-dir", "{d}/none", "--scorer", "lenient"], None, "--scorer must be"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, content, message):
    if content is not None:
        (tmp_path / "in.jsonl").write_text(content)
    with pytest.raises(SystemExit) as exit_info:
        main([a.replace("{d}", str(tmp_path)) for a in args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert "Traceback" not in err


def test_demo_entry_point(tmp_path):
    from tooldiag.suites.judgebench.demo import run_demo

    summary = run_demo(tmp_path / "jb")
    assert summary.startswith("Alignment (%) by difficulty")
    assert "ref/jb-exact | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 0.0 |" in summary
    assert "Judge nulls:" in summary and "Generator attrition:" in summary
    assert (tmp_path / "jb" / "report" / "report.md").exists()
    assert run_demo(tmp_path / "jb") == summary  # re-running resumes and reproduces the figures


@pytest.mark.parametrize(("command", "creates"), [("predict", True), ("judge", False), ("analyze", False)])
def test_run_dir_help_says_whether_the_folder_is_created(command, creates):
    from typer.testing import CliRunner

    from tooldiag.cli.main import app

    result = CliRunner().invoke(app, ["judgebench", command, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0
    assert ("created if missing" in result.output) is creates
