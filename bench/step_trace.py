"""Where a latency-bound ``tooldiag run bfcl`` spends its wall time (issue 16, sixth pass).

The 50 ms runs end over the CPU-free schedule model (``schedule_tail.py``): a fixed cost per
command (before the first request, after the last answer) and a latency per step between a
reply and the next request. This bench times both without changing tooldiag: it runs the real
command in a child process (``python bench/step_trace.py --child TRACE -- run bfcl ...``) whose
functions of interest are wrapped with ``time.perf_counter`` stamps, against
``replay_server.py`` in a thread of this process noting each request's arrival and answer by
its serial (``chatcmpl-N``). ``perf_counter`` is ``CLOCK_MONOTONIC`` on Linux, one clock for
both processes, so the server's and the child's stamps line up.

Printed:

* **the command's phases**: process start -> the child's first line (interpreter and site),
  imports and CLI set-up, ``prepare_run`` (cases, model, store), the first rollout until its
  first request (the budget worker's start-up among it), first request -> last answer, last
  answer -> the end of ``run_cases``, the summary (``usage_now``), printing it, interpreter exit;
* **per step** (a reply and the next request of the same case): the mean split of the gap
  between the server's answer and its next request's arrival: server answer -> the client's
  ``post`` returns (transit, the client's event loop busy elsewhere), reply parsing, the
  budget worker's round trip (``Rollout.execute``), building the next body, ``post`` -> the
  server's arrival; and per case end: grading, ``put_case``, the next case's set-up.

With ``--workers N`` above 1 the child's own stamps cover the parent only (workers are spawned
processes); the server's stamps still give the phases of the whole command.

    uv run python bench/step_trace.py                       # base, 200 cases, 50 ms, -c 8, --workers 1
    uv run python bench/step_trace.py --concurrency 32 --workers 2
    PYTHONPATH=/tmp/old/src uv run python bench/step_trace.py   # another tree's tooldiag
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERIAL = re.compile(rb'"id": ?"chatcmpl-(\d+)"')


# ----------------------------------------------------------------------------- the child


def _child(trace_path: str, argv: list[str]) -> None:
    """Run ``tooldiag ARGV`` with its functions of interest stamped; write the stamps at exit."""
    first_line = time.perf_counter()
    events: list[tuple[Any, ...]] = [("child_start", first_line)]
    import atexit

    def dump() -> None:
        events.append(("atexit", time.perf_counter()))
        Path(trace_path).write_text(json.dumps(events))
        Path(trace_path + ".end").write_text(str(time.perf_counter()))

    atexit.register(dump)  # registered first: runs after tooldiag's own atexit handlers (the worker's close)

    def task_id() -> int:
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return 0
        return id(task) if task is not None else 0

    def stamp_sync(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                events.append((label, started, time.perf_counter(), task_id()))

        setattr(owner, name, wrapped)

    def stamp_async(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                events.append((label, started, time.perf_counter(), task_id()))

        setattr(owner, name, wrapped)

    def on_http11(http11: Any) -> None:
        original_post = http11.LeanHTTPClient.post

        async def post(self: Any, target: str, body: bytes, limit: int) -> Any:
            started = time.perf_counter()
            reply = await original_post(self, target, body, limit)
            match = SERIAL.search(reply.content[:200])
            serial = int(match.group(1)) if match else -1
            events.append(("post", started, time.perf_counter(), task_id(), serial))
            return reply

        http11.LeanHTTPClient.post = post

    def on_budget(budget: Any) -> None:
        original_worker_init = budget._Worker.__init__

        def worker_init(self: Any, *args: Any, **kwargs: Any) -> None:
            started = time.perf_counter()
            original_worker_init(self, *args, **kwargs)
            events.append(("budget_worker_spawn", started, time.perf_counter(), task_id()))

        budget._Worker.__init__ = worker_init
        stamp_sync(budget.BudgetedSession, "_bind", "budget_bind")
        stamp_sync(budget.BudgetedSession, "execute", "budget_execute")
        stamp_sync(budget.BudgetedSession, "state_check", "state_check")

    def on_rollout(rollout: Any) -> None:
        stamp_sync(rollout.Rollout, "execute", "rollout_execute")
        stamp_async(rollout.Rollout, "query", "query")

    def on_openai(openai_compat: Any) -> None:
        stamp_sync(openai_compat.OpenAICompatBackend, "parse_reply", "parse_reply")
        stamp_sync(openai_compat.OpenAICompatBackend, "build_request", "build_request")

    def on_rundb(rundb: Any) -> None:
        stamp_sync(rundb.RunStore, "put_case", "put_case")
        stamp_sync(rundb.RunStore, "put_encoded_case", "put_case")

    def on_runner(runner: Any) -> None:
        events.append(("runner_imported", time.perf_counter()))
        stamp_async(runner, "run_rollout", "run_rollout")
        stamp_sync(runner, "grade_trajectory", "grade")
        stamp_sync(runner, "prepare_run", "prepare_run")
        stamp_sync(runner, "select_cases", "select_cases")
        stamp_sync(runner, "resolve_model", "resolve_model")
        stamp_async(runner, "execute_run", "execute_run")
        stamp_async(runner, "run_cases", "run_cases")
        stamp_sync(runner, "usage_now", "usage_now")

    def on_cli_run(cli_run: Any) -> None:
        stamp_sync(cli_run, "print_summary", "print_summary")

    def on_sharded(sharded: Any) -> None:
        stamp_sync(sharded, "run_cases_sharded", "run_cases_sharded")

    hooks: dict[str, Callable[[Any], None]] = {
        "tooldiag.models.http11": on_http11,
        "tooldiag.suites.bfcl.budget": on_budget,
        "tooldiag.suites.bfcl.rollout": on_rollout,
        "tooldiag.models.openai_compat": on_openai,
        "tooldiag.store.rundb": on_rundb,
        "tooldiag.suites.bfcl.runner": on_runner,
        "tooldiag.cli.run": on_cli_run,
        "tooldiag.suites.bfcl.sharded": on_sharded,
    }
    _install_import_hooks(hooks)
    events.append(("wrapped", time.perf_counter()))
    sys.argv = ["tooldiag", *argv]
    import tooldiag.cli.main as cli_main  # as ``python -m tooldiag`` does; the rest is imported where it is used

    events.append(("cli_imported", time.perf_counter()))
    try:
        cli_main.main()
    finally:
        events.append(("main_returned", time.perf_counter()))


def _install_import_hooks(hooks: dict[str, Callable[[Any], None]]) -> None:
    """Run ``hooks[name](module)`` right after module ``name`` is first executed, so the command
    imports what it imports when it imports it (the start-up phases stay the command's own)."""
    import importlib.abc
    import importlib.machinery

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name not in hooks:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
            if spec is None or spec.loader is None:
                return spec
            loader, hook = spec.loader, hooks.pop(name)
            original_exec = loader.exec_module

            def exec_module(module: Any) -> None:
                original_exec(module)
                hook(module)

            loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, Finder())


# ----------------------------------------------------------------------------- the server


def _server_class() -> type:
    from replay_server import ReplayServer

    class StampingServer(ReplayServer):
        """The replay server, noting ``serial -> (arrival, answer)`` of every chat request."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.stamps: dict[int, tuple[float, float]] = {}

        async def _answer(self, method: str, path: str, raw: bytes) -> tuple[int, bytes]:
            arrived = time.perf_counter()
            status, payload = await super()._answer(method, path, raw)
            match = SERIAL.search(payload[:200])
            if match:
                self.stamps[int(match.group(1))] = (arrived, time.perf_counter())
            return status, payload

    return StampingServer


# ----------------------------------------------------------------------------- analysis


def _mean_ms(values: list[float]) -> str:
    return f"{1000 * statistics.fmean(values):.2f}" if values else "-"


def _spans(events: list[list[Any]], label: str) -> list[list[Any]]:
    return [e for e in events if e[0] == label]


def analyse(
    events: list[list[Any]],
    stamps: dict[int, tuple[float, float]],
    popen: float,
    reaped: float,
    latency_s: float,
    concurrency: int,
) -> list[str]:
    marks = {e[0]: e[1] for e in events if len(e) == 2}
    first_request = min(arrived for arrived, _ in stamps.values())
    last_answer = max(answered for _, answered in stamps.values())
    lines = []

    def phase(name: str, start: float, end: float) -> None:
        lines.append(f"  {name:<52} {end - start:7.3f} s")

    def span(label: str) -> tuple[float, float] | None:
        found = _spans(events, label)
        return (found[0][1], found[-1][2]) if found else None

    lines.append("command phases:")
    phase("process start -> child's first line (interpreter, site)", popen, marks["child_start"])
    phase("this bench's hooks", marks["child_start"], marks["wrapped"])
    phase("import tooldiag.cli.main (typer)", marks["wrapped"], marks["cli_imported"])
    phase(
        "cli.main -> runner imported (parsing, pydantic, api, progress)",
        marks["cli_imported"],
        marks["runner_imported"],
    )
    prepared = span("prepare_run")
    executed = span("execute_run")
    if prepared:
        phase("runner imported -> prepare_run (run_bfcl's checks)", marks["runner_imported"], prepared[0])
        phase("prepare_run (load cases, resolve model, open store)", *prepared)
        for label in ("select_cases", "resolve_model"):
            inner = span(label)
            if inner:
                phase(f"  of it {label}", *inner)
    if executed:
        phase(
            "prepare_run end -> execute_run start", prepared[1] if prepared else marks["runner_imported"], executed[0]
        )
        cases_span = span("run_cases") or span("run_cases_sharded")
        if cases_span:
            phase("execute_run start -> run_cases start (resume check, schedule)", executed[0], cases_span[0])
            phase("run_cases start -> first request at the server", cases_span[0], first_request)
            spawn = _spans(events, "budget_worker_spawn")
            binds = _spans(events, "budget_bind")
            if spawn:
                phase("  of it: budget worker Popen", spawn[0][1], spawn[0][2])
            if binds:
                phase("  of it: first bind (Popen + worker start-up + config)", binds[0][1], binds[0][2])
    phase("first request -> last answer (server)", first_request, last_answer)
    if executed:
        cases_span = span("run_cases") or span("run_cases_sharded")
        if cases_span:
            phase("last answer -> run_cases end (last grade, put_case)", last_answer, cases_span[1])
            usage = span("usage_now")
            if usage:
                phase("run_cases end -> usage_now start (status counts, aclose)", cases_span[1], usage[0])
                phase("usage_now (run summary from the store)", *usage)
                phase("usage_now end -> execute_run end (store close)", usage[1], executed[1])
    printed = span("print_summary")
    if printed and executed:
        phase("execute_run end -> print_summary start", executed[1], printed[0])
        phase("print_summary (rich)", *printed)
        phase("print_summary end -> main returned", printed[1], marks["main_returned"])
    phase("main returned -> atexit (the budget worker's close first)", marks["main_returned"], marks["atexit"])
    phase("atexit -> trace written (this bench's own dump)", marks["atexit"], marks["dumped"])
    phase("trace written -> reaped by this bench (interpreter teardown)", marks["dumped"], reaped)
    phase("whole command", popen, reaped)
    requests = len(stamps)
    floor = max(1e-9, requests * latency_s / concurrency)
    lines.append(
        f"  requests {requests}, floor {floor:.2f} s; first->last {last_answer - first_request:.2f} s "
        f"({(last_answer - first_request) / floor:.3f}x), "
        f"command {reaped - popen:.2f} s ({(reaped - popen) / floor:.3f}x)"
    )
    lines.extend(_steps(events, stamps, latency_s))
    return lines


def _steps(events: list[list[Any]], stamps: dict[int, tuple[float, float]], latency_s: float) -> list[str]:
    """The gap between one answer and the next request of the same rollout, split."""
    by_task: dict[int, list[list[Any]]] = defaultdict(list)
    for event in events:
        if len(event) >= 4 and event[0] in (
            "post",
            "query",
            "parse_reply",
            "rollout_execute",
            "build_request",
            "run_rollout",
            "grade",
            "put_case",
            "budget_execute",
        ):
            by_task[event[3]].append(event)
    inside = [answered - arrived - latency_s for arrived, answered in stamps.values()]
    parts: dict[str, list[float]] = defaultdict(list)
    case_parts: dict[str, list[float]] = defaultdict(list)
    for task_events in by_task.values():
        task_events.sort(key=lambda e: e[1])
        posts = [e for e in task_events if e[0] == "post" and e[4] in stamps]
        for this, following in itertools.pairwise(posts):
            answered = stamps[this[4]][1]
            arrived = stamps[following[4]][0]
            between = [e for e in task_events if this[2] <= e[1] and e[2] <= following[1]]
            new_case = any(e[0] == "run_rollout" for e in task_events if this[2] <= e[1] <= following[1])
            target = case_parts if new_case or any(e[0] == "grade" for e in between) else parts
            target["gap: server answer -> next arrival"].append(arrived - answered)
            target["server answer -> client post returns"].append(this[2] - answered)
            target["client post returns -> next post starts"].append(following[1] - this[2])
            target["next post starts -> server arrival"].append(arrived - following[1])
            for label in ("parse_reply", "rollout_execute", "build_request", "grade", "put_case"):
                target[f"  of it: {label}"].append(sum(e[2] - e[1] for e in between if e[0] == label))
            executes = [e for e in between if e[0] == "budget_execute"]
            target["  of it: budget_execute (all, incl. grading's)"].append(sum(e[2] - e[1] for e in executes))
    lines = [f"server: in flight beyond the latency, mean {_mean_ms(inside)} ms per request (parse, sleep overshoot)"]
    for title, table in (
        ("per step within a case", parts),
        ("per case boundary (grade, store, next case)", case_parts),
    ):
        count = len(next(iter(table.values()), []))
        lines.append(f"{title}: {count} gaps, mean ms")
        for label, values in table.items():
            lines.append(f"  {label:<52} {_mean_ms(values):>8}")
    return lines


# ----------------------------------------------------------------------------- the bench


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        separator = sys.argv.index("--")
        _child(sys.argv[2], sys.argv[separator + 1 :])
        return
    bench = Path(__file__).resolve().parent
    sys.path.insert(0, str(bench))
    import machine
    from compare_bfcl import ROOT, tooldiag_command

    sys.path.insert(1, str(ROOT / "src"))
    from replay_server import build_table

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--category", default="base")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    print(machine.host_line(), flush=True)
    loop = asyncio.new_event_loop()
    server = _server_class()(build_table(args.limit, [args.category]), args.latency_ms / 1000.0)
    loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory(prefix="step-trace-") as folder:
            run_dir = Path(folder) / "run"
            trace = Path(folder) / "trace.json"
            command = tooldiag_command("openai/replay", args.category, run_dir, args.concurrency, args.limit)
            command += ["--base-url", f"http://127.0.0.1:{server.port}/{args.category}/v1"]
            command += ["--workers", str(args.workers)]
            child = [sys.executable, str(Path(__file__).resolve()), "--child", str(trace), "--", *command[3:]]
            popen = time.perf_counter()
            with (Path(folder) / "run.log").open("w") as log:
                process = subprocess.Popen(child, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=os.environ)
                _, status, usage = os.wait4(process.pid, 0)
            reaped = time.perf_counter()
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit("run failed:\n" + (Path(folder) / "run.log").read_text()[-3000:])
            events = json.loads(trace.read_text())
            events.append(["dumped", float(Path(str(trace) + ".end").read_text())])
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
    print(f"cpu of the command (parent and its children reaped): {usage.ru_utime + usage.ru_stime:.2f} s")
    for line in analyse(events, dict(server.stamps), popen, reaped, args.latency_ms / 1000.0, args.concurrency):
        print(line)


if __name__ == "__main__":
    main()
