"""`tooldiag run bfcl` with the reference policies, then `tooldiag report`: the issue's must-holds.

ref/oracle: GAR = Acc = 100 in all four categories. ref/overcall: GAR = 0 on
miss_func and miss_param with Acc > GAR and bound_violation. ref/halt: base GAR = 100,
Acc far below, execution_failure.
"""

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from tooldiag.classify import get_classifier
from tooldiag.cli.main import main
from tooldiag.report import REPORT_FILES
from tooldiag.report.build import build_report
from tooldiag.suites.bfcl.diagnostic import observations_from_store, write_reports
from tooldiag.trajectory import CaseTrajectory, Emission, RunConfig, Step, ToolCall, Turn

POLICIES = ("oracle", "overcall", "halt")
CATEGORIES = ("base", "long_context", "miss_func", "miss_param")


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    dirs = {}
    for policy in POLICIES:
        dirs[policy] = root / policy
        main(["run", "bfcl", "--model", f"ref/{policy}", "--limit", "3", "--run-dir", str(dirs[policy]), "-q"])
    return dirs


@pytest.fixture(scope="module")
def runs(run_dirs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.json"
    main(["report", *(str(run_dirs[p]) for p in POLICIES), "--format", "json", "--out", str(out)])
    return {run["name"]: run for run in json.loads(out.read_text())["runs"]}


def test_oracle_gar_equals_acc_equals_100(runs):
    oracle = runs["ref/oracle"]
    assert oracle["overall_acc"] == 100.0
    for category in CATEGORIES:
        cell = oracle["categories"][category]
        assert (cell["n"], cell["gar"], cell["acc"], cell["delta_pp"], cell["flags"]) == (3, 100.0, 100.0, 0.0, [])


def test_overcall_never_asks_or_refuses(runs):
    overcall = runs["ref/overcall"]
    for category in ("miss_func", "miss_param"):
        cell = overcall["categories"][category]
        assert cell["gar"] == 0.0 and cell["acc"] > cell["gar"]
        assert "bound_violation" in cell["flags"]
    assert overcall["categories"]["base"]["gar"] == 100.0
    assert overcall["capability_counts"]["ask"] == overcall["capability_counts"]["refuse"] == 0


def test_halt_is_execution_failure(runs):
    base = runs["ref/halt"]["categories"]["base"]
    assert base["gar"] == 100.0 and base["acc"] <= 40.0
    assert "execution_failure" in base["flags"]


def test_paper_scheme_and_every_format(run_dirs, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tooldiag", "report", str(run_dirs["oracle"]), "--scheme", "paper", "--format", "csv"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("run,source,scheme,category") and len(lines) == 5
    assert all(",paper," in line and ",100.0000," in line for line in lines[1:])
    table = write_reports([run_dirs[p] for p in POLICIES], tmp_path / "reports")
    assert "| ref/halt |" in table and "(E)" in table
    for filename in REPORT_FILES.values():
        assert (tmp_path / "reports" / filename).stat().st_size > 0
    assert not (tmp_path / "reports" / "report.html").exists()  # the demo's page also holds the judges: written last


def test_report_errors_are_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tooldiag", "report", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "tooldiag", "report", str(tmp_path), "--format", "docx"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "unknown format" in proc.stderr


class FakeStore:
    """A RunStore stand-in: an imported run whose handler dropped every text reply."""

    def __init__(self, source, text):
        self.config = RunConfig(suite="bfcl", model="imported/m", source=source)
        call = Emission(tool_calls=[ToolCall(name="ls", arguments={})])
        reply = Emission(text=text)
        placeholder = Emission(text="I cannot proceed with this step yet.", injected=True)
        self.records = [
            SimpleNamespace(
                case_id=f"multi_turn_{cat}_0",
                category=cat,
                status="done",
                passed=True,
                error_type=None,
                trajectory=CaseTrajectory(
                    case_id=f"multi_turn_{cat}_0",
                    category=cat,
                    turns=[
                        Turn(index=0, steps=[Step(emission=call), Step(emission=reply)]),
                        Turn(index=1, steps=[Step(emission=placeholder)]),
                    ],
                    notes={"ground_truth_sizes": [1, 0], "give_back_turns": [2]},
                ),
            )
            for cat in CATEGORIES
        ]

    def iter_cases(self):
        return iter(self.records)


def test_no_text_channel_is_not_computable_never_a_violation():
    cases, text_channel, notes = observations_from_store(FakeStore("import", None), get_classifier("default"))
    assert text_channel is False and any("not computable" in n for n in notes)
    report = build_report("m", cases, scheme="default", text_channel=text_channel)
    for category in ("miss_func", "miss_param"):
        cell = report.categories[category]
        assert cell.gar is None and cell.flags == ("gar_not_computable",)
    assert report.categories["base"].gar == 100.0


def test_injected_text_is_excluded_and_text_channel_detected():
    cases, text_channel, _ = observations_from_store(FakeStore("import", "Done."), get_classifier("default"))
    assert text_channel is True
    miss_func = next(c for c in cases if c.category == "miss_func")
    assert miss_func.turns == (
        frozenset({get_classifier("default")(None, True)}),
        frozenset(),
    )  # placeholder not a refusal
    assert miss_func.gold_turns == (1,)
