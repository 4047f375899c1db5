"""Generator and judge runners with reference models: known answers, attrition, nulls, resume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable

import numpy as np
import pytest

from tooldiag.errors import ModelCallError, ModelCallErrorKind, StoreError, UserError
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.models.base import ModelBackend
from tooldiag.suites.judgebench.evaluations import load_evaluations
from tooldiag.suites.judgebench.generate import predict, read_plan
from tooldiag.suites.judgebench.judge import judge_predictions
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.suites.judgebench.store import JudgeBenchStore
from tooldiag.trajectory import Emission, GenerationConfig, ToolCall


@pytest.fixture(scope="module")
def records():
    return load_records()


def run_predict(store, records, generator, **kw):
    return asyncio.run(predict(store, records, generator, resolve_model(generator), **kw))


def run_judge(store, judge, backend=None, **kw):
    return asyncio.run(judge_predictions(store, judge, backend or resolve_model(judge), **kw))


@pytest.fixture
def study(tmp_path, records):
    """Two reference generators' plans of the 36 built-in records at three difficulties."""
    store = JudgeBenchStore(tmp_path / "run")
    run_predict(store, records, "ref/jb-oracle")
    run_predict(store, records, "ref/jb-sloppy")
    yield store
    store.close()


def test_oracle_plans_every_unit_and_perturbations_grow_with_difficulty(study):
    data_preds = study.predictions(["ref/jb-oracle"], status=None)
    assert len(data_preds) == 108 and {p["status"] for p in data_preds} == {"ok"}
    run_judge(study, "ref/jb-exact", conditions=["with_gt"])
    frame = load_evaluations(study).frame
    oracle = frame[frame["generator"] == "ref/jb-oracle"]
    assert (oracle[["p_tool_selection", "p_parameter_structure", "p_sequence", "p_coverage"]] == 1).all().all()
    sloppy = frame[frame["generator"] == "ref/jb-sloppy"]
    means = (
        sloppy.groupby("difficulty")[["p_tool_selection", "p_parameter_structure", "p_sequence", "p_coverage"]]
        .mean()
        .mean(axis=1)
    )
    assert means["easy"] > means["medium"] > means["hard"]


def test_perturbing_generator_is_deterministic(tmp_path, records):
    a = JudgeBenchStore(tmp_path / "a")
    b = JudgeBenchStore(tmp_path / "b")
    run_predict(a, records, "ref/jb-perturb")
    run_predict(b, records, "ref/jb-perturb")
    assert a.predictions(status=None) == b.predictions(status=None)
    assert {p["status"] for p in a.predictions(status=None)} >= {"ok", "empty"}  # some attrition on harder queries


def test_attrition_is_stored_with_its_reason(study):
    lost = [p for p in study.predictions(["ref/jb-sloppy"], status=None) if p["status"] != "ok"]
    assert lost and all(p["difficulty"] != "easy" for p in lost)
    assert {p["status"] for p in lost} <= {"empty", "unparseable"}
    assert all(p["error"] for p in lost)


def test_known_judges_give_known_alignments(study):
    for judge in ("ref/jb-exact", "ref/jb-lenient", "ref/jb-anchored"):
        run_judge(study, judge, conditions=["with_gt", "without_gt", "corrupted_gt"])
    data = load_evaluations(study)
    frame = data.frame
    p = frame[["p_tool_selection", "p_parameter_structure", "p_sequence", "p_coverage"]].to_numpy()
    ell = frame[["l_tool_selection", "l_parameter_structure", "l_sequence", "l_coverage"]].to_numpy()
    exact = (frame["judge"] == "ref/jb-exact").to_numpy()
    assert np.array_equal(p[exact], ell[exact])  # exact judge = programmatic scores, every condition
    lenient = (frame["judge"] == "ref/jb-lenient").to_numpy()
    assert (ell[lenient] == 1.0).all()
    anchored = frame["judge"] == "ref/jb-anchored"
    by_condition = (
        frame[anchored].assign(mean_l=ell[anchored.to_numpy()].mean(axis=1)).groupby("condition")["mean_l"].mean()
    )
    assert by_condition["without_gt"] == 1.0  # no reference to anchor to: defaults to 1.0
    assert by_condition["corrupted_gt"] < by_condition["with_gt"]  # anchors to the wrong reference
    assert len(frame) == 3 * 3 * len(study.predictions(status="ok"))


def test_flaky_judge_nulls_are_stored_apart_and_retried_twice(study):
    summary = run_judge(study, "ref/jb-flaky", conditions=["with_gt"])
    assert summary.statuses[("with_gt", "null")] > 0
    assert summary.retried > 0 and summary.missing_metric > 0
    rows = study.db.execute("SELECT status, attempts, raw FROM judgements WHERE judge = 'ref/jb-flaky'").fetchall()
    nulls = [r for r in rows if r[0] == "null"]
    assert nulls and all(r[1] == 3 and len(json.loads(r[2])) == 3 for r in nulls)  # first try + two retries
    data = load_evaluations(study)
    assert len(data.frame[data.frame["judge"] == "ref/jb-flaky"]) == sum(1 for r in rows if r[0] == "ok")
    assert data.frame[["l_sequence"]].isna().any().item()  # a missing metric stays NaN (counts 0 in alignment)


def test_no_retries_means_more_nulls(tmp_path, records):
    store = JudgeBenchStore(tmp_path / "r")
    run_predict(store, records, "ref/jb-oracle", difficulties=["easy"])
    strict = run_judge(store, "ref/jb-flaky", conditions=["with_gt"], retries=0)
    assert strict.statuses[("with_gt", "null")] > strict.statuses.get(("with_gt", "ok"), 0) * 0.1


def test_prometheus_condition_merges_four_grades(study):
    run_judge(study, "ref/jb-exact", conditions=["prometheus", "prometheus_without_gt"])
    rows = study.db.execute(
        "SELECT tool_selection, parameter_structure, sequence, coverage, attempts FROM judgements "
        "WHERE condition = 'prometheus'"
    ).fetchall()
    assert rows and all(r[4] == 4 for r in rows)
    assert {v for r in rows for v in r[:4]} <= {0.0, 0.25, 0.5, 0.75, 1.0}


def test_resume_does_nothing_twice(study, records):
    first = run_judge(study, "ref/jb-exact", conditions=["with_gt", "without_gt"])
    again = run_judge(study, "ref/jb-exact", conditions=["with_gt", "without_gt"])
    assert first.ran > 0 and again.ran == 0 and again.skipped == first.ran
    assert run_predict(study, records, "ref/jb-oracle").ran == 0
    n = study.count("judgements")
    run_judge(study, "ref/jb-exact", conditions=["with_gt", "without_gt", "free_form"])
    assert study.count("judgements") == n + len(study.predictions(status="ok"))


def test_changed_settings_or_records_are_refused(study, records):
    run_judge(study, "ref/jb-exact", conditions=["with_gt"])
    with pytest.raises(StoreError, match="different settings"):
        run_judge(study, "ref/jb-exact", conditions=["with_gt"], retries=5)
    with pytest.raises(StoreError, match="different settings"):
        run_predict(study, records, "ref/jb-oracle", config=GenerationConfig(temperature=0.7))
    changed = [records[0].model_copy(update={"user_message": "something else"})]
    with pytest.raises(StoreError, match="differs"):
        run_predict(study, changed, "ref/jb-oracle")


def test_corrupted_gt_seed_is_pinned(study):
    run_judge(study, "ref/jb-exact", conditions=["corrupted_gt"], seed=1)
    with pytest.raises(StoreError, match="derangement"):
        run_judge(study, "ref/jb-lenient", conditions=["corrupted_gt"], seed=2)


class Unreliable(ModelBackend):
    """Fails the first ``failures`` calls with a transient error, then answers like the oracle."""

    def __init__(self, failures: int, fatal: bool = False) -> None:
        self.failures = failures
        self.fatal = fatal
        self.calls = 0

    async def complete(self, request):
        self.calls += 1
        if self.calls <= self.failures:
            kind = ModelCallErrorKind.FATAL if self.fatal else ModelCallErrorKind.TRANSIENT
            raise ModelCallError("HTTP 503", status=503, kind=kind)
        calls = request.context.answer_key["expected_calls"]
        return Emission(tool_calls=[ToolCall.from_raw(c["name"], c["arguments"]) for c in calls])


def test_transient_errors_are_stored_and_retried_on_resume(tmp_path, records):
    store = JudgeBenchStore(tmp_path / "r")
    few = records[:4]
    summary = asyncio.run(predict(store, few, "test/unreliable", Unreliable(3), concurrency=1))
    assert summary.statuses["error"] == 3 and summary.statuses["ok"] == 9
    again = asyncio.run(predict(store, few, "test/unreliable", Unreliable(0), concurrency=1))
    assert again.ran == 3 and again.statuses["ok"] == 3
    assert {p["status"] for p in store.predictions(status=None)} == {"ok"}


def test_fatal_errors_stop_the_run_with_one_line(tmp_path, records):
    store = JudgeBenchStore(tmp_path / "r")
    with pytest.raises(UserError, match="test/broken: HTTP 503"):
        asyncio.run(predict(store, records[:3], "test/broken", Unreliable(100, fatal=True)))


def test_judging_without_predictions_is_a_store_error(tmp_path):
    store = JudgeBenchStore(tmp_path / "empty")
    with pytest.raises(StoreError, match="predict"):
        run_judge(store, "ref/jb-exact")
    with pytest.raises(StoreError):
        JudgeBenchStore(tmp_path / "missing", create=False)


def test_reference_models_refuse_other_suites():
    from tooldiag.trajectory import Message

    backend = resolve_model("ref/jb-exact", ModelOptions())
    with pytest.raises(UserError, match="judgebench"):
        asyncio.run(backend.generate([Message(role="user", content="hi")]))


@pytest.mark.parametrize(
    ("emission", "status"),
    [
        (Emission(tool_calls=[ToolCall.from_raw("a", '{"x": 1}')]), "ok"),
        (Emission(tool_calls=[ToolCall.from_raw("a", "{broken")]), "unparseable"),
        (Emission(tool_calls=[ToolCall.from_raw("a", "")]), "ok"),
        (Emission(text='[{"name": "a", "arguments": "{\\"x\\": 1}"}]'), "ok"),
        (Emission(text='[{"name": "a", "arguments": "{oops"}]'), "unparseable"),
        (Emission(text='[{"name": "a", "arguments": [1]}]'), "unparseable"),
        (Emission(text="[]"), "empty"),
        (Emission(text=None), "empty"),
        (Emission(text="Sure! I'll look that up."), "unparseable"),
    ],
)
def test_read_plan(emission, status):
    assert read_plan(emission)[0] == status


def slow_judge_script(delay_s: float) -> str:
    """A script that runs the CLI with a ``slow/...`` provider: ref/jb-exact, ``delay_s`` late per call
    (slow enough for a test to kill the run mid-way)."""
    return textwrap.dedent(
        f"""
        import asyncio, sys
        from tooldiag.models.registry import provider, resolve_model
        from tooldiag.models.base import ModelBackend

        class Slow(ModelBackend):
            def __init__(self):
                self.inner = resolve_model("ref/jb-exact")
            async def complete(self, request):
                await asyncio.sleep({delay_s})
                return await self.inner.complete(request)

        provider("slow")(lambda name, options: Slow())
        from tooldiag.cli.main import main
        main(sys.argv[1:])
        """
    )


def kill_once(args: list[str], env: dict[str, str], count: Callable[[], int], *, at_least: int, poll_s: float) -> int:
    """Start ``args``, SIGKILL it once ``count()`` reaches ``at_least`` (or it exits, or 60 s pass);
    what ``count()`` read last."""
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    done = 0
    while time.time() < deadline:
        time.sleep(poll_s)
        done = count()
        if done >= at_least or proc.poll() is not None:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return done


def test_killed_judge_run_resumes_without_loss_or_duplicates(tmp_path, records):
    run_dir = tmp_path / "run"
    with JudgeBenchStore(run_dir) as store:
        run_predict(store, records, "ref/jb-oracle")
        expected_units = 2 * len(store.predictions(status="ok"))
    script = tmp_path / "slow_judge.py"
    script.write_text(slow_judge_script(0.02))
    args = [
        sys.executable,
        str(script),
        "judgebench",
        "judge",
        "--judge",
        "slow/exact",
        "--run-dir",
        str(run_dir),
        "-q",
        "-c",
        "2",
    ]
    env = {**os.environ, "TOOLDIAG_CACHE_DIR": str(tmp_path / "cache")}

    def stored() -> int:
        with JudgeBenchStore(run_dir, create=False) as store:
            return store.count("judgements")

    done = kill_once(args, env, stored, at_least=20, poll_s=0.2)
    assert 0 < done < expected_units, "the run should have been killed midway"
    finished = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    with JudgeBenchStore(run_dir, create=False) as store:
        rows = store.db.execute(
            "SELECT COUNT(*), COUNT(DISTINCT judge || generator || record_id || difficulty || condition) FROM "
            "judgements"
        ).fetchone()
        statuses = {s for (s,) in store.db.execute("SELECT DISTINCT status FROM judgements")}
    assert rows == (expected_units, expected_units)
    assert statuses == {"ok"}


def test_runners_report_through_the_progress_protocol(tmp_path, records):
    calls = []

    class Recording:
        def start(self, total, done_already, tallies=None):
            calls.append(("start", total, done_already))

        def advance(self, label, ok=None):
            calls.append(("advance", label, ok))

        def finish(self):
            calls.append(("finish",))

    store = JudgeBenchStore(tmp_path / "run")
    summary = run_predict(store, records[:2], "ref/jb-oracle", difficulties=["easy"], progress=Recording())
    assert calls[0] == ("start", summary.ran, 0) and calls[-1] == ("finish",)
    assert calls[1:-1] == [("advance", "ok", None)] * summary.ran
    calls.clear()
    run_judge(store, "ref/jb-exact", conditions=["with_gt"], difficulties=["easy"], progress=Recording())
    assert calls[0][0] == "start" and calls[-1] == ("finish",) and len(calls) == calls[0][1] + 2
    store.close()
