"""The six non-LLM quality gates of paper 000 §3.1, over the released record schema.

Each gate is a function ``(record, **context) -> GateResult`` on one record as the released files
hold it (a dict whose object columns may be JSON strings or already decoded), so the same gates
judge a generated record, a built-in one and a user's file. The paper names the checks (schemas,
argument types, trace consistency, argument sufficiency, grounding, query naturalness) but not
their rules; the rules below are ours, written down in docs/judgebench.md ("Quality gates"):

1. ``schema_validity``: every offered tool is a valid function schema, the record has every
   field of its layout, ``dag_type`` is one of the six.
2. ``argument_types``: every expected call names an offered tool and its arguments fit its schema.
3. ``trace_consistency``: the conversation is well formed (each call answered by one tool turn
   with its id and name, ids unique) and re-executing every call reproduces its recorded output.
4. ``argument_sufficiency``: every argument value is stated in the query or produced earlier.
5. ``grounding``: every value the query states is used, and no output dangles.
6. ``query_naturalness``: the easy query has no parameter names and no JSON or code syntax.

The generator calls :func:`failed_gates` on each attempt and regenerates on failure; the report
of those attempts is :class:`GateReport` (``gate_report.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tooldiag.suites.judgebench.construct.gate_report import GateReport, write_gate_report
from tooldiag.suites.judgebench.construct.record_view import GateResult, view_record
from tooldiag.suites.judgebench.construct.structure_gates import (
    Executor,
    argument_types,
    schema_validity,
    trace_consistency,
)
from tooldiag.suites.judgebench.construct.value_gates import argument_sufficiency, grounding, query_naturalness

__all__ = [
    "GATES",
    "GATE_NAMES",
    "Executor",
    "GateReport",
    "GateResult",
    "argument_sufficiency",
    "argument_types",
    "failed_gates",
    "grounding",
    "query_naturalness",
    "run_gates",
    "schema_validity",
    "trace_consistency",
    "write_gate_report",
]

#: Gate name -> gate, in the order they run and are reported.
GATES: dict[str, Callable[..., GateResult]] = {
    "schema_validity": schema_validity,
    "argument_types": argument_types,
    "trace_consistency": trace_consistency,
    "argument_sufficiency": argument_sufficiency,
    "grounding": grounding,
    "query_naturalness": query_naturalness,
}
GATE_NAMES: tuple[str, ...] = tuple(GATES)


def run_gates(record: Mapping[str, Any], executor: Executor | None = None) -> list[GateResult]:
    """Every gate on ``record`` (decoded once); ``trace_consistency`` is skipped without an ``executor``."""
    if not isinstance(record, Mapping):
        return [GateResult(name, False, "the record is not a JSON object") for name in GATE_NAMES]
    view = view_record(record)
    return [gate(record, view=view, executor=executor) for gate in GATES.values()]


def failed_gates(record: Mapping[str, Any], executor: Executor | None = None) -> list[str]:
    """The names of the gates ``record`` fails (skipped gates do not fail): what the generator regenerates on."""
    return [result.name for result in run_gates(record, executor) if result.passed is False]
