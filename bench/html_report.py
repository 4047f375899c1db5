"""Size, render time and external references of the HTML report for 3 runs x 800 BFCL cases.

Usage: uv run python bench/html_report.py [RUN_DIR ...] [--repeat 3] [--keep FILE] [--check]

Without run directories it first makes three full runs (ref/oracle, ref/overcall, ref/halt: 800
cases each) in a temporary directory. Then it times ``tooldiag report RUN RUN RUN --format html
--out FILE`` as a user runs it (a fresh process, start-up included), median of ``--repeat``,
and prints the file's size, the time and every external reference in the file.

The issue's Must-holds: under 5 MB, under 10 s, no ``http://`` or ``https://`` reference.
``--check`` exits 1 when one of them fails. A build whose ``tooldiag report`` does not know
``--format html`` yet prints ``not available in this build`` and exits 0.

The reference scan here is the strict one of the project's rule for generated HTML (no absolute
URL anywhere in the file, not even in text, plus protocol-relative ``//host`` in attributes and
CSS). The browser test's ``external_references`` (tests/support/browser.py) is the finer one that
allows URLs in text; bench/ may not import tests/ (CONTRIBUTING.md), so the two are kept apart.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POLICIES = ("ref/oracle", "ref/overcall", "ref/halt")
MAX_SECONDS = 10.0
MAX_BYTES = 5 * 1024 * 1024
#: Any absolute URL (the project's rule: none anywhere), or a protocol-relative one where it would load.
_REFERENCE = re.compile(
    r"(?:https?|wss?|ftp)://[^\s\"'<>()`]*"
    r"|(?:\b(?:src|href|action|srcset|poster|data)\s*=\s*[\"']?|url\(\s*[\"']?|@import\s+[\"'])//[^\s\"'<>()`]*",
    re.I,
)


def references(html: str) -> list[str]:
    """Every external reference in ``html`` with 30 characters before it, for the reader to find it."""
    return [f"...{html[max(0, m.start() - 30) : m.start()]}{m.group(0)}" for m in _REFERENCE.finditer(html)]


def make_runs(root: Path) -> list[Path]:
    """Three full 800-case runs with the reference policies (about 3 s each)."""
    from tooldiag import run_bfcl

    runs = []
    for policy in POLICIES:
        run_dir = root / policy.split("/")[1]
        started = time.perf_counter()
        run_bfcl(policy, run_dir)
        print(f"made {policy} run in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        runs.append(run_dir)
    return runs


def render(runs: list[Path], out: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """One ``tooldiag report ... --format html`` in a fresh process: its wall time and result."""
    command = [sys.executable, "-m", "tooldiag", "report", *map(str, runs), "--format", "html", "--out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done


def html_unknown(probe_dir: Path) -> str | None:
    """The refusal, when this build's ``tooldiag report`` does not know ``--format html`` (checked before any run
    is made: the format is checked before the run directories are read)."""
    _, done = render([probe_dir / "no-such-run"], probe_dir / "probe.html")
    refused = done.returncode != 0 and "unknown format 'html'" in done.stderr
    return " ".join(done.stderr.split()) if refused else None


def measure(runs: list[Path], out: Path, repeat: int, check: bool) -> int:
    times = []
    for _ in range(repeat):
        seconds, done = render(runs, out)
        if done.returncode != 0:
            print(f"tooldiag report failed (exit {done.returncode}):\n{done.stderr}", file=sys.stderr)
            return 1
        times.append(seconds)
    html = out.read_text(encoding="utf-8")
    size = out.stat().st_size
    found = references(html)
    median = statistics.median(times)
    print(f"runs: {len(runs)} ({', '.join(r.name for r in runs)}), case rows in the file: {html.count('<tr data-')}")
    print(f"size: {size:,} bytes ({size / 1024 / 1024:.2f} MB; limit {MAX_BYTES / 1024 / 1024:.0f} MB)")
    each = ", ".join(f"{t:.2f}" for t in times)
    print(f"render time: {median:.2f} s median of {repeat} ({each}; limit {MAX_SECONDS:.0f} s)")
    print(f"external references: {len(found)}" + "".join(f"\n  {ref}" for ref in found[:20]))
    failed = [
        *([f"{median:.2f} s > {MAX_SECONDS:.0f} s"] if median > MAX_SECONDS else []),
        *([f"{size:,} bytes > 5 MB"] if size > MAX_BYTES else []),
        *([f"{len(found)} external reference(s)"] if found else []),
    ]
    if check and failed:
        print("check failed: " + "; ".join(failed))
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="run directories (default: make 3 x 800 cases)")
    parser.add_argument("--repeat", type=int, default=3, help="renders to take the median of")
    parser.add_argument("--keep", type=Path, help="also copy the report to this file")
    parser.add_argument("--check", action="store_true", help="exit 1 above 10 s, above 5 MB or on any reference")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tooldiag-bench-html-") as tmp:
        refusal = html_unknown(Path(tmp))
        if refusal:
            print(f"tooldiag report --format html: not available in this build ({refusal})")
            sys.exit(0)
        runs = args.runs or make_runs(Path(tmp))
        out = Path(tmp) / "report.html"
        status = measure(runs, out, args.repeat, args.check)
        if args.keep and out.exists():
            shutil.copyfile(out, args.keep)
    sys.exit(status)


if __name__ == "__main__":
    main()
