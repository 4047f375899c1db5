"""Human / audit labels (``judgebench labels import``) and the tables ``analyze`` builds from them (paper 000 App. G).

Expected values are computed here from the judges' stored verdicts (``ref/jb-exact`` returns the
programmatic scores, ``ref/jb-lenient`` 1.0 everywhere) and the labels the tests write, by plain
Python arithmetic, never by the code under test.
"""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import tooldiag
from tooldiag.cli.main import main
from tooldiag.errors import UserError
from tooldiag.metrics.structural import METRICS
from tooldiag.suites.judgebench.labels import human_score
from tooldiag.suites.judgebench.report import render_markdown, write_report
from tooldiag.suites.judgebench.store import STORE_FILE

FAST = {"resamples": 60, "workers": 1}
ALIASES = {
    "tool_selection": "tool_selection_accuracy",
    "parameter_structure": "parameter_structure_accuracy",
    "sequence": "sequence_accuracy",
    "coverage": "query_coverage_accuracy",
}


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("labels") / "base"
    tooldiag.judgebench_predict(run, ["ref/jb-perturb"], difficulties=["easy", "hard"], limit=12)
    tooldiag.judgebench_judge(run, ["ref/jb-exact", "ref/jb-lenient"], conditions=["with_gt"])
    return run


@pytest.fixture
def run(base_run, tmp_path) -> Path:
    """A private copy of the study, so each test imports into a store without labels."""
    target = tmp_path / "run"
    shutil.copytree(base_run, target)
    return target


def plans(run: Path) -> dict[tuple[str, str], dict[str, object]]:
    """(record_id, difficulty) -> dag_type and the programmatic scores (ref/jb-exact's stored verdict)."""
    db = sqlite3.connect(run / STORE_FILE)
    rows = db.execute(
        "SELECT j.record_id, j.difficulty, r.dag_type, j.tool_selection, j.parameter_structure, j.sequence, "
        "j.coverage FROM judgements j JOIN records r ON r.id = j.record_id "
        "WHERE j.judge = 'ref/jb-exact' AND j.status = 'ok' ORDER BY j.record_id, j.difficulty"
    ).fetchall()
    db.close()
    return {(r, d): {"dag": dag, "p": dict(zip(METRICS, p, strict=True))} for r, d, dag, *p in rows}


def hard_labels(run: Path, rater: str = "ann1") -> list[dict[str, object]]:
    """One label per hard plan and metric: disagree on every third one, as the App. G study labelled."""
    out = []
    hard = [key for key in plans(run) if key[1] == "hard"]
    for i, (record_id, _) in enumerate(hard):
        for j, metric in enumerate(METRICS):
            label = "disagree" if (4 * i + j) % 3 == 0 else "agree"
            out.append({"record_id": record_id, "generator": "ref/jb-perturb", "difficulty": "hard"} | {
                "metric": metric, "rater": rater, "label": label})  # fmt: skip
    return out


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def analyze(run: Path):
    return tooldiag.judgebench_analyze(run, **FAST)


def test_human_score_follows_app_g():
    assert human_score("agree", 0.6667) == 0.6667
    assert human_score("disagree", 0.5) == 0.0  # p >= 0.5 -> 0
    assert human_score("disagree", 0.4) == 1.0
    assert human_score("disagree", 1.0) == 0.0


def test_no_labels_leaves_the_report_as_it_was(base_run):
    report = analyze(base_run)
    assert not [name for name in report.tables if name.startswith("human")]
    assert "corrected_pass_rate_human" not in report.tables["decision_guide"].columns
    assert "human" not in render_markdown(report).lower()
    with pytest.raises(UserError, match="needs human labels"):
        tooldiag.load_judgebench(base_run, "human_agreement", **FAST)


def test_agreement_per_metric_and_topology_and_alignment(run, tmp_path):
    labels = hard_labels(run)
    result = tooldiag.judgebench_labels_import(run, [write_jsonl(tmp_path / "l.jsonl", labels)])
    assert (result.read, result.added, result.unchanged) == (len(labels), len(labels), 0)
    info = plans(run)
    report = analyze(run)

    agreement = report.tables["human_agreement"].set_index(["scope", "value"])
    assert set(agreement["rater"]) == {"all"}  # one rater: no per-rater rows
    agree = [row["label"] == "agree" for row in labels]
    assert agreement.loc[("overall", "all"), "n_labels"] == len(labels)
    assert agreement.loc[("overall", "all"), "agreement_pct"] == pytest.approx(100 * sum(agree) / len(agree))
    for metric in METRICS:
        mine = [a for a, row in zip(agree, labels, strict=True) if row["metric"] == metric]
        assert agreement.loc[("metric", metric), "agreement_pct"] == pytest.approx(100 * sum(mine) / len(mine))
    dags = {str(info[(str(row["record_id"]), "hard")]["dag"]) for row in labels}
    for dag in dags:
        mine = [a for a, row in zip(agree, labels, strict=True) if info[(str(row["record_id"]), "hard")]["dag"] == dag]
        assert agreement.loc[("dag_type", dag), "agreement_pct"] == pytest.approx(100 * sum(mine) / len(mine))
        assert agreement.loc[("dag_type", dag), "ci_low"] <= agreement.loc[("dag_type", dag), "agreement_pct"]

    # human-corrected alignment (App. G): h = p on agree, else 0 if p >= 0.5 else 1; alignment 1 - |l - h|
    human = {"ref/jb-exact": [], "ref/jb-lenient": []}
    programmatic = {"ref/jb-exact": [], "ref/jb-lenient": []}
    for row in labels:
        p = float(info[(str(row["record_id"]), "hard")]["p"][str(row["metric"])])
        h = p if row["label"] == "agree" else (0.0 if p >= 0.5 else 1.0)
        for judge, ell in (("ref/jb-exact", p), ("ref/jb-lenient", 1.0)):
            human[judge].append(1 - abs(ell - h))
            programmatic[judge].append(1 - abs(ell - p))
    table = report.tables["human_alignment"].set_index("judge")
    for judge in human:
        row = table.loc[judge]
        assert row["n_verdicts"] == len(labels) and row["n_plans"] == len(labels) // 4
        assert row["human_alignment"] == pytest.approx(100 * sum(human[judge]) / len(labels))
        assert row["programmatic_alignment"] == pytest.approx(100 * sum(programmatic[judge]) / len(labels))
        assert row["gap_pp"] == pytest.approx(row["human_alignment"] - row["programmatic_alignment"])
    assert table.loc["ref/jb-exact", "programmatic_alignment"] == pytest.approx(100.0)
    assert table.loc["ref/jb-exact", "rank_programmatic"] == 1


def test_human_tprs_feed_the_corrected_pass_rate(run, tmp_path):
    """Labels on 8 of the 12 hard plans calibrate the judge; its pass rate on the other 4 is corrected."""
    info = plans(run)
    hard = sorted(key for key in info if key[1] == "hard")
    labelled_ids = {record_id for record_id, _ in hard[:8]}
    labels = [row for row in hard_labels(run) if row["record_id"] in labelled_ids]
    tooldiag.judgebench_labels_import(run, [write_jsonl(tmp_path / "l.jsonl", labels)])
    h = {(str(r["record_id"]), str(r["metric"])): r["label"] for r in labels}
    truth, verdict, target = [], [], []  # ref/jb-exact's verdict = the programmatic scores
    for record_id, _ in hard:
        p = {m: float(v) for m, v in info[(record_id, "hard")]["p"].items()}  # type: ignore[union-attr]
        passes = sum(p.values()) / 4 >= 0.5
        if record_id not in labelled_ids:
            target.append(passes)
            continue
        human = [p[m] if h[(record_id, m)] == "agree" else (0.0 if p[m] >= 0.5 else 1.0) for m in METRICS]
        truth.append(sum(human) / 4 >= 0.5)
        verdict.append(passes)
    report = analyze(run)
    table = report.tables["human_corrected_rates"].set_index(["judge", "difficulty"])
    row = table.loc[("ref/jb-exact", "hard")]
    assert (row["n_labelled"], row["n_judged"]) == (8, 4)
    positives = [v for t, v in zip(truth, verdict, strict=True) if t]
    negatives = [not v for t, v in zip(truth, verdict, strict=True) if not t]
    assert positives and negatives  # the fixture calibrates on both classes
    tpr, tnr = sum(positives) / len(positives), sum(negatives) / len(negatives)
    observed = sum(target) / len(target)
    assert (row["tpr"], row["tnr"]) == (pytest.approx(100 * tpr), pytest.approx(100 * tnr))
    assert row["observed_pass"] == pytest.approx(100 * observed)
    assert row["reference_pass"] == pytest.approx(100 * observed)  # exact judge: its verdict is the reference
    if tpr + tnr > 1:
        expected = min(1.0, max(0.0, (observed + tnr - 1) / (tpr + tnr - 1)))
        assert row["corrected_pass"] == pytest.approx(100 * expected)
    else:
        assert row["corrected_pass"] != row["corrected_pass"]  # NaN: no better than chance
    assert ("ref/jb-exact", "easy") not in table.index  # no easy plan labelled: nothing to calibrate on
    guide = report.tables["decision_guide"].set_index("difficulty")
    assert guide.loc["hard", "corrected_pass_rate_human"] == pytest.approx(row["corrected_pass"], nan_ok=True)


def test_two_raters_kappa_matches_a_hand_computation(run, tmp_path):
    first = hard_labels(run, "ann1")
    second = hard_labels(run, "ann2")
    for i, row in enumerate(second):  # ann2 flips every fifth label
        if i % 5 == 0:
            row["label"] = "disagree" if row["label"] == "agree" else "agree"
    tooldiag.judgebench_labels_import(run, [write_jsonl(tmp_path / "a.jsonl", first + second)])
    report = analyze(run)
    kappa = report.tables["human_kappa"].iloc[0]
    a = [r["label"] == "agree" for r in first]
    b = [r["label"] == "agree" for r in second]
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    p_e = (sum(a) / n) * (sum(b) / n) + (1 - sum(a) / n) * (1 - sum(b) / n)
    assert (kappa["rater_a"], kappa["rater_b"], kappa["n_items"]) == ("ann1", "ann2", n)
    assert kappa["exact_agreement_pct"] == pytest.approx(100 * p_o)
    assert kappa["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert 0 < kappa["kappa"] < 1  # flipping a fifth of the labels: agreement above chance, not perfect
    agreement = report.tables["human_agreement"]
    assert set(agreement["rater"]) == {"all", "ann1", "ann2"}
    # the human score of an item is the mean of the raters': lenient's alignment is then the mean h
    info = plans(run)
    hs = []
    for r1, r2 in zip(first, second, strict=True):
        p = float(info[(str(r1["record_id"]), "hard")]["p"][str(r1["metric"])])
        hs.append((human_score(str(r1["label"]), p) + human_score(str(r2["label"]), p)) / 2)
    lenient = report.tables["human_alignment"].set_index("judge").loc["ref/jb-lenient"]
    assert lenient["human_alignment"] == pytest.approx(100 * sum(hs) / len(hs))


def test_wide_csv_scores_and_omitted_generator(run, tmp_path):
    """The App. G shape: one row per output, a column per metric (released names), generator left out."""
    info = plans(run)
    record_id = sorted(key for key in info if key[1] == "hard")[0][0]
    path = tmp_path / "wide.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "difficulty", "annotator", *ALIASES.values()])
        writer.writerow([record_id, "hard", "ann1", "agree", "disagree", "0.25", ""])
    result = tooldiag.judgebench_labels_import(run, [path])
    assert (result.added, result.raters) == (3, {"ann1": 3})
    p = info[(record_id, "hard")]["p"]
    agreement = analyze(run).tables["human_agreement"].set_index(["scope", "value"])
    score_agrees = (0.25 >= 0.5) == (float(p["sequence"]) >= 0.5)  # type: ignore[index]
    assert agreement.loc[("overall", "all"), "agree"] == 1 + int(score_agrees)
    assert ("metric", "coverage") not in agreement.index  # empty cell: not labelled


def test_reimport_is_idempotent_and_conflicts_are_refused(run, tmp_path):
    labels = hard_labels(run)
    path = write_jsonl(tmp_path / "l.jsonl", labels)
    tooldiag.judgebench_labels_import(run, [path])
    again = tooldiag.judgebench_labels_import(run, [path])
    assert (again.added, again.unchanged) == (0, len(labels))
    changed = [dict(labels[0], label="agree" if labels[0]["label"] == "disagree" else "disagree")]
    with pytest.raises(UserError, match="conflicting labels") as info:
        tooldiag.judgebench_labels_import(run, [write_jsonl(tmp_path / "c.jsonl", changed)])
    assert "rater 'ann1'" in info.value.message and "nothing was imported" in (info.value.hint or "")
    # the same change under another rater is a second opinion, not a conflict
    unnamed = [{k: v for k, v in changed[0].items() if k != "rater"}]
    tooldiag.judgebench_labels_import(run, [write_jsonl(tmp_path / "c.jsonl", unnamed)], rater="x")
    db = sqlite3.connect(run / STORE_FILE)
    assert db.execute("SELECT COUNT(*) FROM labels WHERE rater = 'ann1'").fetchone()[0] == len(labels)
    db.close()


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"record_id": "nope", "difficulty": "hard", "metric": "sequence", "label": "agree"}, "unknown record id"),
        ({"difficulty": "hard", "metric": "vibes", "label": "agree"}, "unknown metric 'vibes'"),
        ({"metric": "sequence", "label": "agree"}, "has 2 plans"),
        ({"difficulty": "hard", "metric": "sequence", "label": "agree", "score": 1}, "not both"),
        ({"difficulty": "hard", "metric": "sequence", "score": 1.5}, "outside [0, 1]"),
        ({"difficulty": "hard", "metric": "sequence", "label": "maybe"}, "neither agree, disagree"),
        ({"difficulty": "hard", "note": "x"}, "neither a 'metric' field"),
        ({"generator": "ref/other", "difficulty": "hard", "metric": "sequence", "label": "agree"}, "no usable plan"),
    ],
)
def test_cli_errors_are_one_line_exit_2_and_import_nothing(run, tmp_path, capsys, row, message):
    record_id = sorted(key for key in plans(run) if key[1] == "hard")[0][0]
    good = {"record_id": record_id, "difficulty": "hard", "metric": "coverage", "label": "agree"}
    path = write_jsonl(tmp_path / "bad.jsonl", [good, {"record_id": record_id, **row}])
    with pytest.raises(SystemExit) as exit_info:
        main(["judgebench", "labels", "import", str(path), "--run-dir", str(run)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1
    db = sqlite3.connect(run / STORE_FILE)
    assert db.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == 0  # all or nothing
    db.close()


def test_cli_import_then_analyze_json_has_the_tables(run, tmp_path, capsys):
    path = write_jsonl(tmp_path / "l.jsonl", hard_labels(run))
    main(["judgebench", "labels", "import", str(path), "--run-dir", str(run)])
    assert "added" in capsys.readouterr().out
    report = analyze(run)
    write_report(report, tmp_path / "report", ("md", "json"))
    body = json.loads((tmp_path / "report" / "report.json").read_text())
    assert {"human_agreement", "human_alignment", "human_corrected_rates"} <= set(body["tables"])
    assert "Judge alignment against human verdicts" in (tmp_path / "report" / "report.md").read_text()
    frame = tooldiag.load_judgebench(run, "human_alignment", **FAST)
    assert set(frame["judge"]) == {"ref/jb-exact", "ref/jb-lenient"}


def test_an_old_store_without_the_labels_table_opens(base_run, tmp_path):
    run = tmp_path / "old"
    shutil.copytree(base_run, run)
    db = sqlite3.connect(run / STORE_FILE)
    db.execute("DROP TABLE labels")
    db.commit()
    db.close()
    assert "human_agreement" not in analyze(run).tables
