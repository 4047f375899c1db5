"""Difficulty rewrites (``judgebench rewrite``) and their meta-judge validation (``judgebench metajudge``, App. N)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

import tooldiag
from tests.support.fake_openai import FakeOpenAIServer, RecordedRequest, Reply
from tooldiag.cli.main import main
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.models.base import ModelBackend, ModelRequest
from tooldiag.suites.judgebench.construct.rewrite import read_records_input, rewrite_records
from tooldiag.suites.judgebench.construct.rewrite_policies import heuristic_votes
from tooldiag.suites.judgebench.construct.rewrite_store import ConstructStore
from tooldiag.suites.judgebench.construct.rewrite_text import numbers, parameter_mentions
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.trajectory import Emission

REWRITE_FIELDS = {"query_medium", "query_hard", "rewrite_medium_status", "rewrite_hard_status"}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLDIAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _lines(path):
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _hub_style(tmp_path, n=3):
    """The first built-in records with object columns as JSON strings (as the hub data stores them)."""
    rows = read_records_input("builtin").rows[:n]
    for row in rows:
        for column in ("available_tools", "expected_responses", "expected_tool_calls"):
            row[column] = json.dumps(row[column])
        for column in REWRITE_FIELDS:
            row.pop(column)
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path, rows


def _query_of(request: RecordedRequest) -> str:
    prompt = request.body["messages"][-1]["content"]
    return re.search(r"(?:EASY|MEDIUM) REQUEST:\n(.*?)\n\nAnswer", prompt, re.S).group(1)


# --------------------------------------------------------------------------- ref/rewrite


def test_ref_rewrite_keeps_calls_and_trace_and_writes_both_queries(tmp_path):
    source = read_records_input("builtin")
    out = tmp_path / "rewritten.jsonl"
    summary = tooldiag.judgebench_rewrite("builtin", "ref/rewrite", out)
    assert summary.statuses == {("medium", "ok"): 36, ("hard", "ok"): 36}
    assert summary.written == {("medium", "OK"): 36, ("hard", "OK"): 36}
    rows = _lines(out)
    assert len(rows) == 36
    for before, after, record in zip(source.rows, rows, source.records, strict=True):
        assert list(after) == list(before)  # same fields, same order
        for key in set(before) - REWRITE_FIELDS:
            assert json.dumps(after[key]) == json.dumps(before[key]), key
        assert after["rewrite_medium_status"] == after["rewrite_hard_status"] == "OK"
        assert after["query_medium"] not in (record.user_message, record.query_medium)
        assert after["query_hard"] != after["query_medium"]
        assert numbers(after["query_medium"]) >= numbers(record.user_message)
        assert numbers(after["query_hard"]) >= numbers(after["query_medium"])  # hard keeps every number
        names = [p for t in record.available_tools for p in t["function"]["parameters"].get("properties", {})]
        assert parameter_mentions(after["query_medium"], names) == []
    loaded = load_records(out)
    assert [r.expected_calls() for r in loaded] == [r.expected_calls() for r in source.records]
    assert [r.query("hard") for r in loaded] == [r["query_hard"] for r in rows]
    first = out.read_bytes()
    again = tooldiag.judgebench_rewrite("builtin", "ref/rewrite", out)  # resumes: nothing to do, same bytes
    assert again.ran == 0 and again.skipped == 72
    assert out.read_bytes() == first


def test_json_string_columns_stay_byte_identical_and_predict_reads_the_output(tmp_path):
    path, rows = _hub_style(tmp_path)
    out = tmp_path / "rewritten.jsonl"
    main(["judgebench", "rewrite", str(path), "--model", "ref/rewrite", "--out", str(out), "-q"])
    written = _lines(out)
    for before, after in zip(rows, written, strict=True):
        assert {k: v for k, v in after.items() if k not in REWRITE_FIELDS} == before
        assert isinstance(after["expected_responses"], str)
    summaries = tooldiag.judgebench_predict(tmp_path / "study", ["ref/jb-oracle"], records=str(out))
    assert summaries[0].statuses == {"ok": 9}  # 3 records x easy, medium, hard


def test_a_parameter_name_in_the_easy_query_is_written_as_plain_words(tmp_path):
    path, rows = _hub_style(tmp_path, n=1)
    rows[0]["user_message"] = "Look up employee_email=dana.reyes@northwind.com, then list devices for employee_id E-7."
    path.write_text(json.dumps(rows[0]) + "\n", "utf-8")
    tooldiag.judgebench_rewrite(path, "ref/rewrite", tmp_path / "out.jsonl")
    medium = _lines(tmp_path / "out.jsonl")[0]["query_medium"]
    assert "employee_email" not in medium and "employee_id" not in medium and "=" not in medium
    assert "dana.reyes@northwind.com" in medium and "E-7" in medium and "employee id" in medium


# --------------------------------------------------------------------------- failures over HTTP


@pytest.mark.parametrize(
    ("answer", "stored"),
    [
        (lambda request: Reply.say(json.dumps({"query": _query_of(request)})), "identical"),
        (lambda request: Reply.say(""), "empty"),
        (lambda request: Reply.say('```json\n{"rewritten": 1}\n```'), "unparseable"),
        (lambda request: Reply.fail(500), "error"),
    ],
)
def test_a_failed_rewrite_keeps_the_original_with_status_failed(tmp_path, answer, stored):
    path, rows = _hub_style(tmp_path, n=2)
    out = tmp_path / "out.jsonl"
    with FakeOpenAIServer(responder=answer) as server:
        options = ModelOptions(base_url=server.base_url, cache=False, max_retries=0)
        summary = tooldiag.judgebench_rewrite(path, "openai/fake", out, options=options, retries=1)
    assert summary.statuses == {("medium", stored): 2, ("hard", stored): 2}
    for before, after in zip(rows, _lines(out), strict=True):
        assert after["rewrite_medium_status"] == after["rewrite_hard_status"] == "FAILED"
        assert after["query_medium"] == after["query_hard"] == before["user_message"]
    if stored == "error":  # infrastructure errors are retried on the next run, the others are final
        with FakeOpenAIServer(responder=lambda r: Reply.say(json.dumps({"query": "Sort it: " + _query_of(r)}))) as ok:
            options = ModelOptions(base_url=ok.base_url, cache=False, max_retries=0)
            again = tooldiag.judgebench_rewrite(path, "openai/fake", out, options=options, retries=1)
        assert again.statuses == {("medium", "ok"): 2, ("hard", "ok"): 2}
        assert {r["rewrite_hard_status"] for r in _lines(out)} == {"OK"}


def test_plain_text_and_fenced_answers_are_read(tmp_path):
    path, _ = _hub_style(tmp_path, n=1)
    replies = iter(
        [Reply.say("<think>hm</think>Could you sort out ORD-1?"), Reply.say('```json\n{"query": "ORD-1."}\n```')]
    )
    with FakeOpenAIServer(responder=lambda request: next(replies)) as server:
        options = ModelOptions(base_url=server.base_url, cache=False, max_retries=0)
        tooldiag.judgebench_rewrite(path, "openai/fake", tmp_path / "o.jsonl", options=options, retries=0)
    row = _lines(tmp_path / "o.jsonl")[0]
    assert (row["query_medium"], row["query_hard"]) == ("Could you sort out ORD-1?", "ORD-1.")


# --------------------------------------------------------------------------- resume


class _Breaks(ModelBackend):
    """``ref/rewrite`` that raises after ``limit`` calls: a run killed midway."""

    def __init__(self, limit: int | None) -> None:
        self.inner = resolve_model("ref/rewrite")
        self.limit = limit
        self.calls = 0

    async def complete(self, request: ModelRequest) -> Emission:
        if self.limit is not None and self.calls >= self.limit:
            raise RuntimeError("killed")
        self.calls += 1
        return await self.inner.complete(request)


def test_an_interrupted_rewrite_resumes_without_redoing_or_duplicating(tmp_path):
    records = read_records_input("builtin").records[:6]
    with ConstructStore(tmp_path / "rewrite.sqlite") as store:
        broken = _Breaks(limit=5)
        with pytest.raises(RuntimeError, match="killed"):
            asyncio.run(rewrite_records(store, records, "ref/rewrite", broken, concurrency=2))
        assert store.count("rewrites") == 5
        first = store.rewrites()
        whole = _Breaks(limit=None)
        summary = asyncio.run(rewrite_records(store, records, "ref/rewrite", whole, concurrency=2))
        assert whole.calls == 12 - 5 and summary.ran == 7 and summary.skipped == 5
        assert store.count("rewrites") == 12
        assert all(store.rewrites()[key] == row for key, row in first.items())
        with pytest.raises(Exception, match="different settings"):
            asyncio.run(rewrite_records(store, records, "ref/other", whole))


# --------------------------------------------------------------------------- meta-judges

HAND_MADE = [
    # A: medium keeps every fact and is less explicit; hard loses "25"
    ("A", "Look up order ORD-1001, then refund 25 USD to card 4242.",
     "Hi! Could you find order ORD-1001 and refund 25 USD to card 4242? Thanks", "OK",
     "Order 1001, money back, card 4242 — you know what to do.", "OK"),
    # B: medium identical to easy (a paraphrase at best: not harder); hard loses "3"
    ("B", "Cancel booking BK-77 for 3 guests.", "Cancel booking BK-77 for 3 guests.", "OK", "Drop BK-77.", "OK"),
    # C: the medium rewrite FAILED (not judged); hard loses "2"
    ("C", "Send 2 reminders to team T-9.", "Send 2 reminders to team T-9.", "FAILED", "Nudge T-9 twice.", "OK"),
]  # fmt: skip


def _hand_made_file(tmp_path):
    template = read_records_input("builtin").rows[0]
    lines = []
    for rid, easy, medium, medium_status, hard, hard_status in HAND_MADE:
        row = dict(template, id=rid, user_message=easy, query_medium=medium, query_hard=hard)
        row.update(rewrite_medium_status=medium_status, rewrite_hard_status=hard_status)
        lines.append(json.dumps(row) + "\n")
    path = tmp_path / "hand.jsonl"
    path.write_text("".join(lines), "utf-8")
    return path


def test_ref_metajudge_votes_on_known_cases():
    assert heuristic_votes("Refund 25 USD on ORD-1001.", "Money back on 1001.", [])["preserved"] is False
    assert heuristic_votes("Email a@b.co, then call 555.", "Ping a@b.co about 555.", [])["preserved"] is True
    assert heuristic_votes("Cancel BK-77.", "cancel  BK-77", [])["hardened"] is False  # the same query
    assert heuristic_votes("Get order 5, then check stock of 7.", "Order 5 and stock 7?", [])["hardened"] is True
    assert heuristic_votes("Order 5 please.", "Could you kindly get me order 5 please?", [])["hardened"] is False


def test_metajudge_table_counts_and_unanimity_with_two_judges(tmp_path):
    path = _hand_made_file(tmp_path)

    def always_yes(request: RecordedRequest) -> Reply:
        if "T-9" in request.body["messages"][-1]["content"]:
            return Reply.say("Looks fine to me.")  # no vote: retried, then a null
        return Reply.say('{"preserved": "yes", "hardened": true, "reason": "fine"}')

    with FakeOpenAIServer(responder=always_yes) as server:
        options = ModelOptions(base_url=server.base_url, cache=False, max_retries=0)
        table, written = tooldiag.judgebench_metajudge(
            path, ["ref/metajudge", "openai/yes"], out=tmp_path / "mj", options=options, retries=1
        )
        asked = len(server.requests)
    assert asked == 4 + 2  # A and B on both transitions; C (medium->hard only) twice: one retry
    per_judge = {(r["transition"], r["judge"]): r for r in table.per_judge}
    ref_em, ref_mh = per_judge[("easy->medium", "ref/metajudge")], per_judge[("medium->hard", "ref/metajudge")]
    assert (ref_em["n"], ref_em["preserved"], ref_em["hardened"]) == (2, 2, 1)
    assert (ref_em["preserved_pct"], ref_em["hardened_pct"]) == (100.0, 50.0)
    assert (ref_mh["n"], ref_mh["preserved"], ref_mh["hardened"], ref_mh["preserved_pct"]) == (3, 0, 3, 0.0)
    yes_mh = per_judge[("medium->hard", "openai/yes")]
    assert (yes_mh["n"], yes_mh["preserved"], yes_mh["null"]) == (2, 2, 1)
    agreement = {(r["transition"], r["question"]): r for r in table.agreement}
    hardened_em = agreement[("easy->medium", "hardened")]  # the judges disagree on B only
    assert (hardened_em["n"], hardened_em["unanimous_yes"], hardened_em["unanimous_no"], hardened_em["split"]) == (
        2, 1, 0, 1,
    )  # fmt: skip
    assert hardened_em["unanimity_pct"] == 50.0
    assert agreement[("easy->medium", "preserved")]["unanimity_pct"] == 100.0
    preserved_mh = agreement[("medium->hard", "preserved")]  # C has a null: only A and B count
    assert (preserved_mh["n"], preserved_mh["split"], preserved_mh["unanimity_pct"]) == (2, 2, 0.0)
    assert {r["transition"]: (r["items"], r["failed_rewrites"]) for r in table.items} == {
        "easy->medium": (2, 1),
        "medium->hard": (3, 0),
    }
    names = sorted(p.name for p in written)
    assert names == ["table22.json", "table22.md", "table22_agreement.csv", "table22_judges.csv", "votes.jsonl"]
    assert len(_lines(tmp_path / "mj" / "votes.jsonl")) == 2 + 3 + 2 + 3
    assert (
        "| easy->medium | hardened | 2 | 2 | 1 | 50.0 | 0 | 0.0 | 1 | 50.0 |"
        in (tmp_path / "mj" / "table22.md").read_text()
    )
    # resumed with the same settings: every stored vote (the null too: a final outcome) is reused
    done = []
    again, _ = tooldiag.judgebench_metajudge(
        path, ["ref/metajudge"], out=tmp_path / "mj", retries=1, on_done=lambda name, s: done.append(s)
    )
    assert (done[0].ran, done[0].skipped) == (0, 5)
    assert again.per_judge == [r for r in table.per_judge if r["judge"] == "ref/metajudge"]


def test_metajudge_cli_on_a_rewrite(tmp_path, capsys):
    out = tmp_path / "rw.jsonl"
    main(["judgebench", "rewrite", "builtin", "-m", "ref/rewrite", "--out", str(out), "-q"])
    main(["judgebench", "metajudge", str(out), "-j", "ref/metajudge", "-q"])
    text = capsys.readouterr().out
    assert "| medium->hard | ref/metajudge | 36 | 36 | 100.0 | 36 | 100.0 | 0 | 0 |" in text
    assert (tmp_path / "rw.metajudge" / "table22_judges.csv").exists() and (tmp_path / "rw.run").is_dir()


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rewrite", "{d}/missing.jsonl", "-m", "ref/rewrite", "--out", "{d}/o.jsonl"], "does not exist"),
        (["rewrite", "{bfcl}", "-m", "ref/rewrite", "--out", "{d}/o.jsonl"], "is a BFCL result file, not an Agent"),
        (["rewrite", "{tau2}", "-m", "ref/rewrite", "--out", "{d}/o.jsonl"], "is a tau2 results file, not an Agent"),
        (["rewrite", "builtin", "-m", "nonsense", "--out", "{d}/o.jsonl"], "has no provider"),
        (["rewrite", "builtin", "-m", "ref/nope", "--out", "{d}/o.jsonl"], "unknown reference policy"),
        (["metajudge", "{d}/missing.jsonl", "-j", "ref/metajudge"], "does not exist"),
        (["metajudge", "{bfcl}", "-j", "ref/metajudge"], "is a BFCL result file"),
        (["metajudge", "{plain}", "-j", "ref/metajudge"], "hold no rewrites"),
        (["metajudge", "builtin", "-j", "nonsense"], "has no provider"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    from pathlib import Path

    data = Path(__file__).parents[2] / "data"
    plain, _ = _hub_style(tmp_path, n=1)
    where = {
        "{d}": str(tmp_path),
        "{bfcl}": str(data / "bfcl_results/api_fc/multi_turn/BFCL_v4_multi_turn_base_result.json"),
        "{tau2}": str(data / "tau2/retail_v0.json"),
        "{plain}": str(plain),
    }
    argv = ["judgebench"]
    for arg in args:
        for key, value in where.items():
            arg = arg.replace(key, value)
        argv.append(arg)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1
    assert not (tmp_path / "o.jsonl").exists()
