"""The "Repeats" section of a report over runs with ``--repeats K`` (docs/diagnostic.md).

A run with one draw per case has no such section: every renderer here returns nothing for it,
so one-draw reports are byte for byte what they were. The numbers come from
:mod:`tooldiag.metrics.repeats`; this module lays them out (markdown table, JSON object) and,
for ``--noise-aware``, keeps in the main table only the calibration flags that survive the
noise floor (:func:`noise_aware_categories`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tooldiag.metrics.gar import FLAG_BOUND_VIOLATION, FLAG_EXECUTION_FAILURE, FLAG_MASKING, CategorySummary
from tooldiag.metrics.repeats import RepeatSummary, Spread
from tooldiag.report.table import Column, Table, to_markdown

if TYPE_CHECKING:
    from tooldiag.report.model import RunReport

#: The flags the noise floor decides on (the others, errors_excluded and gar_not_computable, stay).
CALIBRATION_FLAGS = frozenset({FLAG_BOUND_VIOLATION, FLAG_MASKING, FLAG_EXECUTION_FAILURE})


def _num(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _spread_text(cell: Spread) -> str:
    if cell.mean is None:
        return "-"
    sd = "" if cell.sd is None else f" ± {cell.sd:.1f}"
    return f"{cell.mean:.1f}{sd} [{cell.low:.1f}, {cell.high:.1f}]"


def _pass_k_text(values: tuple[float | None, ...]) -> str:
    return " / ".join("-" if value is None else f"{value:.1f}" for value in values) or "-"


def _flip_text(flips: int, n: int) -> str:
    return "-" if not n else f"{100.0 * flips / n:.1f} ({flips}/{n})"


def _flags_text(flags: Sequence[str]) -> str:
    return ", ".join(flags) or "-"


def repeats_table(reports: Sequence[RunReport]) -> Table:
    """One row per run with repeats and category: mean ± sd [min, max] of Acc, GAR and Delta over
    draws, pass^k for k = 1..K, flip rates, the noise floor and which flags survive it."""
    text = Column("", format=str)
    table = Table(
        key="repeats",
        columns=[
            Column("Run"),
            Column("Category"),
            Column("K"),
            Column("n"),
            dataclasses.replace(text, name="Acc mean ± sd [min, max]", key="acc"),
            dataclasses.replace(text, name="GAR mean ± sd [min, max]", key="gar"),
            dataclasses.replace(text, name="Delta mean ± sd", key="delta"),
            dataclasses.replace(text, name="pass^k Acc (k=1..K)", key="pass_k_acc"),
            dataclasses.replace(text, name="pass^k GAR (k=1..K)", key="pass_k_gar"),
            dataclasses.replace(text, name="flip Acc % (cases)", key="flip_acc"),
            dataclasses.replace(text, name="flip GAR % (cases)", key="flip_gar"),
            Column("noise floor pp", key="noise_floor", decimals=1, missing="-"),
            dataclasses.replace(text, name="flags (mean)", key="flags"),
            dataclasses.replace(text, name="survive noise", key="surviving"),
        ],
    )
    for report in reports:
        for category, summary in (report.repeats or {}).items():
            table.add(
                report.name,
                category,
                summary.repeats,
                summary.n_cases,
                _spread_text(summary.acc),
                _spread_text(summary.gar),
                "-" if summary.delta.mean is None else _spread_text(summary.delta).split(" [")[0],
                _pass_k_text(summary.pass_k_acc),
                _pass_k_text(summary.pass_k_gar),
                _flip_text(summary.flips_acc, summary.flip_n_acc),
                _flip_text(summary.flips_gar, summary.flip_n_gar),
                summary.noise_floor,
                _flags_text(summary.flags),
                _flags_text(summary.surviving),
            )
    return table


REPEATS_LEGEND = (
    "Per draw r: Acc_r and GAR_r over the draw's cases; mean ± sample sd [min, max] over draws. "
    "pass^k (tau2): per case C(c,k)/C(n,k), averaged. Flip: share of cases whose verdict (Acc: passed; "
    "GAR: gold class emitted) differs across draws. Noise floor: 2 x sd of the per-draw Delta; a flag "
    "survives when the mean Delta passes its threshold by more (`tooldiag report --noise-aware` keeps only "
    'those). The tables above describe draw 0. Formulas: docs/diagnostic.md, "Repeats and flip rates".'
)


def repeats_markdown(reports: Sequence[RunReport]) -> str:
    """The ``## Repeats`` section, or ``""`` when no report has repeats."""
    table = repeats_table(reports)
    if not table.rows:
        return ""
    return "## Repeats\n\n" + to_markdown(table) + f"\n{REPEATS_LEGEND}\n"


def _spread_json(cell: Spread) -> dict[str, Any]:
    return {
        "mean": _num(cell.mean),
        "sd": _num(cell.sd),
        "min": _num(cell.low),
        "max": _num(cell.high),
        "per_draw": [_num(value) for value in cell.values],
    }


def repeat_json(summary: RepeatSummary) -> dict[str, Any]:
    """One category of a run's ``"repeats"`` object (docs/diagnostic.md)."""
    return {
        "repeats": summary.repeats,
        "n_cases": summary.n_cases,
        "acc": _spread_json(summary.acc),
        "gar": _spread_json(summary.gar),
        "delta_pp": _spread_json(summary.delta),
        "pass_k_acc": [_num(value) for value in summary.pass_k_acc],
        "pass_k_gar": [_num(value) for value in summary.pass_k_gar],
        "flip_rate_acc": _num(summary.flip_rate_acc),
        "flip_rate_gar": _num(summary.flip_rate_gar),
        "flips_acc": [summary.flips_acc, summary.flip_n_acc],
        "flips_gar": [summary.flips_gar, summary.flip_n_gar],
        "noise_floor_pp": _num(summary.noise_floor),
        "flags": list(summary.flags),
        "surviving_flags": list(summary.surviving),
    }


def noise_aware_categories(
    categories: Mapping[str, CategorySummary], repeats: Mapping[str, RepeatSummary]
) -> dict[str, CategorySummary]:
    """The main table's categories with each calibration flag kept only when it survives the
    noise floor of its category's repeats (``--noise-aware``); other flags, and categories
    without repeats, unchanged."""
    out = dict(categories)
    for name, summary in categories.items():
        repeat = repeats.get(name)
        if repeat is None:
            continue
        kept = tuple(flag for flag in summary.flags if flag not in CALIBRATION_FLAGS or flag in repeat.surviving)
        out[name] = dataclasses.replace(summary, flags=kept)
    return out
