"""``run bfcl`` and ``judgebench judge`` against every fault of :mod:`tests.support.fault_server`.

What must hold (issue 20): each command finishes cleanly or stops with one ``error:`` line,
never a traceback; with transient faults every case ends graded after retries; a reply over
the size cap fails its request at once, unretried, naming the cap; a server that never
finishes is cut off by the whole-request deadline (the test only asks that the command
returns, under pytest-timeout); a model that emits a lone surrogate in every tool call still
gets every case graded, its text stored as U+FFFD and the repair counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fault_server import CONTENT_FAULTS, TRANSPORT_FAULTS, FaultServer
from tooldiag.cli.main import main
from tooldiag.store import RunStore
from tooldiag.suites.judgebench.store import JudgeBenchStore

IDS = "multi_turn_base_0,multi_turn_base_1"
VERDICT = (
    "```json\n"
    + json.dumps(
        {
            key: {"accuracy": 1.0, "justification": "ok"}
            for key in (
                "tool_selection_accuracy",
                "parameter_structure_accuracy",
                "sequence_accuracy",
                "query_coverage_accuracy",
            )
        }
    )
    + "\n```"
)


pytestmark = pytest.mark.usefixtures("fast_retry_policy")  # cache dir and env: tests/models/conftest.py


def cli(*args: object) -> int:
    """Run the CLI in-process; its exit status (0 when it returned). An exception escapes as a test error."""
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def run_bfcl(server: FaultServer, run_dir: Path, *extra: object) -> int:
    return cli("run", "bfcl", "--model", "openai/hostile", "--base-url", server.base_url, "--ids", IDS,
               "--run-dir", run_dir, "--no-cache", "--quiet", "--concurrency", "2", "--timeout", "2",
               "--max-retries", "4", *extra)  # fmt: skip


def stored(run_dir: Path) -> list:
    store = RunStore.open(run_dir)
    try:
        return list(store.iter_cases())
    finally:
        store.close()


@pytest.mark.parametrize("fault", TRANSPORT_FAULTS)
def test_bfcl_transient_faults_end_with_every_case_graded(fault, tmp_path, capsys):
    with FaultServer(fault, oversized_bytes=300_000) as server:
        cap = ("--max-response-bytes", 200_000) if fault == "oversized" else ()
        status = run_bfcl(server, tmp_path / "run", *cap)
    err = capsys.readouterr().err
    assert status == 0, err
    assert "Traceback" not in err
    records = stored(tmp_path / "run")
    assert sorted(r.case_id for r in records) == IDS.split(",")
    assert all(r.status == "done" for r in records), [r.trajectory.inference_error for r in records]
    assert server.outcomes[f"fault:{fault}"] > 0  # the fault was met...
    if fault == "oversized":  # ...and refused at once: graded as an inference failure naming the cap
        notes = [r.trajectory.notes.get("bfcl_inference_error", "") for r in records]
        assert all("exceeds the cap of 200000 bytes" in note for note in notes), notes
        assert server.outcomes["ok"] == 0  # not retried: each case asked once
    else:  # ...and retried away: the model's real answers were graded
        assert all(r.trajectory.inference_error is None for r in records)


@pytest.mark.parametrize("fault", CONTENT_FAULTS)
def test_bfcl_content_faults_in_every_answer_are_graded(fault, tmp_path, capsys):
    with FaultServer(fault) as server:
        status = run_bfcl(server, tmp_path / "run")
    err = capsys.readouterr().err
    assert status == 0 and "Traceback" not in err, err
    records = stored(tmp_path / "run")
    assert len(records) == 2 and all(r.status == "done" for r in records)
    assert all(r.trajectory.inference_error is None for r in records)


def test_a_lone_surrogate_in_every_tool_call_is_stored_repaired_and_counted(tmp_path, capsys):
    """The Must-hold of issue 20: the run finishes, every case graded; a resume has nothing left."""
    with FaultServer("surrogate") as server:
        assert run_bfcl(server, tmp_path / "run") == 0
        assert run_bfcl(server, tmp_path / "run") == 0
    assert "0 cases run, 2 already finished" in capsys.readouterr().out
    for record in stored(tmp_path / "run"):
        assert record.status == "done"
        emissions = [step.emission for turn in record.trajectory.turns for step in turn.steps]
        calls = [call for emission in emissions for call in emission.tool_calls]
        assert calls and all("\ufffd" in json.dumps(call.arguments, ensure_ascii=False) for call in calls)
        assert all(emission.text_repairs > 0 for emission in emissions)


def test_a_server_that_never_finishes_is_cut_off_by_the_deadline(tmp_path, capsys):
    """One byte every 0.2 s forever: only a whole-request deadline ends the request. No timing is
    asserted: the command returns (pytest-timeout fails a hang) with a timeout error row."""
    with FaultServer("drip", persistent=True) as server:
        status = cli("run", "bfcl", "--model", "openai/hostile", "--base-url", server.base_url,
                     "--ids", "multi_turn_base_0", "--run-dir", tmp_path / "run", "--no-cache", "--quiet",
                     "--timeout", "0.5", "--max-retries", "1")  # fmt: skip
    capsys.readouterr()
    assert status == 0
    (record,) = stored(tmp_path / "run")
    assert record.status == "error" and "no answer within 0.5 s" in (record.trajectory.inference_error or "")


def test_content_parts_whose_text_is_not_a_string_are_retried_not_stored_as_errors(tmp_path, capsys):
    """Defect 6: a reply the parser cannot read (here a content part whose text is a number, which once
    raised an unclassified TypeError) is a classified, retryable malformed reply."""
    with FaultServer("nonstring_text", persistent=True) as server:
        assert run_bfcl(server, tmp_path / "run", "--max-retries", "1") == 0
    capsys.readouterr()
    records = stored(tmp_path / "run")
    assert all(r.status == "error" for r in records)
    assert all("malformed response" in (r.trajectory.inference_error or "") for r in records)
    assert all("not a string" in (r.trajectory.inference_error or "") for r in records)
    assert server.outcomes["fault:nonstring_text"] >= 4  # two attempts per case: it was retried


@pytest.fixture(scope="module")
def predicted(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("jb") / "run"
    main(["judgebench", "predict", "-g", "ref/jb-perturb", "--run-dir", str(run), "--limit", "2", "-q"])
    return run


@pytest.mark.parametrize("fault", (*TRANSPORT_FAULTS, "surrogate"))
def test_judgebench_judge_survives_every_fault(fault, predicted, tmp_path, capsys):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(predicted, run)
    cap = ("--max-response-bytes", 200_000) if fault == "oversized" else ()
    with FaultServer(fault, judge_text=VERDICT, oversized_bytes=300_000) as server:
        status = cli("judgebench", "judge", "-j", "openai/hostile-judge", "--base-url", server.base_url,
                     "--run-dir", run, "-q", "--conditions", "with_gt", "--no-cache", "--timeout", "2",
                     "--max-retries", "4", *cap)  # fmt: skip
    err = capsys.readouterr().err
    assert status in (0, 2) and "Traceback" not in err, err
    assert status == 0
    with JudgeBenchStore(run, create=False) as store:
        rows = store.db.execute("SELECT status, error FROM judgements WHERE judge = 'openai/hostile-judge'").fetchall()
    assert rows
    if fault == "oversized":
        assert all(s == "error" and "exceeds the cap" in (e or "") for s, e in rows), rows
    else:
        assert all(s == "ok" for s, _ in rows), rows


def test_repaired_text_in_a_store_is_noted_on_the_case(tmp_path):
    from tooldiag.trajectory import CaseTrajectory, Grade, RunConfig

    store = RunStore.create_or_resume(tmp_path / "run", RunConfig(suite="bfcl", model="m"))
    store.put_case(CaseTrajectory(case_id="c", category="base", inference_error="x\ud800y\udfff"), Grade(passed=False))
    (record,) = list(store.iter_cases())
    store.close()
    assert record.trajectory.inference_error == "x\ufffdy\ufffd"
    assert record.trajectory.notes["text_repaired"] == 2


def test_stdout_escapes_text_utf8_cannot_hold(tmp_path):
    """Defect 2, last part: printing a lone surrogate is a ``\\udXXX`` escape, not a traceback."""
    code = (
        "import sys, typer; from tooldiag.cli import main as m\n"
        "app = typer.Typer(); app.command()(lambda: print('odd: \\ud800'))\n"
        "m.build_app = lambda modules: app; m.main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8",
                          errors="replace", env={**os.environ, "PYTHONIOENCODING": "utf-8"}, timeout=60)  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0 and "odd: \\ud800" in proc.stdout


def test_import_bfcl_of_a_lone_surrogate_finishes_with_the_case_graded(tmp_path, capsys):
    """Defect 2 for ``import bfcl``: a result file whose text holds ``\\ud800`` is imported, repaired."""
    source = Path(__file__).resolve().parents[1] / "data" / "bfcl_results" / "json_list"
    first = (source / "BFCL_v4_multi_turn_base_result.json").read_text(encoding="utf-8").splitlines()[0]
    assert '"Done. Everything' in first
    (tmp_path / "results").mkdir()
    hostile = first.replace('"Done. Everything', '"Done\\ud800. Everything')
    (tmp_path / "results" / "BFCL_v4_multi_turn_base_result.json").write_text(hostile + "\n", encoding="utf-8")
    status = cli("import", "bfcl", tmp_path / "results", "--model-name", "hostile", "--run-dir", tmp_path / "run", "-q")
    err = capsys.readouterr().err
    assert status == 0 and "Traceback" not in err, err
    (record,) = stored(tmp_path / "run")
    assert record.status == "done"
    assert record.trajectory.notes.get("text_repaired", 0) > 0
