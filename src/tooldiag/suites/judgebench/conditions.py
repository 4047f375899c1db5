"""Judge prompt conditions (paper 000 §3.2, §4.2, App. J, W; notes §4) and the C3 derangement.

=========================  =====================================  ==========================
condition                  prompt                                  reference shown
=========================  =====================================  ==========================
``with_gt``                ``judge_with_gt``                       the record's own
``without_gt``             ``judge_without_gt``                    none
``without_gt_half_default``  ``judge_without_gt_half_default`` (C2)  none
``free_form``              ``judge_free_form`` (RQ6)               the record's own
``corrupted_gt``           ``judge_with_gt`` (C3)                  another record's, same DAG
``prometheus``             ``judge_prometheus`` × 4 metrics        the record's own
``prometheus_without_gt``  ``judge_prometheus_without_gt`` × 4     none
=========================  =====================================  ==========================

The programmatic reference is always the record's *true* expected plan, whatever the prompt shows.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from tooldiag.errors import UserError


@dataclass(frozen=True)
class Condition:
    name: str
    template: str
    #: Which reference the prompt shows: the record's own, another record's, or none.
    reference: Literal["own", "corrupted"] | None
    #: Prometheus-style: one absolute-grading call per metric, merged into one verdict.
    per_metric: bool = False
    summary: str = ""


CONDITIONS: dict[str, Condition] = {
    c.name: c
    for c in (
        Condition("with_gt", "judge_with_gt", "own", summary="rubric prompt with the reference plan"),
        Condition("without_gt", "judge_without_gt", None, summary="rubric prompt, no reference, default 1.0"),
        Condition(
            "without_gt_half_default",
            "judge_without_gt_half_default",
            None,
            summary="no reference, default 0.5 when unsure (paper C2)",
        ),
        Condition("free_form", "judge_free_form", "own", summary="no rubric, floats in [0, 1] (paper RQ6)"),
        Condition(
            "corrupted_gt", "judge_with_gt", "corrupted", summary="another record's reference, same DAG (paper C3)"
        ),
        Condition("prometheus", "judge_prometheus", "own", per_metric=True, summary="4 absolute-grading calls"),
        Condition(
            "prometheus_without_gt",
            "judge_prometheus_without_gt",
            None,
            per_metric=True,
            summary="4 absolute-grading calls, no reference",
        ),
    )
}

DEFAULT_CONDITIONS = ("with_gt", "without_gt")

#: Condition contrasts reported per judge: name -> (a, b), the figure is align(a) - align(b).
CONTRASTS: dict[str, tuple[str, str]] = {
    "gt_lift": ("with_gt", "without_gt"),
    "corrupted_vs_without_gt": ("corrupted_gt", "without_gt"),
    "corrupted_vs_with_gt": ("corrupted_gt", "with_gt"),
    "half_default_shift": ("without_gt_half_default", "without_gt"),
    "structured_vs_free_form": ("with_gt", "free_form"),
    "prometheus_gt_lift": ("prometheus", "prometheus_without_gt"),
}


def parse_conditions(text: str | Iterable[str]) -> list[str]:
    """``"with_gt,without_gt"`` (or ``all``) -> validated names, in the given order."""
    parts = [p.strip() for p in (text.split(",") if isinstance(text, str) else text) if p.strip()]
    if parts == ["all"]:
        return list(CONDITIONS)
    unknown = [p for p in parts if p not in CONDITIONS]
    if unknown or not parts:
        raise UserError(
            f"unknown judge condition(s): {', '.join(unknown) or '(none given)'}",
            hint=f"use a comma list of: {', '.join(CONDITIONS)} (or all)",
        )
    return list(dict.fromkeys(parts))


def derangement_map(ids_by_dag: dict[str, list[str]], seed: int, max_shuffles: int = 1000) -> dict[str, str]:
    """For C3: each record id -> the id whose reference it is shown (same ``dag_type``).

    Within each DAG group (ids sorted), shuffle with a generator seeded by ``seed`` and the
    group name until no record keeps its own reference (at most ``max_shuffles`` tries, as
    released; a rotation by one is the fallback, itself a derangement). A group of one keeps
    its own reference.
    """
    out: dict[str, str] = {}
    for dag in sorted(ids_by_dag):
        ids = sorted(ids_by_dag[dag])
        if len(ids) == 1:
            out[ids[0]] = ids[0]
            continue
        rng = random.Random(f"{seed}:{dag}")
        perm = None
        for _ in range(max_shuffles):
            candidate = ids[:]
            rng.shuffle(candidate)
            if all(a != b for a, b in zip(ids, candidate, strict=True)):
                perm = candidate
                break
        if perm is None:
            perm = ids[1:] + ids[:1]
        out.update(zip(ids, perm, strict=True))
    return out


def group_by_dag(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """``(record_id, dag_type)`` pairs -> dag_type -> ids."""
    groups: dict[str, list[str]] = defaultdict(list)
    for rid, dag in pairs:
        groups[dag].append(rid)
    return dict(groups)


def derangement_basis(ids: Iterable[str], seed: int) -> str:
    """A short fingerprint of (seed, record set) that fixes the C3 mapping of a run."""
    payload = f"{seed}|" + "|".join(sorted(ids))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
