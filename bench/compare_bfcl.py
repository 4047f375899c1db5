"""tooldiag's ``run bfcl`` side by side with BFCL's own harness, on one replay server (issue 16).

For each configuration (server latency, BFCL's ``--num-threads``, tooldiag's ``--concurrency``)
one ``bench/replay_server.py`` serves BFCL's ground truth (up to 3 calls per message) and both
harnesses run the same cases against it, one process per category each:

* BFCL: ``bfcl generate`` + ``bfcl evaluate`` (model ``openbmb/MiniCPM-SALA-FC``, BFCL's plain
  chat-completions FC handler, ``OPENAI_BASE_URL`` per category, ``BFCL_PROJECT_ROOT`` in a
  temporary folder), from a venv built once under ``~/.cache/tooldiag-bench/bfcl-venv``
  (``bfcl-eval==2026.3.23`` with ``--no-deps`` plus what its ``bfcl`` command imports at start,
  no torch/faiss); ``TOOLDIAG_BFCL_VENV`` overrides the folder;
* tooldiag: ``tooldiag run bfcl --model openai/replay --base-url ...``.

Printed: wall time of each, the ratio, both accuracies, the request count (from the server),
the latency floor (requests x latency / concurrency), tooldiag's CPU per request (all of its
processes' CPU / requests, and the marginal CPU per request once four one-case runs' fixed
cost is taken out) and the peak RSS of each harness's processes (``os.wait4`` of each child).
Then re-grading 800 stored cases (``tooldiag report`` on an 800-case run) and ``judgebench
judge`` throughput against ``tooldiag.testing.fake_openai`` answering verdicts.

If BFCL's venv cannot be built or its ``bfcl`` command does not start, the tooldiag figures
are still measured and the reason is printed.

Before timing, both harnesses' code is compiled to bytecode (``compileall`` over tooldiag's
``src/``, this interpreter's site-packages and BFCL's venv), as an installed package is once it
has been imported or pip has installed it: where ``PYTHONDONTWRITEBYTECODE`` is set (this
sandbox), every command would otherwise compile each module it imports again, about 0.4 s per
tooldiag command and more for BFCL's (bench/README.md, "Seventh pass"). ``--no-precompile``
measures without it.

    uv run python bench/compare_bfcl.py --quick            # 40 base cases, 0 ms, BFCL 8 threads: < 3 min
    uv run python bench/compare_bfcl.py --json out.json    # all 800 cases, every configuration
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

import machine

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
CATEGORIES = ("base", "long_context", "miss_func", "miss_param")
BFCL_MODEL = "openbmb/MiniCPM-SALA-FC"
BFCL_VERSION = "2026.3.23"
#: What every ``bfcl`` command imports at start (all handler modules), without torch or faiss.
BFCL_DEPS = [
    "mpmath",
    "filelock",
    "tenacity",
    "overrides",
    "tree-sitter==0.21.3",
    "tree-sitter-java>=0.21,<0.22",
    "tree-sitter-javascript>=0.21,<0.22",
    "openai",
    "pandas<3",
    "numpy==1.26.4",
    "tqdm",
    "typer",
    "tabulate",
    "python-dotenv",
    "pydantic",
    "requests",
    "anthropic",
    "cohere==5.18.*",
    "mistralai==1.7.*",
    "google-genai",
    "writer-sdk",
    "boto3",
    "qwen-agent==0.0.34",
    "soundfile",
    "datamodel-code-generator==0.25.7",
    "httpx",
]
#: (server latency ms, BFCL threads, tooldiag concurrency)
FULL_CONFIGS = ((0.0, 1, 8), (0.0, 8, 8), (50.0, 8, 8), (50.0, 32, 32))
QUICK_CONFIGS = ((0.0, 8, 8),)
#: Each category costs every harness a process start (BFCL's: about 10 s of imports), so the
#: quick run keeps one.
QUICK_CATEGORIES = ("base",)


@dataclass
class Child:
    """One finished child process: wall s, CPU s (user + system), peak RSS MB, exit status."""

    wall: float
    cpu: float
    rss_mb: float
    rc: int
    log: str


def run_child(command: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path = ROOT) -> Child:
    """Run to the end; CPU and peak RSS are this child's own (``os.wait4``), not the bench's."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    return Child(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, str(log))


def tail(path: str, lines: int = 15) -> str:
    return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])


# ----------------------------------------------------------------------------- BFCL's venv


def venv_dir() -> Path:
    default = Path.home() / ".cache" / "tooldiag-bench" / "bfcl-venv"
    return Path(os.environ.get("TOOLDIAG_BFCL_VENV", default))


def ensure_bfcl(work: Path) -> tuple[Path | None, str]:
    """``(bfcl executable, "")`` from the cached venv (built when missing), or ``(None, why not)``."""
    venv = venv_dir()
    bfcl = venv / "bin" / "bfcl"
    python = venv / "bin" / "python"
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(work / "bfcl-probe")}
    if not bfcl.exists():
        venv.parent.mkdir(parents=True, exist_ok=True)
        uv = [sys.executable, "-m", "uv"]
        steps = [
            [*uv, "venv", "-q", "--python", f"{sys.version_info.major}.{sys.version_info.minor}", str(venv)],
            [*uv, "pip", "install", "-q", "--python", str(python), "--no-deps", f"bfcl-eval=={BFCL_VERSION}"],
            [*uv, "pip", "install", "-q", "--python", str(python), *BFCL_DEPS],
        ]
        print(f"building BFCL's harness in {venv} (once) ...", flush=True)
        for step in steps:
            done = run_child(step, work / "bfcl-install.log")
            if done.rc != 0:
                return None, f"`{' '.join(step[:6])} ...` failed (exit {done.rc}):\n{tail(done.log)}"
    # ``bfcl version`` reads package metadata that ``--no-deps`` leaves out; ``--help`` still
    # imports every handler module, which is what must work.
    probe = run_child([str(bfcl), "--help"], work / "bfcl-help.log", env=env)
    if probe.rc != 0:
        return None, f"`{bfcl} --help` failed (exit {probe.rc}):\n{tail(probe.log)}"
    return bfcl, ""


def precompile(bfcl: Path | None, work: Path) -> None:
    """Bytecode for both harnesses' modules, so neither pays compiling on each start (module docstring)."""
    import site
    import sysconfig

    folders = [ROOT / "src", Path(sysconfig.get_paths()["purelib"]), *map(Path, site.getsitepackages())]
    jobs = [[sys.executable, "-m", "compileall", "-q", "-j", "0", *sorted({str(f) for f in folders if f.is_dir()})]]
    if bfcl is not None:
        python = bfcl.parent / "python"
        code = "import site, sys; print(*site.getsitepackages(), sep=chr(10))"
        found = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False).stdout.split()
        jobs.append([str(python), "-m", "compileall", "-q", "-j", "0", *found])
    for index, job in enumerate(jobs):
        run_child(job, work / f"compileall-{index}.log")


# ----------------------------------------------------------------------------- the server


class Server:
    """``bench/replay_server.py`` in a child process (its CPU is not counted for either harness)."""

    def __init__(self, latency_ms: float, limit: int | None, judge: bool = False) -> None:
        command = [sys.executable, str(BENCH / "replay_server.py"), "--latency-ms", str(latency_ms)]
        command += ["--judge"] if judge else (["--limit", str(limit)] if limit else [])
        self.proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"replay server did not start: {line!r}")
        self.root = line.split()[-1].strip()

    def requests(self) -> int:
        with urllib.request.urlopen(f"{self.root}/_stats", timeout=10) as reply:
            stats = json.loads(reply.read())
        if stats["unknown"]:
            raise RuntimeError(f"the replay server met {stats['unknown']} requests it does not know")
        return int(stats["requests"])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


# ----------------------------------------------------------------------------- the two harnesses


@dataclass
class Side:
    """One harness over every category of one configuration."""

    wall: float = 0.0
    cpu: float = 0.0
    rss_mb: float = 0.0
    passed: int = 0
    cases: int = 0
    requests: int = 0
    error: str = ""

    def add(self, child: Child) -> None:
        self.wall += child.wall
        self.cpu += child.cpu
        self.rss_mb = max(self.rss_mb, child.rss_mb)


def bfcl_side(
    bfcl: Path, server: Server, threads: int, limit: int | None, work: Path, categories: tuple[str, ...]
) -> Side:
    side = Side()
    project = work / "project"
    project.mkdir(parents=True, exist_ok=True)
    before = server.requests()
    for category in categories:
        if limit:  # ``--run-ids`` runs exactly the ids of this file, whatever --test-category says
            ids = {f"multi_turn_{category}": [f"multi_turn_{category}_{i}" for i in range(limit)]}
            (project / "test_case_ids_to_generate.json").write_text(json.dumps(ids))
        env = {
            **os.environ,
            "BFCL_PROJECT_ROOT": str(project),
            "OPENAI_BASE_URL": f"{server.root}/{category}/v1",
            "OPENAI_API_KEY": "x",
        }
        test = f"multi_turn_{category}"
        generate = [str(bfcl), "generate", "--model", BFCL_MODEL, "--test-category", test]
        generate += ["--num-threads", str(threads), *(["--run-ids"] if limit else [])]
        evaluate = [str(bfcl), "evaluate", "--model", BFCL_MODEL, "--test-category", test]
        evaluate += ["--partial-eval"] if limit else []
        for name, command in (("generate", generate), ("evaluate", evaluate)):
            child = run_child(command, work / f"{category}-{name}.log", env=env)
            side.add(child)
            if child.rc != 0:
                side.error = f"bfcl {name} {test} failed (exit {child.rc}):\n{tail(child.log)}"
                return side
        score = project / "score" / BFCL_MODEL.replace("/", "_") / "multi_turn" / f"BFCL_v4_{test}_score.json"
        head = json.loads(score.read_text().splitlines()[0])
        side.passed += int(head["correct_count"])
        side.cases += int(head["total_count"])
    side.requests = server.requests() - before
    return side


def stored(run_dir: Path) -> tuple[int, int]:
    """(cases stored, cases passed) of a tooldiag run."""
    from tooldiag.store import RunStore

    store = RunStore.open(run_dir)
    try:
        records = list(store.iter_cases())
    finally:
        store.close()
    return len(records), sum(1 for r in records if r.passed)


def tooldiag_command(model: str, categories: str, run_dir: Path, concurrency: int, limit: int | None) -> list[str]:
    command = [sys.executable, "-m", "tooldiag", "run", "bfcl", "--model", model, "--categories", categories]
    command += ["--run-dir", str(run_dir), "--concurrency", str(concurrency), "--no-cache", "-q"]
    return command + (["--limit", str(limit)] if limit else [])


def tooldiag_side(server: Server, concurrency: int, limit: int | None, work: Path, categories: tuple[str, ...]) -> Side:
    side = Side()
    before = server.requests()
    for category in categories:
        run_dir = work / category
        command = tooldiag_command("openai/replay", category, run_dir, concurrency, limit)
        child = run_child([*command, "--base-url", f"{server.root}/{category}/v1"], work / f"{category}.log")
        side.add(child)
        if child.rc != 0:
            side.error = f"tooldiag run bfcl --categories {category} failed:\n{tail(child.log)}"
            return side
        cases, passed = stored(run_dir)
        side.cases += cases
        side.passed += passed
    side.requests = server.requests() - before
    return side


def fixed_cost(server: Server, work: Path) -> tuple[float, int]:
    """(CPU s, requests) of a one-case ``tooldiag run bfcl``, least CPU of 3: the cost paid per command."""
    best = (float("inf"), 0)
    for attempt in range(3):
        before = server.requests()
        run_dir = work / f"fixed-{attempt}"
        command = tooldiag_command("openai/replay", "base", run_dir, 1, 1)
        child = run_child([*command, "--base-url", f"{server.root}/base/v1"], work / f"fixed-{attempt}.log")
        if child.rc != 0:
            raise RuntimeError(f"one-case run failed:\n{tail(child.log)}")
        best = min(best, (child.cpu, server.requests() - before))
    return best


# ----------------------------------------------------------------------------- re-grade and judge


def regrade(limit: int | None, work: Path, categories: tuple[str, ...]) -> dict[str, float]:
    """``tooldiag report`` on an 800-case run (``ref/oracle``, stored offline), best of 3."""
    run_dir = work / "oracle"
    offline = run_child(tooldiag_command("ref/oracle", ",".join(categories), run_dir, 8, limit), work / "oracle.log")
    if offline.rc != 0:
        raise RuntimeError(f"ref/oracle run failed:\n{tail(offline.log)}")
    cases, _ = stored(run_dir)
    runs = []
    for attempt in range(3):
        out = work / f"report-{attempt}.json"
        command = [sys.executable, "-m", "tooldiag", "report", str(run_dir), "--format", "json", "--out", str(out)]
        child = run_child(command, work / f"report-{attempt}.log")
        if child.rc != 0:
            raise RuntimeError(f"tooldiag report failed:\n{tail(child.log)}")
        runs.append(child)
    best = min(runs, key=lambda c: c.wall)
    return {"cases": cases, "wall_s": best.wall, "cpu_s": best.cpu, "rss_mb": best.rss_mb}


#: The tiny judge run whose CPU the marginal figure takes out: the same command (the same judges
#: and every condition, so the same models, templates and rubrics are set up) on one generator's
#: easy plans.
JUDGE_TINY = ("-g", "ref/jb-perturb", "--difficulties", "easy")


def judge_counts(run_dir: Path) -> tuple[int, int]:
    """(units, model calls) stored by a judge run: a unit is one verdict row; its ``attempts`` are
    the calls it made (a Prometheus unit makes four, one per metric, plus any retries)."""
    import sqlite3

    db = sqlite3.connect(run_dir / "judgebench.sqlite")
    try:
        units, calls = db.execute("SELECT COUNT(*), COALESCE(SUM(attempts), 0) FROM judgements").fetchone()
    finally:
        db.close()
    return int(units), int(calls)


@dataclass
class JudgeRun:
    """One judge command: the child's figures and what it stored."""

    child: Child
    units: int
    calls: int


def judge_run(
    predicted: Path, work: Path, server: Server, concurrency: int, judges: int, extra: tuple[str, ...]
) -> JudgeRun:
    """One ``judgebench judge`` command (``judges`` judges, ``openai/fake-1`` ...) on a fresh copy of
    the predicted store."""
    import shutil

    work.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(predicted, work)
    command = [sys.executable, "-m", "tooldiag", "judgebench", "judge", "--run-dir", str(work)]
    for number in range(1, judges + 1):
        command += ["-j", f"openai/fake-{number}"]
    command += ["--base-url", f"{server.root}/v1", "--conditions", "all", "--no-cache", "-q", "-c", str(concurrency)]
    child = run_child([*command, *extra], work.with_suffix(".log"))
    if child.rc != 0 or "ran " not in Path(child.log).read_text():
        raise RuntimeError(f"judgebench judge failed:\n{tail(child.log)}")
    return JudgeRun(child, *judge_counts(work))


def judge_throughput(
    work: Path, concurrency: int = 8, rounds: int = 1, tiny_rounds: int = 3, judges: int = 4
) -> dict[str, float]:
    """``judgebench judge`` over every condition against the fake server: calls/s, CPU per call.

    Two CPU figures: the whole process over its calls (start-up included), and the marginal CPU
    per call, ``(CPU of the full run - CPU of a tiny run) / (calls of the full run - calls of the
    tiny run)``, the issue's "marginal CPU per request over a one-case run" for the judge: the
    command's fixed cost (imports, opening the store, loading the plans) taken out. The full run
    is ``judges`` judges (a grid's shape: each judges every plan once; 4 make the difference of the
    two runs about 8,900 calls, so this shared machine's noise is a few hundredths of a ms) under
    every condition on every plan of ``ref/jb-perturb`` and ``ref/jb-sloppy``; the tiny one the
    same command on ``ref/jb-perturb``'s easy plans; each is the least CPU of its rounds.
    """
    predicted = work / "judgebench-predicted"
    predict = [sys.executable, "-m", "tooldiag", "judgebench", "predict", "-g", "ref/jb-perturb"]
    predict += ["-g", "ref/jb-sloppy", "--run-dir", str(predicted), "-q"]
    if run_child(predict, work / "predict.log").rc != 0:
        raise RuntimeError(f"judgebench predict failed:\n{tail(str(work / 'predict.log'))}")
    server = Server(0.0, None, judge=True)
    try:
        tiny = [
            judge_run(predicted, work / f"judge-tiny-{i}", server, concurrency, judges, JUDGE_TINY)
            for i in range(tiny_rounds)
        ]
        full = [judge_run(predicted, work / f"judge-full-{i}", server, concurrency, judges, ()) for i in range(rounds)]
    finally:
        server.stop()
    small = min(tiny, key=lambda r: r.child.cpu)
    large = min(full, key=lambda r: r.child.cpu)
    marginal = (large.child.cpu - small.child.cpu) / max(1, large.calls - small.calls)
    return {
        "judges": judges,
        "units": large.units,
        "calls": large.calls,
        "concurrency": concurrency,
        "wall_s": large.child.wall,
        "cpu_s": large.child.cpu,
        "calls_per_s": large.calls / large.child.wall,
        "cpu_ms_per_call": 1000 * large.child.cpu / large.calls,
        "cpu_ms_per_unit": 1000 * large.child.cpu / large.units,
        "tiny_units": small.units,
        "tiny_calls": small.calls,
        "tiny_cpu_s": small.child.cpu,
        "marginal_cpu_ms_per_call": 1000 * marginal,
        "rss_mb": large.child.rss_mb,
    }


def judge_line(judge: dict[str, float]) -> str:
    """The judge figures as one printed line (``compare_bfcl.py`` and ``judge_cpu.py``)."""
    return (
        f"judge: `judgebench judge` against fake_openai, {judge['judges']:.0f} judges, {judge['calls']:.0f} calls "
        f"({judge['units']:.0f} verdicts) at concurrency {judge['concurrency']:.0f}: {judge['wall_s']:.1f} s, "
        f"{judge['calls_per_s']:.0f} calls/s; "
        f"CPU per call {judge['cpu_ms_per_call']:.3f} ms whole process, {judge['marginal_cpu_ms_per_call']:.3f} ms "
        f"marginal (tiny run: {judge['tiny_calls']:.0f} calls, {judge['tiny_cpu_s']:.2f} s CPU); "
        f"{judge['rss_mb']:.0f} MB peak RSS"
    )


# ----------------------------------------------------------------------------- the run


@dataclass
class Row:
    latency_ms: float
    bfcl_threads: int
    concurrency: int
    tooldiag: Side
    bfcl: Side | None
    fixed_cpu_s: float
    fixed_requests: int
    #: Commands per harness (one per category): the fixed cost paid this many times.
    commands: int

    def figures(self) -> dict[str, float]:
        td = self.tooldiag
        floor = td.requests * self.latency_ms / 1000 / self.concurrency
        n = self.commands
        marginal = (td.cpu - n * self.fixed_cpu_s) / max(1, td.requests - n * self.fixed_requests)
        out = {
            "floor_s": floor,
            "tooldiag_cpu_ms_per_request": 1000 * td.cpu / max(1, td.requests),
            "tooldiag_marginal_cpu_ms_per_request": 1000 * marginal,
            "tooldiag_over_floor": td.wall / floor if floor else 0.0,
        }
        if self.bfcl is not None and not self.bfcl.error:
            out["ratio"] = self.bfcl.wall / td.wall
        return out


def markdown(rows: list[Row]) -> str:
    lines = [
        "| server latency | BFCL threads / tooldiag concurrency | BFCL `generate`+`evaluate` | tooldiag `run bfcl` "
        "| ratio | BFCL acc | tooldiag acc | requests (BFCL / tooldiag) | latency floor | tooldiag CPU ms per "
        "request (all / marginal) | peak RSS MB (BFCL / tooldiag) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        td, bf, fig = row.tooldiag, row.bfcl, row.figures()
        if bf is None or bf.error:
            bfcl_wall = bfcl_acc = bfcl_req = bfcl_rss = ratio = "-"
        else:
            bfcl_wall, bfcl_acc = f"{bf.wall:.1f} s", f"{bf.passed}/{bf.cases}"
            bfcl_req, bfcl_rss, ratio = str(bf.requests), f"{bf.rss_mb:.0f}", f"{fig['ratio']:.1f}x"
        floor = f"{fig['floor_s']:.1f} s ({fig['tooldiag_over_floor']:.2f}x)" if fig["floor_s"] else "0"
        lines.append(
            f"| {row.latency_ms:g} ms | {row.bfcl_threads} / {row.concurrency} | {bfcl_wall} | {td.wall:.1f} s "
            f"| {ratio} | {bfcl_acc} | {td.passed}/{td.cases} | {bfcl_req} / {td.requests} | {floor} "
            f"| {fig['tooldiag_cpu_ms_per_request']:.2f} / {fig['tooldiag_marginal_cpu_ms_per_request']:.2f} "
            f"| {bfcl_rss} / {td.rss_mb:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 base cases, 0 ms, 8 threads (< 3 minutes)")
    parser.add_argument("--limit", type=int, default=None, help="cases per category (default: all 200)")
    parser.add_argument("--no-bfcl", action="store_true", help="tooldiag's figures only")
    parser.add_argument("--json", type=Path, default=None, help="write the raw figures here")
    parser.add_argument("--no-precompile", action="store_true", help="do not compile both harnesses to bytecode first")
    args = parser.parse_args()
    limit = args.limit or (40 if args.quick else None)
    configs = QUICK_CONFIGS if args.quick else FULL_CONFIGS
    categories = QUICK_CATEGORIES if args.quick else CATEGORIES
    print(machine.host_line(), flush=True)
    with tempfile.TemporaryDirectory(prefix="compare-bfcl-") as folder:
        work = Path(folder)
        bfcl, why = (None, "--no-bfcl given") if args.no_bfcl else ensure_bfcl(work)
        if bfcl is None:
            print(f"BFCL's harness is not measured: {why}", flush=True)
        if not args.no_precompile:
            precompile(bfcl, work)
        rows: list[Row] = []
        by_latency: dict[float, Server] = {}
        tooldiag_runs: dict[tuple[float, int], tuple[Side, tuple[float, int]]] = {}
        try:
            for latency, threads, concurrency in configs:
                if latency not in by_latency:
                    by_latency[latency] = Server(latency, limit)
                server = by_latency[latency]
                tag = f"{latency:g}ms"
                if (latency, concurrency) not in tooldiag_runs:
                    fixed = fixed_cost(server, work / f"fixed-{tag}-c{concurrency}")
                    side = tooldiag_side(
                        server, concurrency, limit, work / f"tooldiag-{tag}-c{concurrency}", categories
                    )
                    tooldiag_runs[latency, concurrency] = side, fixed
                    if side.error:
                        raise RuntimeError(side.error)
                side, fixed = tooldiag_runs[latency, concurrency]
                bfcl_result = None
                if bfcl is not None:
                    bfcl_result = bfcl_side(bfcl, server, threads, limit, work / f"bfcl-{tag}-t{threads}", categories)
                    if bfcl_result.error:
                        print(f"BFCL's harness failed: {bfcl_result.error}", flush=True)
                rows.append(Row(latency, threads, concurrency, side, bfcl_result, *fixed, len(categories)))
                print(
                    f"done: {latency:g} ms, BFCL {threads} threads "
                    f"{f'{bfcl_result.wall:.1f} s' if bfcl_result else '-'}, tooldiag c{concurrency} {side.wall:.1f} s",
                    flush=True,
                )
        finally:
            for server in by_latency.values():
                server.stop()
        print("\n" + markdown(rows) + "\n")
        grade = regrade(limit, work, categories)
        print(
            f"re-grade: `tooldiag report` on a {grade['cases']:.0f}-case run: {grade['wall_s']:.2f} s wall, "
            f"{grade['cpu_s']:.2f} s CPU, {grade['rss_mb']:.0f} MB peak RSS (best of 3)"
        )
        judge = judge_throughput(work)
        print(judge_line(judge))
    if args.json:
        raw = {
            "host": machine.host_line(),
            "limit_per_category": limit,
            "precompiled": not args.no_precompile,
            "categories": list(categories),
            "bfcl_unavailable": why,
            "rows": [{**asdict(row), **row.figures()} for row in rows],
            "regrade": grade,
            "judge": judge,
        }
        args.json.write_text(json.dumps(raw, indent=2) + "\n")
        print(f"raw figures: {args.json}")


if __name__ == "__main__":
    main()
