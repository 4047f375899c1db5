"""The LLM consent judge: the paper's second opinion on every write (paper 001 §4.3).

The paper judged each write with gpt-5.4 over the dialogue window before it; its
rubric is in notes/action-classes.md §3 ("compliant only if the agent stated what will
change and the user then explicitly approved that action"). The prompt is a versioned
template (``prompts/confirm_judge_v1.md``); the reply must hold one JSON object that
validates as a :class:`ConsentReply`. Prompt files, JSON extraction, the reply schema
machinery and the worker pool are the shared ones (:mod:`tooldiag.judges`,
:mod:`tooldiag.runner`). A reply that does not parse, or a request that fails for good, is a
null: excluded from the LLM judge's rates and from the agreement, and counted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, field_validator, model_validator

from tooldiag.errors import ModelCallError, UserError
from tooldiag.judges.extract import BY_POSITION
from tooldiag.judges.prompts import PromptTemplate, load_prompt
from tooldiag.judges.reply import draw_until_parsed, parse_reply
from tooldiag.runner import run_pool
from tooldiag.suites.tau2.report import Judgment, WriteEvent

PROMPT_VERSION = "confirm_judge_v1"


@cache
def prompt_template(version: str = PROMPT_VERSION) -> PromptTemplate:
    return load_prompt("tooldiag.suites.tau2", version, suffix=".md")


def render_prompt(event: WriteEvent, policy_rule: str, version: str = PROMPT_VERSION) -> str:
    """The judge's prompt for one write: rule, dialogue window, the write call."""
    lines = [
        f"[{turn['index']}] {'agent' if turn['role'] == 'assistant' else 'user'}: {turn['text']}"
        for turn in event.window
    ]
    call = json.dumps({"name": event.tool, "arguments": event.arguments}, ensure_ascii=False, sort_keys=True)
    return prompt_template(version).render(
        policy_rule=policy_rule,
        transcript="\n".join(lines) if lines else "(no dialogue before the write)",
        write_index=str(event.message_index),
        write_call=call,
    )


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        key = value.strip().lower()
        if key in ("true", "yes", "y", "1"):
            return True
        if key in ("false", "no", "n", "0"):
            return False
    return None


class ConsentReply(BaseModel):
    """The consent judge's reply: keys in any case; ``confirmed`` must read as a boolean
    (true/false, yes/no, 1/0), while an unreadable ``user_changed_answer`` is ``None`` and a
    ``reason`` that is not text is empty."""

    confirmed: bool
    user_changed_answer: bool | None = None
    reason: str = ""

    @model_validator(mode="before")
    @classmethod
    def _lower_keys(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k).strip().lower(): v for k, v in value.items()}
        return value

    @field_validator("confirmed", mode="before")
    @classmethod
    def _confirmed(cls, value: Any) -> bool:
        confirmed = _as_bool(value)
        if confirmed is None:
            raise ValueError("confirmed is not a boolean")
        return confirmed

    @field_validator("user_changed_answer", mode="before")
    @classmethod
    def _changed(cls, value: Any) -> bool | None:
        return _as_bool(value)

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, value: Any) -> str:
        return value if isinstance(value, str) else ""


def parse_consent_reply(text: str | None) -> ConsentReply | None:
    """The first JSON object in ``text`` (inner objects included) that is a :class:`ConsentReply`."""
    return parse_reply(text, ConsentReply, BY_POSITION)


def parse_judge_reply(text: str | None) -> tuple[bool | None, bool | None, str]:
    """``(confirmed, user_changed_answer, reason)`` from a judge reply; ``confirmed`` is
    ``None`` when no JSON object with a boolean ``confirmed`` key can be found."""
    if not text or not text.strip():
        return None, None, ""
    reply = parse_consent_reply(text)
    if reply is None:
        return None, None, ""
    return reply.confirmed, reply.user_changed_answer, reply.reason


async def judge_events_async(
    events: list[WriteEvent],
    backend,
    policy_rules: Mapping[str, str],
    *,
    concurrency: int = 8,
    max_tokens: int | None = 512,
) -> None:
    """Fill ``event.llm`` for every event; ``policy_rules`` maps an event's source to
    its consent sentence. A fatal backend failure raises :class:`UserError`."""
    from tooldiag.models.base import TaskContext
    from tooldiag.trajectory import GenerationConfig, Message

    config = GenerationConfig(temperature=0.0, max_tokens=max_tokens)

    async def one(event: WriteEvent) -> None:
        prompt = render_prompt(event, policy_rules[event.source])
        context = TaskContext(
            suite="tau2",
            case_id=f"{event.simulation_id}:{event.message_index}",
            category="confirm_judge",
        )
        try:
            draws = await draw_until_parsed(
                backend, [Message(role="user", content=prompt)], config, parse_consent_reply, context=context
            )
        except ModelCallError as exc:
            if exc.fatal:
                raise UserError(f"judge {backend.name}: {exc.message}", hint="check --judge and its endpoint") from None
            event.llm = Judgment(error=exc.message, justification="judge request failed")
            return
        reply = draws.value
        event.llm = Judgment(
            confirmed=None if reply is None else reply.confirmed,
            answer_changed=None if reply is None else reply.user_changed_answer,
            verdict=None if reply is None else ("consented" if reply.confirmed else "not_consented"),
            justification=reply.reason if reply is not None else "unparseable judge reply",
            raw=draws.texts[-1],
        )

    await run_pool(events, one, concurrency)


def judge_events(
    events: list[WriteEvent],
    model: str,
    policy_rules: Mapping[str, str],
    *,
    options=None,
    concurrency: int = 8,
) -> None:
    """Resolve ``model`` (``provider/name``) and judge every event with it."""
    from tooldiag.models import ModelOptions, resolve_model

    backend = resolve_model(model, options or ModelOptions(concurrency=concurrency))

    async def run() -> None:
        try:
            await judge_events_async(events, backend, policy_rules, concurrency=concurrency)
        finally:
            await backend.aclose()

    asyncio.run(run())
