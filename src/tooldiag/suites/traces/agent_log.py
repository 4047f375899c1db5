"""Writing converted traces as an agent log, and the gold-map file that gives them gold classes.

Traces from other tools carry no gold action class, which GAR needs. For the benchmarks
tooldiag knows (inspect_evals' BFCL and tau2 tasks) the reader derives it from the sample's
category; for every other trace the user says it in a gold map (``--gold-map FILE``), JSON::

    {"default": "tool_call",
     "categories": {"refund": "confirm"},
     "cases": {"trace-7f3a": "ask"},
     "attributes": {"task.name": {"cancel_order": "confirm"}},
     "turns": {"trace-7f3a": {"2": "ask"}}}

Precedence for a conversation's gold: ``cases`` (by conversation id), then ``attributes``
(the first attribute, in file order, whose value the conversation's ``attributes`` carry),
then ``categories`` (by the conversation's category), then ``default``. ``turns`` marks the
turns (0-based, as the agent-log reader counts them) where the gold is due, for turn-level GAR:
every assistant message of such a turn gets ``gold_class``. ``other`` is never a gold class.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldiag.classify.classes import ActionClass, parse_action_class
from tooldiag.errors import UserError

_HINT = "see docs/traces.md, 'Gold map'"


@dataclass(frozen=True)
class GoldMap:
    """Gold classes for conversations that carry none (see the module docstring for the file)."""

    default: ActionClass | None = None
    categories: Mapping[str, ActionClass] = field(default_factory=dict)
    cases: Mapping[str, ActionClass] = field(default_factory=dict)
    attributes: Mapping[str, Mapping[str, ActionClass]] = field(default_factory=dict)
    turns: Mapping[str, Mapping[int, ActionClass]] = field(default_factory=dict)

    def gold_for(
        self, case_id: str, category: str | None, attributes: Mapping[str, Any] | None = None
    ) -> ActionClass | None:
        """The conversation's gold class by the precedence above, or ``None`` when the map has none for it."""
        if case_id in self.cases:
            return self.cases[case_id]
        for name, values in self.attributes.items():
            value = (attributes or {}).get(name)
            if value is not None and str(value) in values:
                return values[str(value)]
        if category is not None and category in self.categories:
            return self.categories[category]
        return self.default

    def apply(self, conversation: dict[str, Any]) -> dict[str, Any]:
        """``conversation`` with ``gold_class`` set from the map where it had none, and turn marks added."""
        out = dict(conversation)
        case_id = str(out["id"])
        if out.get("gold_class") is None:
            gold = self.gold_for(case_id, out.get("category"), out.get("attributes"))
            if gold is not None:
                out["gold_class"] = gold.value
        turns = self.turns.get(case_id)
        if turns:
            out["messages"] = _mark_turns(out["messages"], turns)
        return out


def _mark_turns(messages: list[dict[str, Any]], turns: Mapping[int, ActionClass]) -> list[dict[str, Any]]:
    """Assistant messages of the marked turns get ``gold_class`` (turns counted as the agent-log reader does)."""
    turn, marked = -1, []
    for message in messages:
        role = message.get("role")
        if role == "user":
            turn += 1
        if role == "assistant" and max(turn, 0) in turns:
            message = {**message, "gold_class": turns[max(turn, 0)].value}
        marked.append(message)
    return marked


def _gold(value: Any, where: str) -> ActionClass:
    gold = parse_action_class(value, where=where)
    if gold is ActionClass.OTHER:
        raise UserError(f"{where}: 'other' cannot be a gold class (GAR ignores it)", hint=_HINT)
    return gold


def _table(obj: Mapping[str, Any], key: str, path: Path) -> dict[str, ActionClass]:
    table = obj.get(key, {})
    if not isinstance(table, dict):
        raise UserError(f"{path}: '{key}' must be an object of name -> gold class", hint=_HINT)
    return {str(name): _gold(value, f"{path} {key}.{name}") for name, value in table.items()}


def load_gold_map(path: str | Path) -> GoldMap:
    """Read a gold-map file; every problem is one :class:`UserError` naming the file and the key."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"gold map {path} does not exist", hint=_HINT) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"gold map {path} is not a JSON file ({exc})", hint=_HINT) from None
    if not isinstance(obj, dict):
        raise UserError(f"gold map {path} must hold one JSON object", hint=_HINT)
    unknown = sorted(set(obj) - {"default", "categories", "cases", "attributes", "turns"})
    if unknown:
        raise UserError(f"gold map {path}: unknown key(s) {', '.join(unknown)}", hint=_HINT)
    attributes = obj.get("attributes", {})
    turns = obj.get("turns", {})
    if not isinstance(attributes, dict) or not all(isinstance(v, dict) for v in attributes.values()):
        raise UserError(f"{path}: 'attributes' must map an attribute name to {{value: gold class}}", hint=_HINT)
    if not isinstance(turns, dict) or not all(isinstance(v, dict) for v in turns.values()):
        raise UserError(f"{path}: 'turns' must map a conversation id to {{turn: gold class}}", hint=_HINT)
    try:
        turn_marks = {
            str(case): {int(turn): _gold(v, f"{path} turns.{case}.{turn}") for turn, v in marks.items()}
            for case, marks in turns.items()
        }
    except ValueError:
        raise UserError(f"{path}: turn numbers in 'turns' must be integers (0-based)", hint=_HINT) from None
    return GoldMap(
        default=_gold(obj["default"], f"{path} default") if obj.get("default") is not None else None,
        categories=_table(obj, "categories", path),
        cases=_table(obj, "cases", path),
        attributes={
            str(name): {str(value): _gold(g, f"{path} attributes.{name}.{value}") for value, g in values.items()}
            for name, values in attributes.items()
        },
        turns=turn_marks,
    )


def write_agent_log(conversations: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write conversations as an agent log (JSONL, UTF-8, one object per line); returns how many."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with target.open("w", encoding="utf-8") as handle:
        for conversation in conversations:
            handle.write(json.dumps(conversation, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return count
