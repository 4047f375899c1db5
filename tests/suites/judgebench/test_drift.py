"""Judge drift (``judgebench drift``): paired verdict changes between two judges on one store's plans."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import tooldiag
from tooldiag.cli.main import main
from tooldiag.errors import StoreError, UserError
from tooldiag.metrics.structural import METRICS
from tooldiag.models import registry
from tooldiag.suites.judgebench.drift import OVERALL, TRANSITIONS, write_drift
from tooldiag.suites.judgebench.prompts import load_template
from tooldiag.suites.judgebench.store import STORE_FILE

JUDGES = ["ref/jb-exact", "ref/jb-lenient", "ref/jb-flaky"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("drift") / "run"
    tooldiag.judgebench_predict(run, ["ref/jb-perturb"], limit=12)
    tooldiag.judgebench_judge(run, JUDGES, conditions=["with_gt"])
    return run


def _stored(run: Path, judge: str) -> dict[tuple[str, str, str], tuple]:
    """A judge's parsed with_gt verdicts straight from the SQLite file."""
    db = sqlite3.connect(run / STORE_FILE)
    rows = db.execute(
        "SELECT generator, record_id, difficulty, tool_selection, parameter_structure, sequence, coverage "
        "FROM judgements WHERE judge = ? AND condition = 'with_gt' AND status = 'ok'",
        (judge,),
    ).fetchall()
    db.close()
    return {tuple(r[:3]): tuple(r[3:]) for r in rows}


def _bin(value: float) -> str:
    return "fail" if value <= 0.1 else "pass" if value >= 0.9 else "partial"


def test_a_judge_against_itself_never_drifts(store):
    report = tooldiag.judgebench_drift(store, "ref/jb-exact", "ref/jb-exact")
    assert [r.metric for r in report.rows] == [*METRICS, OVERALL]
    for row in report.rows:
        assert row.changed == 0 and row.kappa == 1.0 and row.mean_abs_change == 0.0
        assert row.only_a == row.only_b == 0
    assert report.row("with_gt", OVERALL).n_both == 4 * report.row("with_gt", "coverage").n_both > 0


def test_exact_vs_lenient_matches_the_stored_verdicts(store):
    exact, lenient = _stored(store, "ref/jb-exact"), _stored(store, "ref/jb-lenient")
    both = sorted(set(exact) & set(lenient))
    report = tooldiag.judgebench_drift(store, "ref/jb-exact", "ref/jb-lenient", condition="with_gt")
    pooled_changed = 0
    for i, metric in enumerate(METRICS):
        pairs = [(exact[p][i], lenient[p][i]) for p in both if exact[p][i] is not None and lenient[p][i] is not None]
        changed = sum(_bin(a) != _bin(b) for a, b in pairs)
        pooled_changed += changed
        row = report.row("with_gt", metric)
        assert row.n_both == len(pairs)
        assert row.changed == changed
        assert row.change_rate == pytest.approx(changed / len(pairs))
        assert row.mean_abs_change == pytest.approx(sum(abs(a - b) for a, b in pairs) / len(pairs))
        # lenient says pass everywhere: every change is from fail or partial up to pass
        assert row.transitions["partial->pass"] + row.transitions["fail->pass"] == changed
    overall = report.row("with_gt", OVERALL)
    assert overall.changed == pooled_changed > 0
    # a constant rater (always pass) agrees no better than chance: kappa 0
    assert overall.kappa == pytest.approx(0.0)


def test_flaky_nulls_are_counted_not_compared(store):
    exact, flaky = _stored(store, "ref/jb-exact"), _stored(store, "ref/jb-flaky")
    report = tooldiag.judgebench_drift(store, "ref/jb-exact", "ref/jb-flaky")
    overall = report.row("with_gt", OVERALL)
    assert overall.only_a > 0 and overall.only_b == 0
    coverage = report.row("with_gt", "coverage")
    assert coverage.only_a == len(set(exact) - set(flaky)) > 0
    assert coverage.n_both + coverage.only_a == len(exact)
    # flaky scores exactly whenever it parses: what differs is only what is missing
    assert overall.changed == 0


def test_a_prompt_version_compared_under_a_second_name(store, tmp_path):
    """The documented route: the same model under another judge name, judged with a reworded prompt."""
    run = tmp_path / "run"
    shutil.copytree(store, run)
    prompts = tmp_path / "prompts_v2"
    prompts.mkdir()
    template = load_template("judge_with_gt")
    text = (Path(__file__).parents[3] / "src/tooldiag/suites/judgebench/prompts/judge_with_gt.txt").read_text()
    assert f"version: {template.version}\n" in text
    (prompts / "judge_with_gt.txt").write_text(text.replace(f"version: {template.version}\n", "version: 2\n"))

    # the same judge name under another prompt is refused: the store keeps one prompt per judge and condition
    with pytest.raises(StoreError, match="different settings"):
        tooldiag.judgebench_judge(run, ["ref/jb-exact"], conditions=["with_gt"], prompt_dir=prompts)

    registry.provider("v2")(lambda name, options: registry.resolve_model(f"ref/{name}", options))
    try:
        tooldiag.judgebench_judge(run, ["v2/jb-exact"], conditions=["with_gt"], prompt_dir=prompts)
    finally:
        registry._FACTORIES.pop("v2")
    report = tooldiag.judgebench_drift(run, "ref/jb-exact", "v2/jb-exact")
    assert report.prompts == {
        "ref/jb-exact": {"with_gt": "judge_with_gt@1"},
        "v2/jb-exact": {"with_gt": "judge_with_gt@2"},
    }
    overall = report.row("with_gt", OVERALL)
    assert overall.n_both > 0 and overall.changed == 0 and overall.kappa == 1.0
    assert "judge_with_gt@2" in report.to_markdown()


def test_unknown_judge_lists_the_judges_present(store):
    with pytest.raises(UserError) as info:
        tooldiag.judgebench_drift(store, "ref/jb-exact", "ref/jb-anchored")
    assert "ref/jb-anchored" in info.value.message
    assert "judges present: ref/jb-exact, ref/jb-flaky, ref/jb-lenient" in info.value.message
    with pytest.raises(UserError, match="not judged by both") as info:
        tooldiag.judgebench_drift(store, "ref/jb-exact", "ref/jb-lenient", condition="without_gt")
    assert "with_gt" in (info.value.hint or "")


def test_cli_prints_markdown_and_writes_every_format(store, tmp_path, capsys):
    main(["judgebench", "drift", "--run-dir", str(store), "--judge", "ref/jb-exact", "--against", "ref/jb-lenient"])
    out = capsys.readouterr().out
    assert "| with_gt | overall |" in out and "pass->fail" in out
    report = tooldiag.judgebench_drift(store, "ref/jb-exact", "ref/jb-lenient")
    for fmt in ("json", "csv", "parquet"):
        target = tmp_path / f"drift.{fmt}"
        argv = ["judgebench", "drift", "--run-dir", str(store), "-j", "ref/jb-exact", "--against", "ref/jb-lenient"]
        main([*argv, "--format", fmt, "--out", str(target)])
        assert target.exists()
    body = json.loads((tmp_path / "drift.json").read_text())
    assert body["records"][-1]["changed"] == report.row("with_gt", OVERALL).changed
    assert body["judge_b"] == "ref/jb-lenient"
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "drift.parquet")
    assert list(frame.columns[-len(TRANSITIONS) :]) == list(TRANSITIONS)
    assert frame["changed"].tolist() == [r.changed for r in report.rows]
    assert (tmp_path / "drift.csv").read_text().splitlines()[0].startswith("condition,metric,n_both")
    # the output is a function of the store alone
    assert write_drift(report, "json", None) == (tmp_path / "drift.json").read_text()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--run-dir", "MISSING"], "holds no judgebench run"),
        (["--format", "parquet"], "writes a binary file"),
        (["--format", "xml"], "unknown drift format"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(store, tmp_path, capsys, extra, message):
    argv = ["judgebench", "drift", "--run-dir", str(store), "-j", "ref/jb-exact", "--against", "ref/jb-flaky"]
    if extra[0] == "--run-dir":
        argv[3] = str(tmp_path / "missing")
        extra = []
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, *extra])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1
