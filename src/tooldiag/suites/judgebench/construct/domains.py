"""The fifteen enterprise domains and their typed tools, expanded from ``data/domains.json``.

Why a slot pattern: topologies need tools whose outputs feed other tools' inputs in known
ways (a source, chains, two branches that join, an optional enrichment, a list to loop
over). Each domain names six entities (``P`` the party looked up first, ``R`` its records,
``A`` and ``B`` two parts of a record, ``D`` a detail of ``A``, ``X`` an enrichment of ``P``)
and one tool per slot of :data:`SLOTS`; the slot fixes which entity ids a tool takes and
returns, the data file gives the names, wording and literal parameters. Data flows only by
entity id: a parameter named like an earlier output field takes that field's value.

Every core tool also gets near-miss distractors (``find_customer`` -> ``find_customers``,
``search_customer``) with the same schema, which are offered but never planned.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

#: Keys of a parameter or output spec that are ours, not JSON Schema (stripped from offered tools).
INTERNAL_KEYS = ("kind", "prefix", "values", "say", "say_true", "say_false", "req", "entity")

ENTITY_KEYS = ("P", "R", "A", "B", "D", "X")


@dataclass(frozen=True)
class Slot:
    """What a slot's tool takes and returns in entity ids (``(entity, required)``)."""

    id_in: tuple[tuple[str, bool], ...]
    id_out: tuple[str, ...] = ()
    list_out: str | None = None
    extra_out: tuple[tuple[str, dict[str, Any]], ...] = ()
    say: str = ""
    description: str = ""


def _status(entity: str) -> dict[str, Any]:
    return {"type": "string", "kind": "status", "entity": entity}


SLOTS: dict[str, Slot] = {
    "lookup": Slot(
        (),
        ("P",),
        extra_out=(
            ("status", _status("P")),
            ("flag", {"type": "boolean"}),
            ("created_on", {"type": "string", "kind": "date"}),
        ),
        say="look up the {P_noun} {lookup}",
        description="Find a {P_noun} by {lookup_label}.",
    ),
    "x_lookup": Slot(
        (),
        ("X",),
        extra_out=(("level", {"type": "integer", "minimum": 1, "maximum": 5}),),
        say="find the {X_noun} with the reference number",
        description="Find a {X_noun} by its reference number.",
    ),
    "b_lookup": Slot(
        (),
        ("B",),
        extra_out=(("amount", {"type": "number"}),),
        say="find the {B_noun} with the reference number",
        description="Find a {B_noun} by its reference number.",
    ),
    "latest": Slot(
        (("P", True),),
        ("R",),
        extra_out=(("opened_on", {"type": "string", "kind": "date"}), ("total_value", {"type": "number"})),
        say="find the most recent {R_noun} of {P}",
        description="Return the most recent {R_noun} of a {P_noun}.",
    ),
    "list": Slot(
        (("P", True),),
        list_out="R",
        extra_out=(("total_count", {"type": "integer", "minimum": 2, "maximum": 40}),),
        say="list the {R_nouns} of {P}",
        description="List the {R_nouns} of a {P_noun}.",
    ),
    "open_list": Slot(
        (),
        list_out="R",
        extra_out=(("generated_at", {"type": "string", "kind": "date"}),),
        say="list the {R_nouns} that need attention",
        description="List the {R_nouns} that currently need attention (no arguments).",
    ),
    "part_a": Slot(
        (("R", True),),
        ("A",),
        extra_out=(("status", _status("A")),),
        say="get the {A_noun} of {R}",
        description="Get the {A_noun} linked to a {R_noun}.",
    ),
    "part_b": Slot(
        (("R", True),),
        ("B",),
        extra_out=(("amount", {"type": "number"}),),
        say="get the {B_noun} of {R}",
        description="Get the {B_noun} linked to a {R_noun}.",
    ),
    "detail": Slot(
        (("A", True),),
        ("D",),
        extra_out=(("rating", {"type": "number", "minimum": 1, "maximum": 5}),),
        say="find the {D_noun} behind {A}",
        description="Find the {D_noun} responsible for a {A_noun}.",
    ),
    "extra": Slot(
        (("P", True),),
        ("X",),
        extra_out=(("level", {"type": "integer", "minimum": 1, "maximum": 5}),),
        say="pull up the {X_noun} of {P}",
        description="Get the {X_noun} of a {P_noun}.",
    ),
    "record_view": Slot(
        (("R", True),),
        extra_out=(
            ("status", _status("R")),
            ("item_count", {"type": "integer", "minimum": 1, "maximum": 12}),
            ("last_updated", {"type": "string", "kind": "date"}),
        ),
        say="get the details of {R}",
        description="Get the status and details of a {R_noun}.",
    ),
    "primary": Slot((("P", True), ("X", False)), extra_out=(("confirmed", {"type": "boolean"}),)),
    "join": Slot((("A", True), ("B", True)), extra_out=(("confirmed", {"type": "boolean"}),)),
    "record": Slot((("R", True), ("X", True)), extra_out=(("confirmed", {"type": "boolean"}),)),
    "detail_action": Slot((("D", True),), extra_out=(("confirmed", {"type": "boolean"}),)),
    "follow_up": Slot((("primary_result", True),), extra_out=(("sent", {"type": "boolean"}),)),
    "config": Slot((("P", True),), extra_out=(("applied_settings", {"type": "integer", "minimum": 1, "maximum": 19}),)),
}

#: Action slot -> the key of its entry under ``actions`` in the data file.
_ACTION_KEYS = {
    "primary": "primary",
    "join": "join",
    "record": "record",
    "detail_action": "detail",
    "follow_up": "follow_up",
    "config": "config",
}

_VERB_SWAPS = {
    "find": "search",
    "get": "fetch",
    "list": "fetch",
    "create": "add",
    "issue": "grant",
    "open": "start",
    "apply": "set",
    "book": "reserve",
    "schedule": "plan",
    "log": "record",
    "attach": "link",
    "align": "sync",
    "request": "ask",
    "assign": "delegate",
    "configure": "update",
    "record": "log",
    "escalate": "raise",
    "notify": "alert",
    "send": "queue",
    "reconcile": "match",
    "match": "pair",
    "post": "publish",
}


@dataclass(frozen=True)
class Entity:
    noun: str
    plural: str
    field: str
    prefix: str


@dataclass
class ToolDef:
    """One tool: its offered schema, its output schema and the wording the query writer uses."""

    name: str
    description: str
    slot: str
    #: parameter name -> spec (JSON Schema plus the internal keys of :data:`INTERNAL_KEYS`).
    params: dict[str, dict[str, Any]]
    required: list[str]
    #: output field name -> spec (JSON Schema plus ``kind``/``prefix``).
    returns: dict[str, dict[str, Any]]
    #: the verb phrase with ``{param}`` placeholders for id parameters ("" for distractors).
    say: str = ""
    #: parameter name -> the entity it carries (id parameters only).
    id_params: dict[str, str] = field(default_factory=dict)
    #: output field -> entity, for scalar ids and (``list_fields``) lists of ids.
    id_fields: dict[str, str] = field(default_factory=dict)
    list_fields: dict[str, str] = field(default_factory=dict)
    distractor_of: str | None = None

    def offered(self) -> dict[str, Any]:
        """The tool as a record's ``available_tools`` entry (released layout, ``"type": "dict"``)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "dict",
                    "properties": {k: clean_spec(v) for k, v in self.params.items()},
                    "required": list(self.required),
                },
            },
        }

    def schema(self) -> dict[str, Any]:
        """What :func:`~tooldiag.suites.judgebench.construct.execute.execute` takes: inputs and outputs."""
        return {
            "name": self.name,
            "parameters": {
                "type": "object",
                "properties": {k: clean_spec(v) for k, v in self.params.items()},
                "required": list(self.required),
            },
            "returns": {"type": "object", "properties": copy.deepcopy(self.returns)},
        }


@dataclass
class Domain:
    key: str
    title: str
    company: str
    email_domain: str
    system_prompt: str
    entities: dict[str, Entity]
    flag: tuple[str, str, str]
    #: slot -> its core tool.
    core: dict[str, ToolDef]
    distractors: list[ToolDef]
    pools: dict[str, list[str]]

    def tool(self, name: str) -> ToolDef:
        for tool in self.all_tools():
            if tool.name == name:
                return tool
        raise KeyError(name)

    def all_tools(self) -> list[ToolDef]:
        return [*self.core.values(), *self.distractors]


def clean_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A spec without our internal keys, recursively (what a model sees)."""
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if key in INTERNAL_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: clean_spec(v) for k, v in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = clean_spec(value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@cache
def _raw() -> dict[str, Any]:
    text = resources.files("tooldiag.suites.judgebench.construct").joinpath("data/domains.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def domain_keys() -> tuple[str, ...]:
    return tuple(d["key"] for d in _raw()["domains"])


@cache
def load_domains() -> dict[str, Domain]:
    """Every domain, expanded and checked (a broken data file fails here, not mid-generation)."""
    raw = _raw()
    domains = {d["key"]: _build_domain(d, raw["pools"], raw["shared_config_params"]) for d in raw["domains"]}
    for domain in domains.values():
        _check(domain)
    return domains


def _param(spec: dict[str, Any], name: str) -> dict[str, Any]:
    out = copy.deepcopy(spec)
    out.setdefault("description", name.replace("_", " ").capitalize())
    if out.get("type") == "object":
        out["required"] = sorted(out.get("properties", {}))
        for sub, sub_spec in out["properties"].items():
            sub_spec.setdefault("description", sub.replace("_", " ").capitalize())
    return out


def _build_domain(data: dict[str, Any], pools: dict[str, list[str]], shared: dict[str, Any]) -> Domain:
    entities = {k: Entity(*data["entities"][k]) for k in ENTITY_KEYS}
    statuses = data["statuses"]
    words = {f"{k}_noun": e.noun for k, e in entities.items()} | {f"{k}_nouns": e.plural for k, e in entities.items()}
    lookup = data["lookup"]
    words["lookup_label"] = lookup["name"].replace("_", " ")
    primary_result = data["actions"]["primary"]["result"]
    results = {
        "primary_result": Entity(primary_result[0], primary_result[0] + "s", primary_result[1], primary_result[2])
    }
    all_entities = entities | results
    core: dict[str, ToolDef] = {}
    for slot_name, slot in SLOTS.items():
        action = data["actions"].get(_ACTION_KEYS.get(slot_name, ""), None)
        params: dict[str, dict[str, Any]] = {}
        required: list[str] = []
        id_params: dict[str, str] = {}
        for entity_key, is_required in slot.id_in:
            entity = all_entities[entity_key]
            params[entity.field] = {"type": "string", "description": f"Identifier of the {entity.noun}"}
            id_params[entity.field] = entity_key
            if is_required:
                required.append(entity.field)
            else:
                params[entity.field]["say"] = f"citing {{{entity.field}}}"
        if slot_name == "lookup":
            spec = {k: v for k, v in lookup.items() if k != "name"}
            params[lookup["name"]] = _param(spec, lookup["name"])
            required.append(lookup["name"])
            params["include_inactive"] = _param(
                {"type": "boolean", "say_true": "including inactive records", "say_false": "skipping inactive records"},
                "include_inactive",
            )
        if slot_name in ("x_lookup", "b_lookup"):
            prefix = entities[slot.id_out[0]].prefix
            params["reference_number"] = _param(
                {"type": "string", "kind": "code", "prefix": f"{prefix}R", "say": "{value}"}, "reference_number"
            )
            required.append("reference_number")
        if slot_name == "list":
            params["status"] = _param(
                {"type": "string", "enum": list(statuses["R"]), "say": "that are {value}"}, "status"
            )
        if slot_name == "record_view":
            params["include_history"] = _param(
                {"type": "boolean", "say_true": "with its history", "say_false": "without its history"},
                "include_history",
            )
        literal = dict((action or {}).get("params", {}))
        if slot_name == "config":
            literal |= shared
        for name, spec in literal.items():
            params[name] = _param({k: v for k, v in spec.items() if k != "req"}, name)
            if spec.get("req"):
                required.append(name)
        returns: dict[str, dict[str, Any]] = {}
        id_fields: dict[str, str] = {}
        list_fields: dict[str, str] = {}
        for entity_key in slot.id_out:
            entity = entities[entity_key]
            returns[entity.field] = {"type": "string", "kind": "id", "prefix": entity.prefix}
            id_fields[entity.field] = entity_key
        if slot.list_out:
            entity = entities[slot.list_out]
            returns[entity.field + "s"] = {
                "type": "array",
                "items": {"type": "string", "kind": "id", "prefix": entity.prefix},
                "minItems": 2,
                "maxItems": 3,
            }
            list_fields[entity.field + "s"] = slot.list_out
        if action:
            _noun, result_field, prefix = action["result"]
            returns[result_field] = {"type": "string", "kind": "id", "prefix": prefix}
            if slot_name == "primary":
                id_fields[result_field] = "primary_result"
        for out_name, spec in slot.extra_out:
            spec = copy.deepcopy(spec)
            if out_name == "flag":
                out_name = data["flag"][0]
            if spec.get("kind") == "status":
                spec = {"type": "string", "enum": list(statuses[spec["entity"]])}
            returns[out_name] = spec
        if action:
            name, say = action["name"], action["say"]
            description = action.get("description") or _action_description(say, all_entities)
        else:
            name = data["names"].get(slot_name) or "find_" + entities[slot.id_out[0]].noun.replace(" ", "_")
            say = slot.say.format(**words, **{k: "{" + all_entities[k].field + "}" for k in all_entities}, lookup="")
            description = slot.description.format(**words)
        say = _say_ids(say, all_entities)
        core[slot_name] = ToolDef(
            name=name,
            description=description,
            slot=slot_name,
            params=params,
            required=required,
            returns=returns,
            say=" ".join(say.split()),
            id_params=id_params,
            id_fields=id_fields,
            list_fields=list_fields,
        )
    return Domain(
        key=data["key"],
        title=data["title"],
        company=data["company"],
        email_domain=data["email_domain"],
        system_prompt=data["system_prompt"],
        entities=all_entities,
        flag=tuple(data["flag"]),
        core=core,
        distractors=_distractors(core),
        pools=pools,
    )


def _say_ids(say: str, entities: dict[str, Entity]) -> str:
    """``{P}`` (data spelling) -> ``{customer_id}`` (the parameter the phrase renders)."""
    for key, entity in entities.items():
        say = say.replace("{" + key + "}", "{" + entity.field + "}")
    return say.replace("{result}", "{" + entities["primary_result"].field + "}")


def _action_description(say: str, entities: dict[str, Entity]) -> str:
    text = say
    for key, entity in entities.items():
        text = text.replace("{" + key + "}", f"a {entity.noun}")
    text = text.replace("{result}", f"a {entities['primary_result'].noun}")
    return text[0].upper() + text[1:] + "."


def _distractors(core: dict[str, ToolDef]) -> list[ToolDef]:
    """Two near-miss variants per core tool: number toggled, verb swapped (never planned)."""
    taken = {tool.name for tool in core.values()}
    out = []
    for tool in core.values():
        head, _, rest = tool.name.partition("_")
        plural = tool.name[:-1] if tool.name.endswith("s") else tool.name + "s"
        swapped = f"{_VERB_SWAPS.get(head, 'quick')}_{rest}" if head in _VERB_SWAPS else f"quick_{tool.name}"
        variants = [
            (plural, tool.description.rstrip(".") + " (batch variant: summaries only)."),
            (swapped, tool.description.rstrip(".") + " (legacy endpoint, kept for old integrations)."),
        ]
        for name, description in variants:
            if name in taken:
                continue
            taken.add(name)
            out.append(
                ToolDef(
                    name=name,
                    description=description,
                    slot=tool.slot,
                    params=copy.deepcopy(tool.params),
                    required=list(tool.required),
                    returns=copy.deepcopy(tool.returns),
                    distractor_of=tool.name,
                )
            )
    return out


def _check(domain: Domain) -> None:
    for tool in domain.all_tools():
        if not 0 <= len(tool.params) <= 19:
            raise ValueError(f"{domain.key}.{tool.name}: {len(tool.params)} parameters (0-19 allowed)")
        echoed = set(tool.params) & set(tool.returns)
        if echoed:
            raise ValueError(f"{domain.key}.{tool.name}: outputs echo inputs {sorted(echoed)}")
        missing = set(tool.required) - set(tool.params)
        if missing:
            raise ValueError(f"{domain.key}.{tool.name}: required {sorted(missing)} not among parameters")
    names = [t.name for t in domain.all_tools()]
    if len(names) != len(set(names)):
        raise ValueError(f"{domain.key}: duplicate tool names")
