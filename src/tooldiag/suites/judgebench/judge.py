"""Judge runner: K verdicts (draws) per (judge, generator output, condition), resumable.

Each stored plan that parsed (status ``ok``) is judged under every requested condition
(:mod:`tooldiag.suites.judgebench.conditions`). A reply is parsed robustly
(:mod:`tooldiag.suites.judgebench.parsing`); an unparseable reply is retried ``retries``
times as new draws (:func:`tooldiag.judges.draw_until_parsed`; the paper: "rerun twice, then
excluded") and then stored as ``null``, which the analysis reports and never counts as
agreement or disagreement. Prometheus conditions make four single-metric absolute-grading
calls and merge their 1-5 grades into one verdict (grade g -> (g - 1) / 4); a metric whose
calls all fail is missing, and a unit with no metric at all is null.

A model call that fails for infrastructure reasons (after the provider's own retries) is
stored as ``error`` and retried on the next run; a fatal one (bad key, unknown model) stops
the run with one line.

Repeated draws (``samples`` = K > 1) ask the same request K times at the judge's temperature
and store draw ``s`` with ``sample=s``; each (plan, condition, draw) is its own unit, so a resume
runs only the missing ones, and raising K later adds draws K_old..K-1. The samples sent to the
model (which the response cache keys on) are ``s * (retries + 1) + attempt``: draw 0 keeps the
numbering of a one-draw run (its cache entries and verdicts are unchanged) and no draw or retry
collides with another's. This relies on ``retries`` being pinned in the judge settings; K is not
pinned, since a run with more (or fewer) draws than before is still consistent.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tooldiag.errors import ModelCallError, StoreError, UserError
from tooldiag.judges.reply import draw_until_parsed
from tooldiag.metrics.structural import METRICS
from tooldiag.models.base import ModelBackend, ModelOptions, TaskContext
from tooldiag.runner import NullProgress, ProgressSink
from tooldiag.runner.ray_units import ExecutorCounts, check_executor_options
from tooldiag.suites.judgebench.conditions import (
    CONDITIONS,
    derangement_basis,
    derangement_map,
    group_by_dag,
    parse_conditions,
)
from tooldiag.suites.judgebench.generate import check_difficulties, fatal, run_units
from tooldiag.suites.judgebench.parsing import (
    JudgeVerdict,
    parse_judge_reply,
    parse_prometheus_reply,
    prometheus_to_unit,
)
from tooldiag.suites.judgebench.probes import check_probes, order_rewrite, plan_seed
from tooldiag.suites.judgebench.prompts import PromptTemplate, load_rubrics, load_template
from tooldiag.suites.judgebench.records import DIFFICULTIES, JudgeBenchRecord
from tooldiag.suites.judgebench.store import JudgeBenchStore
from tooldiag.trajectory import GenerationConfig

DEFAULT_RETRIES = 2


@dataclass
class JudgeSummary:
    judge: str
    ran: int = 0
    skipped: int = 0
    #: (condition, status) -> count over the units this call ran.
    statuses: Counter = field(default_factory=Counter)
    #: Replies that needed at least one retry.
    retried: int = 0
    #: Parsed replies that lacked at least one metric.
    missing_metric: int = 0
    #: ``--probe`` units (condition x plan) whose plan has no distinct rewrite, so were not re-judged.
    probe_no_rewrite: int = 0
    wall_s: float = 0.0
    #: ``--executor`` and, with Ray, the units retried and the workers lost.
    executor: ExecutorCounts = field(default_factory=ExecutorCounts)


def openai_style(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A stored plan as the released ``generated_tool_calls`` shape shown to judges."""
    return [{"function": {"name": c["name"], "arguments": c.get("arguments", {})}} for c in calls]


@dataclass
class _Plan:
    """Everything one condition needs to judge one stored plan."""

    record: JudgeBenchRecord
    shown: JudgeBenchRecord | None
    generator: str
    difficulty: str
    calls: list[dict[str, Any]]
    condition: str
    #: (record id, field) -> the field as prompt text, shared by all units of one run.
    texts: _PromptTexts
    #: The draw index (0 for the first verdict of this plan and condition).
    sample: int = 0
    #: ``""`` for the plan as generated, else the bias probe whose rewrite ``calls`` holds.
    variant: str = ""


async def judge_predictions(
    store: JudgeBenchStore,
    judge: str,
    backend: ModelBackend,
    *,
    conditions: Sequence[str] = ("with_gt", "without_gt"),
    generators: Sequence[str] | None = None,
    difficulties: Sequence[str] = DIFFICULTIES,
    config: GenerationConfig | None = None,
    retries: int = DEFAULT_RETRIES,
    samples: int = 1,
    seed: int = 42,
    concurrency: int = 8,
    prompt_dir: str | Path | None = None,
    progress: ProgressSink | None = None,
    probes: Sequence[str] = (),
    executor: str = "local",
    ray_address: str | None = None,
    options: ModelOptions | None = None,
) -> JudgeSummary:
    """Judge every stored plan (optionally only some generators/difficulties) not yet judged.

    ``progress`` hears of every stored verdict, tallied by status. ``samples`` is the number of
    draws K per plan and condition (see the module docstring). ``probes`` (``order``) also
    judges each plan's bias-probe rewrite (:mod:`tooldiag.suites.judgebench.probes`), stored with
    ``variant`` = the probe's name; the rewrite is seeded by ``seed`` and the plan.

    ``executor="ray"`` judges the units as Ray tasks (on the cluster at ``ray_address``, or a local
    Ray), each worker rebuilding the judge from ``options``; this process stays the only writer,
    so the stored rows, resume and the summary are a local run's (plus the executor's counts).
    """
    started = time.perf_counter()
    progress = progress or NullProgress()
    config = config or GenerationConfig()
    conditions = parse_conditions(list(conditions))
    difficulties = check_difficulties(difficulties)
    if retries < 0:
        raise UserError(f"--retries must be 0 or more, got {retries}", hint="the paper used 2")
    if samples < 1:
        raise UserError(f"--samples must be 1 or more, got {samples}", hint="e.g. --samples 3 for three draws")
    check_executor_options(executor, ray_address)
    records = store.records()
    predictions = [p for p in store.predictions(generators, status="ok") if p["difficulty"] in difficulties]
    if not predictions:
        raise StoreError(
            f"no usable generator outputs in {store.run_dir} for the chosen generators/difficulties",
            hint="run `tooldiag judgebench predict` first (outputs that did not parse are never judged)",
        )
    templates = {c: load_template(CONDITIONS[c].template, prompt_dir) for c in conditions}
    rubrics, rubric_tag = load_rubrics(prompt_dir) if any(CONDITIONS[c].per_metric for c in conditions) else ({}, None)
    corrupted: dict[str, str] = {}
    if "corrupted_gt" in conditions:
        corrupted = derangement_map(group_by_dag((r.id, r.dag_type) for r in records.values()), seed)
        store.pin_meta("corrupted_gt_basis", derangement_basis(records, seed), "C3 derangement (seed and record set)")
    for condition in conditions:
        settings: dict[str, Any] = {
            "generation": config.model_dump(mode="json", exclude={"timeout_s"}),
            "prompt": templates[condition].tag,
            "retries": retries,
        }
        if CONDITIONS[condition].per_metric:
            settings["rubrics"] = rubric_tag
        if condition == "corrupted_gt":
            settings["seed"] = seed
        store.pin_settings("judge", judge, condition, settings)

    probes = check_probes(probes)
    if probes:
        store.pin_meta("probe_seed", str(seed), "probe seed")
    summary = JudgeSummary(judge, executor=ExecutorCounts(executor))
    done = store.finished_judgements(judge)
    units: list[_Plan] = []
    texts = _PromptTexts(records)
    for condition in conditions:
        reference = CONDITIONS[condition].reference
        for pred in predictions:
            for sample in range(samples):
                key = (pred["generator"], pred["record_id"], pred["difficulty"], condition, sample, "")
                if key in done:
                    summary.skipped += 1
                    continue
                record = records[pred["record_id"]]
                shown = {"own": record, "corrupted": records.get(corrupted.get(record.id, ""), record), None: None}[
                    reference
                ]
                units.append(
                    _Plan(record, shown, pred["generator"], pred["difficulty"], pred["calls"], condition, texts, sample)
                )
        for probe in probes:  # bias probes judge one draw (sample 0) of each plan's rewrite
            for pred in predictions:
                if (pred["generator"], pred["record_id"], pred["difficulty"], condition, 0, probe) in done:
                    summary.skipped += 1
                    continue
                record = records[pred["record_id"]]
                rewrite = order_rewrite(
                    record, pred["calls"], plan_seed(seed, pred["generator"], record.id, pred["difficulty"])
                )
                if rewrite is None:
                    summary.probe_no_rewrite += 1
                    continue
                shown = {"own": record, "corrupted": records.get(corrupted.get(record.id, ""), record), None: None}[
                    reference
                ]
                units.append(
                    _Plan(
                        record,
                        shown,
                        pred["generator"],
                        pred["difficulty"],
                        rewrite.calls,
                        condition,
                        texts,
                        variant=probe,
                    )
                )
    progress.start(len(units) + summary.skipped, summary.skipped)

    setup = JudgeSetup(judge, templates, rubrics, config, retries)

    def commit(verdict: Verdict) -> None:
        """The one writer's share of a unit: store its verdict, count it, report progress."""
        store.put_judgement(*verdict.row(), sample=verdict.sample, variant=verdict.variant)
        summary.statuses[(verdict.condition + (f"+{verdict.variant}" if verdict.variant else ""), verdict.status)] += 1
        summary.ran += 1
        if verdict.attempts > (4 if CONDITIONS[verdict.condition].per_metric else 1):
            summary.retried += 1
        if verdict.status == "ok" and verdict.values and any(verdict.values.get(m) is None for m in METRICS):
            summary.missing_metric += 1
        progress.advance(verdict.status)

    if executor == "ray":
        from tooldiag.suites.judgebench.distributed import judge_on_ray

        try:
            judge_on_ray(units, setup, options, records, concurrency, commit, summary.executor, ray_address)
        finally:
            progress.finish()
            await backend.aclose()
        summary.wall_s = time.perf_counter() - started
        return summary

    batches = _CommitBatches(store)

    def commit_in_batch(verdict: Verdict) -> None:
        batches.hold()
        commit(verdict)
        batches.count()

    async def work(plan: _Plan) -> None:
        commit_in_batch(await judge_unit(backend, setup, plan))

    try:
        return await run_units(
            units, work, concurrency, progress=progress, backend=backend, summary=summary, started=started
        )
    finally:
        batches.flush()


class _CommitBatches:
    """The local run's verdicts committed in groups: up to ``rows`` per commit, and none held longer
    than ``delay_s`` after the first of its group (a timer on the event loop, so a slow judge's last
    verdicts are committed while it thinks about the next ones).

    Why: with the store's WAL journal at ``synchronous = NORMAL`` a commit of its own cost about as
    much CPU as the rest of storing a verdict (issue 16). What a kill at any moment loses is still
    only what the store never committed (the verdicts in flight, and those of at most the last
    ``delay_s``), which the same command judges again; the primary key keeps any duplicate out. A
    Ray run (whose driver blocks the event loop while it waits for results) commits each verdict.
    """

    def __init__(self, store: JudgeBenchStore, rows: int = 64, delay_s: float = 0.2) -> None:
        self.store = store
        self.rows = rows
        self.delay_s = delay_s
        self.pending = 0
        self.timer: asyncio.TimerHandle | None = None

    def hold(self) -> None:
        """Before a write: open a group (and its timer) unless one is open."""
        if self.pending == 0 and self.timer is None:
            self.store.begin_batch()
            self.timer = asyncio.get_running_loop().call_later(self.delay_s, self.flush)

    def count(self) -> None:
        """After a write: commit the group once it holds ``rows`` verdicts."""
        self.pending += 1
        if self.pending >= self.rows:
            self.flush()

    def flush(self) -> None:
        """Commit the open group now (also at the end of the run, however it ends)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.pending = 0
        self.store.commit_batch()


@dataclass(frozen=True)
class JudgeSetup:
    """What judging any unit needs besides the plan: picklable, so a Ray worker gets it as is."""

    judge: str
    templates: dict[str, PromptTemplate]
    rubrics: dict[str, str]
    config: GenerationConfig
    retries: int


@dataclass(frozen=True)
class Verdict:
    """One unit's outcome, as :meth:`JudgeBenchStore.put_judgement` stores it (computed anywhere,
    stored by the one writer)."""

    judge: str
    generator: str
    record_id: str
    difficulty: str
    condition: str
    status: str
    values: dict[str, float | None] | None
    verdict: dict[str, Any] | None
    raw: Any
    attempts: int
    error: str | None
    prompt: str
    sample: int = 0
    variant: str = ""

    def row(self) -> tuple[Any, ...]:
        """The positional arguments of ``put_judgement`` (``sample`` and ``variant`` are keywords)."""
        return (
            self.judge, self.generator, self.record_id, self.difficulty, self.condition, self.status,
            self.values, self.verdict, self.raw, self.attempts, self.error, self.prompt,
        )  # fmt: skip


async def judge_unit(backend: ModelBackend, setup: JudgeSetup, plan: _Plan) -> Verdict:
    """Ask ``backend`` for the verdict of one unit (plan x condition x draw); a fatal model error
    raises one :class:`UserError`, any other failed call is an ``error`` verdict (retried on resume)."""
    condition = CONDITIONS[plan.condition]
    template = setup.templates[plan.condition]
    raw: list[str | None] | dict[str, list[str | None]] | None
    error: str | None
    try:
        if condition.per_metric:
            status, values, verdict, raw, attempts = await _per_metric(
                backend, plan, template, setup.rubrics, setup.config, setup.retries
            )
        else:
            status, values, verdict, raw, attempts = await _single(backend, plan, template, setup.config, setup.retries)
    except ModelCallError as exc:
        if exc.fatal:
            raise fatal(setup.judge, exc) from None
        status, values, verdict, raw, attempts = "error", None, None, None, 0
        error = exc.message
    else:
        error = None if status == "ok" else "unparseable after retries"
    return Verdict(
        setup.judge,
        plan.generator,
        plan.record.id,
        plan.difficulty,
        plan.condition,
        status,
        values,
        verdict,
        raw,
        attempts,
        error,
        template.tag,
        plan.sample,
        plan.variant,
    )


class _PromptTexts(dict):
    """Records' tools and references as prompt text (JSON, indent 2, as released), rendered once.

    Also each plan's calls as prompt text and each record's reference calls, kept for the run: a
    plan is judged under every condition, draw and Prometheus metric, and ``json.dumps`` with an
    indent runs in pure Python, so rendering the calls per request was the largest share of a
    judge call's own CPU (issue 16). The text is the one :meth:`PromptTemplate.render` would make.
    """

    def __init__(self, records: dict[str, JudgeBenchRecord]) -> None:
        super().__init__()
        self.records = records
        self.plan_calls: dict[tuple[str, str, str, str], str] = {}
        self.reference: dict[str, list[dict[str, Any]]] = {}

    def calls_text(self, plan: _Plan) -> str:
        """``plan``'s calls in the released shape, as the template renders a list (indent 2)."""
        key = (plan.generator, plan.record.id, plan.difficulty, plan.variant)
        text = self.plan_calls.get(key)
        if text is None:
            text = json.dumps(openai_style(plan.calls), indent=2, ensure_ascii=False)
            self.plan_calls[key] = text
        return text

    def expected_calls(self, record: JudgeBenchRecord) -> list[dict[str, Any]]:
        """``record.expected_calls()``, computed once per record (the reference judges only read it)."""
        calls = self.reference.get(record.id)
        if calls is None:
            calls = self.reference[record.id] = record.expected_calls()
        return calls

    def __missing__(self, key: tuple[str, str]) -> str:
        record_id, field_name = key
        text = json.dumps(getattr(self.records[record_id], field_name), indent=2, ensure_ascii=False)
        self[key] = text
        return text


def _prompt_values(plan: _Plan) -> dict[str, Any]:
    values: dict[str, Any] = {
        "user_message": plan.record.query(plan.difficulty),
        "available_tools": plan.texts[(plan.record.id, "available_tools")],
        "generated_tool_calls": plan.texts.calls_text(plan),
    }
    if plan.shown is not None:
        values["expected_responses"] = plan.texts[(plan.shown.id, "expected_responses")]
    return values


def _context(plan: _Plan, attempt: int, metric: str | None = None) -> TaskContext:
    """What attempt ``attempt`` of draw ``plan.sample`` tells the backend.

    ``draw_until_parsed`` sets the context's ``sample`` (``first_sample + attempt``); the answer
    key's ``unit`` (which seeds the ``ref/jb-*`` judges' noise) gains ``|s`` for draws ``s > 0``, so
    reference judges make independent draws too and draw 0 keeps the key of a one-draw run, and
    ``|probe`` for a bias probe's rewrite.
    """
    unit = f"{plan.generator}|{plan.record.id}|{plan.difficulty}|{plan.condition}|{metric or ''}"
    return TaskContext(
        suite="judgebench",
        case_id=plan.record.id,
        category=plan.condition,
        step_index=attempt,
        sample=attempt,
        answer_key={
            "role": "judge",
            "condition": plan.condition,
            "difficulty": plan.difficulty,
            "expected_calls": plan.texts.expected_calls(plan.record),
            "reference_calls": plan.texts.expected_calls(plan.shown) if plan.shown is not None else None,
            "predicted_calls": plan.calls,
            "metric": metric,
            "attempt": attempt,
            "sample": plan.sample,
            "unit": unit + (f"|{plan.sample}" if plan.sample else "") + (f"|{plan.variant}" if plan.variant else ""),
        },
    )


async def _single(
    backend: ModelBackend, plan: _Plan, template: PromptTemplate, config: GenerationConfig, retries: int
) -> tuple[str, dict[str, float | None] | None, dict[str, Any] | None, list[str | None], int]:
    messages = [template.message(**_prompt_values(plan))]
    draws = await draw_until_parsed(
        backend,
        messages,
        config,
        parse_judge_reply,
        retries=retries,
        context=lambda attempt: _context(plan, attempt),
        first_sample=plan.sample * (retries + 1),
    )
    verdict = draws.value
    if verdict is None:
        return "null", None, None, draws.texts, draws.attempts
    return "ok", verdict.values, verdict.as_released(), draws.texts, draws.attempts


async def _per_metric(
    backend: ModelBackend,
    plan: _Plan,
    template: PromptTemplate,
    rubrics: dict[str, str],
    config: GenerationConfig,
    retries: int,
) -> tuple[str, dict[str, float | None] | None, dict[str, Any] | None, dict[str, list[str | None]], int]:
    base = _prompt_values(plan)
    values: dict[str, float | None] = {}
    texts: dict[str, list[str | None]] = {}
    attempts = 0
    for metric in METRICS:
        rubric = rubrics.get(metric)
        if rubric is None:
            raise UserError(f"the Prometheus rubrics lack a '## {metric}' section", hint="fix prometheus_rubrics.txt")
        messages = [template.message(**base, criterion=metric.replace("_", " "), rubric=rubric)]
        draws = await draw_until_parsed(
            backend,
            messages,
            config,
            parse_prometheus_reply,
            retries=retries,
            context=partial(_context, plan, metric=metric),
            first_sample=plan.sample * (retries + 1),
        )
        texts[metric] = draws.texts
        attempts += draws.attempts
        values[metric] = prometheus_to_unit(draws.value) if draws.value is not None else None
    if all(v is None for v in values.values()):
        return "null", None, None, texts, attempts
    verdict = JudgeVerdict(values, {m: "" for m in METRICS}, None).as_released()
    return "ok", values, verdict, texts, attempts
