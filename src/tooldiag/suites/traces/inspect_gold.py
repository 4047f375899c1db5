"""Gold classes of Inspect samples from the benchmarks tooldiag knows: inspect_evals' BFCL and tau2.

The facts are the suites' own, imported from them, so an Inspect log of these tasks gets the gold
class a tooldiag run of the same case gets:

* **BFCL** (task ``bfcl`` or ``inspect_evals/bfcl``, any task whose name starts with ``bfcl``):
  the category comes from the sample metadata (``category_name``, ``category`` or
  ``test_category``), else from the sample id (BFCL ids are ``multi_turn_miss_func_12``), and
  the gold is :data:`tooldiag.suites.bfcl.gold.BFCL_GOLD` (base, long_context -> tool_call,
  miss_func -> refuse, miss_param -> ask). When the metadata holds BFCL's per-turn ground truth
  (``ground_truth``: one list of calls per turn), the gold turns of
  :func:`~tooldiag.suites.bfcl.gold.bfcl_gold_turns` are marked for turn-level GAR. Other BFCL
  categories (single-turn ones) have no gold in tooldiag: give them with ``--gold-map``.
* **tau2** (a task whose name contains ``tau2``; the domain from the metadata's ``domain`` or
  the task name: airline, retail, telecom, banking): tau2's task classes are per task, not per
  turn (:mod:`tooldiag.suites.tau2.tasks`), and ask may co-occur with tool_call. One gold per
  conversation is chosen: **ask** when the task id is one of the suite's verified ask-required
  ids (airline and retail only), else **tool_call** when the task's reference actions (its
  ``evaluation_criteria``, found in the metadata or its ``task`` object) are non-empty, else
  **refuse**. Without reference actions in the metadata the gold is unknown (``--gold-map``).
  The category is ``<domain>_<gold>`` so each category keeps one gold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tooldiag.classify.classes import ActionClass

_TAU2_DOMAIN = re.compile(r"(airline|retail|telecom|banking)")


@dataclass(frozen=True)
class BenchmarkGold:
    """What a known benchmark says about one sample; ``gold`` is ``None`` when it says nothing."""

    benchmark: str
    category: str | None
    gold: ActionClass | None
    gold_turns: tuple[int, ...] | None = None


def _task_base(task: str) -> str:
    """``inspect_evals/bfcl`` -> ``bfcl`` (the registry prefix dropped, lower case)."""
    return task.rsplit("/", 1)[-1].lower()


def benchmark_gold(task: str, sample_id: Any, metadata: Mapping[str, Any]) -> BenchmarkGold | None:
    """The gold of a sample of a known benchmark task, or ``None`` for any other task."""
    base = _task_base(task)
    if base.startswith("bfcl"):
        return _bfcl_gold(sample_id, metadata)
    if "tau2" in base or "tau_2" in base or "tau-2" in base:
        return _tau2_gold(base, sample_id, metadata)
    return None


def _bfcl_category(sample_id: Any, metadata: Mapping[str, Any]) -> str | None:
    for key in ("category_name", "category", "test_category"):
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value.removeprefix("multi_turn_")
    prefix, _, number = str(sample_id).rpartition("_")
    if prefix and number.isdigit():
        return prefix.removeprefix("multi_turn_")
    return None


def _bfcl_gold(sample_id: Any, metadata: Mapping[str, Any]) -> BenchmarkGold:
    from tooldiag.suites.bfcl.gold import BFCL_GOLD, bfcl_gold_turns

    category = _bfcl_category(sample_id, metadata)
    gold = BFCL_GOLD.get(category) if category is not None else None
    turns = None
    ground_truth = metadata.get("ground_truth")
    if gold is not None and isinstance(ground_truth, list) and all(isinstance(t, list) for t in ground_truth):
        turns = bfcl_gold_turns(str(category), [len(t) for t in ground_truth])
    return BenchmarkGold("bfcl", category, gold, turns)


def _tau2_task(metadata: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The tau2 task object the sample embeds: the metadata itself or its ``task`` entry."""
    for candidate in (metadata, metadata.get("task")):
        if isinstance(candidate, Mapping) and isinstance(candidate.get("evaluation_criteria"), Mapping):
            return candidate
    return None


def _tau2_gold(task_base: str, sample_id: Any, metadata: Mapping[str, Any]) -> BenchmarkGold:
    from tooldiag.suites.tau2.matching import reference_paths
    from tooldiag.suites.tau2.schema import TaskRecord
    from tooldiag.suites.tau2.tasks import ask_labels

    named = metadata.get("domain")
    found = _TAU2_DOMAIN.search(named.lower() if isinstance(named, str) else task_base)
    domain = str(named) if isinstance(named, str) and named else (found.group(1) if found else "tau2")
    record = _tau2_task(metadata)
    task_id = str(record.get("id", sample_id)) if record is not None else str(sample_id)
    gold: ActionClass | None = None
    if task_id in ask_labels(domain).ids:
        gold = ActionClass.ASK
    elif record is not None:
        task = TaskRecord.model_validate({**record, "id": task_id})
        has_actions = any(actions for _, actions in reference_paths(task))
        gold = ActionClass.TOOL_CALL if has_actions else ActionClass.REFUSE
    category = f"{domain}_{gold.value}" if gold is not None else domain
    return BenchmarkGold("tau2", category, gold)
