"""The run summary read as plain JSON (issue 16): stores written before an emission field existed,
draws in ``samples``, and damaged rows, against the summary read through the models."""

from __future__ import annotations

import json
import sqlite3
import zlib

import pytest

from tooldiag.errors import StoreError
from tooldiag.store import RunStore
from tooldiag.store.rundb import DB_NAME
from tooldiag.store.usage import summarize_usage, usage_summary
from tooldiag.trajectory import CaseTrajectory, Emission, Grade, RunConfig, Step, Turn, Usage

CONFIG = RunConfig(suite="demo", model="ref/x", categories=["a"])
V1 = {"tooldiag": "0.1.0"}


def _case(case_id: str, *emissions: Emission) -> CaseTrajectory:
    return CaseTrajectory(
        case_id=case_id, category="a", turns=[Turn(index=0, steps=[Step(emission=e) for e in emissions])]
    )


def _through_models(store: RunStore):
    records = list(store.iter_samples())
    return summarize_usage(
        (r.trajectory for r in records), error_rows=sum(r.status != "done" for r in records), sessions=store.sessions()
    )


def _rewrite_trajectory(run_dir, case_id: str, edit) -> None:
    """Replace a stored trajectory's JSON by ``edit(json)``, as another tooldiag version might have written it."""
    with sqlite3.connect(run_dir / DB_NAME) as conn:
        (blob,) = conn.execute("SELECT trajectory FROM cases WHERE case_id = ?", (case_id,)).fetchone()
        value = edit(json.loads(zlib.decompress(blob)))
        conn.execute("UPDATE cases SET trajectory = ? WHERE case_id = ?", (zlib.compress(value.encode()), case_id))


def _without_newer_fields(trajectory: dict) -> str:
    """The JSON of a store from before ``retries``, ``cached``, ``injected`` and ``text_repairs``."""
    for turn in trajectory["turns"]:
        for step in turn["steps"]:
            for key in ("retries", "cached", "injected", "text_repairs"):
                step["emission"].pop(key)
    return json.dumps(trajectory)


def test_a_store_from_before_the_newer_emission_fields_sums_as_the_models_read_it(tmp_path):
    paid = Emission(text="a", usage=Usage(input_tokens=100, output_tokens=7), latency_s=1.0)
    no_output = Emission(text="b", usage=Usage(input_tokens=5), latency_s=4.0)
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V1) as store:
        store.put_case(_case("a_1", paid, no_output), Grade(passed=True))
        store.put_case(_case("a_2", Emission(text="c")), None)
    _rewrite_trajectory(tmp_path / "r", "a_1", _without_newer_fields)
    with RunStore.open(tmp_path / "r") as store:
        summary, expected = usage_summary(store), _through_models(store)
    assert summary.to_json() == expected.to_json() and summary.lines() == expected.lines()
    assert (summary.cases, summary.requests, summary.cache_hits, summary.retries) == (2, 3, 0, {})
    assert (summary.input_tokens, summary.output_tokens, summary.error_rows) == (105, 7, 1)
    assert (summary.latency_median_s, summary.latency_p95_s) == (2.5, pytest.approx(3.85))


def test_draws_in_samples_count_once_each(tmp_path):
    hit = Emission(text="h", cached=True, retries={"timeout": 1}, usage=Usage(input_tokens=9), latency_s=2.0)
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V1) as store:
        store.put_case(_case("a_1", Emission(text="x", latency_s=1.0)), Grade(passed=True))
        store.put_case(_case("a_1", hit, Emission(text="p", injected=True)), Grade(passed=False), sample=1)
    with RunStore.open(tmp_path / "r") as store:
        summary, expected = usage_summary(store), _through_models(store)
    assert summary.to_json() == expected.to_json()
    assert (summary.cases, summary.requests, summary.cache_hits, summary.retries) == (2, 2, 1, {"timeout": 1})
    assert (summary.input_tokens, summary.latency_median_s) == (None, 1.0)  # the hit paid nothing


@pytest.mark.parametrize(
    "blob",
    [b"not zlib", zlib.compress(b"{not json"), zlib.compress(b"[1, 2]")],
    ids=["not-zlib", "not-json", "not-an-object"],
)
def test_an_unreadable_trajectory_is_a_store_error_naming_the_case(tmp_path, blob):
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V1) as store:
        store.put_case(_case("a_7", Emission(text="x")), Grade(passed=True))
    with sqlite3.connect(tmp_path / "r" / DB_NAME) as conn:
        conn.execute("UPDATE cases SET trajectory = ?", (blob,))
    with RunStore.open(tmp_path / "r") as store, pytest.raises(StoreError, match=r"case a_7 .* is unreadable"):
        usage_summary(store)


def test_a_trajectory_of_the_wrong_shape_is_read_again_through_the_models(tmp_path):
    """A JSON object the plain reader cannot walk: the models' reading names the case."""
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, writer=V1) as store:
        store.put_case(_case("a_3", Emission(text="x")), Grade(passed=True))
    _rewrite_trajectory(tmp_path / "r", "a_3", lambda t: json.dumps({**t, "turns": [{"steps": [{"no": 1}]}]}))
    with RunStore.open(tmp_path / "r") as store, pytest.raises(StoreError, match=r"case a_3 .* is unreadable"):
        usage_summary(store)
