"""``judgebench predict|judge --executor ray``: the units of one step as Ray tasks, one writer.

A unit is one generator call (record x difficulty) for ``predict``, one verdict (plan x condition x
draw, a bias probe's rewrite included) for ``judge``. Units travel as small tuples of ids and the
plan's calls; what every unit needs (the records, the prompt templates, the generation config, the
model string and its options) travels once per task as a picklable *payload*. Each worker rebuilds
the model from the payload and runs the very same :func:`~tooldiag.suites.judgebench.judge.judge_unit`
or :func:`~tooldiag.suites.judgebench.generate.plan_unit` a local run runs; the results come back to
the driver, which stores them with the same ``commit`` a local run uses
(:mod:`tooldiag.runner.ray_units` over :mod:`tooldiag.runner.ray_executor`). So the stored rows,
resume after ``kill -9`` and the report do not depend on the executor; a worker or node that dies
has its chunk resubmitted (counted in the summary), and its units were never stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tooldiag.models.base import ModelOptions
from tooldiag.models.registry import resolve_model
from tooldiag.runner import run_pool
from tooldiag.runner.ray_units import ExecutorCounts, run_units_on_ray
from tooldiag.suites.judgebench.generate import PlanRow, plan_unit
from tooldiag.suites.judgebench.judge import JudgeSetup, Verdict, _Plan, _PromptTexts, judge_unit
from tooldiag.suites.judgebench.prompts import PromptTemplate
from tooldiag.suites.judgebench.records import JudgeBenchRecord
from tooldiag.trajectory import GenerationConfig

#: A judge unit on the wire: (record id, shown record id or None, generator, difficulty, calls,
#: condition, sample, variant).
JudgeUnit = tuple[str, str | None, str, str, list[dict[str, Any]], str, int, str]


@dataclass(frozen=True)
class JudgePayload:
    """What every judge worker needs: the judge's setup, its model options, the records the units name."""

    setup: JudgeSetup
    options: ModelOptions
    records: dict[str, JudgeBenchRecord]


@dataclass(frozen=True)
class PredictPayload:
    """What every generator worker needs."""

    generator: str
    template: PromptTemplate
    config: GenerationConfig
    options: ModelOptions
    records: dict[str, JudgeBenchRecord]


def _require(options: ModelOptions | None) -> ModelOptions:
    if options is None:
        raise ValueError("--executor ray needs the model options, to rebuild the model in every worker")
    return options


def judge_on_ray(
    plans: Sequence[_Plan],
    setup: JudgeSetup,
    options: ModelOptions | None,
    records: dict[str, JudgeBenchRecord],
    concurrency: int,
    commit: Callable[[Verdict], None],
    counts: ExecutorCounts,
    address: str | None = None,
) -> None:
    """Judge ``plans`` as Ray tasks; ``commit`` stores each verdict here, in the driver."""
    units: list[JudgeUnit] = [
        (
            plan.record.id,
            plan.shown.id if plan.shown is not None else None,
            plan.generator,
            plan.difficulty,
            plan.calls,
            plan.condition,
            plan.sample,
            plan.variant,
        )
        for plan in plans
    ]
    wanted = {unit[0] for unit in units} | {unit[1] for unit in units if unit[1] is not None}
    payload = JudgePayload(setup, _require(options), {rid: records[rid] for rid in sorted(wanted)})
    run_units_on_ray(units, judge_shard, payload, concurrency, commit, counts, address)


async def judge_shard(payload: JudgePayload, units: list[Any], concurrency: int, emit: Callable[[Any], None]) -> None:
    """A Ray worker's entry point: the verdicts of ``units``, each emitted as it finishes."""
    texts = _PromptTexts(payload.records)
    records = payload.records
    plans = [
        _Plan(records[rid], records[shown] if shown is not None else None, gen, diff, calls, cond, texts, sample, var)
        for rid, shown, gen, diff, calls, cond, sample, var in units
    ]
    backend = resolve_model(payload.setup.judge, replace(payload.options, concurrency=concurrency))
    try:
        await run_pool(plans, lambda plan: judge_unit(backend, payload.setup, plan), concurrency, lambda _, v: emit(v))
    finally:
        await backend.aclose()


def predict_on_ray(
    units: Sequence[tuple[JudgeBenchRecord, str]],
    generator: str,
    template: PromptTemplate,
    config: GenerationConfig,
    options: ModelOptions | None,
    concurrency: int,
    commit: Callable[[PlanRow], None],
    counts: ExecutorCounts,
    address: str | None = None,
) -> None:
    """Plan ``units`` (record, difficulty) as Ray tasks; ``commit`` stores each plan in the driver."""
    records = {record.id: record for record, _ in units}
    payload = PredictPayload(generator, template, config, _require(options), records)
    wire = [(record.id, difficulty) for record, difficulty in units]
    run_units_on_ray(wire, predict_shard, payload, concurrency, commit, counts, address)


async def predict_shard(
    payload: PredictPayload, units: list[Any], concurrency: int, emit: Callable[[Any], None]
) -> None:
    """A Ray worker's entry point: the plans of ``units`` ((record id, difficulty)), each emitted."""
    backend = resolve_model(payload.generator, replace(payload.options, concurrency=concurrency))

    async def one(unit: Any) -> PlanRow:
        record_id, difficulty = unit
        return await plan_unit(
            backend, payload.generator, payload.template, payload.config, payload.records[record_id], difficulty
        )

    try:
        await run_pool(units, one, concurrency, lambda _, row: emit(row))
    finally:
        await backend.aclose()
