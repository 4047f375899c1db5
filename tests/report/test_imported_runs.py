"""Imported BFCL result files: the same scenarios written by five handler layouts give the
same case-level diagnostic, because calls left as text (undecodable for BFCL) are still
tool calls. (Turn-level numbers may differ: each layout adds its own quirk steps.)"""

import json
from collections import Counter
from pathlib import Path

import pytest

from tooldiag.classify import ActionClass, classify
from tooldiag.cli.main import main
from tooldiag.store import RunStore

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "bfcl_results"
LAYOUTS = ("api_fc", "fenced_python", "json_list", "prompt", "tool_call_tags")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("imported")
    for layout in LAYOUTS:
        main(["import", "bfcl", str(FIXTURES / layout), "--model-name", layout, "--run-dir", str(root / layout), "-q"])
    return root


def test_every_layout_gives_the_same_report(imported, tmp_path):
    out = tmp_path / "r.json"
    main(["report", *(str(imported / layout) for layout in LAYOUTS), "--format", "json", "--out", str(out)])
    runs = json.loads(out.read_text())["runs"]
    assert [r["name"] for r in runs] == list(LAYOUTS)
    first = runs[0]
    assert first["categories"]["miss_func"]["n"] > 0

    def case_level(run):
        return {c: (v["n"], v["gar"], v["gar_ci"], v["flags"]) for c, v in run["categories"].items()}

    for run in runs[1:]:
        assert case_level(run) == case_level(first) and run["capability_counts"] == first["capability_counts"]


@pytest.mark.parametrize("layout", ["fenced_python", "json_list", "prompt"])
def test_text_calls_without_decoded_calls_are_tool_calls(imported, layout):
    store = RunStore.open(imported / layout)
    undecoded = [
        step.emission
        for record in store.iter_cases()
        for turn in record.trajectory.turns
        for step in turn.steps
        if not step.emission.tool_calls
        and step.emission.text
        and ("name" in step.emission.text or "(" in step.emission.text)
        and step.emission.text.lstrip()[:1] in "[<`{"
    ]
    store.close()
    assert undecoded, "the fixture should hold calls that only live in the text"
    for emission in undecoded:
        assert classify(emission.text, emission.tool_calls) is ActionClass.TOOL_CALL
        assert classify(emission.text, emission.tool_calls, scheme="paper") is ActionClass.TOOL_CALL


def test_cases_and_show_read_imported_runs(imported, capsys):
    """The evidence of imported runs: the layouts (the same scenarios on other case ids) give the same
    verdicts per category, and show opens a case with the verdict its row has."""
    verdicts = {}
    for layout in LAYOUTS:
        main(["cases", str(imported / layout), "--format", "jsonl"])
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert rows and all(row["run"] == layout for row in rows)
        verdicts[layout] = {row["case_id"]: (row["category"], row["verdict"]) for row in rows}
    per_category = {layout: Counter(v.values()) for layout, v in verdicts.items()}
    assert len({frozenset(c.items()) for c in per_category.values()}) == 1
    assert {verdict for _, verdict in per_category["prompt"]} >= {"ok", "execution_failure", "fail"}
    for case_id, (_, verdict) in verdicts["prompt"].items():
        main(["show", str(imported / "prompt"), case_id, "--format", "json"])
        shown = json.loads(capsys.readouterr().out)
        assert shown["case_id"] == case_id and shown["verdict"] == verdict
