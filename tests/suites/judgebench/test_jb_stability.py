"""Repeated draws (``judge --samples K``): resumable draws, distinct cache entries, the canonical
verdict, and the stability table (flip rate, alpha, alignment spread) on known judges."""

from __future__ import annotations

import asyncio
import json
import math
import random
import statistics

import numpy as np
import pytest

from tests.support.fake_openai import FakeOpenAIServer, RecordedRequest, Reply
from tooldiag.api import load_judgebench
from tooldiag.errors import UserError
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.models.base import ModelBackend
from tooldiag.suites.judgebench.analysis import AnalysisSettings
from tooldiag.suites.judgebench.evaluations import load_evaluations
from tooldiag.suites.judgebench.generate import generation_config, predict
from tooldiag.suites.judgebench.judge import judge_predictions
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.suites.judgebench.report import analyze, render_markdown, write_report
from tooldiag.suites.judgebench.store import JudgeBenchStore

METRICS = ("tool_selection", "parameter_structure", "sequence", "coverage")
FAST = AnalysisSettings(n_resamples=50, workers=1)


@pytest.fixture(scope="module")
def records():
    return load_records()


def run_judge(store, judge, backend=None, **kw):
    return asyncio.run(judge_predictions(store, judge, backend or resolve_model(judge), **kw))


@pytest.fixture
def sloppy(tmp_path, records):
    """The sloppy reference generator's plans of the 36 built-in records (scores vary, some attrition)."""
    store = JudgeBenchStore(tmp_path / "run")
    asyncio.run(predict(store, records, "ref/jb-sloppy", resolve_model("ref/jb-sloppy")))
    yield store
    store.close()


class Counting(ModelBackend):
    """A reference judge that remembers the (sample, context sample, unit) of every request."""

    def __init__(self, judge: str) -> None:
        self.inner = resolve_model(judge)
        self.seen: list[tuple[int, int, str]] = []

    async def complete(self, request):
        key = request.context.answer_key
        self.seen.append((key["sample"], request.context.sample, key["unit"]))
        return await self.inner.complete(request)

    @property
    def deterministic(self) -> bool:
        return True


# --------------------------------------------------------------------------- the runner


def test_raising_k_adds_only_the_new_draws(sloppy):
    plans = len(sloppy.predictions(status="ok"))
    first = Counting("ref/jb-exact")
    assert run_judge(sloppy, "j", first, conditions=["with_gt"], samples=2).ran == 2 * plans
    assert sorted({s for s, _, _ in first.seen}) == [0, 1] and len(first.seen) == 2 * plans
    more = Counting("ref/jb-exact")
    summary = run_judge(sloppy, "j", more, conditions=["with_gt"], samples=3)
    assert summary.ran == plans and summary.skipped == 2 * plans
    assert {s for s, _, _ in more.seen} == {2} and len(more.seen) == plans  # one call per new draw, no redo
    again = Counting("ref/jb-exact")
    assert run_judge(sloppy, "j", again, conditions=["with_gt"], samples=3).ran == 0 and not again.seen
    rows = sloppy.db.execute("SELECT sample, COUNT(*) FROM judgements GROUP BY sample ORDER BY sample").fetchall()
    assert rows == [(0, plans), (1, plans), (2, plans)]


def test_draws_and_their_retries_never_share_a_sample_or_unit(sloppy):
    backend = Counting("ref/jb-flaky")
    run_judge(sloppy, "ref/jb-flaky", backend, conditions=["with_gt"], samples=3, retries=2)
    by_unit: dict[str, set[int]] = {}
    for draw, context_sample, unit in backend.seen:
        assert draw * 3 <= context_sample < (draw + 1) * 3  # draw s uses samples 3s .. 3s + 2
        by_unit.setdefault(unit, set()).add(draw)
    assert all(len(draws) == 1 for draws in by_unit.values())  # each draw has its own unit key
    first = {u for u, d in by_unit.items() if d == {0}}
    assert all(u.endswith("|with_gt|") for u in first)  # draw 0 keeps the one-draw key
    assert {u for u, d in by_unit.items() if d == {2}} == {u + "|2" for u in first}


def test_draw_zero_is_the_one_draw_run(tmp_path, sloppy):
    run_judge(sloppy, "ref/jb-flaky", conditions=["with_gt"], samples=3)
    single = JudgeBenchStore(tmp_path / "single")
    for gen, rid, diff, status, calls, _ in sloppy.db.execute(
        "SELECT generator, record_id, difficulty, status, calls, error FROM predictions"
    ):
        single.put_prediction(gen, rid, diff, status, json.loads(calls) if calls else None)
    single.add_records(sloppy.records().values())
    run_judge(single, "ref/jb-flaky", conditions=["with_gt"])
    columns = ", ".join(["generator", "record_id", "difficulty", "condition", "status", *METRICS, "verdict", "raw",
                         "attempts", "error", "prompt"])  # fmt: skip
    query = f"SELECT {columns} FROM judgements WHERE sample = 0 ORDER BY generator, record_id, difficulty"
    assert sloppy.db.execute(query).fetchall() == single.db.execute(query).fetchall()
    single.close()


def test_samples_below_one_are_refused(sloppy):
    with pytest.raises(UserError, match="--samples"):
        run_judge(sloppy, "ref/jb-exact", conditions=["with_gt"], samples=0)


def test_cache_keeps_one_draw_entries_and_gives_new_draws_their_own(tmp_path, monkeypatch):
    """Draw 0 of a K = 2 run is answered from the cache a K = 1 run filled (same keys as before);
    draw 1 reaches the server, even though draw 0's retry used sample 1."""
    monkeypatch.setenv("TOOLDIAG_CACHE_DIR", str(tmp_path / "cache"))
    records = load_records(limit=3)
    seen: dict[str, int] = {}

    def responder(request: RecordedRequest) -> Reply:
        prompt = request.body["messages"][0]["content"]
        seen[prompt] = seen.get(prompt, 0) + 1
        if seen[prompt] == 1:  # the first reply to each prompt is prose: the runner retries it
            return Reply.say("Looks fine to me.")
        body = {f"{m}_accuracy": {"accuracy": 1.0, "justification": "ok"} for m in METRICS[:3]}
        body["query_coverage_accuracy"] = {"accuracy": 1.0, "justification": "ok"}
        return Reply.say(json.dumps(body))

    with FakeOpenAIServer(responder=responder) as server:
        options = ModelOptions(base_url=server.base_url, max_retries=0)
        judge = resolve_model("openai/fake-judge", options)
        config = generation_config(0.0, None)
        counts = []
        for run, k in (("one", 1), ("two", 2)):
            with JudgeBenchStore(tmp_path / run) as store:
                store.add_records(records)
                for r in records:
                    store.put_prediction("gen", r.id, "easy", "ok", r.expected_calls())
                before = len(server.requests)
                summary = asyncio.run(
                    judge_predictions(store, "openai/fake-judge", judge, conditions=["with_gt"], config=config,
                                      samples=k, concurrency=1)
                )  # fmt: skip
                counts.append(len(server.requests) - before)
                assert summary.statuses[("with_gt", "ok")] == 3 * k
    assert counts == [2 * 3, 3]  # K = 1: prose + verdict per plan; K = 2: only draw 1 (a verdict) is asked


# --------------------------------------------------------------------------- the canonical verdict


def hand_store(tmp_path):
    """Two oracle plans (p = 1 on every metric) of one generator x difficulty, judged with hand-set draws."""
    records = load_records(limit=2)
    store = JudgeBenchStore(tmp_path / "hand")
    store.add_records(records)
    for r in records:
        store.put_prediction("gen", r.id, "easy", "ok", r.expected_calls())
    a, b = records[0].id, records[1].id
    draws = {
        a: [(1.0, 0.0, 0.5, 1.0), (0.0, 0.0, 1.0, None), (0.5, 1.0, 1.0, 1.0)],
        b: [(0.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 1.0), None],  # draw 2 stayed unparseable: a null
    }
    for rid, values in draws.items():
        for s, v in enumerate(values):
            status = "ok" if v is not None else "null"
            scored = dict(zip(METRICS, v, strict=True)) if v is not None else None
            store.put_judgement("j", "gen", rid, "easy", "with_gt", status, scored, None, None, 1, None, "t", sample=s)
    return store, a, b


def test_canonical_verdict_is_the_median_of_parsed_draws(tmp_path):
    store, a, b = hand_store(tmp_path)
    data = load_evaluations(store)
    frame = data.frame.set_index("record_id")
    # a: medians of (1, 0, .5), (0, 0, 1), (.5, 1, 1) and of (1, 1): the omitted coverage does not vote
    assert frame.loc[a, [f"l_{m}" for m in METRICS]].tolist() == [0.5, 0.0, 1.0, 1.0]
    # b: two parsed draws, 0 and 1 -> 0.5 (mean of the two middle values); the null draw does not vote
    assert frame.loc[b, [f"l_{m}" for m in METRICS]].tolist() == [0.5, 1.0, 1.0, 1.0]
    assert list(data.frame.columns) == ["judge", "generator", "difficulty", "condition", "record_id", "dag_type",
                                        *(f"p_{m}" for m in METRICS), *(f"l_{m}" for m in METRICS)]  # fmt: skip
    assert len(data.draws) == 5 and sorted(data.draws["sample"]) == [0, 0, 1, 1, 2]
    report = analyze(data, FAST)
    cells = report.tables["cells"]
    assert cells["alignment"].tolist() == [pytest.approx(100 * (0.625 + 0.875) / 2)]  # p = 1: alignment = ℓ
    nulls = report.tables["nulls"]
    assert nulls[["ok", "null"]].values.tolist() == [[5, 1]]  # the null table counts every draw
    store.close()


def test_stability_of_the_hand_store(tmp_path):
    store, _, _ = hand_store(tmp_path)
    row = analyze(load_evaluations(store), FAST).tables["stability"].iloc[0]
    # bins (≤.1 -> 0, ≥.9 -> 2, else 1; omitted -> its own outcome) per metric and plan:
    # a: (2,0,1) (0,0,2) (1,2,2) (2,-,2) all flip; b: (0,2) flips, three metrics agree
    assert (row["draws"], row["plans"], row["units"], row["flips"]) == (3, 2, 8, 5)
    assert row["flip_pct"] == pytest.approx(62.5)
    per_draw = [100 * (0.625 + 0.75) / 2, 100 * (0.25 + 1.0) / 2, 100 * 0.875]  # omitted coverage counts 0
    assert (row["alignment_min"], row["alignment_max"]) == pytest.approx((min(per_draw), max(per_draw)))
    assert row["alignment_sd"] == pytest.approx(statistics.stdev(per_draw))
    assert row["cell_range_max"] == pytest.approx(max(per_draw) - min(per_draw))
    assert -1 < row["alpha"] < 1
    store.close()


def test_one_draw_has_no_stability_table(tmp_path, sloppy):
    run_judge(sloppy, "ref/jb-exact", conditions=["with_gt"])
    data = load_evaluations(sloppy)
    assert data.draws is None
    report = analyze(data, FAST)
    assert "stability" not in report.tables and "Stability across" not in render_markdown(report)
    assert load_judgebench(sloppy.run_dir, "stability", resamples=50).empty


# --------------------------------------------------------------------------- reference judges


def test_exact_judge_is_perfectly_stable(tmp_path, sloppy):
    run_judge(sloppy, "ref/jb-exact", conditions=["with_gt", "without_gt"], samples=3)
    data = load_evaluations(sloppy)
    report = analyze(data, FAST)
    table = report.tables["stability"]
    assert table["condition"].tolist() == ["with_gt", "without_gt"]
    assert (table["flip_pct"] == 0).all() and (table["alpha"] == 1).all()
    assert (table["alignment_sd"] == 0).all() and (table["alignment_min"] == 100).all()
    write_report(report, tmp_path / "out", ("json", "md"))
    payload = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [r["flip_pct"] for r in payload["tables"]["stability"]] == [0, 0]
    assert "## Stability across repeated draws" in (tmp_path / "out" / "report.md").read_text()


def flaky_replay(unit: str, attempts: int) -> tuple[bool, bool]:
    """(parsed, omits sequence) of one ref/jb-flaky draw, replayed from its documented process."""
    rng = random.Random(f"jb-flaky:{unit}")
    u = rng.random()
    parsed = u >= 0.08 and (attempts > 1 or u >= 0.25)
    return parsed, parsed and rng.random() < 0.08


@pytest.mark.parametrize("k", [3, 4])
def test_flaky_judge_flip_rate_matches_its_documented_noise(sloppy, k):
    run_judge(sloppy, "ref/jb-flaky", conditions=["with_gt"], samples=k, retries=2)
    row = analyze(load_evaluations(sloppy), FAST).tables["stability"].iloc[0]
    units = flipped = 0
    for p in sloppy.predictions(status="ok"):
        unit = f"{p['generator']}|{p['record_id']}|{p['difficulty']}|with_gt|"
        outcomes = [flaky_replay(unit + (f"|{s}" if s else ""), attempts=3) for s in range(k)]
        omits = [omit for parsed, omit in outcomes if parsed]
        if len(omits) >= 2:
            units += 4  # four metrics; values are exact, so only sequence (omitted or not) can flip
            flipped += len(set(omits)) > 1
    assert (row["units"], row["flips"]) == (units, flipped) and flipped > 0
    assert row["flip_pct"] == pytest.approx(100 * flipped / units)
    # and the analytic expectation: parsed draws n ~ Bin(k, .92); a sequence unit flips unless all n agree
    q = a = 0.92
    weights = {n: math.comb(k, n) * q**n * (1 - q) ** (k - n) for n in range(2, k + 1)}
    expected = sum(w * (1 - a**n - (1 - a) ** n) for n, w in weights.items()) / sum(weights.values())
    share, plans = flipped / (units / 4), units / 4
    assert abs(share - expected) < 4 * math.sqrt(expected * (1 - expected) / plans)
    assert row["alpha"] == 1.0  # the values never change, only whether sequence is reported
    assert np.isfinite(row["alignment_sd"]) and row["alignment_sd"] > 0


def test_cli_samples_and_the_json_table(tmp_path, capsys):
    from tooldiag.cli.main import main

    run = str(tmp_path / "run")
    main(["judgebench", "predict", "-g", "ref/jb-perturb", "--run-dir", run, "--limit", "6", "-q"])
    judge = ["judgebench", "judge", "-j", "ref/jb-flaky", "--run-dir", run, "-q", "--conditions", "with_gt"]
    with pytest.raises(SystemExit) as refused:
        main([*judge, "--samples", "0"])
    assert refused.value.code == 2
    main([*judge, "--samples", "3"])
    main(["judgebench", "analyze", "--run-dir", run, "--resamples", "50", "--formats", "json"])
    capsys.readouterr()
    table = json.loads((tmp_path / "run" / "report" / "report.json").read_text())["tables"]["stability"]
    assert [(r["judge"], r["condition"], r["draws"]) for r in table] == [("ref/jb-flaky", "with_gt", 3)]
