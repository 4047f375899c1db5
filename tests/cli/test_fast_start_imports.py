"""Fast start: the analysis commands never import the heavy numeric stack.

Issue 12 item 6 asks ``report``, ``cases``, ``show``, ``diagnose`` and ``classify`` on small
inputs to finish within 1.5 s of a bare ``python -c pass``. Importing statsmodels (with the
pandas and scipy it pulls in) alone took 4-5 s; one Wilson interval was the reason. Timing
is machine-dependent, so this test checks the cause instead: each command runs in a fresh
interpreter under ``python -X importtime`` and no module of the heavy libraries may appear
in its import log. A module-level ``import pandas`` (or numpy, pyarrow, scipy, statsmodels)
anywhere on these paths fails it; import them inside the function that needs them
(``--format parquet``, ``tooldiag.load_cases``, judgebench analysis, ...).

``bench/cli_latency.py`` measures the wall time itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tooldiag.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
AGENT_LOG = ROOT / "examples" / "agent_log.jsonl"

#: Top-level packages no analysis command may import on small inputs (matplotlib: only `--format html` draws).
HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "statsmodels", "matplotlib")


def imported_modules(importtime_log: str) -> set[str]:
    """Module names in the stderr of ``python -X importtime`` (``import time: self | cumulative | name``).

    CPython logs imports made by ``import`` statements; a module loaded with
    ``importlib.import_module`` (the CLI's command modules, classifier schemes) is not listed
    itself, but everything *it* imports by statement is. numpy, pandas, pyarrow, scipy and
    statsmodels import their own submodules by statement, so a heavy import shows however
    it was triggered.
    """
    names: set[str] = set()
    for line in importtime_log.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        name = line.rsplit("|", 1)[1].strip()
        if name and name != "imported package":
            names.add(name)
    return names


def heavy_imports(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if name.split(".")[0] in HEAVY)


def run_with_importtime(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tooldiag", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, imported_modules(proc.stderr)


def command_available(name: str) -> bool:
    """``cases`` and ``show`` arrive in other branches of issue 12; check them once they exist."""
    proc = subprocess.run(
        [sys.executable, "-m", "tooldiag", name, "--help"], capture_output=True, text=True, timeout=60
    )
    return proc.returncode == 0


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A ref/overcall BFCL run of 3 miss_func cases, and the id of its first case."""
    base = tmp_path_factory.mktemp("fast-start")
    run_dir = base / "run"
    run_args = ["--model", "ref/overcall", "--run-dir", str(run_dir), "--categories", "miss_func", "--limit", "3"]
    main(["run", "bfcl", *run_args, "-q"])
    export = base / "export.jsonl"
    main(["export", str(run_dir), "--format", "jsonl", "--out", str(export)])
    first_case = json.loads(export.read_text(encoding="utf-8").splitlines()[0])["case_id"]
    return run_dir, first_case


def test_importtime_parser_sees_heavy_modules() -> None:
    """The check itself works: a log that imports numpy is caught, the empty header line is not a module."""
    log = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       120 |        120 |   numpy.core._multiarray_umath\n"
        "import time:      3000 |     169000 | numpy\n"
        "import time:        80 |         80 |     tooldiag.metrics.gar\n"
    )
    modules = imported_modules(log)
    assert modules == {"numpy.core._multiarray_umath", "numpy", "tooldiag.metrics.gar"}
    assert heavy_imports(modules) == ["numpy", "numpy.core._multiarray_umath"]


def _assert_light(proc: subprocess.CompletedProcess[str], modules: set[str]) -> None:
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the log really covers the command: the CLI and the package were imported under -X importtime
    assert {"typer", "tooldiag.cli.main"} <= modules
    assert heavy_imports(modules) == []


def test_report_imports_no_heavy_library(small_run: tuple[Path, str]) -> None:
    run_dir, _ = small_run
    proc, modules = run_with_importtime("report", str(run_dir))
    _assert_light(proc, modules)
    assert "tooldiag.metrics.intervals" in modules  # the Wilson intervals were computed, without statsmodels


def test_diagnose_imports_no_heavy_library() -> None:
    proc, modules = run_with_importtime("diagnose", str(AGENT_LOG))
    _assert_light(proc, modules)
    assert "tooldiag.metrics.intervals" in modules


def test_classify_imports_no_heavy_library(tmp_path: Path) -> None:
    messages = tmp_path / "messages.jsonl"
    rows = [
        {"role": "assistant", "content": "Which file would you like me to delete?"},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "ls", "arguments": "{}"}}]},
    ]
    messages.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    proc, modules = run_with_importtime("classify", str(messages))
    _assert_light(proc, modules)
    assert "tooldiag.classify.multilingual" in modules  # the default classifier was built
    assert [json.loads(line)["action_class"] for line in proc.stdout.splitlines()] == ["ask", "tool_call"]


def test_cases_imports_no_heavy_library(small_run: tuple[Path, str]) -> None:
    if not command_available("cases"):
        pytest.skip("tooldiag cases is not in this build")
    run_dir, _ = small_run
    proc, modules = run_with_importtime("cases", str(run_dir))
    _assert_light(proc, modules)


def test_show_imports_no_heavy_library(small_run: tuple[Path, str]) -> None:
    if not command_available("show"):
        pytest.skip("tooldiag show is not in this build")
    run_dir, case_id = small_run
    proc, modules = run_with_importtime("show", str(run_dir), case_id)
    _assert_light(proc, modules)
