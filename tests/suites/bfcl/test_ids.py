"""BFCL case-id order, which the BFCL suite passes to the (suite-blind) run store."""

from tooldiag.store import RunStore
from tooldiag.suites.bfcl.export import write_bfcl_results
from tooldiag.suites.bfcl.ids import case_id_order
from tooldiag.trajectory import CaseTrajectory, Grade, RunConfig


def test_category_then_number():
    ids = [
        "multi_turn_miss_func_3",
        "multi_turn_base_10",
        "multi_turn_base_2",
        "multi_turn_base_long_context_1",
        "multi_turn_base_1",
        "multi_turn_long_context_0",
    ]
    assert sorted(ids, key=case_id_order) == [
        "multi_turn_base_1",
        "multi_turn_base_2",
        "multi_turn_base_10",
        "multi_turn_base_long_context_1",
        "multi_turn_long_context_0",
        "multi_turn_miss_func_3",
    ]


def test_ids_without_a_trailing_number_sort_by_the_whole_id():
    assert sorted(["x_1", "x", "live_simple_0-0-0", "x_0"], key=case_id_order) == [
        "live_simple_0-0-0",
        "x",
        "x_0",
        "x_1",
    ]


def test_every_bfcl_reader_gets_bfcl_order_from_a_plain_store(tmp_path):
    """The store sorts plain strings; BFCL's export passes its own order."""
    config = RunConfig(suite="bfcl", model="ref/x", categories=["base"])
    with RunStore.create_or_resume(tmp_path / "r", config) as store:
        for number in (10, 2, 1):
            store.put_case(CaseTrajectory(case_id=f"multi_turn_base_{number}", category="base"), Grade(passed=True))
        assert [r.case_id for r in store.iter_cases()] == [
            "multi_turn_base_1",
            "multi_turn_base_10",
            "multi_turn_base_2",
        ]
        (path,) = write_bfcl_results(store, tmp_path / "out")
    lines = path.read_text().splitlines()
    assert [line.split('"')[3] for line in lines] == ["multi_turn_base_1", "multi_turn_base_2", "multi_turn_base_10"]


def test_cli_export_and_probe_analysis_read_runs_in_bfcl_order(tmp_path):
    import json

    from tooldiag.cli.main import main
    from tooldiag.suites.bfcl.probes.analysis import load_run

    ids = "multi_turn_base_10,multi_turn_base_2,multi_turn_base_1"
    main(["run", "bfcl", "--model", "ref/oracle", "--run-dir", str(tmp_path / "r"), "--ids", ids, "-q"])
    main(["export", str(tmp_path / "r"), "--out", str(tmp_path / "out.jsonl")])
    rows = [json.loads(line)["case_id"] for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert rows == ["multi_turn_base_1", "multi_turn_base_2", "multi_turn_base_10"]
    assert list(load_run(tmp_path / "r").cases) == rows
