"""Run a model through BFCL multi-turn into a resumable run store.

Cases run concurrently in the shared worker pool (bounded by ``concurrency``), the turns of a
case in order, the longest expected cases first for a model reached with latency
(:mod:`tooldiag.suites.bfcl.schedule`: no long chain left to run alone at the end; an offline
policy is CPU-bound, where starting the longest cases together only delays the first results a
resume keeps); the store does not depend on that order.
Each finished case is graded at once and committed atomically, so a run killed at
any moment resumes by re-running the same command: finished cases are skipped,
infrastructure-error rows are retried, nothing is duplicated.

With ``--repeats K`` the units are ``(case, sample)`` pairs, samples 0..K-1 of every case (all
cases' sample 0 first, then sample 1, ...); resume skips the stored pairs, so raising K later
runs only the new samples.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from tooldiag.errors import ModelCallError, UserError
from tooldiag.models.base import ModelBackend, ModelOptions
from tooldiag.models.registry import resolve_model
from tooldiag.models.retry import public_url
from tooldiag.runner import ERROR_LABEL, NullProgress, ProgressSink, run_pool
from tooldiag.runner.shard import plan_workers
from tooldiag.store import RunStore
from tooldiag.store.usage import UsageSummary, usage_summary
from tooldiag.suites.bfcl import CATEGORIES
from tooldiag.suites.bfcl.data import BfclCase, load_cases
from tooldiag.suites.bfcl.decode import convert_to_function_call
from tooldiag.suites.bfcl.grader import grade_result
from tooldiag.suites.bfcl.rollout import Probe, bfcl_result, case_notes, run_rollout
from tooldiag.suites.bfcl.schedule import schedule_units
from tooldiag.suites.bfcl.writer import bfcl_writer
from tooldiag.trajectory import CaseTrajectory, GenerationConfig, Grade, RunConfig


@dataclass
class RunSummary:
    """What a run command reports at the end."""

    run_dir: Path
    model: str
    #: category -> {"done", "passed", "error"} over the whole store.
    counts: dict[str, dict[str, int]]
    ran: int = 0
    skipped: int = 0
    #: Cases stored as error rows (retried on resume).
    errors: list[str] = field(default_factory=list)
    #: Cases whose request the server rejected, graded ``inference_error`` as BFCL does.
    inference_errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    #: What the whole run cost so far (every session), from the store.
    usage: UsageSummary | None = None
    #: Processes the cases ran in (``--workers`` as planned; 1: this process).
    workers: int = 1
    #: Draws per case (``--repeats``); ``ran`` and ``skipped`` count (case, sample) units.
    repeats: int = 1
    #: ``local`` (this process or ``--workers`` processes) or ``ray`` (``--executor ray``).
    executor: str = "local"
    #: With ``--executor ray``: cases submitted again because their worker or node died, and
    #: the Ray tasks so lost (:class:`tooldiag.runner.ray_executor.RayOutcome`).
    unit_retries: int = 0
    worker_losses: int = 0
    #: Endpoints the cases were spread over (``--base-url`` given more than once).
    endpoints: int = 1

    def categories(self) -> list[str]:
        """The categories of the run, in BFCL's order (the summary table's rows)."""
        return [category for category in CATEGORIES if self.counts.get(category)]

    def accuracy(self, category: str) -> float | None:
        entry = self.counts.get(category)
        if not entry or not entry["done"]:
            return None
        return 100.0 * entry["passed"] / entry["done"]


def grade_trajectory(case: BfclCase, trajectory: CaseTrajectory) -> Grade:
    """Grade one of our own rollouts through BFCL's pipeline (FC decoder)."""
    grade, _ = grade_result(case, bfcl_result(trajectory), convert_to_function_call)
    return grade


def usage_now(store: RunStore) -> UsageSummary:
    """The run summary of ``store`` with this session's wall time saved up to now (the end of a run)."""
    store.save_session()
    return usage_summary(store)


#: The case note of a case graded ``inference_error`` because a reply passed the response size
#: cap: the cap, in bytes. The cap is not part of the run's identity (like ``--timeout``), so a
#: resume under a larger ``--max-response-bytes`` asks those cases again (issue 20).
RESPONSE_CAP_NOTE = "response_cap_bytes"


def refused_under_a_smaller_cap(store: RunStore, cap: int) -> set[tuple[str, int]]:
    """``(case_id, sample)`` of the draws a reply over a size cap smaller than ``cap`` ended:
    finished under that cap, to be run again under this one."""
    units: set[tuple[str, int]] = set()
    for row in store.iter_stored_trajectories():  # only the notes: no models rebuilt at every resume
        notes = row.trajectory.get("notes")
        refused_at = notes.get(RESPONSE_CAP_NOTE) if isinstance(notes, dict) else None
        if isinstance(refused_at, int) and refused_at < cap:
            units.add((row.case_id, row.sample))
    return units


def select_cases(config: RunConfig) -> list[BfclCase]:
    return load_cases(config.categories or list(CATEGORIES), ids=config.case_ids, limit=config.limit)


def case_outcome(trajectory: CaseTrajectory, grade: Grade | None) -> tuple[str, bool | None]:
    """``(label, ok)`` of a stored case for a :class:`ProgressSink`: its category and whether it
    passed, or :data:`ERROR_LABEL` for an error row (no grade, retried on resume)."""
    if grade is None:
        return ERROR_LABEL, None
    return trajectory.category, grade.passed


def advance_case(progress: ProgressSink, trajectory: CaseTrajectory, grade: Grade | None) -> None:
    """Report one stored case to ``progress`` (the runner and the importer both call this)."""
    progress.advance(*case_outcome(trajectory, grade))


class CaseSink(Protocol):
    """Where :func:`run_cases` commits finished cases: a :class:`RunStore`, or in a ``--workers``
    worker the pipe to the parent (:mod:`tooldiag.suites.bfcl.sharded`)."""

    def put_case(self, trajectory: CaseTrajectory, grade: Grade | None, sample: int = 0) -> None: ...


async def run_cases(
    store: CaseSink,
    cases: list[BfclCase],
    model: ModelBackend,
    generation: GenerationConfig,
    concurrency: int = 8,
    probe_factory: Callable[[], Probe] | None = None,
    progress: ProgressSink | None = None,
    samples: Sequence[int] | None = None,
) -> tuple[list[str], list[str]]:
    """Run and store ``cases``; returns the messages of cases stored as error rows and
    of cases graded ``inference_error`` because the server rejected their request.

    ``samples`` (``--repeats``), as long as ``cases``: which draw of its case each unit is
    (default: draw 0 of every case, a one-draw run).

    A fatal model error (bad key, unknown model, unreachable server) stops the run
    with a :class:`UserError`; what finished stays stored.
    """
    errors: list[str] = []
    rejected: list[str] = []
    units = list(zip(cases, samples if samples is not None else [0] * len(cases), strict=True))
    if not model.deterministic:  # calls with latency: longest expected first (an offline policy keeps the order)
        units = schedule_units(units)

    def label(case: BfclCase, sample: int) -> str:
        return f"{case.id}#{sample}" if sample else case.id

    def error_row(case: BfclCase, sample: int, message: str, **notes: object) -> tuple[CaseTrajectory, None]:
        errors.append(f"{label(case, sample)}: {message}")
        notes = {**case_notes(case), **notes}
        return CaseTrajectory(case_id=case.id, category=case.category, inference_error=message, notes=notes), None

    async def one(unit: tuple[BfclCase, int]) -> tuple[CaseTrajectory, Grade | None]:
        case, sample = unit
        probe = probe_factory() if probe_factory else None
        try:
            trajectory = await run_rollout(case, model, generation, probe, sample)
        except ModelCallError as exc:
            if exc.fatal:
                raise UserError(
                    f"model {model.name} failed: {exc.message}", hint="check the model name, endpoint and key"
                ) from None
            if exc.transient:
                return error_row(case, sample, exc.message)
            # The server rejected this request itself (e.g. context too long): BFCL
            # records "Error during inference" and grades it inference_error.
            result = f"Error during inference: {exc.message}"
            capped = {RESPONSE_CAP_NOTE: exc.size_cap} if exc.size_cap is not None else {}
            rejected_row = CaseTrajectory(
                case_id=case.id,
                category=case.category,
                notes={**case_notes(case), "bfcl_inference_error": result, **capped},
            )
            grade, _ = grade_result(case, result, convert_to_function_call)
            rejected.append(f"{label(case, sample)}: {exc.message}")
            return rejected_row, grade
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - stored as an error row, retried on resume
            return error_row(
                case, sample, f"internal error: {type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=8)
            )
        return trajectory, grade_trajectory(case, trajectory)

    def commit(unit: tuple[BfclCase, int], outcome: tuple[CaseTrajectory, Grade | None]) -> None:
        trajectory, grade = outcome
        if unit[1]:
            store.put_case(trajectory, grade, unit[1])
        else:  # draw 0 as before --repeats: any CaseSink of two arguments still fits
            store.put_case(trajectory, grade)
        if progress is not None:
            advance_case(progress, trajectory, grade)

    await run_pool(units, one, concurrency, commit)
    return errors, rejected


@dataclass
class PreparedRun:
    """A run whose inputs are validated and whose store is open, ready to execute."""

    config: RunConfig
    run_dir: Path
    cases: list[BfclCase]
    model: ModelBackend
    store: RunStore
    options: ModelOptions


def prepare_run(config: RunConfig, run_dir: str | Path, options: ModelOptions | None = None) -> PreparedRun:
    """Validate everything the user gave (cases, model string, store) before any work.

    Every problem surfaces here as one :class:`UserError`, before a progress bar starts.
    """
    options = options or ModelOptions()
    cases = select_cases(config)
    model = resolve_model(config.model, options)
    store = RunStore.create_or_resume(run_dir, config, writer=bfcl_writer())
    return PreparedRun(config, Path(run_dir), cases, model, store, options)


async def execute_run(
    prepared: PreparedRun,
    probe_factory: Callable[[], Probe] | None = None,
    progress: ProgressSink | None = None,
    workers: int | None = 1,
    executor: str = "local",
    ray_address: str | None = None,
    endpoints: list[str] | None = None,
    endpoint_per_node: str | None = None,
) -> RunSummary:
    """Run the prepared cases that are not finished yet; closes the store.

    ``workers`` (``None``: one per core, :func:`tooldiag.runner.shard.plan_workers`) above 1 runs
    them in that many processes, the parent the only writer (:mod:`tooldiag.suites.bfcl.sharded`).
    ``executor="ray"`` runs them as Ray tasks instead (on the cluster at ``ray_address``, or a
    local Ray of ``workers`` CPUs; at most ``workers`` tasks at a time, 1 or ``None``: the
    cluster's CPUs), spread round-robin over ``endpoints`` (base URLs; default: the options'
    one), or, with ``endpoint_per_node`` (a URL template), each task to its own node's endpoint;
    the driver, this process, stays the only writer.
    """
    progress = progress or NullProgress()
    started = time.perf_counter()
    store, cases = prepared.store, prepared.cases
    repeats = prepared.config.repeats
    try:
        finished = store.finished_units() - refused_under_a_smaller_cap(store, prepared.options.max_response_bytes)
        units = [(c, k) for k in range(repeats) for c in cases if (c.id, k) not in finished]
        by_length = not prepared.model.deterministic  # an offline policy has no latency to hide
        if by_length:
            units = schedule_units(units)
        todo = [case for case, _ in units]
        samples = [sample for _, sample in units]
        total = len(cases) * repeats
        progress.start(total, total - len(todo), store.status_counts())
        processes = plan_workers(workers, len(todo), prepared.options.concurrency)
        if executor == "ray" or processes > 1:  # this process runs no rollout: a prestarted worker idles
            from tooldiag.suites.bfcl.budget import close_unused_worker

            close_unused_worker()
        outcome = None
        try:
            if executor == "ray":
                from tooldiag.suites.bfcl.sharded import ShardPayload, run_cases_on_ray

                urls: list[str | None] = list(endpoints) if endpoints else [prepared.options.base_url]
                payloads = [ShardPayload(prepared.config, replace(prepared.options, base_url=url)) for url in urls]
                if endpoint_per_node is not None:  # one payload: each task fills the template in on its node
                    payloads = [ShardPayload(prepared.config, prepared.options, endpoint_per_node)]
                # ``workers`` caps the tasks in flight (and sizes a local Ray); the API's default, 1,
                # and ``None`` mean the cluster's CPUs: one task in flight would defeat the cluster
                tasks = workers if workers is not None and workers > 1 else None
                errors, rejected, outcome = run_cases_on_ray(
                    store, todo, payloads, progress, ray_address, tasks, samples
                )
                processes = max(1, outcome.cluster_cpus)  # the cluster's task slots
            elif processes > 1:
                from tooldiag.suites.bfcl.sharded import ShardPayload, run_cases_sharded

                payload = ShardPayload(prepared.config, prepared.options)
                errors, rejected = run_cases_sharded(store, todo, payload, processes, progress, samples, by_length)
            else:
                errors, rejected = await run_cases(
                    store,
                    todo,
                    prepared.model,
                    prepared.config.generation,
                    prepared.options.concurrency,
                    probe_factory,
                    progress,
                    samples,
                )
        finally:
            progress.finish()
            await prepared.model.aclose()
        return RunSummary(
            run_dir=prepared.run_dir,
            model=prepared.config.model,
            counts=store.status_counts(),
            ran=len(todo),
            skipped=total - len(todo),
            errors=errors,
            inference_errors=rejected,
            wall_s=time.perf_counter() - started,
            usage=usage_now(store),
            workers=processes,
            repeats=repeats,
            executor=executor,
            unit_retries=outcome.unit_retries if outcome else 0,
            worker_losses=outcome.worker_losses if outcome else 0,
            endpoints=len(outcome.nodes) if endpoint_per_node and outcome else len(endpoints) if endpoints else 1,
        )
    finally:
        store.close()


async def run_bfcl_async(
    config: RunConfig,
    run_dir: str | Path,
    options: ModelOptions | None = None,
    probe_factory: Callable[[], Probe] | None = None,
    progress: ProgressSink | None = None,
) -> RunSummary:
    """Run (or resume) ``config`` into ``run_dir``; ``progress`` hears of every stored case."""
    return await execute_run(prepare_run(config, run_dir, options), probe_factory, progress)


def run_bfcl(
    model: str,
    run_dir: str | Path,
    categories: list[str] | None = None,
    ids: list[str] | None = None,
    limit: int | None = None,
    generation: GenerationConfig | None = None,
    options: ModelOptions | None = None,
    probe: str | None = None,
    progress: ProgressSink | None = None,
    workers: int | None = 1,
    repeats: int = 1,
    executor: str = "local",
    ray_address: str | None = None,
    base_urls: list[str] | None = None,
    endpoint_per_node: str | None = None,
) -> RunSummary:
    """Python API (and ``tooldiag run bfcl``): run ``model`` (``provider/name``) on BFCL
    multi-turn into ``run_dir``, or resume it.

    ``repeats`` (``--repeats K``): K draws per case (samples 0..K-1), each resumable on its own;
    a resume with a larger K adds the missing samples (docs/diagnostic.md, "Repeats and flip rates").

    Bad input (a model string without provider, an unknown category or probe, a run
    directory holding another run) is refused before anything is written. ``workers`` above 1
    (``None``: one per core) shards the cases over that many processes (``--workers``).
    ``executor="ray"`` runs the cases as Ray tasks (``--executor ray``, ``ray_address``: ``auto``
    or ``HOST:PORT``, ``None`` a local Ray); ``base_urls`` (more than one needs Ray) spreads them
    round-robin over several endpoints; ``endpoint_per_node`` (a URL template such as
    ``http://{node_ip}:8000/v1``, instead of ``base_urls``) sends each task to its own node's endpoint.
    Example: ``run_bfcl("ref/oracle", "runs/oracle", categories=["base"], limit=5)``.
    """
    from tooldiag.models.registry import split_model_string
    from tooldiag.runner.ray_executor import check_executor, import_ray, public_endpoint_template
    from tooldiag.suites.bfcl.data import normalise_category

    split_model_string(model)
    if repeats < 1:
        raise UserError(f"--repeats must be 1 or more, got {repeats}", hint="e.g. --repeats 3, or leave it out")
    check_executor(executor)
    if executor == "ray":
        import_ray()  # missing Ray is refused before anything is written
    elif ray_address is not None:
        raise UserError("--ray-address needs --executor ray", hint="add --executor ray, or drop --ray-address")
    options = options or ModelOptions()
    endpoints = list(base_urls) if base_urls else None
    if endpoints and len(endpoints) > 1 and executor != "ray":
        raise UserError(
            f"{len(endpoints)} --base-url given: spreading cases over several endpoints needs --executor ray",
            hint="add --executor ray (a local Ray starts by itself), or give one --base-url",
        )
    if endpoints:
        options = replace(options, base_url=endpoints[0])
    if endpoint_per_node is not None:
        options = _per_node_options(endpoint_per_node, executor, options)
    config = RunConfig(
        suite="bfcl",
        model=model,
        categories=[normalise_category(c) for c in (categories or CATEGORIES)],
        case_ids=ids,
        limit=limit,
        generation=generation or GenerationConfig(),
        # the store keeps no user:pass@ or ?key= (options keep them); several endpoints: all, comma-joined
        base_url=",".join(public_url(url) or "" for url in endpoints)
        if endpoints
        else public_endpoint_template(endpoint_per_node)
        if endpoint_per_node
        else public_url(options.base_url),
        probe=probe,
        repeats=repeats,
    )
    probe_factory = None
    if probe:
        from tooldiag.suites.bfcl.probes import probe_factory as make_probe_factory

        probe_factory = make_probe_factory(probe)
    plan_workers(workers, 1, 1)  # a bad --workers is refused before anything is written
    prepared = prepare_run(config, run_dir, options)
    return asyncio.run(
        execute_run(prepared, probe_factory, progress, workers, executor, ray_address, endpoints, endpoint_per_node)
    )


def _per_node_options(template: str, executor: str, options: ModelOptions) -> ModelOptions:
    """The options of an ``--endpoint-per-node`` run, refused before anything is written when it
    is combined with ``--base-url`` or lacks Ray. The driver's model gets the template itself as
    its base URL: it never sends a request (the tasks do, each with the template filled in)."""
    from tooldiag.models.endpoints import check_base_url
    from tooldiag.runner.ray_executor import check_endpoint_template

    if options.base_url is not None:
        raise UserError(
            "--endpoint-per-node and --base-url exclude each other: one names the endpoint of every node, "
            "the other fixed endpoints",
            hint="drop --base-url (each node's endpoint comes from the template), or drop --endpoint-per-node",
        )
    if executor != "ray":
        raise UserError(
            "--endpoint-per-node needs --executor ray (the endpoint is found on the Ray node a task runs on)",
            hint="add --executor ray, or give the endpoint with --base-url",
        )
    return replace(options, base_url=check_base_url(check_endpoint_template(template)))
