"""Issue 20, defect 10 on the import path: an imported tool call whose arguments nest deeper than the
store can serialize is imported and graded (kept as raw text with a parse error), never an aborted import."""

import json

import tooldiag
from tooldiag.store import RunStore


def test_import_of_arguments_nested_300_deep_is_graded(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    deep = "[" * 300 + "]" * 300
    line = '{"id": "multi_turn_base_0", "result": [[[{"cd": {"folder": ' + deep + "}}]]]}"
    assert json.loads(line)  # valid JSON, as a result file of a model that emitted it would be
    (results / "BFCL_v4_multi_turn_base_result.json").write_text(line + "\n", encoding="utf-8")
    tooldiag.import_bfcl(results, "deep", tmp_path / "run")
    with RunStore.open(tmp_path / "run") as store:
        (record,) = list(store.iter_cases())
    assert record.status == "done" and record.passed is False
    call = record.trajectory.turns[0].steps[0].emission.tool_calls[0]
    assert call.arguments is None and "nest deeper than" in (call.parse_error or "")
    assert call.raw_arguments is not None and call.raw_arguments.count("[") == 300
