"""A CPU and memory budget for every executed BFCL backend call.

BFCL's backends compute whatever the model asks: ``power(base=9, exponent=9**9)``,
``logarithm(..., precision=10**7)`` or ``square_root(..., precision=10**9)`` run for
minutes in C (big-int, ``decimal``, ``mpmath``) and can take gigabytes. A thread cannot
interrupt C code and a signal handler runs only between bytecodes, so the honest bound is
a process: :class:`BudgetedSession` keeps a rollout's (or grading call's) backend
instances in a worker process (one per thread of the parent, shared by its sessions),
sends it each call list in one request and reads the results back call by call (so after
a kill it knows which call was running):

* memory: the worker runs under ``RLIMIT_AS`` = its size after start-up plus
  ``memory_mb``; an allocation past it raises ``MemoryError`` inside the call, which
  becomes ``"Error during execution: execution budget exceeded: the call ran out of
  memory"``, and the worker lives on;
* CPU: before each call the worker's soft ``RLIMIT_CPU`` is set to its CPU time so far
  plus ``cpu_seconds``; a call past it is killed by the kernel (``SIGXCPU``), and a wall
  clock backstop (``wall_seconds``) kills a worker that stops answering. The call's
  result is then :data:`CPU_EXCEEDED` as BFCL's error string. CPU time, not wall time,
  is the budget, so a loaded machine does not turn a legitimate call into a timeout.
* after a kill, the next call of every session that lived in the worker first replays
  that session's completed calls in a fresh worker (the backends are deterministic:
  seeded ``random.Random``, no clock in compared state), so the case goes on with the
  state it had before the call that was over budget, as if that call had raised.

A grading session (``snapshots_in_worker=True``) does not bring instances back at all:
:meth:`BudgetedSession.execute` returns :class:`InstanceSnapshot` references in their place, the
worker keeps the instances as they were after that call list (:class:`_Snapshots`: the live ones
while nothing changed them, pickled where instances share state), and
:meth:`BudgetedSession.state_check` runs BFCL's ``state_checker`` there. Before, every step's
instances were pickled, sent and unpickled here (8 MB for 200 ``base`` cases, and the import of
every backend's module, ``mpmath`` for ``MathAPI``: 0.3 s without bytecode), a third of this
process's grading CPU (``bench/README.md``, fifth pass). A replay recreates the snapshots with the
calls.

Results are the executor's strings (:class:`~tooldiag.suites.bfcl.executor.BackendSession`
runs inside the worker), so with budgets that are never reached everything is identical
to in-process execution. The budget is read from ``TOOLDIAG_BFCL_CPU_S``,
``TOOLDIAG_BFCL_MEMORY_MB`` and ``TOOLDIAG_BFCL_WALL_S`` (defaults 10 s, 2048 MiB, 120 s).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import math
import os
import pickle
import resource
import select
import struct
import subprocess
import sys
import threading
import weakref
from dataclasses import dataclass
from typing import IO, Any

from tooldiag.suites.bfcl.executor import BackendSession, instance_name

_HEADER = struct.Struct("<Q")


@dataclass(frozen=True)
class InstanceSnapshot:
    """Stands for one backend instance of a grading session, as it was after one call list: the
    worker keeps the pickled instances (snapshot ``snapshot`` of the session) and compares them
    there (:meth:`BudgetedSession.state_check`)."""

    snapshot: int
    class_name: str


def snapshot_of(instances: dict[str, Any]) -> int | None:
    """The one snapshot a map of :class:`InstanceSnapshot` stands for; ``None`` for anything else
    (real instances, an empty map, references of several snapshots)."""
    ids = {ref.snapshot if isinstance(ref, InstanceSnapshot) else None for ref in instances.values()}
    if len(ids) != 1:
        return None
    return ids.pop()


@dataclass(frozen=True)
class ExecutionBudget:
    """What one backend call may use before it ends as BFCL's execution error."""

    cpu_seconds: int = 10
    memory_mb: int = 2048
    wall_seconds: float = 120.0

    @classmethod
    def from_env(cls) -> ExecutionBudget:
        default = cls()
        return cls(
            cpu_seconds=max(1, int(os.environ.get("TOOLDIAG_BFCL_CPU_S", default.cpu_seconds))),
            memory_mb=max(64, int(os.environ.get("TOOLDIAG_BFCL_MEMORY_MB", default.memory_mb))),
            wall_seconds=float(os.environ.get("TOOLDIAG_BFCL_WALL_S", default.wall_seconds)),
        )


def cpu_exceeded(budget: ExecutionBudget) -> str:
    """The result of a call the worker could not finish within ``budget``."""
    return (
        f"Error during execution: execution budget exceeded: the call used more than {budget.cpu_seconds} s "
        f"of CPU time (or {budget.wall_seconds:g} s of wall time) and was stopped"
    )


class WorkerDied(Exception):
    """The worker ended (over its CPU budget, killed at the wall deadline, or crashed)."""


class _Worker:
    """One worker process and its pipe; not thread-safe (one per parent thread)."""

    def __init__(self, budget: ExecutionBudget) -> None:
        self.budget = budget
        #: The process that started the worker: a forked child must not talk on (or close) its parent's pipe.
        self.owner_pid = os.getpid()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tooldiag.suites.bfcl.budget", str(budget.memory_mb), str(budget.cpu_seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.alive = True
        self._buffer = bytearray()
        self.dropped: list[int] = []
        self._next_sid = 0
        #: Requests sent with no caller waiting for their reply (:meth:`preload`): skipped on receive.
        self._unanswered = 0

    def new_sid(self) -> int:
        self._next_sid += 1
        return self._next_sid

    def preload(self, class_names: list[str]) -> None:
        """Have the worker import these backends' modules now, as their
        first instantiation would; nobody waits: the next :meth:`receive` skips the reply."""
        self.send(("preload", 0, class_names))
        self._unanswered += 1

    @property
    def unused(self) -> bool:
        """No session was ever bound to this worker (a :func:`prestart_worker` nobody used)."""
        return self._next_sid == 0

    def release(self, sid: int) -> None:
        """A session was garbage-collected: free its instances with the next request."""
        self.dropped.append(sid)

    def send(self, message: tuple[Any, ...]) -> None:
        if not self.alive:
            raise WorkerDied("worker already ended")
        dropped, self.dropped = self.dropped, []
        payload = pickle.dumps((dropped, message), protocol=pickle.HIGHEST_PROTOCOL)
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(_HEADER.pack(len(payload)) + payload)
            self.process.stdin.flush()
        except OSError as exc:
            self.close()
            raise WorkerDied(str(exc)) from None

    def receive(self) -> Any:
        """The next reply frame; :class:`WorkerDied` when the worker ended or missed the deadline.

        Reads the pipe's file descriptor directly: a buffered reader could hold the next
        frame in its buffer while ``select`` waits on the empty pipe.
        """
        try:
            while self._unanswered:  # the replies of preloads come first, in order
                self._take(_HEADER.unpack(self._take(_HEADER.size))[0])
                self._unanswered -= 1
            header = self._take(_HEADER.size)
            body = self._take(_HEADER.unpack(header)[0])
        except (OSError, WorkerDied) as exc:
            self.close()
            raise WorkerDied(str(exc)) from None
        return pickle.loads(body)

    def _take(self, size: int) -> bytes:
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while len(self._buffer) < size:
            ready, _, _ = select.select([descriptor], [], [], self.budget.wall_seconds)
            if not ready:
                raise WorkerDied("wall-clock deadline")
            chunk = os.read(descriptor, max(65536, size - len(self._buffer)))
            if not chunk:
                raise WorkerDied("worker closed its pipe")
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def run(self, message: tuple[Any, ...], on_result: list[str]) -> Any:
        """Send an ``execute`` request; results are appended to ``on_result`` as they arrive
        (so after a :class:`WorkerDied` its length says how many calls completed)."""
        self.send(message)
        for _ in message[2]:
            on_result.append(self.receive())
        return self.receive()

    def ask(self, message: tuple[Any, ...]) -> Any:
        """Send one request of one reply (``state_check``, ``fetch``); the reply."""
        self.send(message)
        return self.receive()

    def close(self) -> None:
        self.alive = False
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(OSError):
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


_LOCAL = threading.local()
_LIVE: weakref.WeakSet[_Worker] = weakref.WeakSet()


@atexit.register
def _close_workers() -> None:
    """Let every worker see end of input and exit before the interpreter does."""
    for worker in list(_LIVE):
        if worker.owner_pid == os.getpid():  # a forked child leaves its parent's workers alone
            worker.close()


def _worker(budget: ExecutionBudget) -> _Worker:
    worker: _Worker | None = getattr(_LOCAL, "worker", None)
    if worker is not None and worker.owner_pid != os.getpid():
        worker = None  # inherited through fork: the parent's, never ours to use or close
    if worker is None or not worker.alive or worker.budget != budget:
        if worker is not None and worker.alive:
            worker.close()
        worker = _Worker(budget)
        _LOCAL.worker = worker
        _LIVE.add(worker)
    return worker


#: The backends of BFCL's multi-turn categories (``CLASS_FILE_PATH_MAPPING`` also names
#: agentic ones, whose modules need packages a multi-turn run never imports).
MULTI_TURN_BACKENDS = (
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
)


def prestart_worker(class_names: list[str] | None = None) -> None:
    """Start this thread's worker now, unless it has one, and have it import the backends of
    ``class_names`` (default: :data:`MULTI_TURN_BACKENDS`), without waiting for it: its start-up
    then overlaps the caller's own (imports, loading cases) instead of holding up the first
    rollout, which waits for it (bench/README.md, "Sixth pass"). The memory budget's baseline is
    taken at the worker's start, before these imports, as before; a worker that ends meanwhile is
    replaced on first use."""
    existing: _Worker | None = getattr(_LOCAL, "worker", None)
    if existing is not None and existing.alive and existing.owner_pid == os.getpid():
        return
    with contextlib.suppress(WorkerDied):
        _worker(ExecutionBudget.from_env()).preload(list(class_names or MULTI_TURN_BACKENDS))


def close_unused_worker() -> None:
    """Close this thread's worker if no session ever used it (a prestarted one the run did not
    need: its cases went to ``--workers`` processes or Ray tasks)."""
    worker: _Worker | None = getattr(_LOCAL, "worker", None)
    if worker is not None and worker.owner_pid == os.getpid() and worker.unused:
        worker.close()
        _LOCAL.worker = None


class BudgetedSession:
    """:class:`~tooldiag.suites.bfcl.executor.BackendSession`'s contract, every call under a budget."""

    def __init__(
        self,
        budget: ExecutionBudget | None = None,
        return_instances: bool = True,
        snapshots_in_worker: bool = False,
    ) -> None:
        self.budget = budget or ExecutionBudget.from_env()
        #: The grader compares instances; a rollout only reads results, so it skips their pickling.
        self.return_instances = return_instances
        #: Instances stay in the worker, pickled after each call list; ``execute`` returns
        #: :class:`InstanceSnapshot` references and :meth:`state_check` compares them there.
        self.snapshots_in_worker = snapshots_in_worker
        self._snapshots = 0
        self._worker: _Worker | None = None
        self._sid = 0
        self._config_sent = False
        self._initial_config: dict = {}
        #: Completed requests (calls, context, what the worker kept), replayed into a fresh worker after a kill.
        self._log: list[tuple[list[str], tuple[Any, ...], Any]] = []
        #: How many calls ended over budget (tests and reports read it).
        self.over_budget = 0

    def _bind(self) -> _Worker:
        worker = self._worker
        if worker is not None and worker.alive:
            return worker
        worker = _worker(self.budget)
        self._worker, self._sid = worker, worker.new_sid()
        weakref.finalize(self, worker.release, self._sid)
        worker.send(("config", self._sid, self._initial_config))
        worker.receive()
        for calls, context, kept in self._log:  # replay: same calls, same order, results already known
            worker.run(("execute", self._sid, calls, *context, kept), [])
        return worker

    def execute(
        self,
        func_call_list: list[str],
        initial_config: dict,
        involved_classes: list[str],
        model_name: str,
        test_entry_id: str,
        long_context: bool = False,
        is_evaL_run: bool = False,  # BFCL's parameter name, spelled as BFCL spells it
    ) -> tuple[list[str], dict[str, Any]]:
        """Same contract as BFCL's ``execute_multi_turn_func_call``; instances come back as copies."""
        if not self._config_sent:
            self._initial_config, self._config_sent = initial_config, True
        context = (list(involved_classes), model_name, test_entry_id, long_context, is_evaL_run)
        want: Any = self.return_instances
        if self.snapshots_in_worker:  # the worker keeps this call list's instances as snapshot n
            self._snapshots += 1
            want = ("keep", self._snapshots)
        results: list[str] = []
        remaining = list(func_call_list)
        for _attempt in range(len(remaining) + 2):
            done: list[str] = []
            try:
                worker = self._bind()
                instances = worker.run(("execute", self._sid, remaining, *context, want), done)
            except WorkerDied:
                if done:
                    self._log.append((remaining[: len(done)], context, False))
                results.extend(done)
                if len(done) < len(remaining):  # this call was over budget: BFCL's error string
                    self.over_budget += 1
                    results.append(cpu_exceeded(self.budget))
                    remaining = remaining[len(done) + 1 :]
                else:  # every call completed; the worker ended returning (or keeping) the instances
                    remaining = []
                if not remaining and not want:
                    return results, {}
                continue
            self._log.append((remaining, context, want if self.snapshots_in_worker else False))
            results.extend(done)
            if self.snapshots_in_worker:
                return results, {name: InstanceSnapshot(want[1], name) for name in dict.fromkeys(involved_classes)}
            return results, instances or {}
        raise WorkerDied("the execution worker keeps ending without running a call")

    def state_check(self, model_instances: dict[str, Any], truth_instances: dict[str, Any]) -> dict[str, Any]:
        """BFCL's ``state_checker`` on two maps of :class:`InstanceSnapshot`, run in the worker on
        the snapshots (what it returns, or what it raised, raised here). :class:`WorkerDied` when
        the comparison ended the worker twice (the caller then compares :meth:`fetch_instances`)."""
        model_id, truth_id = snapshot_of(model_instances), snapshot_of(truth_instances)
        if model_id is None or truth_id is None:
            raise ValueError("state_check compares maps of InstanceSnapshot of this session")
        for _attempt in range(2):
            try:
                status, value = self._bind().ask(("state_check", self._sid, model_id, truth_id))
            except WorkerDied:
                continue
            if status == "raise":
                raise value
            return value
        raise WorkerDied("the state check ended the execution worker twice")

    def fetch_instances(self, *maps: dict[str, Any]) -> list[dict[str, Any]]:
        """The instances that maps of :class:`InstanceSnapshot` stand for, unpickled here."""
        ids = [snapshot_of(instances) for instances in maps]
        status, blobs = self._bind().ask(("fetch", self._sid, ids))
        if status == "raise":
            raise blobs
        return [pickle.loads(blob) for blob in blobs]


# -- the worker process --------------------------------------------------------


def _vm_size_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except OSError:
        return 0


def _serve(memory_mb: int, cpu_seconds: int) -> None:
    """Answer requests on stdin until it closes; backend prints go to stderr."""
    import bfcl_eval.eval_checker.multi_turn_eval.func_source_code  # noqa: F401 - counted in the baseline

    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    baseline = _vm_size_bytes()
    if baseline:
        limit = baseline + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    hard_cpu = resource.getrlimit(resource.RLIMIT_CPU)[1]
    sessions: dict[int, BackendSession] = {}
    configs: dict[int, dict] = {}
    #: Per grading session, the instances after each of its call lists (by snapshot number).
    snapshots: dict[int, _Snapshots] = {}
    while True:
        header = requests.read(_HEADER.size)
        if len(header) != _HEADER.size:
            return
        dropped, message = pickle.loads(requests.read(_HEADER.unpack(header)[0]))
        for sid in dropped:
            sessions.pop(sid, None)
            configs.pop(sid, None)
            snapshots.pop(sid, None)
        kind, sid = message[0], message[1]
        if kind == "preload":
            _preload(message[2])
            _write(replies, None)
            continue
        if kind == "config":
            sessions[sid], configs[sid] = BackendSession(), message[2]
            _write(replies, None)
            continue
        if kind in ("state_check", "fetch"):
            _set_cpu_limit(cpu_seconds, hard_cpu)
            _write(replies, _answer(kind, message[2:], snapshots.get(sid) or _Snapshots()))
            continue
        calls, classes, model_name, entry_id, long_context, is_eval, want_instances = message[2:]
        session = sessions[sid]
        arguments = (configs[sid], classes, model_name, entry_id, long_context, is_eval)
        kept = snapshots.get(sid)
        if calls and kept is not None:
            kept.touch(model_name, entry_id, is_eval, classes)
        for call in calls:
            _set_cpu_limit(cpu_seconds, hard_cpu)
            _write(replies, session.execute([call], *arguments)[0][0])
        if calls and not want_instances:
            _write(replies, None)
        else:  # also creates the instances when ``calls`` is empty
            instances = session.execute([], *arguments)[1]
            if isinstance(want_instances, tuple):  # ("keep", n): snapshot n of a grading session
                kept = snapshots.setdefault(sid, _Snapshots())
                kept.keep(want_instances[1], instances, (model_name, entry_id, is_eval, classes), long_context)
                _write(replies, None)
            else:
                _write(replies, instances if want_instances else None)


class _Snapshots:
    """One grading session's instances after each of its call lists, in the worker.

    Where the session's instances share no mutable state (every category but ``long_context``,
    whose ``TravelAPI`` instances share the session's extension cards, ``executor.py``), the
    instances after a call list stay what they are until a later call list runs on them: the
    snapshot is the live instances, valid while their version is unchanged, and comparing them is
    comparing the copies the parent used to compare, without pickling either. ``long_context``
    snapshots are pickled at once, the latest of each owner kept. A snapshot that a later call
    list changed (or replaced) is refused (BFCL's checker compares each turn's last ones, before
    anything else runs on them).
    """

    def __init__(self) -> None:
        self.pickled: dict[int, bytes] = {}
        #: Per owner (its instance names), the number of its one pickled snapshot.
        self.latest_pickled: dict[tuple[str, ...], tuple[int, ...]] = {}
        self.live: dict[int, tuple[dict[str, Any], dict[str, int]]] = {}
        #: Per instance name, how many call lists ran on it.
        self.versions: dict[str, int] = {}

    @staticmethod
    def _names(model_name: str, entry_id: str, is_eval: bool, classes: list[str]) -> list[str]:
        owner = model_name + "_eval" if is_eval else model_name  # BackendSession.execute's naming
        return [instance_name(owner, entry_id, class_name) for class_name in classes]

    def touch(self, model_name: str, entry_id: str, is_eval: bool, classes: list[str]) -> None:
        """A call list is about to run on these instances."""
        for name in self._names(model_name, entry_id, is_eval, classes):
            self.versions[name] = self.versions.get(name, 0) + 1

    def keep(self, number: int, instances: dict[str, Any], owner: tuple[Any, ...], shared: bool) -> None:
        names = self._names(*owner)
        if shared:  # only the owner's latest pickle is kept: the worker's memory budget is the calls'
            for older in self.latest_pickled.pop(tuple(names), ()):
                self.pickled.pop(older, None)
            self.pickled[number] = pickle.dumps(instances, protocol=pickle.HIGHEST_PROTOCOL)
            self.latest_pickled[tuple(names)] = (number,)
            return
        self.live[number] = (instances, {name: self.versions.get(name, 0) for name in names})

    def instances(self, number: int) -> dict[str, Any]:
        if number in self.pickled:
            return pickle.loads(self.pickled[number])
        live = self.live.get(number)
        if live is None or any(self.versions.get(name, 0) != version for name, version in live[1].items()):
            raise RuntimeError(f"snapshot {number} of the grading session was changed by a later call list")
        return live[0]

    def pickled_bytes(self, number: int) -> bytes:
        if number in self.pickled:
            return self.pickled[number]
        return pickle.dumps(self.instances(number), protocol=pickle.HIGHEST_PROTOCOL)


def _preload(class_names: list[str]) -> None:
    """Import the modules of these backend classes, which their first instantiation would import."""
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    for name in class_names:
        module = CLASS_FILE_PATH_MAPPING.get(name)
        if module is not None:
            with contextlib.suppress(Exception):  # a failing import fails again where it counts
                importlib.import_module(module)


def _set_cpu_limit(cpu_seconds: int, hard_cpu: int) -> None:
    """The soft CPU limit: this process's CPU so far plus the budget of one call."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(used.ru_utime + used.ru_stime) + cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard_cpu))


def _answer(kind: str, arguments: tuple[Any, ...], kept: _Snapshots) -> tuple[str, Any]:
    """``("ok", value)`` or ``("raise", exception)`` for a ``state_check`` or ``fetch`` request."""
    try:
        if kind == "fetch":
            return "ok", [kept.pickled_bytes(snapshot) for snapshot in arguments[0]]
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import state_checker

        model_id, truth_id = arguments
        return "ok", state_checker(kept.instances(model_id), kept.instances(truth_id))
    except Exception as exc:  # noqa: BLE001 - raised again in the parent, as the checker there would have
        return "raise", exc


def _write(replies: IO[bytes], value: Any) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    replies.write(_HEADER.pack(len(payload)) + payload)
    replies.flush()


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]))
