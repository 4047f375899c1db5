"""Provenance and run summary of BFCL runs: who wrote them, with what, at what cost.

Real runs: the ``ref/overcall`` reference policy offline, and the OpenAI-compatible provider
against the fake server (scripted 429s, the response cache, an API key in the environment).
"""

from __future__ import annotations

import json

import pytest

import tooldiag
from tests.support.fake_openai import FakeOpenAIServer, Reply
from tooldiag.classify import get_classifier
from tooldiag.models import ModelOptions
from tooldiag.report import render
from tooldiag.store import RunStore
from tooldiag.store.usage import usage_summary
from tooldiag.suites.bfcl.diagnostic import report_from_run_dir, reports_from_run_dirs

FAST = {"retry_base_s": 0.001, "retry_max_s": 0.01}
PROVENANCE_KEYS = {
    "tooldiag", "bfcl_eval", "writers", "classifier", "config", "store_created_at", "report_created_at",
}  # fmt: skip


def _emissions(run_dir):
    with RunStore.open(run_dir) as store:
        return [s.emission for r in store.iter_cases() for t in r.trajectory.turns for s in t.steps]


def _overcall(run_dir, limit, **kwargs):
    return tooldiag.run_bfcl("ref/overcall", run_dir, categories=["miss_func"], limit=limit, **kwargs)


# -- provenance ----------------------------------------------------------------------------
def test_provenance_has_every_key_and_the_versions_that_wrote_the_run(tmp_path):
    _overcall(tmp_path / "r", 2)
    report = report_from_run_dir(tmp_path / "r", get_classifier("default"))
    provenance = report.provenance
    assert provenance is not None and set(provenance) == PROVENANCE_KEYS
    (writer,) = provenance["writers"]
    assert writer["tooldiag"] == tooldiag.__version__ == provenance["tooldiag"]
    assert writer["bfcl-eval"] == provenance["bfcl_eval"] is not None
    assert writer["python"].count(".") == 2
    assert provenance["classifier"]["scheme"] == "default" and len(provenance["classifier"]["cue_digest"]) == 64
    assert provenance["config"]["model"] == "ref/overcall" and provenance["config"]["limit"] == 2
    assert provenance["store_created_at"] <= provenance["report_created_at"]
    data = json.loads(render([report], "json"))
    assert data["runs"][0]["provenance"] == provenance and "mixed_versions" not in data


def test_a_resume_by_another_version_appends_a_writer_and_the_report_says_so(tmp_path, monkeypatch):
    _overcall(tmp_path / "r", 2)
    monkeypatch.setattr("tooldiag.versions.tooldiag_version", lambda: "9.9.9")
    _overcall(tmp_path / "r", 3)
    monkeypatch.undo()
    (report,) = reports_from_run_dirs([tmp_path / "r"])
    assert [w["tooldiag"] for w in report.provenance["writers"]] == [tooldiag.__version__, "9.9.9"]
    data = json.loads(render([report], "json"))
    assert data["mixed_versions"] == {"tooldiag": [tooldiag.__version__, "9.9.9"]}
    md = render([report], "md")
    assert f"runs written by different versions (tooldiag {tooldiag.__version__}, 9.9.9)" in md


def test_two_runs_by_different_versions_are_mixed_one_version_is_not(tmp_path, monkeypatch):
    _overcall(tmp_path / "a", 1)
    _overcall(tmp_path / "b", 1)
    assert "mixed_versions" not in json.loads(render(reports_from_run_dirs([tmp_path / "a", tmp_path / "b"]), "json"))
    monkeypatch.setattr("tooldiag.versions.distribution_version", lambda name: "0.0.1")
    _overcall(tmp_path / "c", 1)
    monkeypatch.undo()
    data = json.loads(render(reports_from_run_dirs([tmp_path / "a", tmp_path / "c"]), "json"))
    assert list(data["mixed_versions"]) == ["bfcl-eval"] and "0.0.1" in data["mixed_versions"]["bfcl-eval"]


def test_the_cue_digest_changes_when_a_cues_file_is_added(tmp_path):
    _overcall(tmp_path / "r", 1)
    extension = tmp_path / "cues.json"
    extension.write_text(json.dumps({"refuse": ["above my pay grade"]}))
    plain = report_from_run_dir(tmp_path / "r", get_classifier("default")).provenance["classifier"]
    extended = report_from_run_dir(tmp_path / "r", get_classifier("default", cue_files=[extension]))
    extended_block = extended.provenance["classifier"]
    assert extended_block["cue_files"] == [str(extension)] and plain["cue_files"] == []
    assert extended_block["cue_digest"] != plain["cue_digest"]
    extension.write_text(json.dumps({"refuse": ["beyond my pay grade"]}))  # same file name, other content
    again = report_from_run_dir(tmp_path / "r", get_classifier("default", cue_files=[extension]))
    assert again.provenance["classifier"]["cue_digest"] not in {plain["cue_digest"], extended_block["cue_digest"]}
    paper = report_from_run_dir(tmp_path / "r", get_classifier("paper")).provenance["classifier"]
    assert paper["scheme"] == "paper" and paper["cue_digest"] != plain["cue_digest"]


def test_no_secret_of_the_endpoint_reaches_the_run_dir_or_the_report(tmp_path, monkeypatch):
    key = "sk-test-env-secret-4f9a2c"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with FakeOpenAIServer(api_key=key) as server:
        url = server.base_url.replace("http://", "http://alice:hunter2pw@") + "?key=query-secret-77"
        options = ModelOptions(base_url=server.base_url, cache=False, extra=dict(FAST))
        tooldiag.run_bfcl("openai/m", tmp_path / "r", categories=["miss_func"], limit=1, options=options)
        assert server.request_count > 0
    # the config as a user with a credentialled URL would have stored it
    ref_options = ModelOptions(base_url=url)
    tooldiag.run_bfcl("ref/overcall", tmp_path / "u", categories=["miss_func"], limit=1, options=ref_options)
    reports = reports_from_run_dirs([tmp_path / "r", tmp_path / "u"])
    assert reports[1].provenance["config"]["base_url"] == server.base_url
    outputs = [render(reports, fmt) for fmt in ("md", "json", "csv", "latex")]
    files = [p.read_bytes() for d in ("r", "u") for p in (tmp_path / d).iterdir() if p.is_file()]
    for blob in [o.encode() for o in outputs] + files:
        for secret in (key, "hunter2pw", "alice", "query-secret-77"):
            assert secret.encode() not in blob, secret


# -- the run summary -----------------------------------------------------------------------
def test_retries_are_counted_on_the_emission_and_in_the_summary(tmp_path):
    with FakeOpenAIServer() as server:
        server.script(Reply.fail(429, "slow down"), Reply.fail(429, "slow down"))
        options = ModelOptions(base_url=server.base_url, cache=False, extra=dict(FAST))
        summary = tooldiag.run_bfcl("openai/m", tmp_path / "r", categories=["miss_func"], limit=1, options=options)
        answered = server.request_count - 2
    emissions = _emissions(tmp_path / "r")
    assert emissions[0].retries == {"rate_limit": 2}
    assert all(e.retries == {} for e in emissions[1:])
    assert summary.usage is not None and summary.usage.retries == {"rate_limit": 2}
    assert summary.usage.requests == len(emissions) == answered
    assert summary.usage.latency_median_s is not None and summary.usage.cache_hits == 0
    (report,) = reports_from_run_dirs([tmp_path / "r"])
    assert json.loads(render([report], "json"))["runs"][0]["usage"]["retries"] == {"rate_limit": 2}
    assert "## Run summary" in render([report], "md")


def test_a_second_run_through_the_response_cache_counts_cache_hits(tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    with FakeOpenAIServer() as server:
        options = ModelOptions(base_url=server.base_url, cache=True, cache_path=cache, extra=dict(FAST))
        first = tooldiag.run_bfcl("openai/m", tmp_path / "a", categories=["miss_func"], limit=1, options=options)
        second = tooldiag.run_bfcl("openai/m", tmp_path / "b", categories=["miss_func"], limit=1, options=options)
        assert server.request_count == first.usage.requests  # the second run asked nothing
    assert first.usage.cache_hits == 0 and first.usage.requests > 0
    assert second.usage.requests == second.usage.cache_hits == first.usage.requests
    assert second.usage.latency_median_s is None  # cached answers have no latency of this run
    assert all(e.cached for e in _emissions(tmp_path / "b"))


def test_the_summary_after_a_resume_counts_each_case_once(tmp_path):
    _overcall(tmp_path / "resumed", 3)
    resumed = _overcall(tmp_path / "resumed", 6)
    fresh = _overcall(tmp_path / "fresh", 6)
    assert resumed.usage is not None and fresh.usage is not None
    assert (resumed.usage.cases, resumed.usage.sessions, fresh.usage.sessions) == (6, 2, 1)
    assert resumed.usage.requests == fresh.usage.requests == len(_emissions(tmp_path / "fresh"))
    with RunStore.open(tmp_path / "resumed") as store:
        sessions = store.sessions()
        assert [s["cases"] for s in sessions] == [3, 3]
        assert usage_summary(store).wall_s == pytest.approx(sum(s["wall_s"] for s in sessions))
