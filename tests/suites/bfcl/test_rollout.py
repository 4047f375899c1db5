"""BFCL's loop semantics: step cap and force-termination, error rows and their retry."""

import asyncio

import pytest

from tooldiag.errors import ModelCallError, ModelCallErrorKind, UserError
from tooldiag.models.base import ModelBackend
from tooldiag.models.registry import provider
from tooldiag.store import RunStore
from tooldiag.suites.bfcl.data import case_by_id
from tooldiag.suites.bfcl.policies import OraclePolicy
from tooldiag.suites.bfcl.rollout import run_rollout
from tooldiag.suites.bfcl.runner import grade_trajectory, run_bfcl
from tooldiag.trajectory import Emission, GenerationConfig, ToolCall


class Looper(ModelBackend):
    """Calls `pwd` forever (never ends a turn by itself)."""

    async def complete(self, request):
        return Emission(tool_calls=[ToolCall(id="c", name="pwd", arguments={}, raw_arguments="{}")])


def test_step_cap_force_terminates_after_21_steps():
    case = case_by_id("multi_turn_base_0")
    traj = asyncio.run(run_rollout(case, Looper(), GenerationConfig()))
    assert len(traj.turns) == 1 and traj.turns[0].force_terminated
    assert len(traj.turns[0].steps) == 21  # count > 20 after the 21st executed step
    grade = grade_trajectory(case, traj)
    assert not grade.passed and grade.error_type == "multi_turn:force_terminated"


class LoopLastTurn(OraclePolicy):
    """Oracle, but loops on the last turn: the cap there keeps the turn count."""

    async def complete(self, request):
        context = request.context
        if context.turn_index == len(context.answer_key["ground_truth"]) - 1 and request.messages[-1].role == "tool":
            return Emission(tool_calls=[ToolCall(id="c", name="pwd", arguments={}, raw_arguments="{}")])
        return await super().complete(request)


def test_cap_in_last_turn_is_graded_normally():
    case = case_by_id("multi_turn_base_0")
    traj = asyncio.run(run_rollout(case, LoopLastTurn("oracle", None), GenerationConfig()))
    assert len(traj.turns) == len(case.ground_truth) and traj.turns[-1].force_terminated
    assert grade_trajectory(case, traj).passed  # extra read-only calls are allowed by BFCL


_FLAKY_STATE = {"fail": True}


class Flaky(OraclePolicy):
    async def complete(self, request):
        if _FLAKY_STATE["fail"]:
            raise ModelCallError("HTTP 503 from server after 6 retries", status=503)
        return await super().complete(request)


provider("flaky")(lambda name, options: Flaky(name, options))


def test_infrastructure_errors_are_stored_and_retried_on_resume(tmp_path):
    _FLAKY_STATE["fail"] = True
    first = run_bfcl("flaky/x", tmp_path / "r", categories=["base"], limit=3)
    assert first.counts["base"] == {"done": 0, "passed": 0, "error": 3} and len(first.errors) == 3
    store = RunStore.open(tmp_path / "r")
    rec = store.get_case("multi_turn_base_0")
    assert rec.status == "error" and "503" in rec.trajectory.inference_error
    store.close()
    _FLAKY_STATE["fail"] = False
    second = run_bfcl("flaky/x", tmp_path / "r", categories=["base"], limit=3)
    assert second.ran == 3 and second.counts["base"] == {"done": 3, "passed": 3, "error": 0}


class Unauthorised(ModelBackend):
    async def complete(self, request):
        raise ModelCallError("HTTP 401: invalid API key", status=401, kind=ModelCallErrorKind.FATAL)


provider("unauth")(lambda name, options: Unauthorised())


def test_fatal_model_error_stops_the_run_with_one_line(tmp_path):
    with pytest.raises(UserError, match="401"):
        run_bfcl("unauth/x", tmp_path / "r", categories=["base"], limit=3)
    assert RunStore.open(tmp_path / "r").count() == 0


class Rejecting(OraclePolicy):
    """The server rejects the request of the second turn (e.g. context too long)."""

    async def complete(self, request):
        if request.context.turn_index == 1:
            raise ModelCallError(
                "HTTP 400: maximum context length exceeded", status=400, kind=ModelCallErrorKind.REJECTED
            )
        return await super().complete(request)


provider("rejecting")(lambda name, options: Rejecting(name, options))


def test_rejected_request_is_graded_inference_error_like_bfcl(tmp_path):
    summary = run_bfcl("rejecting/x", tmp_path / "r", categories=["base"], limit=2)
    assert summary.counts["base"] == {"done": 2, "passed": 0, "error": 0}
    assert len(summary.inference_errors) == 2 and summary.errors == []
    with RunStore.open(tmp_path / "r") as store:
        record = store.get_case("multi_turn_base_0")
    assert record.status == "done" and record.error_type == "multi_turn:inference_error"
    assert record.trajectory.notes["bfcl_inference_error"].startswith("Error during inference: HTTP 400")
    again = run_bfcl("rejecting/x", tmp_path / "r", categories=["base"], limit=2)
    assert again.ran == 0  # graded, so not retried
