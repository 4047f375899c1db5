"""Agent logs: one JSON object per conversation, OpenAI chat messages, gold classes.

Format (documented in docs/diagnostic.md, example in examples/agent_log.jsonl)::

    {"id": "refund-17", "category": "refund", "gold_class": "confirm", "passed": true,
     "messages": [{"role": "user", "content": "..."},
                  {"role": "assistant", "content": null, "tool_calls": [...]},
                  {"role": "tool", "tool_call_id": "...", "content": "..."},
                  {"role": "assistant", "content": "Shall I proceed?", "gold_class": "confirm"}]}

* ``id`` (required, unique); ``messages`` (required, OpenAI format);
* ``gold_class`` for the case, and/or ``gold_class`` on assistant messages to mark the
  turns where the gold class is due (for turn-level GAR); when only messages carry
  it, they must agree and give the case gold;
* ``category`` (optional; default: the gold class name); each category has one gold;
* ``passed`` (optional bool): the grader's verdict, for Acc;
* ``injected: true`` on an assistant message: harness text, not counted;
* ``content_missing: true`` on an assistant message: its text was not captured (an
  imported trace); when no uncalled assistant message has text, GAR of the non-tool_call
  classes is "not computable".

A turn is everything from one user message to the next; assistant messages before the
first user message form turn 0 of their own.

A bad line refuses the whole file, naming the line; a caller that passes ``invalid`` (a
list; ``tooldiag diagnose --skip-invalid``) gets the bad lines appended there instead and
the rest of the log read, because one malformed record in a large production log should
not hide the other thousands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldiag.classify.classes import ActionClass, parse_action_class
from tooldiag.errors import UserError, loads_user_json

_HINT = "see docs/diagnostic.md, 'Agent logs', and examples/agent_log.jsonl"


@dataclass(frozen=True)
class InvalidLine:
    """A line of an agent log that was skipped, and why (the error it would have raised)."""

    line: int
    message: str


@dataclass(frozen=True)
class AssistantMessage:
    turn: int
    text: Any
    has_calls: bool
    gold: ActionClass | None
    injected: bool
    #: The source did not capture the text (``content_missing: true``, an imported trace).
    content_missing: bool = False


@dataclass(frozen=True)
class Conversation:
    line: int
    id: str
    category: str
    gold: ActionClass
    passed: bool | None
    n_turns: int
    assistant: tuple[AssistantMessage, ...]

    @property
    def gold_turns(self) -> tuple[int, ...] | None:
        """Turns holding a message labelled with a gold class; ``None`` if none is labelled."""
        turns = sorted({m.turn for m in self.assistant if m.gold is not None})
        return tuple(turns) if turns else None


def _gold_class(value: Any, where: str) -> ActionClass:
    """A gold class: one of the four decision classes (``other`` is residual, paper 001 §3.1).

    GAR ignores ``other``, so a case whose gold is ``other`` would always score 0 and be
    flagged as a bound violation; it is refused instead.
    """
    gold = parse_action_class(value, where=where)
    if gold is ActionClass.OTHER:
        raise UserError(
            f"{where}: 'other' cannot be a gold class (GAR ignores it)",
            hint="use tool_call, ask, refuse or confirm; leave out conversations with no gold action",
        )
    return gold


def _parse_conversation(obj: Any, where: str, line: int) -> Conversation:
    from tooldiag.classify import message_parts

    if not isinstance(obj, dict):
        raise UserError(f"{where}: expected a JSON object per conversation, got {type(obj).__name__}", hint=_HINT)
    case_id = obj.get("id")
    if not isinstance(case_id, (str, int)) or isinstance(case_id, bool) or str(case_id) == "":
        raise UserError(f"{where}: missing 'id' (a string or integer)", hint=_HINT)
    messages = obj.get("messages")
    if not isinstance(messages, list):
        raise UserError(f"{where}: 'messages' must be a list of OpenAI chat messages", hint=_HINT)
    passed = obj.get("passed")
    if passed is not None and not isinstance(passed, bool):
        raise UserError(f"{where}: 'passed' must be true, false or null, got {passed!r}", hint=_HINT)
    case_gold = _gold_class(obj["gold_class"], f"{where} gold_class") if obj.get("gold_class") is not None else None

    turn = -1
    assistant: list[AssistantMessage] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise UserError(f"{where}: message {index} is not an object with a 'role'", hint=_HINT)
        role = message["role"]
        if role == "user":
            turn += 1
        elif role == "assistant":
            if turn < 0:
                turn = 0
            gold = message.get("gold_class")
            text, has_calls = message_parts(message)
            assistant.append(
                AssistantMessage(
                    turn=turn,
                    text=text,
                    has_calls=has_calls,
                    gold=None if gold is None else _gold_class(gold, f"{where} message {index} gold_class"),
                    injected=bool(message.get("injected", False)),
                    content_missing=bool(message.get("content_missing", False)),
                )
            )
    turn_golds = {m.gold for m in assistant if m.gold is not None}
    if case_gold is None:
        if not turn_golds:
            raise UserError(
                f"{where}: no gold class",
                hint='add "gold_class" to the conversation or to its assistant messages; ' + _HINT,
            )
        if len(turn_golds) > 1:
            raise UserError(
                f"{where}: assistant messages carry different gold classes "
                f"({', '.join(sorted(g.value for g in turn_golds))})",
                hint='give the case-level "gold_class" GAR should use, or split the conversation',
            )
        case_gold = next(iter(turn_golds))
    elif turn_golds - {case_gold}:
        raise UserError(
            f"{where}: message gold classes differ from the case gold_class {case_gold.value!r}",
            hint="per-message gold_class marks the turns where the case gold is due; use the same class",
        )
    category = obj.get("category")
    if category is None:
        category = case_gold.value
    if not isinstance(category, str) or not category:
        raise UserError(f"{where}: 'category' must be a non-empty string", hint=_HINT)
    return Conversation(
        line=line,
        id=str(case_id),
        category=category,
        gold=case_gold,
        passed=passed,
        n_turns=max(turn + 1, 0),
        assistant=tuple(assistant),
    )


def read_agent_log(path: Path, *, invalid: list[InvalidLine] | None = None) -> list[Conversation]:
    """Parse and validate an agent log; every problem is a :class:`UserError` naming the line.

    With ``invalid`` (a list), a bad line is appended to it and skipped instead; the file
    itself (missing, not UTF-8, no valid conversation at all) is still refused.
    """
    path = Path(path)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise UserError(f"{path} {what}", hint="give an agent log in JSONL; " + _HINT)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise UserError(f"{path} is not UTF-8 text ({exc.reason})", hint="save the log as UTF-8 JSONL") from None
    numbered = ((number, line) for number, line in enumerate(lines, start=1) if line.strip())
    return _checked(((number, f"{path} line {number}", line) for number, line in numbered), str(path), "line", invalid)


def conversations_from_objects(
    objects: Iterable[Any], source: str, *, invalid: list[InvalidLine] | None = None
) -> list[Conversation]:
    """Agent-log conversations already parsed from JSON (an imported trace), checked as a log's lines are.

    Conversation ``i`` (1-based) plays the part of line ``i`` in errors and in ``invalid``.
    """
    items = ((i, f"{source} conversation {i}", obj) for i, obj in enumerate(objects, start=1))
    return _checked(items, source, "conversation", invalid)


def _checked(
    items: Iterable[tuple[int, str, Any]], source: str, unit: str, invalid: list[InvalidLine] | None
) -> list[Conversation]:
    """Parse ``(number, where, line or object)`` items into conversations; see :func:`read_agent_log`."""
    conversations: list[Conversation] = []
    seen: dict[str, int] = {}
    category_gold: dict[str, tuple[ActionClass, int]] = {}
    for number, where, item in items:
        try:
            conversation = _read_line(item, where, number, seen, category_gold)
        except UserError as exc:
            if invalid is None:
                raise
            invalid.append(InvalidLine(number, exc.message))
            continue
        seen[conversation.id] = number
        category_gold.setdefault(conversation.category, (conversation.gold, number))
        conversations.append(conversation)
    if not conversations:
        if invalid:
            raise UserError(
                f"{source} holds no valid conversation "
                f"({len(invalid)} invalid {unit}(s), the first: {invalid[0].message})",
                hint=_HINT,
            )
        raise UserError(f"{source} holds no conversation", hint=_HINT)
    return conversations


def _read_line(
    line: str | Any, where: str, number: int, seen: dict[str, int], category_gold: dict[str, tuple[ActionClass, int]]
) -> Conversation:
    """One line (JSON text, or the object already decoded) as a conversation, checked against the
    lines read before it (unique ids, one gold per category); a :class:`UserError` naming the line otherwise."""
    obj = loads_user_json(line, where, hint="one conversation per line; " + _HINT) if isinstance(line, str) else line
    conversation = _parse_conversation(obj, where, number)
    if conversation.id in seen:
        raise UserError(
            f"{where}: id {conversation.id!r} already used on line {seen[conversation.id]}",
            hint="ids must be unique",
        )
    known = category_gold.get(conversation.category)
    if known is not None and known[0] is not conversation.gold:
        raise UserError(
            f"{where}: category {conversation.category!r} has gold {conversation.gold.value!r} here "
            f"but {known[0].value!r} on line {known[1]}",
            hint="each category has one gold class; name the categories apart",
        )
    return conversation
