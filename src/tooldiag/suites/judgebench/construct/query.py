"""The easy query, written from the plan with templates (deterministic, offline).

Why templates: the query must state every literal argument value and refer to every
chained value without spelling it (the model has to take it from the earlier output), in
plain words: no parameter names, no JSON. Each tool carries a verb phrase (``say``) with its
id parameters as placeholders and each literal parameter a fragment (``"at {value} priority"``);
a value from an earlier output renders as "that order", a literal id as "order ORD-48213".
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooldiag.suites.judgebench.construct.domains import Domain, ToolDef


@dataclass
class PlannedCall:
    """One call of a plan: the tool, its arguments and where each chained argument came from."""

    tool: ToolDef
    arguments: dict[str, Any]
    #: parameter -> index of the earlier call whose output supplied it.
    sources: dict[str, int] = field(default_factory=dict)
    output: dict[str, Any] = field(default_factory=dict)
    #: index of the list call this call iterates over (loop_like), else None.
    loop_of: int | None = None


@dataclass
class Condition:
    """optional_enrichment: the enrichment call runs because this holds in the trace."""

    step: int
    field: str
    equals: bool
    text: str
    enrichment: int
    consumer: int
    argument: str


def join_words(items: Sequence[Any]) -> str:
    words = [str(i) for i in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _fill(template: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def call_phrase(domain: Domain, call: PlannedCall, *, conditional_param: str | None = None) -> str:
    """The verb phrase of one call with its id references and literal fragments."""
    ids: dict[str, str] = {}
    for param, entity_key in call.tool.id_params.items():
        if param not in call.arguments:
            continue
        noun = domain.entities[entity_key].noun
        ids[param] = f"that {noun}" if param in call.sources else f"{noun} {call.arguments[param]}"
    parts = [_fill(call.tool.say, ids)]
    # literal fragments first, then optional ids ("citing that loyalty profile if you fetched it")
    names = sorted(call.tool.params, key=lambda n: n in call.tool.id_params)
    for name in names:
        spec = call.tool.params[name]
        if name not in call.arguments or (name in call.tool.id_params and "{" + name + "}" in call.tool.say):
            continue
        value = call.arguments[name]
        if name in call.tool.id_params:
            fragment = _fill(spec.get("say", "with {" + name + "}"), ids)
            if name == conditional_param:
                fragment += " if you fetched it"
        elif spec.get("type") == "boolean":
            fragment = spec["say_true"] if value else spec["say_false"]
        elif spec.get("type") == "object":
            fragment = _fill(spec["say"], {k: str(v) for k, v in value.items()})
        elif spec.get("type") == "array":
            fragment = _fill(spec["say"], {"value": join_words(value)})
        else:
            fragment = _fill(spec["say"], {"value": str(value)})
        parts.append(fragment)
    return " ".join(p for p in parts if p)


_OPENERS = ("Please {p}.", "First, {p}.", "I need you to {p}.", "Start by asking the system to {p}.")
_NEXT = ("Then {p}.", "Next, {p}.", "After that, {p}.", "Once you have that, {p}.")
_ALSO = ("Also {p}.", "Separately, {p}.", "In parallel, {p}.")
_LAST = ("Finally, {p}.", "To finish, {p}.", "Last, {p}.")


def write_query(
    domain: Domain, calls: Sequence[PlannedCall], rng: random.Random, condition: Condition | None = None
) -> str:
    """The easy query for ``calls`` (loop items fold into one "for each" sentence)."""
    sentences: list[str] = []
    last = len(calls) - 1
    for j, call in enumerate(calls):
        if call.loop_of is not None:
            if calls[j - 1].loop_of is None:
                entity = domain.entities[call.tool.id_params[next(iter(call.sources))]]
                sentences.append(f"For each of those {entity.plural}, {call_phrase(domain, call)}.")
            continue
        if condition is not None and j == condition.enrichment:
            subject = domain.entities["P"].noun
            sentences.append(f"If that {subject} {condition.text}, also {call_phrase(domain, call)}.")
            continue
        phrase = call_phrase(
            domain, call, conditional_param=condition.argument if condition and j == condition.consumer else None
        )
        if j == 0:
            template = rng.choice(_OPENERS)
        elif call.sources and (j - 1) in call.sources.values():
            template = rng.choice(_LAST) if j == last else rng.choice(_NEXT)
        elif not call.sources:
            template = rng.choice(_ALSO)
        else:
            template = rng.choice(_LAST) if j == last else rng.choice(_NEXT)
        sentences.append(template.replace("{p}", phrase))
    text = " ".join(sentences)
    return text[0].upper() + text[1:]
