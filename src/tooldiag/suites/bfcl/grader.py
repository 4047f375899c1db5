"""Grade multi-turn cases with BFCL's own ``multi_turn_checker``.

The checker (state checker, response checker, empty-turn check; ``multi_turn_checker.py``)
runs unchanged. Only its executor is swapped: the module's
``execute_multi_turn_func_call`` is pointed at the current grading call's
:class:`~tooldiag.suites.bfcl.budget.BudgetedSession`, so nothing a model produced is
``eval``'d, every call runs under a CPU and memory budget, and no instance outlives its
grading call. Its ``state_checker`` is routed too: the instances stay in the budget's worker
(:class:`~tooldiag.suites.bfcl.budget.InstanceSnapshot` references come back) and BFCL's own
``state_checker`` compares them there, so no step's instances are pickled for this process and
it imports no backend module. Each grading call also uses a
fresh identifier-safe model name, so even BFCL's own naming scheme can never collide.

The two pre-checks of ``eval_runner._evaluate_single_multi_turn_entry`` come first:
a non-list result fails ``multi_turn:inference_error``; a turn count different from
the ground truth's fails ``multi_turn:force_terminated``. Steps that do not decode, or
decode to nothing, are dropped before the checker sees the turn.
"""

from __future__ import annotations

import contextvars
import itertools
import json
from collections.abc import Callable
from typing import Any

from tooldiag.suites.bfcl.budget import BudgetedSession, WorkerDied, snapshot_of
from tooldiag.suites.bfcl.data import BfclCase
from tooldiag.suites.bfcl.decode import is_empty_execute_response
from tooldiag.trajectory import Grade

_SESSION: contextvars.ContextVar[BudgetedSession | None] = contextvars.ContextVar("bfcl_session", default=None)
_COUNTER = itertools.count()
_checker_module = None
_original_state_checker: Callable[[dict, dict], dict] | None = None


def _patched_execute(*args: Any, **kwargs: Any):
    session = _SESSION.get()
    if session is None:  # pragma: no cover - only reachable by calling BFCL's checker directly
        raise RuntimeError("BFCL checker called outside tooldiag.suites.bfcl.grader.grade_decoded")
    return session.execute(*args, **kwargs)


def _patched_state_checker(model_instances: dict, ground_truth_instances: dict) -> dict:
    """BFCL's ``state_checker``, run in the worker on the snapshots the session's executions kept;
    on anything but two maps of snapshots (or a worker the comparison ended twice), here."""
    assert _original_state_checker is not None
    session = _SESSION.get()
    remote = snapshot_of(model_instances) is not None and snapshot_of(ground_truth_instances) is not None
    if session is None or not remote:
        return _original_state_checker(model_instances, ground_truth_instances)
    try:
        return session.state_check(model_instances, ground_truth_instances)
    except WorkerDied:
        model, truth = session.fetch_instances(model_instances, ground_truth_instances)
        return _original_state_checker(model, truth)


def _checker():
    """Import BFCL's checker module once and route its executor and state checker to our sessions."""
    global _checker_module, _original_state_checker
    if _checker_module is None:
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker

        multi_turn_checker.execute_multi_turn_func_call = _patched_execute
        _original_state_checker = multi_turn_checker.state_checker
        multi_turn_checker.state_checker = _patched_state_checker
        _checker_module = multi_turn_checker
    return _checker_module


def fresh_model_name(prefix: str = "td") -> str:
    """A new identifier-safe model name for one rollout or grading call."""
    return f"{prefix}_{next(_COUNTER)}"


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _compact_details(details: dict[str, Any]) -> dict[str, Any]:
    """Keep the diagnostic parts of BFCL's error details, not whole instance dumps."""
    keep = {}
    for key in ("differences", "missing_items", "model response decoded"):
        if key in details:
            keep[key] = details[key]
    return _jsonable(keep)


def grade_decoded(case: BfclCase, decoded_turns: list[list[list[str]]]) -> Grade:
    """Run BFCL's checker on already-decoded turns (steps that decode empty removed)."""
    checker = _checker()
    session = BudgetedSession(snapshots_in_worker=True)
    token = _SESSION.set(session)
    try:
        result = checker.multi_turn_checker(
            decoded_turns,
            case.ground_truth,
            case.entry,
            f"multi_turn_{case.category}",
            fresh_model_name("grade"),
        )
    finally:
        _SESSION.reset(token)
    if result.get("valid"):
        return Grade(passed=True)
    message = result.get("error_message")
    details = dict(result.get("details") or {})
    return Grade(
        passed=False,
        error_type=result.get("error_type"),
        error_message=message if isinstance(message, str) else json.dumps(message),
        details=_compact_details(details),
    )


def grade_result(
    case: BfclCase,
    result: Any,
    decode: Callable[[Any], list[str]],
) -> tuple[Grade, list[list[list[str]]] | None]:
    """Grade BFCL's ``result`` structure (``list[turn][step]``) with a step decoder.

    Returns the grade and the decoded turns (``None`` when a pre-check failed).
    """
    if type(result) != list:  # noqa: E721
        return (
            Grade(
                passed=False,
                error_type="multi_turn:inference_error",
                error_message="Error during inference phase. Model did not output a list of model responses.",
            ),
            None,
        )
    if len(result) != len(case.ground_truth):
        return (
            Grade(
                passed=False,
                error_type="multi_turn:force_terminated",
                error_message=(
                    "Model was force-terminated during inference phase. The length of the model result turns "
                    f"({len(result)}) does not match the length of the ground truth turns ({len(case.ground_truth)})."
                ),
            ),
            None,
        )
    decoded_turns: list[list[list[str]]] = []
    for turn in result:
        decoded_turn = []
        for step in turn:
            try:
                decoded = decode(step)
            except Exception:  # noqa: BLE001 - BFCL drops any step that fails to decode
                continue
            if is_empty_execute_response(decoded):
                continue
            decoded_turn.append(decoded)
        decoded_turns.append(decoded_turn)
    return grade_decoded(case, decoded_turns), decoded_turns
