"""``judgebench predict|judge --executor ray`` and the ``llm`` scheme on Ray (issue 17): the driver stores,
unit by unit, what a local run stores; faulty endpoints and a ``kill -9`` of the driver leave exactly one
row per unit (record x judge x condition x sample), the rows of an uninterrupted run.

One local Ray cluster (``ray.cluster_utils.Cluster``, a head node of two CPUs, no dashboard, a small
object store) serves the whole module: Ray's start-up costs most of its time. The judge is a fake
OpenAI server whose verdict is a function of the request (a SHA-256 of the prompt), so any executor,
order or retry gets the same answer for the same unit, and the expectations come from a local run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAIServer, FaultSpec, RecordedRequest, Reply
from tooldiag.api import judgebench_generate, judgebench_judge, judgebench_predict
from tooldiag.models import ModelOptions
from tooldiag.suites.judgebench.store import STORE_FILE, JudgeBenchStore

ROOT = Path(__file__).resolve().parents[3]
OBJECT_STORE_BYTES = 80 * 1024 * 1024
CONDITIONS = ("with_gt", "without_gt")
SAMPLES = 2
METRICS = ("tool_selection_accuracy", "parameter_structure_accuracy", "sequence_accuracy", "query_coverage_accuracy")


def verdict_of(request: RecordedRequest) -> Reply:
    """A judge whose four scores follow from the prompt's SHA-256: the same request, the same verdict."""
    prompt = json.dumps(request.body.get("messages"), sort_keys=True)
    digest = hashlib.sha256(prompt.encode()).digest()
    verdict = {metric: {"accuracy": digest[i] % 3 / 2, "justification": "ok"} for i, metric in enumerate(METRICS)}
    return Reply.say("```json\n" + json.dumps(verdict) + "\n```")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLDIAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """The cluster, this process connected to it once: every in-process Ray run of the module reuses the
    connection and so the job's worker processes (a fresh job would start and import them again)."""
    ray = pytest.importorskip("ray")
    import logging

    from ray.cluster_utils import Cluster

    started = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 2, "include_dashboard": False, "object_store_memory": OBJECT_STORE_BYTES},
    )
    try:
        started.wait_for_nodes()
        ray.init(address=started.address, logging_level=logging.WARNING, log_to_driver=False)
        yield started
    finally:
        ray.shutdown()
        started.shutdown()


@pytest.fixture(scope="module")
def predicted(tmp_path_factory) -> Path:
    """A run directory with the plans of ``ref/jb-perturb`` on six generated records (predicted locally)."""
    base = tmp_path_factory.mktemp("predicted")
    judgebench_generate(base / "records.jsonl", 6, 3, quality_gates=False)
    judgebench_predict(base / "run", ["ref/jb-perturb"], records=str(base / "records.jsonl"))
    return base / "run"


def _copy(predicted: Path, target: Path) -> Path:
    shutil.copytree(predicted, target)
    return target


def _options(server: FakeOpenAIServer, concurrency: int = 4) -> ModelOptions:
    return ModelOptions(base_url=server.base_url, cache=False, concurrency=concurrency, max_retries=8)


def _judge(run_dir: Path, options: ModelOptions, **executor: Any) -> Any:
    [summary] = judgebench_judge(
        run_dir, ["openai/fake-judge"], conditions=CONDITIONS, samples=SAMPLES, options=options, **executor
    )
    return summary


def _rows(run_dir: Path) -> list[tuple]:
    with JudgeBenchStore(run_dir, create=False) as store:
        return store.judgement_rows(variant=None)


def _units(run_dir: Path) -> int:
    """Plans x conditions x draws: the units a judge run must store, counted from the plans."""
    with JudgeBenchStore(run_dir, create=False) as store:
        return len(store.predictions(status="ok")) * len(CONDITIONS) * SAMPLES


@pytest.fixture(scope="module")
def whole_run(predicted, tmp_path_factory) -> list[tuple]:
    """The verdict rows of an uninterrupted local judge run, no faults: what every Ray run must store."""
    run_dir = _copy(predicted, tmp_path_factory.mktemp("whole") / "run")
    with FakeOpenAIServer(responder=verdict_of, record=False) as server:
        summary = _judge(run_dir, _options(server))
    rows = _rows(run_dir)
    assert summary.ran == len(rows) == _units(run_dir) > 20
    assert {row[7] for row in rows} == {"ok"}
    return rows


# -- no cluster needed ---------------------------------------------------------------------
def test_without_ray_judge_fails_with_one_line_naming_the_install_command(predicted, tmp_path):
    run_dir = _copy(predicted, tmp_path / "run")
    script = "import sys; sys.modules['ray'] = None; from tooldiag.cli.main import main; main()"
    command = [sys.executable, "-c", script, "judgebench", "judge", "-j", "ref/jb-exact", "--run-dir", str(run_dir)]
    finished = subprocess.run([*command, "--executor", "ray", "-q"], cwd=ROOT, capture_output=True, text=True)
    output = finished.stdout + finished.stderr
    assert finished.returncode == 2, output
    assert len([line for line in output.splitlines() if line.startswith("error:")]) == 1, output
    assert "pip install 'tooldiag[ray]'" in output and "Traceback" not in output
    assert _rows(run_dir) == []  # refused before anything was written


def test_a_ray_address_without_the_ray_executor_is_refused(predicted, tmp_path):
    from tooldiag.errors import UserError

    with pytest.raises(UserError, match="needs --executor ray"):
        judgebench_judge(_copy(predicted, tmp_path / "run"), ["ref/jb-exact"], ray_address="auto")


# -- the cluster ---------------------------------------------------------------------------
@pytest.mark.slow
def test_judge_on_ray_stores_the_rows_of_the_local_executor(cluster, predicted, whole_run, tmp_path):
    run_dir = _copy(predicted, tmp_path / "ray")
    with FakeOpenAIServer(responder=verdict_of, record=False) as server:
        summary = _judge(run_dir, _options(server), executor="ray", ray_address=cluster.address)
    assert _rows(run_dir) == whole_run
    assert summary.ran == len(whole_run) and summary.skipped == 0
    assert summary.executor.executor == "ray" and summary.executor.cluster_cpus == 2


@pytest.mark.slow
def test_faulty_endpoint_on_ray_every_unit_stored_once(cluster, predicted, whole_run, tmp_path):
    run_dir = _copy(predicted, tmp_path / "faulty")
    faults = FaultSpec(rate_429=0.05, rate_500=0.05, rate_malformed=0.05, rate_stall=0.02, stall_s=0.1, seed=3)
    with FakeOpenAIServer(responder=verdict_of, record=False, faults=faults) as server:
        summary = _judge(run_dir, _options(server), executor="ray", ray_address=cluster.address)
        outcomes = dict(server.outcomes)
    assert sum(n for kind, n in outcomes.items() if kind != "ok") > 0, outcomes  # faults were injected
    rows = _rows(run_dir)
    assert summary.ran == len(rows) == len(whole_run)  # one commit per unit, none twice
    assert rows == whole_run


@pytest.mark.slow
def test_predict_on_ray_stores_the_plans_of_the_local_executor(cluster, predicted, tmp_path):
    records = predicted.parent / "records.jsonl"
    [summary] = judgebench_predict(
        tmp_path / "ray", ["ref/jb-perturb"], records=str(records), executor="ray", ray_address=cluster.address
    )
    with JudgeBenchStore(predicted, create=False) as local, JudgeBenchStore(tmp_path / "ray") as on_ray:
        expected = local.predictions(status=None)
        assert on_ray.predictions(status=None) == expected
    assert summary.ran == len(expected) and summary.executor.executor == "ray"


def _stored(run_dir: Path) -> int:
    try:
        with sqlite3.connect(run_dir / STORE_FILE, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kill -9 of a subprocess")
def test_a_driver_killed_mid_grid_resumes_to_one_row_per_unit(cluster, predicted, whole_run, tmp_path):
    run_dir = _copy(predicted, tmp_path / "killed")
    with FakeOpenAIServer(responder=verdict_of, record=False, latency_s=0.1) as server:
        command = [sys.executable, "-m", "tooldiag", "judgebench", "judge", "-j", "openai/fake-judge", "--run-dir"]
        command += [str(run_dir), "--conditions", ",".join(CONDITIONS), "--samples", str(SAMPLES), "--no-cache"]
        command += ["--base-url", server.base_url, "--concurrency", "2", "--max-retries", "8", "-q"]
        command += ["--executor", "ray", "--ray-address", cluster.address]
        env = {**os.environ, "TOOLDIAG_CACHE_DIR": str(tmp_path / "cache")}
        driver = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while _stored(run_dir) < 6 and driver.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            os.kill(driver.pid, signal.SIGKILL)
            driver.wait()
        assert driver.returncode == -signal.SIGKILL, driver.stderr.read() if driver.stderr else ""
        partial = _stored(run_dir)
        assert 6 <= partial < len(whole_run)
        finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert finished.returncode == 0, finished.stderr
    assert f"ran {len(whole_run) - partial} (" in finished.stdout and f"already stored {partial}," in finished.stdout
    assert "ray executor:" in finished.stdout
    assert _rows(run_dir) == whole_run


def class_of(request: RecordedRequest) -> Reply:
    """A classifier judge whose answer follows from the prompt's SHA-256; one prompt in five is garbled."""
    digest = hashlib.sha256(json.dumps(request.body.get("messages")).encode()).digest()
    if digest[0] % 5 == 0:
        return Reply.say("I cannot tell.")
    return Reply.say(json.dumps({"action_class": ("ask", "refuse", "confirm", "other")[digest[1] % 4]}))


@pytest.mark.slow
def test_the_llm_scheme_on_ray_labels_as_the_local_executor(cluster):
    from tooldiag.classify import get_classifier

    items = [(f"Message {i}: shall I book flight {i * 7} for you?", False) for i in range(30)]
    items += [("", False), ("calling the tool", True), (None, False)]
    with FakeOpenAIServer(responder=class_of, record=False) as server:
        options = ModelOptions(base_url=server.base_url, cache=False, concurrency=4, max_retries=2)
        local = get_classifier("llm", judge="openai/fake-classifier", judge_options=options)
        on_ray = get_classifier(
            "llm", judge="openai/fake-classifier", judge_options=options, executor="ray", ray_address=cluster.address
        )
        expected = local.explain_many(items)
        labelled = on_ray.explain_many(items)
    assert [e.label for e in labelled] == [e.label for e in expected]
    assert [(e.rule, e.detail) for e in labelled] == [(e.rule, e.detail) for e in expected]
    assert on_ray.fallbacks == local.fallbacks > 0  # garbled answers fell back to the rules, counted alike
    assert {e.rule for e in expected} >= {"judge"}
    assert on_ray.executor_counts.executor == "ray"
