"""Generator runner: single-shot, stateless planning in native function-calling mode.

For each record and difficulty the generator gets one request: a system prompt (the planning
instructions of ``prompts/generator.txt`` followed by the record's ``system_prompt``), the
query at that difficulty, and the record's tools. Its answer is read as a plan: the native
tool calls, or else a JSON array in the text (the released generator prompt asked for one).
An empty plan or one that cannot be read is *attrition*: stored with its reason, counted per
generator and difficulty, and excluded from judging (paper App. D: ≈5.7 % of inputs).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from tooldiag.errors import ModelCallError, UserError
from tooldiag.models.base import ModelBackend, ModelOptions, TaskContext
from tooldiag.runner import NullProgress, ProgressSink, run_pool
from tooldiag.runner.ray_units import ExecutorCounts, check_executor_options
from tooldiag.suites.judgebench.parsing import calls_from_text
from tooldiag.suites.judgebench.prompts import PromptTemplate, load_template
from tooldiag.suites.judgebench.records import DIFFICULTIES, JudgeBenchRecord
from tooldiag.suites.judgebench.store import JudgeBenchStore
from tooldiag.trajectory import Emission, GenerationConfig, Message, ToolCall


def generation_config(
    temperature: float | None,
    thinking: bool | None,
    max_tokens: int | None = None,
    base: GenerationConfig | None = None,
) -> GenerationConfig:
    """A request config; ``thinking`` on/off becomes vLLM/SGLang ``chat_template_kwargs.enable_thinking``."""
    config = (base or GenerationConfig()).model_copy(deep=True)
    config.temperature = temperature
    if max_tokens is not None:
        config.max_tokens = max_tokens
    if thinking is not None:
        kwargs = dict(config.extra_body.get("chat_template_kwargs") or {})
        kwargs["enable_thinking"] = thinking
        config.extra_body["chat_template_kwargs"] = kwargs
    return config


class _Timed(Protocol):
    wall_s: float


#: A unit of model work, and the step's summary (any summary with ``wall_s``).
Unit = TypeVar("Unit")
S = TypeVar("S", bound=_Timed)


def fatal(model: str, exc: ModelCallError) -> UserError:
    return UserError(
        f"{model}: {exc.message}", hint="check the model string, endpoint and API key, then re-run to resume"
    )


async def run_units(
    units: Sequence[Unit],
    work: Callable[[Unit], Awaitable[None]],
    concurrency: int,
    *,
    progress: ProgressSink,
    backend: ModelBackend,
    summary: S,
    started: float,
) -> S:
    """Run ``units`` through the pool, then (always) end the progress bar and close the backend.

    Every judgebench step (predict, judge, rewrite, meta-judge) ends the same way, whether the
    pool finished or a fatal error stopped it; ``summary.wall_s`` is set from ``started`` and the
    summary returned.
    """
    try:
        await run_pool(units, work, concurrency)
    finally:
        progress.finish()
        await backend.aclose()
    summary.wall_s = time.perf_counter() - started
    return summary


def check_difficulties(difficulties: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(d.strip() for d in difficulties if d.strip()))
    bad = [d for d in chosen if d not in DIFFICULTIES]
    if bad or not chosen:
        raise UserError(
            f"unknown difficulty: {', '.join(bad) or '(none given)'}", hint="use a comma list of easy, medium, hard"
        )
    return chosen


@dataclass
class PredictSummary:
    generator: str
    ran: int = 0
    skipped: int = 0
    #: status -> count over the units this call ran.
    statuses: Counter = field(default_factory=Counter)
    #: (difficulty) -> number of records without a query at that difficulty.
    no_query: Counter = field(default_factory=Counter)
    wall_s: float = 0.0
    #: ``--executor`` and, with Ray, the units retried and the workers lost.
    executor: ExecutorCounts = field(default_factory=ExecutorCounts)


def read_plan(emission: Emission) -> tuple[str, list[dict[str, Any]] | None, str | None]:
    """(status, calls, reason) for one generator emission.

    Native tool calls win; their arguments must be JSON objects. Otherwise the text must hold a
    JSON array of calls. ``[]`` or no call at all is ``empty``.
    """
    if emission.tool_calls:
        calls: list[dict[str, Any]] = []
        problems: list[str] = []
        for i, call in enumerate(emission.tool_calls):
            if call.arguments is None and (call.raw_arguments or "").strip():
                problems.append(f"call {i} ({call.name}): {call.parse_error}")
            calls.append({"name": call.name, "arguments": call.arguments if call.arguments is not None else {}})
        if problems:
            raw_calls = [{"name": c.name, "arguments": c.raw_arguments} for c in emission.tool_calls]
            return "unparseable", raw_calls, "; ".join(problems)
        return "ok", calls, None
    text = (emission.text or "").strip()
    if not text:
        return "empty", None, "no tool call and no text"
    text_calls = calls_from_text(text)
    if text_calls is None:
        return "unparseable", None, "text holds no JSON array of calls"
    if not text_calls:
        return "empty", [], "empty plan"
    for i, text_call in enumerate(text_calls):
        args = text_call["arguments"]
        if isinstance(args, str):
            parsed = ToolCall.from_raw(text_call["name"], args)
            if parsed.arguments is None and args.strip():
                return "unparseable", text_calls, f"call {i} ({text_call['name']}): {parsed.parse_error}"
            text_call["arguments"] = parsed.arguments or {}
        elif args is None:
            text_call["arguments"] = {}
        elif not isinstance(args, dict):
            return "unparseable", text_calls, f"call {i} ({text_call['name']}): arguments are not an object"
    return "ok", text_calls, None


def planning_messages(record: JudgeBenchRecord, difficulty: str, prompt_dir: str | Path | None = None) -> list[Message]:
    return _planning_messages(load_template("generator", prompt_dir), record, difficulty)


def _planning_messages(template: PromptTemplate, record: JudgeBenchRecord, difficulty: str) -> list[Message]:
    system = template.render(system_prompt=record.system_prompt)
    return [Message(role="system", content=system), Message(role="user", content=record.query(difficulty))]


async def predict(
    store: JudgeBenchStore,
    records: Sequence[JudgeBenchRecord],
    generator: str,
    backend: ModelBackend,
    *,
    difficulties: Sequence[str] = DIFFICULTIES,
    config: GenerationConfig | None = None,
    concurrency: int = 8,
    prompt_dir: str | Path | None = None,
    progress: ProgressSink | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    options: ModelOptions | None = None,
) -> PredictSummary:
    """Plan every (record, difficulty) not yet stored for ``generator``; resumable.

    ``progress`` hears of every stored plan, tallied by status. ``executor="ray"`` plans the units
    as Ray tasks (cluster at ``ray_address``, or a local Ray), each worker rebuilding the generator
    from ``options``; this process stays the only writer of the store.
    """
    started = time.perf_counter()
    progress = progress or NullProgress()
    config = config or GenerationConfig()
    difficulties = check_difficulties(difficulties)
    check_executor_options(executor, ray_address)
    template = load_template("generator", prompt_dir)
    store.add_records(records)
    store.pin_settings(
        "generator",
        generator,
        "",
        {"generation": config.model_dump(mode="json", exclude={"timeout_s"}), "prompt": template.tag},
    )
    summary = PredictSummary(generator, executor=ExecutorCounts(executor))
    done = store.finished_predictions(generator)
    units = []
    for record in records:
        for difficulty in difficulties:
            if not record.query(difficulty):
                summary.no_query[difficulty] += 1
            elif (record.id, difficulty) in done:
                summary.skipped += 1
            else:
                units.append((record, difficulty))
    progress.start(len(units) + summary.skipped, summary.skipped)

    def commit(plan: PlanRow) -> None:
        """The one writer's share of a unit: store its plan, count it, report progress."""
        store.put_prediction(*plan.row())
        summary.statuses[plan.status] += 1
        summary.ran += 1
        progress.advance(plan.status)

    if executor == "ray":
        from tooldiag.suites.judgebench.distributed import predict_on_ray

        try:
            predict_on_ray(
                units, generator, template, config, options, concurrency, commit, summary.executor, ray_address
            )
        finally:
            progress.finish()
            await backend.aclose()
        summary.wall_s = time.perf_counter() - started
        return summary

    async def work(unit: tuple[JudgeBenchRecord, str]) -> None:
        commit(await plan_unit(backend, generator, template, config, *unit))

    return await run_units(
        units, work, concurrency, progress=progress, backend=backend, summary=summary, started=started
    )


@dataclass(frozen=True)
class PlanRow:
    """One generator call's outcome, as :meth:`JudgeBenchStore.put_prediction` stores it (computed
    anywhere, stored by the one writer)."""

    generator: str
    record_id: str
    difficulty: str
    status: str
    calls: list[dict[str, Any]] | None
    raw: Any = None
    error: str | None = None
    latency_s: float | None = None

    def row(self) -> tuple[Any, ...]:
        return (
            self.generator, self.record_id, self.difficulty, self.status, self.calls, self.raw, self.error,
            self.latency_s,
        )  # fmt: skip


async def plan_unit(
    backend: ModelBackend,
    generator: str,
    template: PromptTemplate,
    config: GenerationConfig,
    record: JudgeBenchRecord,
    difficulty: str,
) -> PlanRow:
    """Ask ``backend`` to plan ``record`` at ``difficulty``; a fatal model error raises one
    :class:`UserError`, any other failed call is an ``error`` row (retried on resume)."""
    context = TaskContext(
        suite="judgebench",
        case_id=record.id,
        category=difficulty,
        answer_key={
            "role": "generator",
            "record_id": record.id,
            "difficulty": difficulty,
            "expected_calls": record.expected_calls(),
        },
    )
    t0 = time.perf_counter()
    try:
        emission = await backend.generate(
            _planning_messages(template, record, difficulty), record.tool_specs(), "auto", config, context=context
        )
    except ModelCallError as exc:
        if exc.fatal:
            raise fatal(generator, exc) from None
        return PlanRow(generator, record.id, difficulty, "error", None, error=exc.message)
    status, calls, reason = read_plan(emission)
    raw = {"text": emission.text, "tool_calls": [c.model_dump() for c in emission.tool_calls]}
    return PlanRow(generator, record.id, difficulty, status, calls, raw, reason, time.perf_counter() - t0)
