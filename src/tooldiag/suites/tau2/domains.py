"""Per-domain facts tooldiag keeps itself: write tools, the transfer tool, the policy rule.

Result files carry no tool types (notes/tau2-bench.md §4), so a write is recognised by
name against ``data/write_tools.json``. Forks rename domains (``airline-relaxed``,
``airline_long``); their tools are the base domain's, found by the name's first word.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from tooldiag.errors import UserError

STANDARD_DOMAINS = ("airline", "retail")


@cache
def load_data(name: str) -> Any:
    """A JSON file shipped in ``tooldiag/suites/tau2/data``."""
    text = resources.files("tooldiag.suites.tau2").joinpath("data", name).read_text(encoding="utf-8")
    return json.loads(text)


@cache
def load_text(name: str) -> str:
    return resources.files("tooldiag.suites.tau2").joinpath("data", name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class DomainTools:
    """Tool types of one base domain."""

    domain: str
    write: frozenset[str]
    read: frozenset[str]
    generic: frozenset[str]
    transfer: str
    #: The policy sentence that demands explicit consent before writes (notes §5).
    confirmation_rule: str

    def is_write(self, tool_name: str) -> bool:
        return tool_name in self.write


def base_domain(domain_name: str) -> str | None:
    """``airline`` for ``airline``, ``airline-relaxed``, ``airline_long``; ``None`` if unknown."""
    head = re.split(r"[-_\s.]", domain_name.strip().lower(), maxsplit=1)[0]
    return head if head in STANDARD_DOMAINS else None


def is_standard_domain(domain_name: str) -> bool:
    """True only for the upstream names, whose task ids the shipped id lists refer to."""
    return domain_name.strip().lower() in STANDARD_DOMAINS


def domain_tools(domain_name: str, *, where: str = "results") -> DomainTools:
    """The tool table of ``domain_name``'s base domain; a clear error for other domains."""
    base = base_domain(domain_name)
    if base is None:
        raise UserError(
            f"{where}: domain {domain_name!r} is not supported",
            hint="tooldiag knows the write tools of tau2's airline and retail domains "
            "(and forks named airline-*/retail-*); pass results of those domains",
        )
    table = load_data("write_tools.json")
    entry = table["domains"][base]
    return DomainTools(
        domain=base,
        write=frozenset(entry["write"]),
        read=frozenset(entry["read"]),
        generic=frozenset(entry["generic"]),
        transfer=table["transfer_tool"],
        confirmation_rule=table["confirmation_policy"][base],
    )


_RULE_PATTERN = re.compile(r"[^.\n]*explicit user confirmation[^.\n]*\.", re.IGNORECASE)


def confirmation_rule_in_policy(policy: str | None) -> str | None:
    """The policy's own consent sentence ("... obtain explicit user confirmation (yes) to
    proceed."), or ``None`` when the embedded policy has none (a modified domain)."""
    if not policy:
        return None
    match = _RULE_PATTERN.search(policy)
    return match.group(0).strip() if match else None
