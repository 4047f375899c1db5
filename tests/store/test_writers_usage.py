"""Who wrote a run store (writers, sessions) and the run summary computed from it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from tooldiag.store import RunStore
from tooldiag.store.rundb import DB_NAME, UNKNOWN_WRITER
from tooldiag.store.usage import percentile, summarize_usage, usage_summary
from tooldiag.trajectory import CaseTrajectory, Emission, Grade, RunConfig, Step, Turn, Usage

CONFIG = RunConfig(suite="demo", model="ref/x", categories=["a"])
V1 = {"tooldiag": "0.1.0", "python": "3.11.9", "grader": "1.0"}
V2 = {"tooldiag": "0.2.0", "python": "3.11.9", "grader": "1.0"}


def _case(case_id: str, *emissions: Emission) -> CaseTrajectory:
    return CaseTrajectory(
        case_id=case_id, category="a", turns=[Turn(index=0, steps=[Step(emission=e) for e in emissions])]
    )


def _meta(run_dir) -> dict[str, str]:
    with sqlite3.connect(run_dir / DB_NAME) as conn:
        return dict(conn.execute("SELECT key, value FROM meta"))


# -- writers -------------------------------------------------------------------------------
def test_a_new_store_records_its_writer_and_a_session(tmp_path):
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V1) as store:
        store.put_case(_case("a_1", Emission(text="hi")), Grade(passed=True))
        store.put_case(_case("a_2"), None)
    meta = _meta(tmp_path / "r")
    writers = json.loads(meta["writers"])
    assert [{k: v for k, v in w.items() if k != "first_written_at"} for w in writers] == [V1]
    assert writers[0]["first_written_at"].endswith("+00:00")
    (session,) = json.loads(meta["sessions"])
    assert (session["cases"], session["errors"], session["writer"]) == (2, 1, 0)
    assert session["wall_s"] >= 0 and session["started_at"].endswith("+00:00")


def test_a_resume_by_the_same_version_adds_a_session_not_a_writer(tmp_path):
    RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V1).close()
    RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=dict(V1)).close()
    with RunStore.open(tmp_path / "r") as store:
        assert len(store.writers()) == 1
        assert [s["writer"] for s in store.sessions()] == [0, 0]


def test_a_resume_by_another_version_appends_a_writer(tmp_path):
    RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V1).close()
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V2) as store:
        store.put_case(_case("a_1"), Grade(passed=True))
    with RunStore.open(tmp_path / "r") as store:
        assert [w["tooldiag"] for w in store.writers()] == ["0.1.0", "0.2.0"]
        assert [(s["writer"], s["cases"]) for s in store.sessions()] == [(0, 0), (1, 1)]


def test_a_store_from_before_writers_reads_as_an_unknown_writer_kept_first(tmp_path):
    RunStore.create_or_resume(tmp_path / "r", CONFIG).close()  # no writer: what older tooldiag wrote
    assert "writers" not in _meta(tmp_path / "r")
    with RunStore.open(tmp_path / "r") as store:
        assert store.writers() == [UNKNOWN_WRITER] and store.sessions() == []
    RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V2).close()
    with RunStore.open(tmp_path / "r") as store:
        writers = store.writers()
    assert writers[0] == UNKNOWN_WRITER and writers[1]["tooldiag"] == "0.2.0"


def test_reading_a_store_writes_no_session(tmp_path):
    RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V1).close()
    before = _meta(tmp_path / "r")
    RunStore.open(tmp_path / "r").close()
    assert _meta(tmp_path / "r") == before


def test_a_session_killed_mid_run_leaves_a_readable_store_with_its_cases_counted(tmp_path):
    """kill -9 after three stored cases: the session holds those three (updated with each case)."""
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from tooldiag.store import RunStore
        from tooldiag.trajectory import CaseTrajectory, Grade, RunConfig
        store = RunStore.create_or_resume(Path({str(tmp_path / "r")!r}), RunConfig(suite="demo", model="ref/x",
            categories=["a"]), writer={{"tooldiag": "0.1.0"}})
        for i in range(3):
            store.put_case(CaseTrajectory(case_id=f"a_{{i}}", category="a"), Grade(passed=True))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr
    with RunStore.open(tmp_path / "r") as store:
        assert store.count() == 3
        (session,) = store.sessions()
        assert session["cases"] == 3
        summary = usage_summary(store)
    assert (summary.cases, summary.sessions) == (3, 1)


# -- the run summary -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "values, q, expected",
    [
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([1.0, 2.0, 3.0, 4.0], 95, 3.85),  # 3 + 0.85 * (4 - 3): numpy's default (linear)
        ([5.0], 95, 5.0),
        ([3.0, 1.0, 2.0], 0, 1.0),
        ([3.0, 1.0, 2.0], 100, 3.0),
        (list(map(float, range(1, 101))), 95, 95.05),
    ],
)
def test_percentile_on_known_values(values, q, expected):
    assert percentile(values, q) == pytest.approx(expected, abs=1e-12)


def test_percentile_of_nothing_and_out_of_range():
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_summary_counts_requests_cache_hits_retries_tokens_and_latency():
    paid = Emission(text="a", usage=Usage(input_tokens=100, output_tokens=7), latency_s=1.0, retries={"server": 1})
    slow = Emission(text="b", usage=Usage(input_tokens=50, output_tokens=3), latency_s=3.0, retries={"rate_limit": 2})
    hit = Emission(text="c", usage=Usage(input_tokens=999, output_tokens=999), latency_s=9.0, cached=True)
    injected = Emission(text="placeholder", injected=True, latency_s=99.0)
    summary = summarize_usage(
        [_case("a_1", paid, injected), _case("a_2", slow, hit)],
        error_rows=1,
        sessions=[{"wall_s": 1.5}, {"wall_s": 2.25}],
    )
    assert (summary.cases, summary.requests, summary.cache_hits) == (2, 3, 1)
    assert summary.retries == {"server": 1, "rate_limit": 2} and summary.retry_count == 3
    assert (summary.input_tokens, summary.output_tokens) == (150, 10)  # the cache hit paid nothing
    assert (summary.latency_median_s, summary.latency_p95_s) == (2.0, pytest.approx(2.9))
    assert (summary.error_rows, summary.wall_s, summary.sessions) == (1, 3.75, 2)
    assert summary.to_json()["retries"] == {"rate_limit": 2, "server": 1}
    assert "retries 3 (rate_limit 2, server 1)" in summary.lines()[0]


def test_summary_without_usage_or_latency_says_so():
    summary = summarize_usage([_case("a_1", Emission(text="x"))])
    assert (summary.input_tokens, summary.latency_median_s, summary.wall_s) == (None, None, 0.0)
    assert "tokens not reported; latency n/a" in summary.lines()[1]
