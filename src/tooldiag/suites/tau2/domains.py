"""Per-domain facts tooldiag keeps itself: tool types, the transfer tool, the policy rule.

Result files carry no tool types (``ActionCheck.tool_type`` covers reference actions only,
>=1.0), so a write is recognised by name against ``data/tool_types.json``: every tool of
tau2-bench 1.0.1 with the ``ToolType`` its ``@is_tool`` decorator gives it, per domain and
side (agent, user, banking's discoverable tools), generated from
``shared/tau2/tau2-tools.json`` by ``scripts/tau2_tool_types.py``. Tools newer than a file's
tau2 version are left out for that file (retail's ``get_item_details`` is 1.0.0).

The user simulator of telecom (and banking, mock) has tools of its own: a user-side call
(``requestor: "user"``, on a user message) is the user acting on their phone, never an agent
action, so agent tables only ever look up agent tools. Forks rename domains
(``airline-relaxed``, ``airline_long``); their tools are the base domain's, found by the
longest known domain name the name starts with.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Protocol

from tooldiag.errors import UserError
from tooldiag.suites.tau2.tau2_version import V1_0_1, version_rank

#: Domains whose tools are shipped (``mock`` is tau2's test domain).
KNOWN_DOMAINS = ("airline", "retail", "telecom", "banking_knowledge", "mock")
#: The domains the shipped ask-required and confirmation-flip ids refer to.
ASK_DOMAINS = ("airline", "retail")
STANDARD_DOMAINS = ("airline", "retail", "telecom", "telecom-workflow", "banking_knowledge", "mock")

WRITE, READ, GENERIC, THINK = "WRITE", "READ", "GENERIC", "THINK"


@cache
def load_data(name: str) -> Any:
    """A JSON file shipped in ``tooldiag/suites/tau2/data``."""
    text = resources.files("tooldiag.suites.tau2").joinpath("data", name).read_text(encoding="utf-8")
    return json.loads(text)


@cache
def load_text(name: str) -> str:
    return resources.files("tooldiag.suites.tau2").joinpath("data", name).read_text(encoding="utf-8")


class _Call(Protocol):
    name: str

    @property
    def arguments(self) -> dict[str, Any] | None: ...


def _wrapped_name(call: _Call, argument: str) -> str | None:
    """The real tool behind a banking wrapper call (``arguments[argument]``), if it names one."""
    arguments = call.arguments or {}
    name = arguments.get(argument)
    return name if isinstance(name, str) and name else None


@dataclass(frozen=True)
class DomainTools:
    """Tool types of one base domain, for one tau2 version."""

    domain: str
    #: Agent-side tool name -> type (READ / WRITE / GENERIC / THINK).
    agent: dict[str, str]
    #: User-side tool name -> type (telecom, banking, mock users have tools).
    user: dict[str, str] = field(default_factory=dict)
    #: banking: tools the agent unlocks and calls through ``call_discoverable_agent_tool``.
    discoverable_agent: dict[str, str] = field(default_factory=dict)
    discoverable_user: dict[str, str] = field(default_factory=dict)
    #: wrapper tool name -> (side table attribute, argument naming the real tool).
    wrappers: dict[str, tuple[str, str]] = field(default_factory=dict)
    transfer: str = "transfer_to_human_agents"
    #: The policy sentence that demands explicit consent before writes (notes §5);
    #: the generic rule for domains whose policy tooldiag does not ship.
    confirmation_rule: str = ""
    version: str = V1_0_1

    @property
    def write(self) -> frozenset[str]:
        return frozenset(name for name, kind in self.agent.items() if kind == WRITE)

    @property
    def read(self) -> frozenset[str]:
        return frozenset(name for name, kind in self.agent.items() if kind == READ)

    @property
    def generic(self) -> frozenset[str]:
        return frozenset(name for name, kind in self.agent.items() if kind == GENERIC)

    def tool_type(self, call: str | _Call, *, side: str = "agent") -> str | None:
        """The type of a call (or tool name) on ``side`` (``agent`` or ``user``); ``None`` for a
        tool the domain does not have (a hallucinated name, the solo agent's ``done``).

        A banking wrapper call takes the type of the discoverable tool it names, when known,
        and the wrapper's own type (WRITE) otherwise.
        """
        name = call if isinstance(call, str) else call.name
        table: dict[str, str] = self.agent if side == "agent" else self.user
        kind = table.get(name)
        wrapper = self.wrappers.get(name)
        if wrapper is not None and kind is not None and not isinstance(call, str):
            inner = _wrapped_name(call, wrapper[1])
            inner_kind = getattr(self, wrapper[0]).get(inner) if inner else None
            if inner_kind is not None:
                return str(inner_kind)
        return kind

    def is_write(self, call: str | _Call) -> bool:
        """An agent write: the agent-side type is WRITE (banking wrappers resolved)."""
        return self.tool_type(call) == WRITE

    def is_user_write(self, call: str | _Call) -> bool:
        return self.tool_type(call, side="user") == WRITE


def base_domain(domain_name: str) -> str | None:
    """``airline`` for ``airline``, ``airline-relaxed``, ``airline_long``; ``telecom`` for
    ``telecom-workflow``; ``banking_knowledge`` for itself; ``None`` if unknown."""
    name = domain_name.strip().lower()
    aliases: dict[str, str] = load_data("tool_types.json")["aliases"]
    if name in aliases:
        return aliases[name]
    for known in sorted(KNOWN_DOMAINS, key=len, reverse=True):
        if name == known or re.match(re.escape(known) + r"[-_\s.]", name):
            return known
    return None


def is_standard_domain(domain_name: str) -> bool:
    """True only for the upstream names, whose task ids the shipped id lists refer to."""
    return domain_name.strip().lower() in STANDARD_DOMAINS


def _since_filter(table: dict[str, str], since: dict[str, str] | str | None, version: str) -> dict[str, str]:
    if since is None:
        return dict(table)
    if isinstance(since, str):  # the whole side is newer than ``since``
        return dict(table) if version_rank(version) >= version_rank(since) else {}
    return {
        name: kind for name, kind in table.items() if version_rank(version) >= version_rank(since.get(name, "pre-1.0"))
    }


def domain_tools(domain_name: str, *, where: str = "results", version: str = V1_0_1) -> DomainTools:
    """The tool table of ``domain_name``'s base domain at ``version``; a clear error for other domains."""
    base = base_domain(domain_name)
    if base is None:
        raise UserError(
            f"{where}: domain {domain_name!r} is not supported",
            hint="tooldiag knows the tools of tau2's " + ", ".join(KNOWN_DOMAINS) + " domains "
            "(and forks named airline-*/retail-*/...); pass results of those domains",
        )
    types = load_data("tool_types.json")
    rules = load_data("policy_rules.json")
    entry = types["domains"][base]
    since = types["since"]["tools"].get(base, {})
    sides = {side: _since_filter(entry[side], since.get(side), version) for side in ("agent", "user")}
    return DomainTools(
        domain=base,
        agent=sides["agent"],
        user=sides["user"],
        discoverable_agent=dict(entry["discoverable_agent"]),
        discoverable_user=dict(entry["discoverable_user"]),
        wrappers={name: (w["side"], w["name_argument"]) for name, w in types["wrappers"].items()},
        transfer=rules["transfer_tool"],
        confirmation_rule=rules["confirmation_policy"].get(base, rules["generic_confirmation_rule"]),
        version=version,
    )


_RULE_PATTERN = re.compile(r"[^.\n]*explicit user confirmation[^.\n]*\.", re.IGNORECASE)


def confirmation_rule_in_policy(policy: str | None) -> str | None:
    """The policy's own consent sentence ("... obtain explicit user confirmation (yes) to
    proceed."), or ``None`` when the embedded policy has none (a modified domain)."""
    if not policy:
        return None
    match = _RULE_PATTERN.search(policy)
    return match.group(0).strip() if match else None
