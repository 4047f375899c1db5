"""``--executor local|ray`` for any command whose work is independent units (judge verdicts, generator
plans, classifier labels): the checks and counters every such command shares, over
:func:`tooldiag.runner.ray_executor.run_on_ray`.

Why a module of its own: :mod:`tooldiag.runner.ray_executor` is the one Ray executor (chunks, the
driver as the one writer, lost chunks resubmitted and counted); what a command adds on top is the
same few lines everywhere: refuse a bad ``--executor`` or a ``--ray-address`` without Ray *before*
anything is written, run the units, and carry the retry and loss counts into its summary. Keeping
them here means every command words the errors and the summary line alike. It knows no suite.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tooldiag.errors import UserError
from tooldiag.runner.ray_executor import RayOutcome, check_executor, connect, import_ray, run_on_ray
from tooldiag.runner.shard import WorkerEntry


def check_executor_options(executor: str, ray_address: str | None) -> str:
    """``executor`` when usable: a known name, Ray importable for ``ray``, no ``--ray-address``
    without ``--executor ray``; else one :class:`UserError` (the install command when Ray is missing)."""
    check_executor(executor)
    if executor == "ray":
        import_ray()
    elif ray_address is not None:
        raise UserError("--ray-address needs --executor ray", hint="add --executor ray, or drop --ray-address")
    return executor


@dataclass
class ExecutorCounts:
    """What the executor did besides the work: the run summary's executor line."""

    executor: str = "local"
    #: Units submitted again because the Ray worker or node running them died.
    unit_retries: int = 0
    #: Ray tasks lost to a dying worker process or node.
    worker_losses: int = 0
    #: The Ray cluster's CPUs (task slots) when the last Ray run started.
    cluster_cpus: int = 0

    def add(self, outcome: RayOutcome) -> None:
        self.executor = "ray"
        self.unit_retries += outcome.unit_retries
        self.worker_losses += outcome.worker_losses
        self.cluster_cpus = max(self.cluster_cpus, outcome.cluster_cpus)

    def line(self) -> str | None:
        """``ray executor: ...`` for a Ray run, ``None`` for a local one (nothing to say)."""
        if self.executor != "ray":
            return None
        return (
            f"ray executor: {self.unit_retries} unit retries, {self.worker_losses} worker losses, "
            f"{self.cluster_cpus} CPUs"
        )


def run_units_on_ray(
    units: Sequence[Any],
    entry: WorkerEntry,
    payload: Any,
    concurrency: int,
    on_result: Callable[[Any], None],
    counts: ExecutorCounts,
    address: str | None = None,
) -> list[Any]:
    """Run ``units`` through ``entry`` as Ray tasks (one endpoint's ``payload``); ``on_result`` runs
    in this process, the one writer, for every result as its chunk lands. Adds the fault counts to
    ``counts`` and returns the entries' return values; an entry's error stops the run (what landed is
    stored) and is raised here as the entry raised it.

    The payload (records, templates: the same for every chunk) goes into Ray's object store once;
    each task gets a reference, which Ray resolves to the value on the worker, instead of the
    payload pickled again with every chunk.
    """
    if not units:
        return []
    ray = import_ray()
    started = connect(ray, address, None)
    try:
        outcome = run_on_ray(units, entry, [ray.put(payload)], concurrency, on_result, address=address)
    finally:
        if started:
            ray.shutdown()
    counts.add(outcome)
    return outcome.values
