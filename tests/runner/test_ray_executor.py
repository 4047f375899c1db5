"""``run bfcl --executor ray`` (issue 17): on a local multi-node Ray cluster the driver stores, case by
case, what a local run stores; faulty endpoints, a dying node and a ``kill -9`` of the driver leave
exactly one row per case, graded as an uninterrupted run grades it.

The cluster (``ray.cluster_utils.Cluster``, a head and two worker nodes of one CPU each, no dashboard,
a small object store) starts once per module: Ray's start-up costs about 20 s. Every node carries a
label naming the port of one of two module-wide fake servers (:data:`PORT_LABEL`): on one machine all
nodes share an IP, so ``--endpoint-per-node`` tells their endpoints apart by ``{label:KEY}``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.support.bfcl_replay import record_policy
from tests.support.fake_openai import FakeOpenAIServer, FaultSpec
from tooldiag.api import classifier, run_bfcl
from tooldiag.errors import UserError
from tooldiag.models import ModelOptions
from tooldiag.runner.ray_executor import MAX_CHUNK_UNITS, check_endpoint_template, plan_chunks, public_endpoint_template
from tooldiag.store import RunStore
from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.export import export_cases

ROOT = Path(__file__).resolve().parents[2]
REPLAYED = 24  # base cases the fake server can answer
ORACLE_CASES = 800  # BFCL multi-turn: 4 categories of 200 cases (issue 17's Must-hold runs them all)
OBJECT_STORE_BYTES = 80 * 1024 * 1024
#: The node label that names the port of the fake server local to a node (``ray start --labels``).
PORT_LABEL = "tooldiag-port"
#: The columns of a stored case that must be byte-identical across executors: all but ``updated_at``.
STORED_COLUMNS = "case_id, category, status, passed, error_type, grade, trajectory"


# -- no cluster needed ---------------------------------------------------------------------
def test_chunks_hold_every_unit_once_dealt_round_robin_over_endpoints():
    units = list(range(103))
    chunks = plan_chunks(units, endpoints=2, slots=3)
    seen = [unit for chunk in chunks for unit in chunk.units]
    assert sorted(seen) == units
    assert all(1 <= len(chunk.units) <= MAX_CHUNK_UNITS for chunk in chunks)
    for chunk in chunks:  # endpoint k serves units k, k + 2, ...
        assert {unit % 2 for unit in chunk.units} == {chunk.payload_index}
    assert [chunk.payload_index for chunk in chunks[:4]] == [0, 1, 0, 1]  # both endpoints busy from the start


def test_without_ray_the_run_fails_with_one_line_naming_the_install_command(tmp_path):
    script = "import sys; sys.modules['ray'] = None; from tooldiag.cli.main import main; main()"
    command = [sys.executable, "-c", script, "run", "bfcl", "--model", "ref/oracle", "--limit", "1"]
    command += ["--executor", "ray", "-q", "--run-dir", str(tmp_path / "run")]
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert finished.returncode == 2, finished.stderr
    lines = [line for line in (finished.stdout + finished.stderr).splitlines() if line.strip()]
    assert len([line for line in lines if line.startswith("error:")]) == 1, lines
    assert "pip install 'tooldiag[ray]'" in finished.stdout + finished.stderr
    assert "Traceback" not in finished.stderr
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_several_endpoints_without_ray_are_refused(tmp_path):
    with pytest.raises(UserError, match="needs --executor ray"):
        run_bfcl("ref/oracle", tmp_path / "run", limit=1, base_urls=["http://a/v1", "http://b/v1"])
    assert not (tmp_path / "run").exists()


def test_an_endpoint_template_keeps_its_placeholders_and_drops_what_may_be_a_secret():
    template = "http://{node_ip}:{label:vllm/port}/v1"
    assert check_endpoint_template(template) == template
    assert public_endpoint_template("https://me:pw@{node_ip}:8000/v1?key=s#f") == "https://{node_ip}:8000/v1"
    assert public_endpoint_template(template) == template  # a placeholder port is no reason to withhold it
    for bad in ("{node_ip}:8000/v1", "http://{node}:8000/v1", "http://{label:}:8000/v1", "http://{ip}/v1"):
        with pytest.raises(UserError):
            check_endpoint_template(bad)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"executor": "local"}, "needs --executor ray"),
        ({"executor": "ray", "options": ModelOptions(base_url="http://a/v1")}, "exclude each other"),
        ({"executor": "ray", "base_urls": ["http://a/v1", "http://b/v1"]}, "exclude each other"),
        ({"executor": "ray", "endpoint_per_node": "http://{gpu}:8000/v1"}, "unknown placeholder"),
        ({"executor": "ray", "endpoint_per_node": "http://u:p@{node_ip}:8000/v1"}, "credentials"),
    ],
)
def test_endpoint_per_node_is_refused_before_anything_is_written(tmp_path, extra, message):
    pytest.importorskip("ray")  # --executor ray without Ray stops earlier, naming the install command
    arguments: dict[str, Any] = {"endpoint_per_node": "http://{node_ip}:8000/v1", **extra}
    with pytest.raises(UserError, match=message):
        run_bfcl("openai/x", tmp_path / "run", limit=1, **arguments)
    assert not (tmp_path / "run").exists()


# -- the cluster ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def replay_table():
    """What ``ref/oracle`` answers to every request of the first base cases, for the fake servers."""
    recorder = asyncio.run(record_policy(load_cases(["base"], limit=REPLAYED)))
    assert not recorder.conflicts
    return recorder.table


@pytest.fixture(scope="module")
def node_servers(replay_table) -> Iterator[list[FakeOpenAIServer]]:
    """Two fake servers, each the endpoint "local" to the nodes whose :data:`PORT_LABEL` names its port;
    they start before the cluster, whose nodes are labelled with their ports."""
    servers = [FakeOpenAIServer(responder=replay_table, record=False) for _ in range(2)]
    with servers[0], servers[1]:
        yield servers


@pytest.fixture(scope="module")
def cluster(node_servers) -> Iterator[Any]:
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    head_args = {"num_cpus": 1, "include_dashboard": False, "object_store_memory": OBJECT_STORE_BYTES}
    started = Cluster(
        initialize_head=True, head_node_args={**head_args, "labels": {PORT_LABEL: str(node_servers[0].port)}}
    )
    started.tooldiag_ports = [server.port for server in node_servers]
    try:
        _restore_workers(started)
        yield started
    finally:
        started.shutdown()


def _restore_workers(cluster: Any, nodes: int = 2) -> None:
    """Bring the cluster to ``nodes`` worker nodes (at the start, and after a test removed some): the head
    and worker 1 are local to server 0, worker 0 to server 1, so both servers are some node's endpoint."""
    while len(cluster.worker_nodes) < nodes:
        port = cluster.tooldiag_ports[(len(cluster.worker_nodes) + 1) % 2]
        cluster.add_node(num_cpus=1, object_store_memory=OBJECT_STORE_BYTES, labels={PORT_LABEL: str(port)})
    cluster.wait_for_nodes()


class Reference(NamedTuple):
    """An uninterrupted one-process run over HTTP, no faults: what every Ray run must store."""

    rows: dict[str, dict]
    #: The chat requests it sent: a run that sends each of them once sends as many.
    requests: int


@pytest.fixture(scope="module")
def whole_run(replay_table, tmp_path_factory) -> Reference:
    run_dir = tmp_path_factory.mktemp("whole") / "run"
    with FakeOpenAIServer(responder=replay_table, record=False) as server:
        run_bfcl("openai/replay", run_dir, categories=["base"], limit=REPLAYED, options=_http_options(server))
        requests = server.request_count
    rows = _rows(run_dir)
    assert len(rows) == REPLAYED and all(row["passed"] for row in rows.values())  # the replay is the oracle
    return Reference(rows, requests)


def _faulty_servers(table: Any, *, seeds: tuple[int, ...], stall_s: float) -> list[FakeOpenAIServer]:
    """One replaying fake server per seed, each with 5 % injected faults (429, 500, malformed, stall)."""
    faults = {"rate_429": 0.0125, "rate_500": 0.0125, "rate_malformed": 0.0125, "rate_stall": 0.0125}
    return [
        FakeOpenAIServer(responder=table, record=False, faults=FaultSpec(**faults, stall_s=stall_s, seed=seed))
        for seed in seeds
    ]


def _http_options(server: FakeOpenAIServer, concurrency: int = 4) -> ModelOptions:
    return ModelOptions(base_url=_url(server), cache=False, concurrency=concurrency)


def _url(server: FakeOpenAIServer) -> str:
    return f"{server.root_url}/base/v1"


def _rows(run_dir: Path) -> dict[str, dict]:
    """The exported rows of a run, by case id, with each case's grade (no timestamps or latency)."""
    store = RunStore.open(run_dir)
    try:
        grades = {record.case_id: record.grade for record in store.iter_cases()}
        rows = export_cases(store, classifier("default"))
    finally:
        store.close()
    return {row["case_id"]: {**row, "grade": grades[row["case_id"]]} for row in rows}


def _stored(run_dir: Path) -> dict[str, tuple]:
    """Every stored case of a run, each as its :data:`STORED_COLUMNS` (the trajectory's bytes included)."""
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        return {row[0]: row for row in conn.execute(f"SELECT {STORED_COLUMNS} FROM cases")}


def _stored_once(run_dir: Path) -> tuple[int, int]:
    """(rows in the store, rows its writing sessions say they stored): equal when none was stored twice."""
    store = RunStore.open(run_dir)
    try:
        return store.count(), sum(session["cases"] for session in store.sessions())
    finally:
        store.close()


def _stored_rows(run_dir: Path) -> int:
    path = run_dir / "run.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
    except sqlite3.OperationalError:  # created but no table yet
        return 0


@pytest.mark.slow
def test_the_oracle_on_ray_grades_all_800_cases_as_the_local_executor(cluster, tmp_path):
    local = run_bfcl("ref/oracle", tmp_path / "local")  # this process, the reference
    on_ray = run_bfcl("ref/oracle", tmp_path / "ray", executor="ray", ray_address=cluster.address)
    expected, stored = _stored(tmp_path / "local"), _stored(tmp_path / "ray")
    assert len(expected) == ORACLE_CASES == on_ray.ran == len(stored)
    passed = [case for case, (_, _, status, ok, *_) in stored.items() if status == "done" and ok == 1]
    assert len(passed) == ORACLE_CASES  # 800/800
    differing = [case for case in expected if stored.get(case) != expected[case]]
    assert differing == []  # case by case: status, grade, error type and the trajectory's very bytes
    assert on_ray.counts == local.counts and on_ray.executor == "ray" and on_ray.workers == 3
    assert _stored_once(tmp_path / "ray") == (ORACLE_CASES, ORACLE_CASES)


@pytest.mark.slow
def test_all_800_cases_through_two_faulty_endpoints_are_graded_once(cluster, tmp_path):
    """The Must-hold's run of all 800 cases against two fake servers with 5 % injected faults: the
    servers replay ``ref/oracle``'s answers (one table, a namespace per category, so one run per
    category), and every case is stored once, done and passed, on Ray."""
    cases = load_cases(None)
    assert len(cases) == ORACLE_CASES
    recorder = asyncio.run(record_policy(cases))
    assert not recorder.conflicts
    servers = _faulty_servers(recorder.table, seeds=(3, 4), stall_s=0.05)
    graded: dict[str, tuple[str, bool]] = {}
    with servers[0], servers[1]:
        for category in sorted({case.category for case in cases}):
            run_dir = tmp_path / category
            summary = run_bfcl(
                "openai/replay",
                run_dir,
                categories=[category],
                options=ModelOptions(cache=False, concurrency=8),
                executor="ray",
                ray_address=cluster.address,
                base_urls=[f"{server.root_url}/{category}/v1" for server in servers],
            )
            assert summary.errors == [] and summary.endpoints == 2
            rows, sessions = _stored_once(run_dir)
            assert rows == sessions == summary.ran  # none stored twice
            store = RunStore.open(run_dir)
            try:
                for record in store.iter_cases():
                    assert record.case_id not in graded
                    graded[record.case_id] = (record.status, bool(record.passed))
            finally:
                store.close()
        injected = sum(count for server in servers for kind, count in server.outcomes.items() if kind != "ok")
    assert injected > 0, [server.outcomes for server in servers]  # faults were injected (and retried)
    assert sorted(graded) == sorted(case.id for case in cases)  # every case once
    assert all(status == "done" and passed for status, passed in graded.values())  # 800/800


@pytest.mark.slow
def test_two_faulty_endpoints_grade_every_case_once(cluster, tmp_path, replay_table, whole_run):
    servers = _faulty_servers(replay_table, seeds=(1, 2), stall_s=0.2)
    with servers[0], servers[1]:
        summary = run_bfcl(
            "openai/replay",
            tmp_path / "faulty",
            categories=["base"],
            limit=REPLAYED,
            options=ModelOptions(cache=False, concurrency=4),
            executor="ray",
            ray_address=cluster.address,
            base_urls=[_url(server) for server in servers],
        )
        answered = [sum(server.outcomes.values()) for server in servers]
        injected = sum(count for server in servers for kind, count in server.outcomes.items() if kind != "ok")
    assert all(answered), answered  # both endpoints served cases
    assert injected, [server.outcomes for server in servers]  # faults were injected (and retried)
    assert summary.errors == [] and summary.ran == REPLAYED and summary.endpoints == 2
    assert _stored_once(tmp_path / "faulty") == (REPLAYED, REPLAYED)
    assert _rows(tmp_path / "faulty") == whole_run.rows


@pytest.mark.slow
def test_endpoint_per_node_sends_each_node_s_cases_to_its_own_server(cluster, tmp_path, node_servers, whole_run):
    before = [server.request_count for server in node_servers]
    template = "http://127.0.0.1:{label:" + PORT_LABEL + "}/base/v1"  # one machine: the label tells nodes apart
    summary = run_bfcl(
        "openai/replay",
        tmp_path / "per-node",
        categories=["base"],
        limit=REPLAYED,
        options=ModelOptions(cache=False, concurrency=4),
        executor="ray",
        ray_address=cluster.address,
        endpoint_per_node=template,
    )
    served = [server.request_count - count for server, count in zip(node_servers, before, strict=True)]
    assert all(served), served  # both nodes' endpoints served cases: the template was filled in on the nodes
    assert sum(served) == whole_run.requests  # every request sent once, to one of them
    assert summary.errors == [] and summary.ran == REPLAYED
    assert _stored_once(tmp_path / "per-node") == (REPLAYED, REPLAYED)
    assert _rows(tmp_path / "per-node") == whole_run.rows
    store = RunStore.open(tmp_path / "per-node")
    try:
        assert store.config.base_url == template  # the run says where its cases went
    finally:
        store.close()


def _fill_in_on_a_node(template: str) -> tuple[str, str]:
    import ray

    from tooldiag.runner.ray_executor import resolve_endpoint

    return ray.get_runtime_context().get_node_id(), resolve_endpoint(template)


@pytest.mark.slow
def test_placeholders_are_filled_in_from_the_node_a_task_runs_on(cluster):
    import ray

    from tooldiag.runner.ray_executor import connect

    started = connect(ray, cluster.address, None)
    try:
        nodes = {node["NodeID"]: node for node in ray.nodes() if node["Alive"]}
        fill = ray.remote(num_cpus=1)(_fill_in_on_a_node)
        template = "http://{node_ip}:{label:" + PORT_LABEL + "}/{node_id}/v1"
        for node_id, url in ray.get([fill.remote(template) for _ in range(3)]):
            node = nodes[node_id]  # what Ray's own node table says of the node the task ran on
            assert url == f"http://{node['NodeManagerAddress']}:{node['Labels'][PORT_LABEL]}/{node_id}/v1"
        with pytest.raises(ray.exceptions.RayTaskError, match="has no label 'absent'"):
            ray.get(fill.remote("http://{label:absent}/v1"))
    finally:
        if started:
            ray.shutdown()


@pytest.mark.slow
def test_a_fatal_model_error_in_a_ray_task_stops_the_run_with_its_own_message(cluster, tmp_path):
    options = ModelOptions(base_url="http://127.0.0.1:9/v1", cache=False, max_retries=0)  # nothing listens on 9
    with pytest.raises(UserError, match=r"model openai/x failed: .*unreachable") as caught:
        run_bfcl("openai/x", tmp_path / "run", limit=1, options=options, executor="ray", ray_address=cluster.address)
    assert "RayTaskError" not in type(caught.value).__name__  # the worker's own error, not Ray's wrapper
    assert _stored_rows(tmp_path / "run") == 0


class _RemoveWorkerNodes:
    """A progress sink that removes both worker nodes once ``after`` cases are stored: the head alone
    finishes the run. At that moment two of the three one-CPU nodes run a chunk (the third's just
    landed), so at least one removed node takes a chunk down with it: a worker loss, its cases
    retried. ``after`` is a few chunks in, so that every node's worker process has started (a task
    whose worker had not started yet Ray itself moves, unseen)."""

    def __init__(self, cluster: Any, after: int) -> None:
        self.cluster, self.after, self.stored, self.removed = cluster, after, 0, 0

    def start(self, total, done_already, tallies=None) -> None:
        pass

    def advance(self, label, ok=None) -> None:
        self.stored += 1
        if self.stored == self.after:
            for node in list(self.cluster.worker_nodes):
                self.cluster.remove_node(node, allow_graceful=False)
                self.removed += 1

    def finish(self) -> None:
        pass


@pytest.mark.slow
def test_nodes_removed_mid_run_have_their_cases_retried_and_counted(cluster, tmp_path, replay_table, whole_run):
    remover = _RemoveWorkerNodes(cluster, after=8)
    try:
        with FakeOpenAIServer(responder=replay_table, record=False, latency_s=0.1) as server:
            summary = run_bfcl(
                "openai/replay",
                tmp_path / "lost",
                categories=["base"],
                limit=REPLAYED,
                options=_http_options(server),
                executor="ray",
                ray_address=cluster.address,
                progress=remover,
            )
    finally:
        _restore_workers(cluster)
    assert remover.removed == 2
    # Whether a removed node held a running chunk depends on Ray's placement and the machine's speed (a quiet
    # machine once finished every in-flight chunk on the head node): the counts must agree, and what is stored
    # must be whole and unduplicated either way.
    assert summary.unit_retries >= summary.worker_losses >= 0
    assert _stored_once(tmp_path / "lost") == (REPLAYED, REPLAYED)
    assert _rows(tmp_path / "lost") == whole_run.rows


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kill -9 of a subprocess")
def test_a_node_then_the_driver_killed_resume_to_one_row_per_case(cluster, tmp_path, replay_table, whole_run):
    run_dir = tmp_path / "killed"
    with FakeOpenAIServer(responder=replay_table, record=False, latency_s=0.05) as server:
        command = [sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", "openai/replay", "--categories"]
        command += ["base", "--limit", str(REPLAYED), "--base-url", _url(server), "--no-cache", "--concurrency", "4"]
        command += ["--executor", "ray", "--ray-address", cluster.address, "-q", "--run-dir", str(run_dir)]
        driver = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            try:
                _wait_for_rows(run_dir, 2, driver)
                cluster.remove_node(min(cluster.worker_nodes, key=lambda node: node.unique_id), allow_graceful=False)
                _wait_for_rows(run_dir, 6, driver)
            finally:
                os.kill(driver.pid, signal.SIGKILL)
                driver.wait()
            assert driver.returncode == -signal.SIGKILL, driver.stderr.read() if driver.stderr else ""
            partial = _stored_rows(run_dir)
            assert 6 <= partial < REPLAYED
            finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
        finally:
            _restore_workers(cluster)
        assert finished.returncode == 0, finished.stderr
    assert f"{REPLAYED - partial} cases run, {partial} already finished" in finished.stdout
    assert _stored_once(run_dir) == (REPLAYED, REPLAYED)
    assert _rows(run_dir) == whole_run.rows


def _wait_for_rows(run_dir: Path, rows: int, driver: subprocess.Popen, deadline_s: float = 120.0) -> None:
    deadline = time.monotonic() + deadline_s
    while _stored_rows(run_dir) < rows and driver.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _stored_rows(run_dir) >= rows, driver.stderr.read() if driver.poll() is not None and driver.stderr else ""
