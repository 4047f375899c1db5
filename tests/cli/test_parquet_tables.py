"""``--format parquet`` of audit report, classify --evaluate and score-plan: the numbers the text shows, typed."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tooldiag.cli.main import main

LABELLED = Path(__file__).resolve().parents[1] / "data" / "classifier" / "en-original.jsonl"
AUDIT_ROWS = [
    {"case_id": "multi_turn_miss_param_0", "turn": 3, "rater": "r1", "label": "ask"},
    {"case_id": "multi_turn_miss_param_0", "turn": 3, "rater": "r2", "label": "confirm"},
    {"case_id": "multi_turn_miss_param_0", "turn": 3, "rater": "adjudicated", "label": "ask"},
    {"case_id": "multi_turn_base_2", "turn": 0, "rater": "r1", "label": "tool_call"},
    {"case_id": "multi_turn_base_2", "turn": 0, "rater": "r2", "label": "tool_call"},
]


def fails(capsys, *args) -> str:
    capsys.readouterr()  # what earlier commands printed
    with pytest.raises(SystemExit) as info:
        main([*map(str, args)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def audited_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit")
    run = root / "run"
    main(["run", "bfcl", "--model", "ref/oracle", "--run-dir", str(run), "--ids",
          "multi_turn_miss_param_0,multi_turn_base_2", "-q"])  # fmt: skip
    labels = root / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in AUDIT_ROWS))
    main(["audit", "import", str(labels), "--run-dir", str(run)])
    return run


def test_audit_report_parquet_file_and_folder(audited_run, tmp_path, capsys):
    main(["audit", "report", str(audited_run), "-f", "json"])
    tables = {t["key"]: t["records"] for t in json.loads(capsys.readouterr().out)["tables"]}
    one = tmp_path / "per_class.parquet"
    main(["audit", "report", str(audited_run), "-f", "parquet", "-o", str(one)])
    assert f"wrote {one}" in capsys.readouterr().err
    per_class = pd.read_parquet(one)
    assert list(per_class.columns) == ["reference", "class", "support", "predicted", "precision", "recall"]
    r1_ask = per_class[(per_class["reference"] == "r1") & (per_class["class"] == "ask")].iloc[0]
    assert (r1_ask["support"], r1_ask["recall"]) == (1, 1.0)
    folder = tmp_path / "audit"
    main(["audit", "report", str(audited_run), "-f", "parquet", "-o", str(folder)])
    written = sorted(p.name for p in folder.iterdir())
    assert written == sorted(f"{key}.parquet" for key in tables)
    inter = pd.read_parquet(folder / "inter_rater.parquet")
    assert inter[["rater_a", "rater_b", "n", "agreement", "kappa"]].to_dict("records") == tables["inter_rater"]
    summary = pd.read_parquet(folder / "audit_summary.parquet").iloc[0]
    assert summary["items"] == tables["audit_summary"][0]["items"] and list(summary["raters"]) == ["r1", "r2"]
    assert "--format parquet writes a binary file" in fails(capsys, "audit", "report", audited_run, "-f", "parquet")


def test_classify_evaluate_parquet(tmp_path, capsys):
    main(["classify", str(LABELLED), "--evaluate", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    out = tmp_path / "scores.parquet"
    main(["classify", str(LABELLED), "--evaluate", "--format", "parquet", "--out", str(out)])
    scores = pd.read_parquet(out)
    assert scores["scheme"].unique().tolist() == ["paper", "default"]
    for scheme in document["schemes"]:
        rows = scores[scores["scheme"] == scheme["scheme"]]
        assert rows["kappa"].iloc[0] == pytest.approx(scheme["kappa"], abs=5e-5)
        assert rows["n"].iloc[0] == 418 and rows["support"].sum() == 418
        ask = rows[rows["class"] == "ask"].iloc[0]
        assert ask["recall"] == pytest.approx(scheme["classes"]["ask"]["recall"], abs=5e-5)
    folder = tmp_path / "evaluation"
    main(["classify", str(LABELLED), "--evaluate", "-s", "default", "-f", "parquet", "-o", str(folder)])
    confusion = pd.read_parquet(folder / "confusion.parquet")
    assert confusion["count"].sum() == 418 and set(confusion["scheme"]) == {"default"}
    assert (folder / "classifier_evaluation.parquet").exists()
    assert "--format parquet writes a binary file" in fails(capsys, "classify", LABELLED, "--evaluate", "-f", "parquet")
    assert "--out applies to --evaluate --format parquet" in fails(
        capsys, "classify", LABELLED, "--evaluate", "--out", tmp_path / "x.md"
    )


def test_score_plan_parquet(tmp_path, capsys):
    lines = [
        {"id": "a", "expected": [{"name": "A", "arguments": {"x": 1}}], "predicted": [{"name": "A", "arguments": {}}]},
        {"id": "b", "expected": [], "predicted": []},
    ]
    source = tmp_path / "plans.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    main(["score-plan", str(source)])
    expected = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    out = tmp_path / "scores.parquet"
    main(["score-plan", str(source), "--format", "parquet", "--output", str(out)])
    assert pd.read_parquet(out).to_dict("records") == expected
    err = fails(capsys, "score-plan", source, "--format", "parquet")
    assert "--format parquet writes a binary file" in err and "--output FILE.parquet" in err
    assert "unknown format 'csv'" in fails(capsys, "score-plan", source, "--format", "csv")
