"""``tooldiag run bfcl --workers N`` / ``--executor ray``: the cases of one run over N processes
(or Ray tasks on a cluster), one writer.

Each worker rebuilds what it needs from picklable inputs (:class:`ShardPayload`: the run's
config and model options, never a live backend), loads its cases by id, and runs them through
the very same :func:`~tooldiag.suites.bfcl.runner.run_cases` as a single-process run (rollout,
probe, grading, error rows), except that its "store" forwards each finished case to the parent
(:mod:`tooldiag.runner.shard`). The parent commits and reports progress exactly as
:func:`run_cases` does in one process, so the store and its resume semantics do not change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tooldiag.models.base import ModelOptions
from tooldiag.models.registry import resolve_model
from tooldiag.runner import ERROR_LABEL, ProgressSink
from tooldiag.runner.shard import run_sharded
from tooldiag.store import RunStore
from tooldiag.store.rundb import EncodedCase, encode_case
from tooldiag.suites.bfcl.data import BfclCase
from tooldiag.suites.bfcl.schedule import expected_requests
from tooldiag.trajectory import CaseTrajectory, Grade, RunConfig

if TYPE_CHECKING:
    from tooldiag.runner.ray_executor import RayOutcome


@dataclass(frozen=True)
class ShardPayload:
    """What every worker needs to rebuild the run: plain, picklable configuration."""

    config: RunConfig
    options: ModelOptions
    #: ``--endpoint-per-node``: the URL template each Ray task fills in on its own node
    #: (:func:`tooldiag.runner.ray_executor.resolve_endpoint`); it replaces ``options.base_url``.
    endpoint_template: str | None = None


class ForwardingStore:
    """The store of a worker: each case :func:`run_cases` commits goes to the parent instead,
    encoded here (:func:`~tooldiag.store.rundb.encode_case`) so the one writer only inserts it."""

    def __init__(self, emit: Callable[[Any], None]) -> None:
        self.emit = emit

    def put_case(self, trajectory: CaseTrajectory, grade: Grade | None, sample: int = 0) -> None:
        self.emit(encode_case(trajectory, grade, sample))


def _unit(unit: str | tuple[str, int] | list[Any]) -> tuple[str, int]:
    """A unit as ``(case_id, sample)``: a bare case id is draw 0 (a one-draw run deals ids)."""
    return (unit, 0) if isinstance(unit, str) else (str(unit[0]), int(unit[1]))


async def run_shard(payload: ShardPayload, case_ids: list[Any], concurrency: int, emit: Callable[[Any], None]) -> Any:
    """A worker's entry point: run ``case_ids`` (case ids, or ``(case_id, sample)`` pairs with
    ``--repeats``) at ``concurrency``; returns ``(errors, rejected)``."""
    from tooldiag.suites.bfcl.budget import prestart_worker
    from tooldiag.suites.bfcl.data import load_cases
    from tooldiag.suites.bfcl.runner import run_cases

    prestart_worker()  # its start-up overlaps loading the cases and the model
    units = [_unit(unit) for unit in case_ids]
    wanted = list(dict.fromkeys(case_id for case_id, _ in units))
    by_id = {case.id: case for case in load_cases(payload.config.categories, ids=wanted)}  # builds only these
    cases = [by_id[case_id] for case_id, _ in units]
    samples = [sample for _, sample in units]
    probe_factory = None
    if payload.config.probe:
        from tooldiag.suites.bfcl.probes import probe_factory as make_probe_factory

        probe_factory = make_probe_factory(payload.config.probe)
    options = replace(payload.options, concurrency=concurrency)
    if payload.endpoint_template is not None:  # resolved here, on the node this task runs on
        from tooldiag.runner.ray_executor import resolve_endpoint

        options = replace(options, base_url=resolve_endpoint(payload.endpoint_template))
    model = resolve_model(payload.config.model, options)
    try:
        return await run_cases(
            ForwardingStore(emit), cases, model, payload.config.generation, concurrency, probe_factory, None, samples
        )
    finally:
        await model.aclose()


def _committer(store: RunStore, progress: ProgressSink | None) -> Callable[[EncodedCase], None]:
    """What the one writer does with each case a worker sends: insert it, report progress."""

    def commit(case: EncodedCase) -> None:
        store.put_encoded_case(case)
        if progress is None:
            return
        if case.passed is None:  # an error row, as runner.case_outcome reports it
            progress.advance(ERROR_LABEL, None)
        else:
            progress.advance(case.category, bool(case.passed))

    return commit


def _units(cases: list[BfclCase], samples: list[int] | None) -> list[Any]:
    """Case ids, or ``(case_id, sample)`` pairs when some unit is a draw above 0 (``--repeats``)."""
    if samples is not None and any(samples):
        return [(case.id, sample) for case, sample in zip(cases, samples, strict=True)]
    return [case.id for case in cases]


def _merge(values: list[Any]) -> tuple[list[str], list[str]]:
    errors: list[str] = []
    rejected: list[str] = []
    for worker_errors, worker_rejected in values:
        errors.extend(worker_errors)
        rejected.extend(worker_rejected)
    return errors, rejected


def run_cases_sharded(
    store: RunStore,
    cases: list[BfclCase],
    payload: ShardPayload,
    workers: int,
    progress: ProgressSink | None = None,
    samples: list[int] | None = None,
    by_length: bool = True,
) -> tuple[list[str], list[str]]:
    """:func:`run_cases` over ``workers`` processes (``payload.options.concurrency`` in all);
    the same return value: messages of error rows and of rejected (``inference_error``) cases.
    ``samples`` (``--repeats``): the draw of each case; the units become ``(case_id, sample)``.
    ``by_length``: shards of equal expected work, longest first (else round-robin)."""
    commit = _committer(store, progress)
    costs = [expected_requests(case) for case in cases] if by_length else None
    values = run_sharded(
        _units(cases, samples), run_shard, payload, workers, payload.options.concurrency, commit, costs
    )
    return _merge(values)


def run_cases_on_ray(
    store: RunStore,
    cases: list[BfclCase],
    payloads: list[ShardPayload],
    progress: ProgressSink | None = None,
    address: str | None = None,
    tasks: int | None = None,
    samples: list[int] | None = None,
) -> tuple[list[str], list[str], RayOutcome]:
    """:func:`run_cases` as Ray tasks (``--executor ray``), one payload per endpoint (cases dealt
    round-robin over them), the driver the one writer; also returns the executor's fault counts."""
    from tooldiag.runner.ray_executor import run_on_ray

    outcome = run_on_ray(
        _units(cases, samples),
        run_shard,
        payloads,
        payloads[0].options.concurrency,
        _committer(store, progress),
        address=address,
        tasks=tasks,
        num_cpus=tasks,
    )
    errors, rejected = _merge(outcome.values)
    return errors, rejected, outcome
