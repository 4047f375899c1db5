"""Inspect AI logs (``.eval`` and ``.json``) as agent-log conversations (``tooldiag import inspect``).

One conversation per sample and epoch, id ``<task>/<sample id>/epoch<n>``, in inspect_ai's own
sample order (epoch, then id). What is read (docs/traces.md, "Inspect AI"):

* ``messages`` (the sample's final conversation), rebuilt in order as OpenAI chat messages.
  Content lists are flattened as inspect_ai's ``ChatMessage.text`` does (text parts joined by a
  newline); reasoning parts never enter the classified text (they are the model's private
  scratchpad, not what it said to the user) and are kept in ``reasoning``. Assistant
  ``tool_calls`` keep ``function`` and the raw ``arguments``, and ``parse_error`` when the
  arguments did not parse; a tool message with an ``error`` gets ``tool_error: true`` (its
  content is the error message when the tool returned no text). An assistant message with no
  text and no call gets ``content_missing: true``.
* ``scores``: ``passed`` from the main scorer (the log's headline scorer, else the first scorer
  of the task, else the first score): ``C``/``true``/``1``/``"yes"`` pass, ``I``/``N``/``P``
  (partial)/``false``/``0``/``"no"`` fail, anything else (no score, a dict) is ``None``.
* gold class and category for inspect_evals' BFCL and tau2 tasks
  (:mod:`tooldiag.suites.traces.inspect_gold`), else from ``--gold-map``.
* ``attributes``: ``task``, ``model``, ``epoch``, ``sample_id`` and each scalar of the sample's
  metadata as ``metadata.<key>`` (a gold map can select on any of them).

``events``, ``store``, ``output``, usage, timings and attachments are not read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.traces.agent_log import GoldMap
from tooldiag.suites.traces.inspect_files import open_inspect_log
from tooldiag.suites.traces.inspect_gold import BenchmarkGold, benchmark_gold

_PASS = {"c": True, "correct": True, "yes": True, "i": False, "n": False, "p": False, "incorrect": False, "no": False}


def read_inspect(paths: Sequence[Path], gold_map: GoldMap | None, fmt: str | None) -> list[dict[str, Any]]:
    """The conversations of every sample of the Inspect logs ``paths`` (the :data:`TraceReader` of ``inspect``)."""
    conversations: list[dict[str, Any]] = []
    seen: dict[str, Path] = {}
    for path in paths:
        log = open_inspect_log(path, fmt)
        converted = [sample_conversation(log.header, sample, str(path)) for sample in log.samples()]
        converted.sort(key=lambda c: sample_order(c["attributes"]["epoch"], c["attributes"]["sample_id"]))
        for conversation in converted:
            if conversation["id"] in seen:
                raise UserError(
                    f"{path}: sample {conversation['id']!r} also occurs in {seen[conversation['id']]}",
                    hint="diagnose one run (one model's logs of a task) at a time",
                )
            seen[conversation["id"]] = path
            conversations.append(finish_conversation(conversation, gold_map))
    return conversations


def sample_order(epoch: Any, sample_id: Any) -> tuple[int, str]:
    """inspect_ai's sample order (``sort_samples``): epoch, then the id (numbers zero-filled)."""
    return (int(epoch), sample_id if isinstance(sample_id, str) else str(sample_id).zfill(20))


def finish_conversation(conversation: dict[str, Any], gold_map: GoldMap | None) -> dict[str, Any]:
    """Apply the gold map where the benchmark gave no gold; a sample left without one is refused."""
    if gold_map is not None:
        conversation = gold_map.apply(conversation)
    if conversation.get("gold_class") is None and not any(m.get("gold_class") for m in conversation["messages"]):
        raise UserError(
            f"{conversation['source']}: no gold action class for sample {conversation['id']!r} "
            f"(task {conversation['attributes']['task']!r} is not one whose gold tooldiag knows)",
            hint='give --gold-map FILE, e.g. {"default": "tool_call"} or {"cases": {"'
            + conversation["id"]
            + '": "ask"}}; see docs/traces.md, "Gold map"',
        )
    return conversation


def sample_conversation(header: Mapping[str, Any], sample: Mapping[str, Any], path: str) -> dict[str, Any]:
    """One sample (a JSON object of an Inspect log) as an agent-log conversation, before the gold map."""
    spec = header.get("eval") or {}
    task = str(spec.get("task"))
    sample_id = sample.get("id")
    epoch = int(sample.get("epoch") or 1)
    metadata = sample.get("metadata") or {}
    messages = [_message(m) for m in sample.get("messages") or []]
    attributes: dict[str, Any] = {"task": task, "model": spec.get("model"), "epoch": epoch, "sample_id": sample_id}
    attributes.update(
        {f"metadata.{key}": value for key, value in metadata.items() if isinstance(value, (str, int, float, bool))}
    )
    conversation: dict[str, Any] = {
        "id": f"{task}/{sample_id}/epoch{epoch}",
        "source": f"{path} sample {sample_id} epoch {epoch}",
        "attributes": attributes,
        "passed": passed_of(sample.get("scores"), main_scorer(header)),
        "messages": messages,
    }
    error = sample.get("error")
    if isinstance(error, Mapping) and error.get("message"):
        attributes["error"] = str(error["message"])
    known = benchmark_gold(task, sample_id, metadata)
    if known is not None:
        _apply_benchmark(conversation, known)
    elif isinstance(metadata.get("category"), str) and metadata["category"]:
        conversation["category"] = metadata["category"]
    return conversation


def _apply_benchmark(conversation: dict[str, Any], known: BenchmarkGold) -> None:
    conversation["attributes"]["benchmark"] = known.benchmark
    if known.category is not None:
        conversation["category"] = known.category
    if known.gold is None:
        return
    conversation["gold_class"] = known.gold.value
    if known.gold_turns is None:
        return
    turn, marked = -1, []
    for message in conversation["messages"]:
        turn += message["role"] == "user"
        if message["role"] == "assistant" and max(turn, 0) in known.gold_turns:
            message = {**message, "gold_class": known.gold.value}
        marked.append(message)
    if any("gold_class" in m for m in marked):
        conversation["messages"] = marked


def main_scorer(header: Mapping[str, Any]) -> str | None:
    """The scorer whose value is Acc: the results' headline scorer, else the task's first scorer."""
    headline = ((header.get("results") or {}).get("headline") or {}).get("scorer")
    if isinstance(headline, str):
        return headline
    scorers = (header.get("eval") or {}).get("scorers") or []
    first = scorers[0] if scorers else None
    return str(first["name"]) if isinstance(first, Mapping) and first.get("name") else None


def passed_of(scores: Any, scorer: str | None) -> bool | None:
    """The main scorer's verdict as pass/fail (module docstring); ``None`` when it cannot be read."""
    if not isinstance(scores, Mapping) or not scores:
        return None
    score = scores.get(scorer) if scorer in scores else next(iter(scores.values()))
    value = score.get("value") if isinstance(score, Mapping) else None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value >= 1
    if isinstance(value, str):
        return _PASS.get(value.strip().lower())
    return None


def content_text(content: Any) -> tuple[str | None, str | None]:
    """``(text, reasoning)`` of Inspect message content: a string, or a list of content parts."""
    if content is None or isinstance(content, str):
        return content, None
    texts = [str(p.get("text", "")) for p in _parts(content) if p.get("type") == "text"]
    reasoning = [str(p.get("reasoning", "")) for p in _parts(content) if p.get("type") == "reasoning"]
    return "\n".join(texts), ("\n".join(reasoning) if reasoning else None)


def _parts(content: Iterable[Any]) -> list[Mapping[str, Any]]:
    return [part for part in content if isinstance(part, Mapping)]


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = str(message.get("role"))
    text, reasoning = content_text(message.get("content"))
    out: dict[str, Any] = {"role": role, "content": text}
    if reasoning:
        out["reasoning"] = reasoning
    if role == "assistant":
        calls = [_tool_call(call) for call in message.get("tool_calls") or []]
        if calls:
            out["tool_calls"] = calls
        elif not (text or "").strip():
            out["content_missing"] = True
    elif role == "tool":
        out["tool_call_id"] = message.get("tool_call_id")
        if message.get("function") is not None:
            out["name"] = message.get("function")
        error = message.get("error")
        if error:
            out["tool_error"] = True
            if not (text or "").strip() and isinstance(error, Mapping):
                out["content"] = str(error.get("message", ""))
    return out


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": call.get("function"), "arguments": call.get("arguments")},
    }
    if call.get("parse_error"):
        out["parse_error"] = call["parse_error"]
    return out
