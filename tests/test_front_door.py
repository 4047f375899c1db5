"""The Python front door (``tooldiag.<name>``): every CLI command as one function, loaded lazily."""

import subprocess
import sys
from pathlib import Path

import pytest

import tooldiag

EXAMPLE_LOG = Path(__file__).resolve().parents[1] / "examples" / "agent_log.jsonl"


def test_import_tooldiag_loads_no_api_and_no_suite():
    code = (
        "import sys, tooldiag; "
        "print(sorted(m for m in sys.modules if m == 'tooldiag.api' or m.startswith('tooldiag.suites')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_front_door_name_is_a_function_of_the_api():
    import tooldiag.diagnose
    import tooldiag.report
    from tooldiag import api

    names = [name for name in tooldiag.__all__ if name != "__version__"]
    assert names and all(callable(getattr(tooldiag, name)) for name in names)
    assert all(getattr(tooldiag, name) is getattr(api, name) for name in names)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = tooldiag.nonsense


def test_run_then_report_through_the_front_door(tmp_path):
    summary = tooldiag.run_bfcl("ref/halt", tmp_path / "halt", categories=["miss_param"], limit=4)
    assert summary.counts["miss_param"]["done"] == 4
    (report,) = tooldiag.report_runs([tmp_path / "halt"], "paper")
    assert report.scheme == "paper" and report.name == "ref/halt"
    assert list(report.categories) == ["miss_param"] and report.categories["miss_param"].n == 4
    same = tooldiag.report_runs([tmp_path / "halt"], tooldiag.classifier("paper"))[0]
    assert same.categories["miss_param"] == report.categories["miss_param"]


def test_diagnose_through_the_front_door():
    report = tooldiag.diagnose_log(EXAMPLE_LOG)
    assert report.scheme == "default" and report.name == "agent_log" and report.categories


def test_tau2_and_judgebench_through_the_front_door(tmp_path):
    from tooldiag.suites.tau2.analysis import diagnose as diagnose_tau2

    retail = Path(__file__).resolve().parent / "data" / "tau2" / "retail_v0.json"
    assert tooldiag.tau2_diagnose([retail]).table2 == diagnose_tau2([retail]).table2

    done: list[str] = []
    (planned,) = tooldiag.judgebench_predict(
        tmp_path / "jb", ["ref/jb-perturb"], limit=2, on_done=lambda name, _: done.append(name)
    )
    assert planned.ran == 6 and done == ["ref/jb-perturb"]  # 2 records x 3 difficulties
    (judged,) = tooldiag.judgebench_judge(tmp_path / "jb", ["ref/jb-exact"], conditions=["with_gt"])
    assert judged.ran == 6
    again = tooldiag.judgebench_predict(tmp_path / "jb", ["ref/jb-perturb"], limit=2)
    assert again[0].ran == 0 and again[0].skipped == 6  # resumed: nothing redone
    assert tooldiag.judgebench_analyze(tmp_path / "jb", resamples=20).tables
