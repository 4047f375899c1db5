"""Grading sessions keep instances in the budget's worker and compare them there.

The expectation is always BFCL's own ``state_checker`` on instance copies brought back to this
process (``BudgetedSession()``'s plain mode, the one the grader used before), so the worker's
comparison must give the very same dict, mismatches and their details included.
"""

from __future__ import annotations

import pytest
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import state_checker

from tooldiag.suites.bfcl.budget import BudgetedSession, ExecutionBudget, InstanceSnapshot, snapshot_of

CONFIG = {"GorillaFileSystem": {"root": {"home": {"type": "directory", "contents": {}}}}}
CLASSES = ["GorillaFileSystem", "MathAPI"]
CASE = "multi_turn_base_31"


def both_sides(session: BudgetedSession, model_steps: list[list[str]], truth: list[str]) -> tuple[dict, dict]:
    """Run the model's steps, then the ground truth, as BFCL's checker does (eval-mode names)."""
    model: dict = {}
    for step in model_steps:
        _, model = session.execute(step, CONFIG, CLASSES, "grade_1", CASE, is_evaL_run=True)
    _, ground = session.execute(truth, CONFIG, CLASSES, "grade_1_ground_truth", CASE, is_evaL_run=True)
    return model, ground


def expected(model_steps: list[list[str]], truth: list[str]) -> dict:
    return state_checker(*both_sides(BudgetedSession(), model_steps, truth))


def test_execute_returns_references_to_one_snapshot_per_call_list():
    session = BudgetedSession(snapshots_in_worker=True)
    _, first = session.execute(["mkdir(dir_name='a')"], CONFIG, CLASSES, "m", CASE)
    _, second = session.execute(["ls()"], CONFIG, CLASSES, "m", CASE)
    assert list(first) == CLASSES and all(isinstance(ref, InstanceSnapshot) for ref in first.values())
    assert snapshot_of(first) is not None and snapshot_of(first) != snapshot_of(second)
    assert snapshot_of({}) is None and snapshot_of({"MathAPI": object()}) is None


def test_the_worker_compares_as_bfcl_compares_copies():
    truth = ["mkdir(dir_name='a')", "cd(folder='a')", "echo(content='x', file_name='f')"]
    for model_steps in (
        [["mkdir(dir_name='a')"], ["cd(folder='a')", "echo(content='x', file_name='f')"]],  # same state
        [["mkdir(dir_name='a')"], ["cd(folder='a')", "echo(content='y', file_name='f')"]],  # other content
        [["mkdir(dir_name='b')"]],  # another folder
    ):
        session = BudgetedSession(snapshots_in_worker=True)
        model, ground = both_sides(session, model_steps, truth)
        assert session.state_check(model, ground) == expected(model_steps, truth)
    mismatch = expected([["mkdir(dir_name='b')"]], truth)
    assert mismatch["valid"] is False and mismatch["error_type"] == "multi_turn:instance_state_mismatch"


def test_a_snapshot_a_later_call_list_changed_is_refused_not_compared():
    """BFCL's checker compares each turn's last snapshots before anything else runs on them; an
    older one no longer holds the state it stood for, and comparing it would be wrong."""
    session = BudgetedSession(snapshots_in_worker=True)
    _, early = session.execute(["mkdir(dir_name='a')"], CONFIG, CLASSES, "m", CASE)
    _, late = session.execute(["mkdir(dir_name='b')"], CONFIG, CLASSES, "m", CASE)
    _, ground = session.execute(["mkdir(dir_name='a')", "mkdir(dir_name='b')"], CONFIG, CLASSES, "g", CASE)
    with pytest.raises(RuntimeError, match="changed by a later call list"):
        session.state_check(early, ground)
    assert session.state_check(late, ground)["valid"] is True
    model, truth = session.fetch_instances(late, ground)
    assert state_checker(model, truth)["valid"] is True
    assert "'b'" in repr(vars(model["GorillaFileSystem"]))


def test_long_context_snapshots_are_copies_taken_at_once():
    """``long_context`` instances share the session's extension data: their snapshots are pickled
    when taken, so a later call list on other instances cannot change what they stand for."""
    session = BudgetedSession(snapshots_in_worker=True)
    run = {"initial_config": CONFIG, "involved_classes": CLASSES, "test_entry_id": CASE, "long_context": True}
    _, model = session.execute(["mkdir(dir_name='a')"], model_name="m", **run)
    _, ground = session.execute(["mkdir(dir_name='a')"], model_name="g", **run)
    plain = BudgetedSession()
    expected_result = state_checker(
        plain.execute(["mkdir(dir_name='a')"], model_name="m", **run)[1],
        plain.execute(["mkdir(dir_name='a')"], model_name="g", **run)[1],
    )
    assert session.state_check(model, ground) == expected_result
    _, again = session.execute(["mkdir(dir_name='b')"], model_name="m", **run)  # replaces m's pickle
    with pytest.raises(RuntimeError, match="changed by a later call list"):
        session.state_check(model, ground)
    assert session.state_check(again, ground)["valid"] is False


def test_snapshots_are_rebuilt_after_a_call_over_budget_ends_the_worker():
    budget = ExecutionBudget(cpu_seconds=1, memory_mb=256, wall_seconds=120)
    model_steps = [
        ["mkdir(dir_name='a')", "power(base=10, exponent=1000000000000000)", "echo(content='x', file_name='f')"]
    ]
    truth = ["mkdir(dir_name='a')", "echo(content='x', file_name='f')"]
    session = BudgetedSession(budget, snapshots_in_worker=True)
    model, ground = both_sides(session, model_steps, truth)
    assert session.over_budget == 1
    plain = BudgetedSession(budget)
    assert session.state_check(model, ground) == state_checker(*both_sides(plain, model_steps, truth))
    assert session.state_check(model, ground)["valid"] is True


def test_a_checker_exception_in_the_worker_is_raised_here():
    """Instances of other classes on the two sides: BFCL's checker raises a KeyError, here as there."""
    session, plain = BudgetedSession(snapshots_in_worker=True), BudgetedSession()
    refs = [session.execute([], CONFIG, [name], "m", CASE)[1] for name in CLASSES]
    copies = [plain.execute([], CONFIG, [name], "m", CASE)[1] for name in CLASSES]
    with pytest.raises(KeyError) as theirs:
        state_checker(*copies)
    with pytest.raises(KeyError) as ours:
        session.state_check(*refs)
    assert ours.value.args == theirs.value.args == ("MathAPI",)
