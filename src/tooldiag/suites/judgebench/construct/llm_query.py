"""``--llm-queries MODEL``: one LLM request per record rewrites the template query in freer words.

Why it can only replace, never break: the template query is always written first and passes
every check; the model's text is kept only when it still states every literal value of the
plan verbatim (ids, emails, dates, numbers), holds no JSON or braces, and (when gates are
given) the record still passes them. Otherwise the template stays, so a failing or
unreachable model degrades to the offline default instead of failing the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from tooldiag.errors import ModelCallError
from tooldiag.models.base import ModelBackend, TaskContext
from tooldiag.runner import NullProgress, ProgressSink, run_pool
from tooldiag.suites.judgebench.construct.topology import calls_with_outputs, strings_in
from tooldiag.trajectory import GenerationConfig, Message

QUERY_PROMPT = (
    "You write the request a business user would type to an assistant that has tools. Rewrite the draft "
    "request below as one natural message in the user's voice. Keep every value exactly as written "
    "(identifiers, emails, dates, numbers, quoted text), keep the order of the steps and any condition, "
    "add no new task, and write no JSON, no code and no parameter names. Answer with the message only."
)


def stated_values(record: dict[str, Any]) -> list[str]:
    """The literal values the query must state: argument values no earlier output produced."""
    calls = calls_with_outputs(record["expected_responses"])
    produced: set[str] = set()
    out: list[str] = []
    for call in calls:
        for value in _leaves(call.arguments):
            text = value if isinstance(value, str) else json.dumps(value)
            if text not in produced and text not in out:
                out.append(text)
        produced |= set(strings_in(call.output))
    return out


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [] if isinstance(value, bool) or value is None else [value]


def acceptable(text: str | None, record: dict[str, Any]) -> bool:
    if not text or not text.strip() or any(c in text for c in "{}[]"):
        return False
    return all(value in text for value in stated_values(record))


async def write_llm_queries(
    records: Sequence[dict[str, Any]],
    backend: ModelBackend,
    *,
    concurrency: int = 4,
    config: GenerationConfig | None = None,
    progress: ProgressSink | None = None,
) -> list[str | None]:
    """One single-shot rewrite per record; ``None`` where the model failed or broke a value."""
    texts: list[str | None] = [None] * len(records)
    sink = progress or NullProgress()
    sink.start(len(records), 0)

    async def work(index: int) -> None:
        record = records[index]
        messages = [Message(role="system", content=QUERY_PROMPT), Message(role="user", content=record["user_message"])]
        context = TaskContext(suite="judgebench", case_id=record["id"], category="query")
        try:
            emission = await backend.generate(messages, None, None, config, context=context)
        except ModelCallError:
            sink.advance("failed")
            return
        text = (emission.text or "").strip()
        ok = acceptable(text, record)
        texts[index] = text if ok else None
        sink.advance("llm" if ok else "template")

    try:
        await run_pool(list(range(len(records))), work, concurrency)
    finally:
        sink.finish()
        await backend.aclose()
    return texts


def apply_queries(
    records: list[dict[str, Any]],
    texts: Sequence[str | None],
    model: str,
    gates: Callable[[dict[str, Any]], list[str]] | None = None,
) -> int:
    """Put each accepted text into its record (``user_message`` and metadata); returns how many."""
    replaced = 0
    for i, (record, text) in enumerate(zip(records, texts, strict=True)):
        if text is None:
            continue
        metadata = json.loads(record["metadata"])
        metadata.update(user_utterance=text, query_source=f"llm:{model}", template_query=record["user_message"])
        candidate = {
            **record,
            "user_message": text,
            "metadata": json.dumps(metadata, ensure_ascii=False, sort_keys=True),
        }
        if gates is not None and gates(candidate):
            continue
        records[i] = candidate
        replaced += 1
    return replaced
