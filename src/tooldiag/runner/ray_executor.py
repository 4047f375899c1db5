"""Run the units of one run as Ray tasks across a cluster, with one writer: the driver.

Why Ray: one machine's harness drives only so many endpoints, and model servers live on many GPU
nodes; Ray is what the field schedules such work with. Why one writer: the store stays exactly
what a single-process run writes (one transaction per unit, here in the driver), so resume,
identity checks and the report do not change with the executor.

The shape is :func:`tooldiag.runner.shard.run_sharded`'s (it knows no suite): picklable *unit
descriptions*, a picklable *payload* per endpoint, a module-level *entry point*
``async def entry(payload, units, concurrency, emit)`` that runs its units with tooldiag's own
async runner. :func:`run_on_ray` cuts the units into small *chunks*, each one Ray task (one CPU)
that runs the entry on its chunk and returns the chunk's results; the driver keeps at most
``tasks`` chunks in flight, waits on their object refs (``ray.wait``) and hands every result to
``on_result`` as its chunk lands: commit and report progress there. Results thus stream back
chunk by chunk; a chunk is small (a few units) so little is in flight at any time.

Faults, counted in :class:`RayOutcome`:

* a task whose worker process or node died (``ray.exceptions.RayError`` that is not a
  ``RayTaskError``: ``WorkerCrashedError``, ``NodeDiedError``, ``ObjectLostError`` ...) is a
  *worker loss*; its chunk, none of whose results arrived, is submitted again, to whichever
  node Ray picks, up to ``max_chunk_attempts`` times. Ray's own ``max_retries`` is 0 on purpose:
  the driver resubmits, so it can count the retries, and so a unit's results arrive once;
* an error the entry raised (a fatal model error, a bug) comes back as ``RayTaskError`` and stops
  the run with that error, as a local run stops: what arrived is stored;
* the driver killed with ``kill -9``: Ray ends the job's tasks (their owner is gone) and they never
  wrote anything; every chunk that landed is committed, so the same command resumes.

Endpoints: a payload names one endpoint, or (``--endpoint-per-node``) a URL *template* that
:func:`resolve_endpoint` fills in inside the task, on the node it landed on, so each node's units
go to that node's own server (a vLLM server on every GPU node).

Ray is an optional extra (``pip install 'tooldiag[ray]'``), imported only in here, only when a
run asks for ``--executor ray``.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tooldiag.errors import UserError
from tooldiag.runner.shard import WorkerEntry, available_cores, deal_units, split_concurrency

#: What ``--executor`` accepts.
EXECUTORS = ("local", "ray")
#: The exact install command the error names when Ray is missing.
RAY_INSTALL = "pip install 'tooldiag[ray]'"
#: Chunks per task slot the units are cut into: enough that a lost node costs little, few enough
#: that each chunk's start-up (rebuilding the model, loading its cases) stays small.
CHUNKS_PER_SLOT = 4
#: A chunk is never bigger than this many units (what one lost worker can cost at most).
MAX_CHUNK_UNITS = 16
#: How often one chunk may be lost to a dying worker before the run stops.
MAX_CHUNK_ATTEMPTS = 4
#: The object store of a Ray this process starts itself (bytes): results are small, keep it lean.
LOCAL_OBJECT_STORE_BYTES = 128 * 1024 * 1024


class RayUnavailableError(UserError):
    """``--executor ray`` without Ray installed."""


class RayUnitsLostError(UserError):
    """A chunk was lost to dying workers more often than :data:`MAX_CHUNK_ATTEMPTS` allows."""


@dataclass
class RayOutcome:
    """What a Ray run did besides its results: the run summary's executor lines."""

    #: Each chunk's entry return value, in the order the chunks landed.
    values: list[Any] = field(default_factory=list)
    #: Units submitted again because the worker or node running them died.
    unit_retries: int = 0
    #: Tasks lost to a dying worker process or node.
    worker_losses: int = 0
    #: Tasks run in all (lost ones included).
    tasks: int = 0
    #: The Ray cluster's CPUs when the run started (the task slots).
    cluster_cpus: int = 0
    #: Ids of the nodes whose chunks landed.
    nodes: set[str] = field(default_factory=set)


def check_executor(executor: str) -> str:
    """``executor`` if it is one of :data:`EXECUTORS`, else a :class:`UserError`."""
    if executor not in EXECUTORS:
        raise UserError(f"unknown executor {executor!r}", hint="use --executor local or --executor ray")
    return executor


def import_ray() -> Any:
    """The ``ray`` module, or one :class:`RayUnavailableError` naming the install command."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            "--executor ray needs Ray, which is not installed", hint=f"install it: {RAY_INSTALL}"
        ) from None
    return ray


#: A placeholder of an ``--endpoint-per-node`` template: ``{node_ip}``, ``{node_id}``, ``{label:KEY}``.
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
#: A Ray node label's key (``ray start --labels KEY=VALUE``): an optional DNS prefix, then a name.
_LABEL_KEY = re.compile(r"(?:[A-Za-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
#: What the placeholders are, for errors and ``--help``.
ENDPOINT_PLACEHOLDERS = "{node_ip}, {node_id}, {label:KEY}"


def check_endpoint_template(template: str) -> str:
    """``template`` if every placeholder in it is one :func:`resolve_endpoint` knows, else a
    :class:`UserError`: a typo must stop the run in the driver, before anything is written, not
    in every task on the cluster."""
    if not template.startswith(("http://", "https://")):
        raise UserError(
            f"--endpoint-per-node {template!r} is not an http(s) URL template",
            hint="e.g. --endpoint-per-node 'http://{node_ip}:8000/v1'",
        )
    for match in _PLACEHOLDER.finditer(template):
        name = match.group(1)
        if name in ("node_ip", "node_id"):
            continue
        if name.startswith("label:") and _LABEL_KEY.fullmatch(name[len("label:") :]):
            continue
        raise UserError(
            f"--endpoint-per-node has an unknown placeholder {match.group(0)!r}",
            hint=f"the placeholders are {ENDPOINT_PLACEHOLDERS}, e.g. 'http://{{node_ip}}:8000/v1'",
        )
    return template


def public_endpoint_template(template: str) -> str:
    """``template`` as a run config stores it: no ``user:pass@``, query or fragment (what
    :func:`tooldiag.models.retry.public_url` drops), the placeholders kept verbatim (``public_url``
    would withhold a template whose port is a placeholder as unparseable)."""
    parts = urlsplit(template)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def resolve_endpoint(template: str) -> str:
    """``template`` filled in for the node this Ray task runs on: ``{node_ip}`` the node's IP as
    Ray reports it (``ray.util.get_node_ip_address``, bracketed when IPv6), ``{node_id}`` its Ray
    node id, ``{label:KEY}`` the value of its label KEY (``ray start --labels KEY=VALUE``)."""
    import ray

    context = ray.get_runtime_context()

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "node_ip":
            address = str(ray.util.get_node_ip_address())
            return f"[{address}]" if ":" in address else address
        if name == "node_id":
            return str(context.get_node_id())
        key = name[len("label:") :]
        labels = context.get_node_labels()
        if key not in labels:
            raise UserError(
                f"Ray node {context.get_node_id()[:12]} has no label {key!r}, which --endpoint-per-node "
                f"{public_endpoint_template(template)} needs",
                hint=f"start every node with `ray start ... --labels {key}=VALUE`",
            )
        return str(labels[key])

    return _PLACEHOLDER.sub(fill, template)


def _run_chunk(entry: WorkerEntry, payload: Any, units: list[Any], concurrency: int) -> tuple[list[Any], Any, str]:
    """What one Ray task runs: ``entry`` over ``units`` in a fresh event loop; its results and
    value, and the node it ran on (the summary counts the nodes that did work)."""
    import ray

    results: list[Any] = []
    value = asyncio.run(entry(payload, units, concurrency, results.append))
    return results, value, ray.get_runtime_context().get_node_id()


@dataclass
class _Chunk:
    payload_index: int
    units: list[Any]
    attempts: int = 0


def plan_chunks(units: Sequence[Any], endpoints: int, slots: int) -> list[_Chunk]:
    """Deal ``units`` round-robin over ``endpoints`` (payloads), then cut each endpoint's share
    into chunks of at most :data:`MAX_CHUNK_UNITS`, about :data:`CHUNKS_PER_SLOT` per task slot.

    Chunks of different endpoints alternate, so every endpoint is busy from the start.
    """
    shares = deal_units(units, max(1, min(endpoints, len(units))))
    size = max(1, min(MAX_CHUNK_UNITS, math.ceil(len(units) / max(1, slots * CHUNKS_PER_SLOT))))
    per_endpoint = [
        [_Chunk(index, share[start : start + size]) for start in range(0, len(share), size)]
        for index, share in enumerate(shares)
    ]
    chunks: list[_Chunk] = []
    for round_ in range(max((len(c) for c in per_endpoint), default=0)):
        chunks.extend(c[round_] for c in per_endpoint if round_ < len(c))
    return chunks


def connect(ray: Any, address: str | None, num_cpus: int | None) -> bool:
    """Attach to the cluster at ``address`` (``auto`` or ``HOST:PORT``), or start a local Ray of
    ``num_cpus`` CPUs (default: this process's cores) when ``address`` is ``None``.

    Returns whether this call started the connection (and so must shut it down). A process that
    is already connected (a test, a notebook) keeps its connection.
    """
    if ray.is_initialized():
        return False
    import logging

    common: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    try:
        if address is None:
            ray.init(
                num_cpus=num_cpus or available_cores(),
                include_dashboard=False,
                object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                **common,
            )
        else:
            ray.init(address=address, **common)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UserError(
            f"cannot connect to the Ray cluster at {address or 'a new local Ray'}: {exc}",
            hint="start one with `ray start --head`, then pass --ray-address auto (or HOST:PORT)",
        ) from None
    return True


def _cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _cause(error: BaseException) -> BaseException:
    """The entry's own exception inside a ``RayTaskError`` (a :class:`UserError` stays one)."""
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, BaseException) else error


def run_on_ray(
    units: Sequence[Any],
    entry: WorkerEntry,
    payloads: Sequence[Any],
    concurrency: int,
    on_result: Callable[[Any], None],
    *,
    address: str | None = None,
    tasks: int | None = None,
    num_cpus: int | None = None,
    max_chunk_attempts: int = MAX_CHUNK_ATTEMPTS,
) -> RayOutcome:
    """Run ``units`` as Ray tasks; ``on_result(result)`` runs here, in the driver, for every result.

    ``payloads`` holds one payload per endpoint: units are dealt round-robin over them.
    ``tasks`` (default: the cluster's CPUs) chunks run at a time, ``concurrency`` split between
    them (each gets at least 1). ``address`` ``None`` starts a local Ray of ``num_cpus`` CPUs.
    Blocks until every unit's result arrived; call it from the thread that owns the store.
    """
    if not payloads:
        raise ValueError("run_on_ray needs at least one payload")
    ray = import_ray()
    outcome = RayOutcome()
    if not units:
        return outcome
    started = connect(ray, address, num_cpus)
    try:
        outcome.cluster_cpus = _cluster_cpus(ray)
        slots = max(1, min(tasks or outcome.cluster_cpus, len(units)))
        per_task = split_concurrency(max(concurrency, slots), slots)[-1]  # the smallest share
        remote = ray.remote(num_cpus=1, max_retries=0)(_run_chunk)
        pending = deque(plan_chunks(units, len(payloads), slots))
        in_flight: dict[Any, _Chunk] = {}
        try:
            while pending or in_flight:
                while pending and len(in_flight) < slots:
                    chunk = pending.popleft()
                    chunk.attempts += 1
                    outcome.tasks += 1
                    ref = remote.remote(entry, payloads[chunk.payload_index], chunk.units, per_task)
                    in_flight[ref] = chunk
                done, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in done:
                    chunk = in_flight.pop(ref)
                    _land(ray, ref, chunk, outcome, pending, on_result, max_chunk_attempts)
        finally:
            for ref in in_flight:  # an error stops the run: what is still running is not wanted
                ray.cancel(ref, force=True)
        return outcome
    finally:
        if started:
            ray.shutdown()


def _land(
    ray: Any,
    ref: Any,
    chunk: _Chunk,
    outcome: RayOutcome,
    pending: deque[_Chunk],
    on_result: Callable[[Any], None],
    max_chunk_attempts: int,
) -> None:
    """Commit a finished chunk, resubmit one lost to a dying worker, or raise the entry's error."""
    try:
        results, value, node = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:  # the entry raised: stop, as a local run would
        raise _cause(exc) from None
    except ray.exceptions.RayError as exc:  # the worker or its node died: nothing of it arrived
        outcome.worker_losses += 1
        if chunk.attempts >= max_chunk_attempts:
            raise RayUnitsLostError(
                f"{len(chunk.units)} units were lost to dying Ray workers {chunk.attempts} times "
                f"(last: {type(exc).__name__}); every unit that finished is stored",
                hint="check the cluster's nodes (`ray status`), then re-run the same command to resume",
            ) from None
        outcome.unit_retries += len(chunk.units)
        pending.appendleft(chunk)
        return
    outcome.nodes.add(node)
    for result in results:
        on_result(result)
    outcome.values.append(value)
