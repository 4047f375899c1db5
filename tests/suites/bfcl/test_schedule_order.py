"""Which order ``run_cases`` starts cases in: longest expected first for a model reached with
latency, the given order for an offline policy; the stored results are the same either way."""

from __future__ import annotations

import asyncio

from tooldiag.models.base import ModelBackend, ModelRequest
from tooldiag.models.registry import resolve_model
from tooldiag.suites.bfcl.data import load_cases
from tooldiag.suites.bfcl.runner import run_cases
from tooldiag.trajectory import CaseTrajectory, Emission, GenerationConfig, Grade


class RecordingOracle(ModelBackend):
    """``ref/oracle`` that notes each case's first user message as its first request arrives."""

    def __init__(self, deterministic: bool) -> None:
        self.inner = resolve_model("ref/oracle")
        self.name = "recording-oracle"
        self._deterministic = deterministic
        self.firsts: list[str] = []

    @property
    def deterministic(self) -> bool:
        return self._deterministic

    async def complete(self, request: ModelRequest) -> Emission:
        first = str(next(m.content for m in request.messages if m.role == "user"))
        if first not in self.firsts:
            self.firsts.append(first)
        return await self.inner.complete(request)


class Collect:
    def __init__(self) -> None:
        self.rows: dict[str, tuple[CaseTrajectory, Grade | None]] = {}

    def put_case(self, trajectory: CaseTrajectory, grade: Grade | None, sample: int = 0) -> None:
        self.rows[trajectory.case_id] = (trajectory, grade)


def started_order(deterministic: bool) -> tuple[list[str], dict[str, tuple[CaseTrajectory, Grade | None]]]:
    cases = load_cases(["base"], limit=12)
    model = RecordingOracle(deterministic)
    store = Collect()
    asyncio.run(run_cases(store, cases, model, GenerationConfig(), concurrency=1))
    by_question = {str(case.turns[0][0]["content"]): case.id for case in cases}
    return [by_question[first] for first in model.firsts], store.rows


def test_a_model_with_latency_starts_the_longest_expected_cases_first_with_the_same_results():
    cases = load_cases(["base"], limit=12)
    length = {case.id: sum(1 + len(turn) for turn in case.ground_truth) for case in cases}
    given, offline_rows = started_order(deterministic=True)
    scheduled, network_rows = started_order(deterministic=False)
    assert given == [case.id for case in cases]  # an offline policy keeps BFCL's order
    assert sorted(scheduled) == sorted(given)
    assert [length[case_id] for case_id in scheduled] == sorted(length.values(), reverse=True)
    assert scheduled != given  # the slice's lengths differ, so the order really changed
    for case_id, (trajectory, grade) in offline_rows.items():  # the same results case by case
        other_trajectory, other_grade = network_rows[case_id]
        assert trajectory.model_dump(exclude={"notes"}) == other_trajectory.model_dump(exclude={"notes"})
        assert grade == other_grade
