"""Task classes of tau2-bench, computed from the tasks a results file embeds.

Two views, both reported (notes/tau2-bench.md §3, paper 001 §4.2):

* **paper** classes: ``tool_call``-required = non-empty reference actions; ``refuse``-
  required = empty actions; ``ask``-required = the 36 verified task ids (data, proposed
  by a 14-phrase keyword scan of the user scenario). ask may co-occur with either.
* **split by writes** (what the notes recommend, because "non-empty ⇒ tool_call"
  over-counts lookups, transfers and refusals): contains a write / reads only (non-empty,
  no write) / empty.

What is data and what is computed: the reference actions come from each results file;
the write-tool table, the ask ids and the scan phrases are shipped data
(``data/*.json``, ``data/ask_scan_phrases.txt``); everything else here is computed.
"""

from __future__ import annotations

import enum
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.tau2.domains import (
    ASK_DOMAINS,
    DomainTools,
    base_domain,
    domain_tools,
    is_standard_domain,
    load_data,
    load_text,
)
from tooldiag.suites.tau2.matching import is_user_action, reference_paths
from tooldiag.suites.tau2.schema import TaskRecord
from tooldiag.suites.tau2.tau2_version import V1_0_1


class WriteSplit(str, enum.Enum):
    """The notes' split of tasks by what their reference actions do to the database."""

    WRITE = "write"
    """At least one reference action is a write tool: tool_call-required."""

    READ_ONLY = "read_only"
    """Non-empty actions, none a write (lookups, transfers, refusals after a lookup):
    the correct end state is the initial database."""

    EMPTY = "empty"
    """No reference actions (policy refusals, users who decline)."""

    USER_ONLY = "user_only"
    """Reference actions on the user's side only (telecom: the agent talks the user through
    toggling airplane mode or reseating the SIM): no agent write is needed."""

    def __str__(self) -> str:
        return self.value


_QUOTE_FOLD = str.maketrans(
    {c: "'" for c in "\u2018\u2019\u201a\u201b\u00b4\u02bc"} | {c: '"' for c in "\u201c\u201d\u201e\u201f"}
)


def fold_quotes(text: str) -> str:
    """Typographic quotes to ASCII, so "don’t mention" matches "don't mention"."""
    return text.translate(_QUOTE_FOLD)


def ask_scan_phrases() -> list[str]:
    """The 14 phrases of the ask-required scan (``data/ask_scan_phrases.txt``)."""
    lines = load_text("ask_scan_phrases.txt").splitlines()
    return [line.strip().lower() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def scenario_text(task: TaskRecord) -> str:
    """Every string of the user scenario (what the simulated user is told), in order."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(task.user_scenario)
    return "\n".join(parts)


def scan_ask_candidates(tasks: Iterable[TaskRecord], phrases: list[str] | None = None) -> dict[str, list[str]]:
    """Task id -> the scan phrases its user scenario contains (candidates only).

    Paper 001 §4.2: the scan proposed 41 candidates, of which 36 survived manual
    verification against the scenario; the verified ids are shipped as data.
    """
    phrases = ask_scan_phrases() if phrases is None else [p.lower() for p in phrases]
    hits: dict[str, list[str]] = {}
    for task in tasks:
        text = fold_quotes(scenario_text(task)).lower()
        found = [phrase for phrase in phrases if phrase in text]
        if found:
            hits[task.id] = found
    return hits


def shipped_ask_ids(domain: str, list_name: str = "paper_subset") -> list[str]:
    """A task-id list of ``data/ask_required.json`` for a base domain."""
    return list(load_data("ask_required.json")["domains"][domain][list_name])


def load_ask_ids_file(path: str | Path) -> dict[str, set[str]]:
    """A user's ask ids: ``{"airline": ["2", ...], "retail": [...]}`` (keys are domain names)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(
            f"{path}: cannot read ask ids ({exc})", hint='write {"airline": ["2", "10"], "retail": ["5"]}'
        ) from None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise UserError(
            f"{path}: ask ids must map a domain name to a list of task ids", hint='write {"airline": ["2", "10"]}'
        )
    return {str(k).lower(): {str(i) for i in v} for k, v in data.items()}


@dataclass(frozen=True)
class AskLabels:
    """The ask-required ids used for one domain and where they came from."""

    ids: frozenset[str]
    source: str


def ask_labels(domain_name: str, override: Mapping[str, set[str]] | None = None) -> AskLabels:
    """The ask-required ids for a results file's domain.

    A user file wins. Otherwise the paper's verified subset of the base domain: for the
    upstream names it is exact; a renamed (modified) domain such as ``airline-relaxed``
    keeps upstream task ids, but its scenarios may differ, so the source says so. (The
    keyword scan is not used as a fallback: its unverified candidates include known
    false positives, e.g. airline 8, where the user states the information up front.)
    """
    key = domain_name.strip().lower()
    if override is not None and key in override:
        return AskLabels(frozenset(override[key]), "user file")
    base = base_domain(domain_name)
    if base is None:
        return AskLabels(frozenset(), "none (unknown domain)")
    if base not in ASK_DOMAINS:
        return AskLabels(frozenset(), f"none (no verified ask ids for {base})")
    if is_standard_domain(domain_name):
        return AskLabels(frozenset(shipped_ask_ids(base)), "paper subset (verified)")
    return AskLabels(
        frozenset(shipped_ask_ids(base)), f"paper subset of {base} (unverified for modified domain {domain_name})"
    )


@dataclass(frozen=True)
class TaskLabels:
    """The classes of one task."""

    task_id: str
    split: WriteSplit
    tool_call_required: bool
    refuse_required: bool
    ask_required: bool
    #: A reference path calls ``transfer_to_human_agents`` (the DB check cannot see it).
    transfer_required: bool
    #: Tasks whose user changes the request at confirmation (data, upstream ids only).
    confirmation_flip: bool
    n_reference_actions: int
    reference_writes: tuple[str, ...]
    #: Reference actions the user has to take (``requestor: "user"``; telecom, banking).
    n_user_reference_actions: int = 0


def label_task(task: TaskRecord, tools: DomainTools, ask_ids: frozenset[str], flip_ids: frozenset[str]) -> TaskLabels:
    """Classify one task from its reference actions (all acceptable outcomes of a fork).

    Only the agent's reference actions decide the agent's classes: a telecom task whose
    actions are all the user's (``requestor: "user"``) is ``user_only``, neither tool_call-
    nor refuse-required.
    """
    every = [action for _, path in reference_paths(task) for action in path]
    actions = [a for a in every if not is_user_action(a)]
    n_user = len(every) - len(actions)
    writes = tuple(dict.fromkeys(a.name for a in actions if tools.is_write(a)))
    if not every:
        split = WriteSplit.EMPTY
    elif not actions:
        split = WriteSplit.USER_ONLY
    elif writes:
        split = WriteSplit.WRITE
    else:
        split = WriteSplit.READ_ONLY
    return TaskLabels(
        task_id=task.id,
        split=split,
        tool_call_required=bool(actions),
        refuse_required=not every,
        ask_required=task.id in ask_ids,
        transfer_required=any(a.name == tools.transfer for a in actions),
        confirmation_flip=task.id in flip_ids,
        n_reference_actions=len(actions),
        reference_writes=writes,
        n_user_reference_actions=n_user,
    )


def label_tasks(
    tasks: Iterable[TaskRecord],
    domain_name: str,
    *,
    ask_override: Mapping[str, set[str]] | None = None,
    version: str = V1_0_1,
) -> tuple[dict[str, TaskLabels], AskLabels]:
    """Labels of every task of one results file, and the ask ids used."""
    tasks = list(tasks)
    tools = domain_tools(domain_name, version=version)
    asks = ask_labels(domain_name, ask_override)
    flips = (
        frozenset(shipped_ask_ids(tools.domain, "confirmation_flip")) if tools.domain in ASK_DOMAINS else frozenset()
    )
    return {task.id: label_task(task, tools, asks.ids, flips) for task in tasks}, asks


def class_counts(labels: Iterable[TaskLabels]) -> dict[str, int]:
    """Tasks per class: the paper's three (ask may overlap) and the notes' split."""
    counts: Counter[str] = Counter()
    for label in labels:
        counts["tasks"] += 1
        counts["tool_call"] += label.tool_call_required
        counts["refuse"] += label.refuse_required
        counts["ask"] += label.ask_required
        counts[str(label.split)] += 1
        counts["transfer"] += label.transfer_required
    keys = ["tasks", "tool_call", "ask", "refuse", "write", "read_only", "empty", "transfer"]
    if counts.get("user_only"):  # only telecom-like domains have it; airline/retail keep their columns
        keys.insert(keys.index("empty") + 1, "user_only")
    return {key: counts.get(key, 0) for key in keys}


__all__ = [
    "AskLabels",
    "TaskLabels",
    "WriteSplit",
    "ask_labels",
    "ask_scan_phrases",
    "base_domain",
    "class_counts",
    "fold_quotes",
    "label_task",
    "label_tasks",
    "load_ask_ids_file",
    "scan_ask_candidates",
    "scenario_text",
    "shipped_ask_ids",
]
