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
from tooldiag.models.base import ModelBackend, TaskContext
from tooldiag.runner import NullProgress, ProgressSink, run_pool
from tooldiag.suites.judgebench.parsing import calls_from_text
from tooldiag.suites.judgebench.prompts import load_template
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
    template = load_template("generator", prompt_dir)
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
) -> PredictSummary:
    """Plan every (record, difficulty) not yet stored for ``generator``; resumable.

    ``progress`` hears of every stored plan, tallied by status.
    """
    started = time.perf_counter()
    progress = progress or NullProgress()
    config = config or GenerationConfig()
    difficulties = check_difficulties(difficulties)
    template = load_template("generator", prompt_dir)
    store.add_records(records)
    store.pin_settings(
        "generator",
        generator,
        "",
        {"generation": config.model_dump(mode="json", exclude={"timeout_s"}), "prompt": template.tag},
    )
    summary = PredictSummary(generator)
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

    async def work(unit: tuple[JudgeBenchRecord, str]) -> None:
        record, difficulty = unit
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
                planning_messages(record, difficulty, prompt_dir),
                record.tool_specs(),
                "auto",
                config,
                context=context,
            )
        except ModelCallError as exc:
            if exc.fatal:
                raise fatal(generator, exc) from None
            status = "error"
            store.put_prediction(generator, record.id, difficulty, status, None, error=exc.message)
        else:
            status, calls, reason = read_plan(emission)
            raw = {"text": emission.text, "tool_calls": [c.model_dump() for c in emission.tool_calls]}
            store.put_prediction(generator, record.id, difficulty, status, calls, raw, reason, time.perf_counter() - t0)
        summary.statuses[status] += 1
        summary.ran += 1
        progress.advance(status)

    return await run_units(
        units, work, concurrency, progress=progress, backend=backend, summary=summary, started=started
    )
