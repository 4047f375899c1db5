"""An agent log -> the transcript of one conversation (``tooldiag show LOG.jsonl CONV_ID``), or of all.

The log is read and checked as ``tooldiag diagnose`` reads it (same turns, same gold
class and gold turns, same injected flags); the conversation's line is then read again
for what the diagnostic does not keep: user messages, tool-call arguments and tool
results. Tool messages attach to the assistant step before them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldiag.classify import content_text, has_tool_calls
from tooldiag.classify.explain import Explanation
from tooldiag.diagnose.log import Conversation, read_agent_log
from tooldiag.errors import UserError, loads_user_json
from tooldiag.report.transcript import Transcript, build_transcript, emission_items, explain_distinct
from tooldiag.trajectory import Emission, Message, Step, ToolCall, Turn

#: Close ids named in the hint of an unknown conversation id.
CLOSE_IDS = 5


def _calls(message: dict[str, Any]) -> list[ToolCall]:
    """The message's calls as ToolCall objects; a malformed entry is kept as ``<malformed>`` (it still
    makes the message a tool call, as it does for the classifier)."""
    listed = message.get("tool_calls")
    raw = (list(listed) if isinstance(listed, (list, tuple)) else [listed]) if has_tool_calls(listed) else []
    legacy = message.get("function_call")
    if has_tool_calls(legacy):
        raw = [*raw, {"function": legacy}]
    calls = []
    for entry in raw:
        function = entry.get("function") if isinstance(entry, dict) else None
        if isinstance(entry, dict) and isinstance(function, dict) and isinstance(function.get("name"), str):
            arguments = function.get("arguments")
            if not isinstance(arguments, (str, dict)) and arguments is not None:
                arguments = json.dumps(arguments)
            calls.append(ToolCall.from_raw(function["name"], arguments, id=str(entry.get("id") or "")))
        else:
            calls.append(
                ToolCall(name="<malformed>", raw_arguments=json.dumps(entry, default=str), parse_error="not a call")
            )
    return calls


def _text(value: Any) -> str | None:
    text = content_text(value)
    return text if text is None or isinstance(text, str) else json.dumps(text)


def _turns(messages: list[dict[str, Any]]) -> list[Turn]:
    """Turns as :mod:`tooldiag.diagnose.log` counts them: a user message opens one."""
    turns: list[Turn] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            turns.append(
                Turn(index=len(turns), user_messages=[Message(role="user", content=_text(message.get("content")))])
            )
        elif role == "assistant":
            if not turns:
                turns.append(Turn(index=0))
            emission = Emission(
                text=_text(message.get("content")),
                tool_calls=_calls(message),
                reasoning=message.get("reasoning_content")
                if isinstance(message.get("reasoning_content"), str)
                else None,
                injected=bool(message.get("injected", False)),
            )
            turns[-1].steps.append(Step(emission=emission))
        elif role == "tool" and turns and turns[-1].steps:
            result = _text(message.get("content"))
            turns[-1].steps[-1].tool_results.append("" if result is None else result)
    return turns


def log_transcript(path: str | Path, conversation_id: str, classifier: Any) -> Transcript:
    """The transcript of conversation ``conversation_id`` of the agent log ``path``."""
    path = Path(path)
    conversations = read_agent_log(path)
    found = next((c for c in conversations if c.id == conversation_id), None)
    if found is None:
        known = [c.id for c in conversations]
        close = difflib.get_close_matches(conversation_id, known, n=CLOSE_IDS, cutoff=0.5)
        hint = (f"close ids: {', '.join(close)}; " if close else "") + f"`tooldiag cases {path}` lists all {len(known)}"
        raise UserError(f"no conversation {conversation_id!r} in the agent log {path}", hint=hint)
    line = path.read_text(encoding="utf-8").splitlines()[found.line - 1]
    return _conversation_transcript(path, found, _conversation_turns(found, line), classifier)


def log_transcripts(path: str | Path, classifier: Any, *, run: str | None = None) -> list[Transcript]:
    """The transcript of every conversation of the agent log ``path``, in the log's order.

    What :func:`log_transcript` gives for each, built at once (the HTML report embeds every
    case): the file is read and checked once, and every distinct emission is explained
    once, in one :func:`~tooldiag.report.transcript.explain_distinct` call (a judge scheme batches).
    ``run`` names the log (default: its file name's stem, the name ``tooldiag diagnose`` gives it).
    """
    path = Path(path)
    conversations = read_agent_log(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    turns_of = [_conversation_turns(found, lines[found.line - 1]) for found in conversations]
    per_case = [emission_items(turns) for turns in turns_of]
    reasons = explain_distinct(classifier, [item for items in per_case for item in items])
    out = []
    start = 0
    for found, turns, items in zip(conversations, turns_of, per_case, strict=True):
        why = reasons[start : start + len(items)]
        out.append(_conversation_transcript(path, found, turns, classifier, why, run=run))
        start += len(items)
    return out


def _conversation_turns(found: Conversation, line: str) -> list[Turn]:
    """The turns of the conversation on ``line``, padded to the turns the diagnostic counts."""
    record = loads_user_json(line, f"line {found.line}")  # read once already, so it parses; surrogates repaired
    turns = _turns([m for m in record["messages"] if isinstance(m, dict)])
    while len(turns) < found.n_turns:  # a trailing user turn without an answer
        turns.append(Turn(index=len(turns)))
    return turns


def _conversation_transcript(
    path: Path,
    found: Conversation,
    turns: list[Turn],
    classifier: Any,
    explanations: Sequence[Explanation] | None = None,
    *,
    run: str | None = None,
) -> Transcript:
    return build_transcript(
        turns,
        classifier,
        run=path.stem if run is None else run,
        source=str(path),
        case_id=found.id,
        category=found.category,
        gold_class=found.gold,
        gold_turns=found.gold_turns,
        passed=found.passed,
        explanations=explanations,
    )
