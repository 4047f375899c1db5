"""What ``tooldiag classify`` reads: assistant messages, or conversations, one per line.

Two shapes are accepted, line by line:

* one assistant message: ``{"role": "assistant", "content": ..., "tool_calls": ...}``
  (``role`` may be absent; ``text`` is accepted for ``content``);
* one conversation in the agent-log format ``tooldiag diagnose`` reads
  (``{"id": ..., "messages": [...]}``): each of its assistant messages is classified.

Anything else (a user, system or tool message, an object with neither ``content`` nor
``tool_calls`` nor ``messages``, a non-object, a conversation without an assistant
message) is refused with one error naming the line, because a silently wrong-shaped
input used to be labelled ``other`` and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tooldiag.errors import UserError

#: Fields that make an object an assistant message.
MESSAGE_FIELDS = ("content", "text", "tool_calls", "function_call")

SHAPES_HINT = (
    'write one assistant message per line ({"role": "assistant", "content": "...", "tool_calls": [...]}) '
    'or one conversation per line ({"id": ..., "messages": [...]}, the agent-log format of tooldiag diagnose)'
)


@dataclass(frozen=True)
class InputItem:
    """One emission to classify and where it came from."""

    #: Line of the input file.
    line: int
    #: The line's ``id`` (the message's, or the conversation's), when it has one.
    record_id: Any
    #: Index of the message inside its conversation; ``None`` for a message line.
    message: int | None
    text: Any
    has_calls: bool
    #: The message object itself (its gold ``label`` for ``--evaluate``).
    obj: dict[str, Any]

    def output(self, action_class: str) -> dict[str, Any]:
        """The output row: ``{"line", "id"?, "message"?, "action_class"}``."""
        record: dict[str, Any] = {"line": self.line}
        if self.record_id is not None:
            record["id"] = self.record_id
        if self.message is not None:
            record["message"] = self.message
        record["action_class"] = action_class
        return record


def message_parts(obj: dict[str, Any]) -> tuple[Any, bool]:
    """``(text, has_calls)`` of an OpenAI assistant message, ``text`` accepted for ``content``."""
    from tooldiag.classify import message_parts as openai_parts

    return openai_parts(obj if "content" in obj else {**obj, "content": obj.get("text")})


def _refuse(where: str, problem: str, hint: str = SHAPES_HINT) -> UserError:
    return UserError(f"{where}: {problem}", hint=hint)


def _message_item(obj: dict[str, Any], where: str, number: int) -> InputItem:
    role = obj.get("role")
    if role is not None and role != "assistant":
        raise _refuse(where, f"a {role!r} message; only assistant messages are classified")
    if not any(key in obj for key in MESSAGE_FIELDS):
        raise _refuse(where, "an object with neither 'content' nor 'tool_calls' nor 'messages'")
    text, has_calls = message_parts(obj)
    return InputItem(number, obj.get("id"), None, text, has_calls, obj)


def _conversation_items(obj: dict[str, Any], where: str, number: int) -> list[InputItem]:
    messages = obj["messages"]
    if not isinstance(messages, list):
        raise _refuse(where, "'messages' must be a list of chat messages")
    items = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _refuse(where, f"message {index} is not an object with a 'role'")
        if message["role"] == "assistant":
            text, has_calls = message_parts(message)
            items.append(InputItem(number, obj.get("id"), index, text, has_calls, message))
    if not items:
        raise _refuse(where, "a conversation with no assistant message", hint="leave it out; " + SHAPES_HINT)
    return items


def items_of_line(value: Any, where: str, number: int, *, labelled: bool = False) -> list[InputItem]:
    """The emissions of one parsed line; a :class:`UserError` naming ``where`` when the line is neither shape.

    ``labelled`` (``--evaluate``): only message lines, each with its gold ``label``.
    """
    if not isinstance(value, dict):
        raise _refuse(
            where, f"expected a JSON object (an assistant message or a conversation), got {type(value).__name__}"
        )
    if "messages" in value:
        if labelled:
            raise _refuse(
                where,
                "--evaluate reads one labelled assistant message per line, not a conversation",
                hint='write each message on its own line with its gold class in "label"',
            )
        return _conversation_items(value, where, number)
    item = _message_item(value, where, number)
    if labelled and "label" not in value:
        raise _refuse(where, "no 'label' field", hint="--evaluate needs the gold class in 'label'")
    return [item]


def read_input(source: str, *, labelled: bool = False) -> list[InputItem]:
    """Every emission of the JSONL file ``source`` (``-``: stdin), in order; refused at the first bad line."""
    from tooldiag.cli.io import CLASSIFY_INPUT, iter_jsonl, jsonl_name

    name = jsonl_name(source, CLASSIFY_INPUT)
    items: list[InputItem] = []
    for number, value in iter_jsonl(source, CLASSIFY_INPUT):
        items += items_of_line(value, f"{name} line {number}", number, labelled=labelled)
    return items
